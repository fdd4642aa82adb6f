// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "util/log.h"
#include "measure/webhook.h"

/*
 * Per device: FCnt expected next and which of the 64 before it came (as
 * count.bpf.c does per flow). Gaps count from the device's first uplink seen:
 * where the sender began (--first-seq, a schedule) is known only from its
 * schedule, read when reporting.
 */
struct wh_dev {
	uint32_t next;
	uint32_t first; /* the first FCnt seen */
	uint64_t window; /* bit i: FCnt next - 1 - i was received (or came before the start) */
	bool seen;
};

struct wh_arrival {
	uint64_t n;
	uint64_t at_ns; /* CLOCK_REALTIME */
};

/* arrivals kept while the schedule is not readable yet: 16 MiB */
#define WH_MAX_PENDING (1U << 20)
/*
 * A device's FCnt that jumps further ahead than this is not a gap of lost
 * uplinks (LoRaWAN 1.0's MAX_FCNT_GAP is 16384): the count resynchronises
 * and says so, instead of counting a forged or garbled FCnt as loss.
 */
#define WH_MAX_FCNT_GAP 16384

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
	free(w->pending);
	memset(w, 0, sizeof(*w));
}

static const char *get_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       NULL;
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
	if (ahead < (1U << 31) && ahead > WH_MAX_FCNT_GAP) {
		w->jumps++;
		s->window = 1;
		s->next = f + 1;
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

/* Bucket of a latency in ns: exact below 16 ns, then 16 per octave (as the reply counter's). */
static unsigned int lat_bucket(uint64_t v)
{
	unsigned int e;

	if (v < 16)
		return v;
	e = 63 - __builtin_clzll(v);
	e = (e - 3) * 16 + ((v >> (e - 4)) & 15);
	return e < WH_LAT_BUCKETS ? e : WH_LAT_BUCKETS - 1;
}

/* The uplink first sent as n arrived at at_ns: into the histogram. */
static void time_arrival(struct webhook *w, uint64_t n, uint64_t at_ns)
{
	/* signed: an uplink from before the schedule's first n departed before t0 */
	double dep = w->sched.t0_unix + (double)(int64_t)(n - w->sched.first_n) / w->sched.pps;
	double lat = at_ns / 1e9 - dep;

	if (!(lat >= 0)) {
		w->lat_early++;
		return;
	}
	if (lat > 1e6)
		lat = 1e6; /* past the last bucket anyway; keeps the conversion defined */
	uint64_t ns = (uint64_t)(lat * 1e9);

	w->lat_hist[lat_bucket(ns)]++;
	w->lat_n++;
	if ((int64_t)ns > w->lat_max)
		w->lat_max = ns;
}

/* The schedule once the sender has written it (looked for at most every 100 ms), then the arrivals kept. */
static bool have_schedule(struct webhook *w, uint64_t now_ns)
{
	if (w->have_sched || !w->schedule || now_ns < w->next_try_ns)
		return w->have_sched;
	w->next_try_ns = now_ns + 100000000ULL;
	if (read_schedule(w->schedule, &w->sched))
		return false;
	w->have_sched = true;
	for (size_t i = 0; i < w->npending; i++)
		time_arrival(w, w->pending[i].n, w->pending[i].at_ns);
	free(w->pending);
	w->pending = NULL;
	w->npending = w->cap = 0;
	return true;
}

static void arrival(struct webhook *w, uint64_t n, uint64_t at_ns)
{
	if (!w->schedule)
		return;
	if (have_schedule(w, at_ns)) {
		time_arrival(w, n, at_ns);
		return;
	}
	if (w->npending == w->cap && w->cap < WH_MAX_PENDING) {
		size_t cap = w->cap ? 2 * w->cap : 4096;
		struct wh_arrival *a = realloc(w->pending, cap * sizeof(*a));

		if (a) {
			w->pending = a;
			w->cap = cap;
		}
	}
	if (w->npending < w->cap)
		w->pending[w->npending++] = (struct wh_arrival){ .n = n, .at_ns = at_ns };
	else
		w->untimed++;
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
	if (!o || !json_object_object_get_ex(o, "deviceInfo", &di) ||
	    !(eui_s = get_str(di, "devEui")) || !json_object_object_get_ex(o, "fCnt", &fc)) {
		w->bad++;
		goto out;
	}
	eui = strtoull(eui_s, &end, 16);
	hit = *end || strlen(eui_s) != 16 ? NULL : lw_eui_find(w->by_eui, w->fleet.ndev, eui);
	if (!hit) {
		w->unknown++;
		goto out;
	}
	/* an FCnt is a 32-bit counter: an integer, not a string, a float or out of range */
	if (!json_object_is_type(fc, json_type_int) || json_object_get_int64(fc) < 0 ||
	    json_object_get_int64(fc) > UINT32_MAX) {
		w->bad++;
		goto out;
	}
	f = (uint32_t)json_object_get_int64(fc);
	if (!count_fcnt(w, &w->st[hit->idx], f))
		goto out;
	w->uplinks++;
	{
		const struct lw_device *d = &w->fleet.dev[hit->idx];
		uint64_t round = (uint32_t)(f - d->fcnt_start);

		/* the first copy of uplink u = round * D + d left as n = u * K */
		arrival(w, (round * w->fleet.ndev + hit->idx) * w->fleet.heard_by, at);
	}
out:
	if (o)
		json_object_put(o);
	if (tok)
		json_tokener_free(tok);
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

/* The q-quantile of the latencies in ms (the floor of its bucket); -1 without any. */
static double lat_pct(const struct webhook *w, double q)
{
	uint64_t want = (uint64_t)(q * w->lat_n + 0.5), acc = 0;

	if (!w->lat_n)
		return -1;
	if (want < 1)
		want = 1;
	for (unsigned int b = 0; b < WH_LAT_BUCKETS; b++) {
		acc += w->lat_hist[b];
		if (acc >= want)
			return (b < 16 ? b :
					 (1ULL << (b / 16 + 3)) +
						 (uint64_t)(b % 16) * (1ULL << (b / 16 - 1))) /
			       1e6;
	}
	return w->lat_max / 1e6;
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
		uint32_t want = w->fleet.dev[d].fcnt_start + (uint32_t)(ud / ndev),
			 ahead = st->first - want;

		if (st->seen && ahead < (1U << 31))
			lost += ahead;
	}
	return lost;
}

void webhook_text(struct webhook *w, FILE *f)
{
	uint64_t lost = w->lost + leading_lost(w);

	have_schedule(w, UINT64_MAX);

	fprintf(f,
		"  webhook: %llu events: %llu uplinks received, %llu lost (gaps), %llu duplicated, %llu reordered, "
		"%llu unknown devices, %llu unreadable\n",
		(unsigned long long)w->events, (unsigned long long)w->uplinks,
		(unsigned long long)lost, (unsigned long long)w->dup,
		(unsigned long long)w->reordered, (unsigned long long)w->unknown,
		(unsigned long long)w->bad);
	if (w->jumps)
		fprintf(f,
			"  webhook: %llu FCnt jumps of more than %d (counted as a restart, not as loss)\n",
			(unsigned long long)w->jumps, WH_MAX_FCNT_GAP);
	if (w->lat_n)
		fprintf(f,
			"  webhook latency from departure: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms "
			"(%llu timed, %llu before their departure: clocks apart?)\n",
			lat_pct(w, 0.5), lat_pct(w, 0.9), lat_pct(w, 0.99), w->lat_max / 1e6,
			(unsigned long long)w->lat_n, (unsigned long long)w->lat_early);
}

void webhook_json(struct webhook *w, struct json *j)
{
	double dur = (w->last_ns - w->first_ns) / 1e9;

	have_schedule(w, UINT64_MAX);
	json_open(j, "webhook", '{');
	json_u64(j, "events", w->events);
	json_u64(j, "uplinks", w->uplinks);
	json_u64(j, "lost", w->lost + leading_lost(w));
	json_u64(j, "duplicated", w->dup);
	json_u64(j, "reordered", w->reordered);
	json_u64(j, "too_late", w->too_late);
	json_u64(j, "unknown_device", w->unknown);
	json_u64(j, "unreadable", w->bad);
	json_u64(j, "fcnt_jumps", w->jumps);
	json_double(j, "uplinks_per_s", dur > 0 && w->uplinks > 1 ? (w->uplinks - 1) / dur : 0);
	if (w->lat_n) {
		json_open(j, "latency_ms", '{');
		json_double(j, "p50", lat_pct(w, 0.5));
		json_double(j, "p90", lat_pct(w, 0.9));
		json_double(j, "p99", lat_pct(w, 0.99));
		json_double(j, "max", w->lat_max / 1e6);
		json_u64(j, "timed", w->lat_n);
		json_u64(j, "before_departure", w->lat_early);
		json_u64(j, "untimed", w->untimed);
		json_close(j, '}');
	}
	json_close(j, '}');
}
