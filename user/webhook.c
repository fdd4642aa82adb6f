// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "log.h"
#include "webhook.h"

/*
 * Per device: FCnt expected next and which of the 64 before it came (as
 * count.bpf.c does per flow). Gaps count from the device's first uplink seen:
 * where the sender began (--first-seq, a schedule) is known only from its
 * schedule, read when reporting.
 */
struct wh_dev {
	uint32_t next;
	uint32_t first;              /* the first FCnt seen */
	uint64_t window;             /* bit i: FCnt next - 1 - i was received (or came before the start) */
	bool seen;
};

struct wh_arrival {
	uint64_t n;
	uint64_t at_ns;              /* CLOCK_REALTIME */
};

#define WH_MAX_ARRIVALS (16U << 20)

int webhook_init(struct webhook *w, const char *fleet_dir, const char *schedule)
{
	struct lw_eui_index *idx;
	uint64_t dup;
	int err;

	memset(w, 0, sizeof(*w));
	w->schedule = schedule;
	err = lw_fleet_load(fleet_dir, &w->fleet);
	if (err)
		return err;
	w->st = calloc(w->fleet.ndev, sizeof(*w->st));
	idx = calloc(w->fleet.ndev, sizeof(*idx));
	if (!w->st || !idx) {
		free(idx);
		webhook_free(w);
		return -ENOMEM;
	}
	for (size_t d = 0; d < w->fleet.ndev; d++) {
		idx[d] = (struct lw_eui_index){ lw_eui64(w->fleet.dev[d].dev_eui), d };
		w->st[d].next = w->fleet.dev[d].fcnt_start;
		w->st[d].window = ~0ULL;
	}
	/* the loader refused a fleet with a DevEUI used twice */
	lw_eui_sort(idx, w->fleet.ndev, &dup);
	w->by_eui = idx;
	return 0;
}

void webhook_free(struct webhook *w)
{
	lw_fleet_free(&w->fleet);
	free(w->st);
	free(w->by_eui);
	free(w->arr);
	memset(w, 0, sizeof(*w));
}

static const char *get_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) : NULL;
}

/* Counts FCnt f of device d: in order, a gap (lost), a late one filling a gap, or a duplicate. */
static bool count_fcnt(struct webhook *w, struct wh_dev *s, uint32_t f)
{
	uint32_t ahead = f - s->next, back = s->next - 1 - f;

	if (!s->seen) {
		s->seen = true;
		s->first = f;
		s->next = f + 1;
		s->window = ~0ULL;
		return true;
	}
	if (ahead < (1U << 31)) {
		/* new: everything between next and f is missing (for now) */
		w->lost += ahead;
		s->window = ahead >= 63 ? 1 : (s->window << (ahead + 1)) | 1;
		s->next = f + 1;
		return true;
	}
	if (back < 64) {
		if (s->window & (1ULL << back)) {
			w->dup++;
			return false;
		}
		s->window |= 1ULL << back;
		w->lost--;
		w->reordered++;
		return true;
	}
	w->too_late++;
	return false;
}

void webhook_event(struct webhook *w, const char *body, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = tok ? json_tokener_parse_ex(tok, body, len) : NULL, *di, *fc;
	struct timespec ts;
	const char *eui_s;
	const struct lw_eui_index *hit;
	uint64_t at, eui;
	uint32_t f;
	char *end;

	clock_gettime(CLOCK_REALTIME, &ts);
	at = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	w->events++;
	if (!w->first_ns)
		w->first_ns = at;
	w->last_ns = at;
	if (!o || !json_object_object_get_ex(o, "deviceInfo", &di) || !(eui_s = get_str(di, "devEui")) ||
	    !json_object_object_get_ex(o, "fCnt", &fc)) {
		w->bad++;
		goto out;
	}
	eui = strtoull(eui_s, &end, 16);
	hit = *end || strlen(eui_s) != 16 ? NULL : lw_eui_find(w->by_eui, w->fleet.ndev, eui);
	if (!hit) {
		w->unknown++;
		goto out;
	}
	f = (uint32_t)json_object_get_int64(fc);
	if (!count_fcnt(w, &w->st[hit->idx], f))
		goto out;
	w->uplinks++;
	if (w->narr == w->cap && w->cap < WH_MAX_ARRIVALS) {
		size_t cap = w->cap ? 2 * w->cap : 65536;
		struct wh_arrival *a = realloc(w->arr, cap * sizeof(*a));

		if (a) {
			w->arr = a;
			w->cap = cap;
		}
	}
	if (w->narr < w->cap) {
		const struct lw_device *d = &w->fleet.dev[hit->idx];
		uint64_t round = (uint32_t)(f - d->fcnt_start);

		/* the first copy of uplink u = round * D + d left as n = u * K */
		w->arr[w->narr++] = (struct wh_arrival){
			.n = (round * w->fleet.ndev + hit->idx) * w->fleet.heard_by, .at_ns = at };
	}
out:
	if (o)
		json_object_put(o);
	if (tok)
		json_tokener_free(tok);
}

