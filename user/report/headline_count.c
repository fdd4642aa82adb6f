// SPDX-License-Identifier: GPL-2.0
/* count's headline: where the frames the server got went, largest first. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "measure/drop_words.h"
#include "report/headline.h"
#include "util/jsonpath.h"

#define TOP_REASONS 2

struct reason {
	const char *key;
	double n;
};

static int by_count(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	return (x->n < y->n) - (x->n > y->n);
}

/*
 * A reason in words; NO_SOCKET names the port when count's filter held one
 * ("no socket on UDP port 9")
 */
static const char *reason_words(struct json_object *j, const char *key, char *buf, size_t len)
{
	const char *proto = headline_str(j, "filter.protocol");
	double port = headline_num(j, "filter.dst_port");

	if (strcmp(key, "NO_SOCKET") || !(port > 0) || !proto ||
	    (strcmp(proto, "udp") && strcmp(proto, "tcp")))
		return drop_words(key, buf, len);
	snprintf(buf, len, "no socket on %s port %.0f (NO_SOCKET)",
		 strcmp(proto, "udp") ? "TCP" : "UDP", port);
	return buf;
}

/* "2,000 dropped by the kernel: no socket on UDP port 9 (NO_SOCKET)", the largest reasons */
static void kernel_drops(struct words *w, struct json_object *j)
{
	struct json_object *in = json_path_get(j, "drops.inbound");
	struct reason r[64];
	double total = headline_num(j, "drops.inbound_total");
	char c[16], d[96];
	int n = 0;

	if (!in || !json_object_is_type(in, json_type_object) || !(total > 0))
		return;
	json_object_object_foreach(in, key, val) {
		if (n < 64 && json_object_get_double(val) > 0)
			r[n++] = (struct reason){ key, json_object_get_double(val) };
	}
	qsort(r, n, sizeof(r[0]), by_count);
	words_clause(w, "%s dropped by the kernel", words_count(total, c, sizeof(c)));
	/* one reason: its count is the total's */
	for (int i = 0; i < n && i < TOP_REASONS; i++)
		words_add(w, "%s %s%s%s", i ? "," : ":", reason_words(j, r[i].key, d, sizeof(d)),
			  n > 1 ? " " : "", n > 1 ? words_count(r[i].n, c, sizeof(c)) : "");
	if (n > TOP_REASONS)
		words_add(w, " and %d more reason%s", n - TOP_REASONS,
			  n - TOP_REASONS > 1 ? "s" : "");
}

void headline_count(struct words *w, struct json_object *j)
{
	double matched = headline_num(j, "matched"), pps = headline_num(j, "pps");
	double xdp = headline_num(j, "xdp_dropped"), delivered = headline_num(j, "delivered");
	double unattributed = headline_num(j, "books.unattributed");
	struct json_object *reasons = json_path_get(j, "drop_reasons");
	char a[16], b[24];

	words_clause(w, "%s arrived", words_count(matched, a, sizeof(a)));
	if (matched > 0 && pps > 0)
		words_add(w, " at %s", words_rate(pps, b, sizeof(b)));
	if (xdp > 0)
		words_clause(w, "%s dropped in XDP by count --drop",
			     xdp == matched ? "all" : words_count(xdp, a, sizeof(a)));
	kernel_drops(w, j);
	if (!isnan(delivered))
		words_clause(w, "%s delivered to sockets",
			     delivered > 0 ? words_count(delivered, a, sizeof(a)) : "none");
	if (!isnan(unattributed) && unattributed != 0)
		words_clause(w, "%s%s unattributed", unattributed < 0 ? "-" : "",
			     words_count(fabs(unattributed), a, sizeof(a)));
	if (reasons && !json_object_get_boolean(reasons))
		words_clause(w, "the kernel's drop reasons not traced here");
}
