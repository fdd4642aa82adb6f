// SPDX-License-Identifier: GPL-2.0
/*
 * What the server received, read before and after each trial: a counter's
 * --listen endpoint over HTTP (libcurl, json-c), or a command that prints a
 * number.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "search/search.h"
#include "util/jsonpath.h"
#include "util/log.h"

/* A witness's answer may be large (a count --seq with thousands of flows), but not without end. */
#define WITNESS_MAX (16U << 20)

struct body {
	char *buf;
	size_t len;
};

static size_t take_body(char *data, size_t size, size_t n, void *ctx)
{
	struct body *b = ctx;
	size_t add = size * n;
	char *nb;

	/* past the limit the transfer fails (CURLE_WRITE_ERROR) instead of growing without end */
	if (b->len + add > WITNESS_MAX)
		return 0;
	nb = realloc(b->buf, b->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->len, data, add);
	b->buf = nb;
	b->len += add;
	nb[b->len] = 0;
	return add;
}

/* GET / from a counter's --listen endpoint (libcurl): the body, parsed (json_object_put it). */
static int http_get_json(const struct search *s, struct json_object **out)
{
	struct curl_slist *hdr = NULL;
	struct body b = {};
	char auth[300];
	CURLcode rc;
	long status = 0;
	CURL *c;
	int err = 0;

	*out = NULL;
	c = curl_easy_init();
	if (!c)
		return -ENOMEM;
	if (s->token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", s->token);
		hdr = curl_slist_append(NULL, auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, s->witness);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (hdr)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		pr_warn("the witness %s: %s\n", s->witness,
			rc == CURLE_WRITE_ERROR ? "answer larger than 16 MiB" :
						  curl_easy_strerror(rc));
		err = rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EPROTO;
	} else if (status != 200) {
		pr_warn("the witness %s answered HTTP %ld%s\n", s->witness, status,
			status == 401 ? " (give its token: --witness-token-file)" : "");
		err = -EPROTO;
	} else if (!b.buf || !(*out = json_tokener_parse(b.buf))) {
		pr_warn("the witness %s did not answer JSON\n", s->witness);
		err = -EPROTO;
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	free(b.buf);
	return err;
}

/* The attribution object's counters, in order. */
static void attr_object(struct json_object *a, const char *prefix, struct trial *t)
{
	if (!a || !json_object_is_type(a, json_type_object))
		return;
	json_object_object_foreach(a, key, val) {
		if (t->nattr >= MAX_ATTR || !json_object_is_type(val, json_type_int))
			continue;
		snprintf(t->attr_name[t->nattr], sizeof(t->attr_name[0]), "%s%s", prefix, key);
		t->attr[t->nattr++] = json_object_get_int64(val) < 0 ? 0 :
								       json_object_get_uint64(val);
	}
}

/*
 * The attribution object's counters, the kernel's drops by reason that
 * counted (drop:REASON), and what the books could not place (unattributed).
 */
static void json_attribution(struct json_object *root, struct trial *t)
{
	struct json_object *a = NULL, *d = NULL, *in = NULL, *b = NULL, *u = NULL;

	if (json_path_double(root, "server_process.cpu_s", &t->server_cpu_s) || t->server_cpu_s < 0)
		t->server_cpu_s = -1;
	t->nattr = 0;
	json_object_object_get_ex(root, "attribution", &a);
	attr_object(a, "", t);
	if (json_object_object_get_ex(root, "drops", &d) &&
	    json_object_object_get_ex(d, "inbound", &in))
		attr_object(in, "drop:", t);
	if (t->nattr < MAX_ATTR && json_object_object_get_ex(root, "books", &b) &&
	    json_object_object_get_ex(b, "unattributed", &u) &&
	    json_object_is_type(u, json_type_int)) {
		snprintf(t->attr_name[t->nattr], sizeof(t->attr_name[0]), "unattributed");
		t->attr[t->nattr++] = json_object_get_int64(u) < 0 ? 0 : json_object_get_uint64(u);
	}
}

/*
 * count --webhook's run that began at first_n (the latest: a session may
 * have started over): its uplinks, as frames (each uplink went heard_by
 * times), and its p99 latency from departure.
 */
static void webhook_run(struct json_object *wh, uint64_t first_n, uint64_t *out, struct trial *t)
{
	struct json_object *runs;
	uint64_t heard_by, fn, up;
	double p99;

	if (!json_object_object_get_ex(wh, "runs", &runs) ||
	    !json_object_is_type(runs, json_type_array))
		return;
	if (json_path_u64(wh, "heard_by", &heard_by) || !heard_by)
		heard_by = 1;
	for (size_t i = json_object_array_length(runs); i-- > 0;) {
		struct json_object *r = json_object_array_get_idx(runs, i);

		if (json_path_u64(r, "first_n", &fn) || fn != first_n ||
		    json_path_u64(r, "uplinks", &up))
			continue;
		*out = up * heard_by;
		t->from_run = true;
		t->run_p99_us = json_path_double(r, "latency_ms.p99", &p99) || p99 < 0 ? -1 :
											 p99 * 1e3;
		return;
	}
}

static int witness_http(const struct search *s, uint64_t first_n, uint64_t *out, struct trial *attr)
{
	struct json_object *root, *wh;
	int err = http_get_json(s, &root);

	if (err)
		return err;
	if (attr)
		json_attribution(root, attr);
	/*
	 * count --webhook: its run for this trial. Alone (no "matched": not the
	 * --listen of a count with -i) its uplinks are also what was received
	 */
	if (attr && !s->field && json_object_object_get_ex(root, "webhook", &wh)) {
		attr->witness_webhook = true;
		attr->webhook_alone = !json_object_object_get_ex(root, "matched", NULL);
		webhook_run(wh, first_n, out, attr);
		if (attr->webhook_alone)
			goto out;
	}
	if (s->field) {
		err = json_path_u64(root, s->field, out);
		if (err == -ENOENT)
			pr_warn("the witness has no field %s\n", s->field);
		goto out;
	}
	/* what the server took, past every drop; a counter without the books (--drop, an older kernel) has matched */
	err = json_path_u64(root, "delivered", out);
	if (err == -ENOENT) {
		static bool said;

		if (!said)
			pr_info("note: the witness has no deliveries (count --drop, or a kernel that "
				"cannot trace them): what reached its XDP hook counts (matched)\n");
		said = true;
		err = json_path_u64(root, "matched", out);
		if (err == -ENOENT)
			pr_warn("the witness has neither delivered nor matched: is it xdpreplay count "
				"--listen?\n");
	}
out:
	json_object_put(root);
	return err;
}

/*
 * The command's first number. Its pipe is read with read(2), retried on EINTR:
 * a SIGINT (no SA_RESTART) would end fscanf() early and turn an interrupted
 * search's last complete trial into a failed witness read.
 */
static int witness_cmd(const char *cmd, uint64_t *out)
{
	unsigned long long v;
	char buf[256];
	size_t len = 0;
	ssize_t n;
	FILE *p = popen(cmd, "r");

	if (!p)
		return -errno;
	for (;;) {
		n = read(fileno(p), buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
		if (len == sizeof(buf) - 1) {
			/* the number is in the first bytes; the rest is drained for pclose */
			char sink[4096];

			while ((n = read(fileno(p), sink, sizeof(sink))) > 0 ||
			       (n < 0 && errno == EINTR))
				;
			break;
		}
	}
	buf[len] = 0;
	pclose(p);
	if (sscanf(buf, "%llu", &v) != 1)
		return -EPROTO;
	*out = v;
	return 0;
}

int witness_read(const struct search *s, uint64_t first_n, uint64_t *v, struct trial *attr)
{
	*v = 0;
	if (!strncmp(s->witness, "http://", 7))
		return witness_http(s, first_n, v, attr);
	if (!strncmp(s->witness, "cmd:", 4))
		return witness_cmd(s->witness + 4, v);
	return 0;
}