static int read_schedule(const char *path, struct wh_schedule *s)
{
	struct json_object *o = path ? json_object_from_file(path) : NULL, *v;

	if (!o)
		return -ENOENT;
	memset(s, 0, sizeof(*s));
	if (json_object_object_get_ex(o, "t0_unix", &v))
		s->t0_unix = json_object_get_double(v);
	if (json_object_object_get_ex(o, "pps", &v))
		s->pps = json_object_get_double(v);
	if (json_object_object_get_ex(o, "first_n", &v))
		s->first_n = json_object_get_int64(v);
	json_object_put(o);
	return s->pps > 0 && s->t0_unix > 0 ? 0 : -EINVAL;
}

int wh_schedule_write(const char *path, const struct wh_schedule *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "{\"t0_unix\":%.9f,\"pps\":%.6f,\"first_n\":%llu}\n", s->t0_unix, s->pps,
		(unsigned long long)s->first_n);
	return fclose(f) ? -errno : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Latencies in ns, sorted; NULL without a schedule. */
static int64_t *latencies(const struct webhook *w, size_t *n)
{
	struct wh_schedule s;
	int64_t *l;

	*n = 0;
	if (!w->narr || read_schedule(w->schedule, &s))
		return NULL;
	l = malloc(w->narr * sizeof(*l));
	if (!l)
		return NULL;
	for (size_t i = 0; i < w->narr; i++) {
		double dep = s.t0_unix + (double)(w->arr[i].n - s.first_n) / s.pps;

		l[i] = (int64_t)w->arr[i].at_ns - (int64_t)(dep * 1e9);
	}
	qsort(l, w->narr, sizeof(*l), cmp_i64);
	*n = w->narr;
	return l;
}

static double pct(const int64_t *l, size_t n, double q)
{
	size_t i = (size_t)(q * n);

	return l[i < n ? i : n - 1] / 1e6;
}

/*
 * Uplinks lost before each device's first one seen: with the sender's
 * schedule, the sender's first n says which FCnt each device began with.
 */
static uint64_t leading_lost(const struct webhook *w)
{
	uint64_t ndev = w->fleet.ndev, lost = 0, u0;
	struct wh_schedule s;

	/* without a schedule where the sender began is not known: gaps count from the first seen */
	if (read_schedule(w->schedule, &s) == -ENOENT)
		return 0;
	/* the first uplink of the run (some copy of it was sent), and the first of device d from there */
	u0 = s.first_n / w->fleet.heard_by;
	for (uint64_t d = 0; d < ndev; d++) {
		const struct wh_dev *st = &w->st[d];
		uint64_t ud = u0 + (d + ndev - u0 % ndev) % ndev;
		uint32_t want = w->fleet.dev[d].fcnt_start + (uint32_t)(ud / ndev), ahead = st->first - want;

		if (st->seen && ahead < (1U << 31))
			lost += ahead;
	}
	return lost;
}

void webhook_text(const struct webhook *w, FILE *f)
{
	size_t n;
	int64_t *l = latencies(w, &n);
	uint64_t lost = w->lost + leading_lost(w);

	fprintf(f, "  webhook: %llu events: %llu uplinks received, %llu lost (gaps), %llu duplicated, %llu reordered, "
		   "%llu unknown devices, %llu unreadable\n", (unsigned long long)w->events,
		(unsigned long long)w->uplinks, (unsigned long long)lost, (unsigned long long)w->dup,
		(unsigned long long)w->reordered, (unsigned long long)w->unknown, (unsigned long long)w->bad);
	if (l)
		fprintf(f, "  webhook latency from departure: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			pct(l, n, 0.5), pct(l, n, 0.9), pct(l, n, 0.99), l[n - 1] / 1e6);
	free(l);
}

void webhook_json(const struct webhook *w, struct json *j)
{
	double dur = (w->last_ns - w->first_ns) / 1e9;
	size_t n;
	int64_t *l = latencies(w, &n);

	json_open(j, "webhook", '{');
	json_u64(j, "events", w->events);
	json_u64(j, "uplinks", w->uplinks);
	json_u64(j, "lost", w->lost + leading_lost(w));
	json_u64(j, "duplicated", w->dup);
	json_u64(j, "reordered", w->reordered);
	json_u64(j, "too_late", w->too_late);
	json_u64(j, "unknown_device", w->unknown);
	json_u64(j, "unreadable", w->bad);
	json_double(j, "uplinks_per_s", dur > 0 && w->uplinks > 1 ? (w->uplinks - 1) / dur : 0);
	if (l) {
		json_open(j, "latency_ms", '{');
		json_double(j, "p50", pct(l, n, 0.5));
		json_double(j, "p90", pct(l, n, 0.9));
		json_double(j, "p99", pct(l, n, 0.99));
		json_double(j, "max", l[n - 1] / 1e6);
		json_close(j, '}');
	}
	json_close(j, '}');
	free(l);
}
