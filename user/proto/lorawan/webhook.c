// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>
#include "util/log.h"
#include "proto/lorawan/webhook.h"

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

/* arrivals kept while their run's schedule is not readable yet: 16 MiB */
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
	/* the runs of earlier sessions are not this count's: only lines appended from now on */
	if (schedule) {
		struct stat st;

		if (!stat(schedule, &st))
			w->sched_off = st.st_size;
	}
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
	free(w->runs);
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

/* One line of the schedule: a run's first departure, rate and first n. */
static int parse_schedule(const char *line, struct wh_schedule *s)
{
	struct json_object *o = json_tokener_parse(line), *v;
	int err = -EINVAL;

	if (!o)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	if (json_object_object_get_ex(o, "t0_unix", &v))
		s->t0_unix = json_object_get_double(v);
	if (json_object_object_get_ex(o, "pps", &v))
		s->pps = json_object_get_double(v);
	if (json_object_object_get_ex(o, "first_n", &v) && json_object_get_int64(v) >= 0) {
		s->first_n = json_object_get_int64(v);
		/* pps 0: a run at top speed, counted but not timed */
		if (s->t0_unix > 0 && s->pps >= 0 && s->pps < 1e12)
			err = 0;
	}
	json_object_put(o);
	return err;
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

static void lat_add(struct wh_latency *l, uint64_t ns)
{
	l->hist[lat_bucket(ns)]++;
	l->n++;
	if ((int64_t)ns > l->max)
		l->max = ns;
}

/* The uplink first sent as n, of run r, arrived at at_ns: counted in its run, timed from its departure. */
static void time_arrival(struct webhook *w, struct wh_run *r, uint64_t n, uint64_t at_ns)
{
	double dep, lat;

	r->uplinks++;
	if (!(r->sched.pps > 0))
		return;
	dep = r->sched.t0_unix + (double)(n - r->sched.first_n) / r->sched.pps;
	lat = at_ns / 1e9 - dep;
	if (!(lat >= 0)) {
		r->lat.early++;
		w->lat.early++;
		return;
	}
	if (lat > 1e6)
		lat = 1e6; /* past the last bucket anyway; keeps the conversion defined */
	lat_add(&r->lat, (uint64_t)(lat * 1e9));
	lat_add(&w->lat, (uint64_t)(lat * 1e9));
}

/* Whether the uplink first sent as n could have left in run r by at_ns (an untimed run: yes). */
static bool departed(const struct wh_run *r, uint64_t n, uint64_t at_ns)
{
	return !(r->sched.pps > 0) ||
	       r->sched.t0_unix + (double)(n - r->sched.first_n) / r->sched.pps <= at_ns / 1e9;
}

/*
 * The run n belongs to: the latest whose first n is at or below it and that
 * had sent it by the time it arrived. A search's trials go on from where the
 * last stopped, but a second search (or run) may start over at the same n:
 * then a late uplink of the first is not taken for one the second has yet
 * to send. Without such a run (clocks apart), the latest at or below n.
 */
static struct wh_run *run_of(struct webhook *w, uint64_t n, uint64_t at_ns)
{
	struct wh_run *below = NULL;

	for (size_t i = w->nruns; i-- > 0;) {
		struct wh_run *r = &w->runs[i];

		if (r->sched.first_n > n)
			continue;
		if (departed(r, n, at_ns))
			return r;
		if (!below)
			below = r;
	}
	return below;
}

/*
 * The lines the senders appended since the last look (a line not yet ended
 * is left for the next); then the arrivals that waited for their run. A stat
 * per look: a run's first uplinks may arrive within a millisecond of its line.
 */
static void read_runs(struct webhook *w)
{
	char *line = NULL;
	size_t cap = 0, kept = 0;
	ssize_t len;
	struct stat st;
	bool added = false;
	FILE *f;

	if (!w->schedule || stat(w->schedule, &st))
		return;
	/* a file written anew (shorter than what was read): read from its start */
	if (st.st_size < w->sched_off)
		w->sched_off = 0;
	if (st.st_size == w->sched_off)
		return;
	f = fopen(w->schedule, "r");
	if (!f)
		return;
	if (fseeko(f, w->sched_off, SEEK_SET))
		goto out;
	while ((len = getline(&line, &cap, f)) > 0 && line[len - 1] == '\n') {
		struct wh_schedule sc;
		struct wh_run *r;

		w->sched_off += len;
		if (parse_schedule(line, &sc))
			continue;
		if (w->nruns == WH_MAX_RUNS) {
			w->runs_ignored++;
			continue;
		}
		r = realloc(w->runs, (w->nruns + 1) * sizeof(*r));
		if (!r)
			break;
		w->runs = r;
		memset(&r[w->nruns], 0, sizeof(*r));
		r[w->nruns++].sched = sc;
		added = true;
	}
	if (added) {
		for (size_t i = 0; i < w->npending; i++) {
			struct wh_run *r = run_of(w, w->pending[i].n, w->pending[i].at_ns);

			if (r)
				time_arrival(w, r, w->pending[i].n, w->pending[i].at_ns);
			else
				w->pending[kept++] = w->pending[i];
		}
		w->npending = kept;
	}
out:
	free(line);
	fclose(f);
}

static void arrival(struct webhook *w, uint64_t n, uint64_t at_ns)
{
	struct wh_run *r;

	if (!w->schedule)
		return;
	read_runs(w);
	r = run_of(w, n, at_ns);
	if (r) {
		time_arrival(w, r, n, at_ns);
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
	/* appended in one write (a line well under PIPE_BUF): runs of many senders stay whole lines */
	char line[160];
	int len = snprintf(line, sizeof(line), "{\"t0_unix\":%.9f,\"pps\":%.6f,\"first_n\":%llu}\n",
			   s->t0_unix, s->pps, (unsigned long long)s->first_n);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, line, len);
	if (n != len) {
		int err = n < 0 ? -errno : -ENOSPC;

		close(fd);
		return err;
	}
	return close(fd) ? -errno : 0;
}

/* The q-quantile of the latencies in ms (the floor of its bucket); -1 without any. */
static double lat_pct(const struct wh_latency *l, double q)
{
	uint64_t want = (uint64_t)(q * l->n + 0.5), acc = 0;

	if (!l->n)
		return -1;
	if (want < 1)
		want = 1;
	for (unsigned int b = 0; b < WH_LAT_BUCKETS; b++) {
		acc += l->hist[b];
		if (acc >= want)
			return (b < 16 ? b :
					 (1ULL << (b / 16 + 3)) +
						 (uint64_t)(b % 16) * (1ULL << (b / 16 - 1))) /
			       1e6;
	}
	return l->max / 1e6;
}

/*
 * Uplinks lost before each device's first one seen: the first run's first n
 * says which FCnt each device began with.
 */
static uint64_t leading_lost(const struct webhook *w)
{
	uint64_t ndev = w->fleet.ndev, lost = 0, u0;

	/* without a schedule where the sender began is not known: gaps count from the first seen */
	if (!w->nruns)
		return 0;
	/* the first uplink of the run (some copy of it was sent), and the first of device d from there */
	u0 = w->runs[0].sched.first_n / w->fleet.heard_by;
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
	uint64_t lost;

	read_runs(w);
	lost = w->lost + leading_lost(w);
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
	if (w->lat.n)
		fprintf(f,
			"  webhook latency from departure: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms "
			"(%llu timed, %llu before their departure: clocks apart?)\n",
			lat_pct(&w->lat, 0.5), lat_pct(&w->lat, 0.9), lat_pct(&w->lat, 0.99),
			w->lat.max / 1e6, (unsigned long long)w->lat.n,
			(unsigned long long)w->lat.early);
	if (w->npending + w->untimed)
		fprintf(f, "  webhook: %llu uplinks of no run in the schedule (not timed)\n",
			(unsigned long long)(w->npending + w->untimed));
	if (w->nruns > 1)
		fprintf(f, "  webhook: %zu runs in the schedule%s\n", w->nruns,
			w->runs_ignored ? " (and more, not timed one by one)" : "");
}

static void latency_json(struct json *j, const struct wh_latency *l)
{
	json_open(j, "latency_ms", '{');
	json_double(j, "p50", lat_pct(l, 0.5));
	json_double(j, "p90", lat_pct(l, 0.9));
	json_double(j, "p99", lat_pct(l, 0.99));
	json_double(j, "max", l->max / 1e6);
	json_u64(j, "timed", l->n);
	json_u64(j, "before_departure", l->early);
}

void webhook_json(struct webhook *w, struct json *j)
{
	double dur = (w->last_ns - w->first_ns) / 1e9;

	read_runs(w);
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
	json_u64(j, "heard_by", w->fleet.heard_by);
	json_double(j, "uplinks_per_s", dur > 0 && w->uplinks > 1 ? (w->uplinks - 1) / dur : 0);
	if (w->lat.n) {
		latency_json(j, &w->lat);
		json_u64(j, "untimed", w->untimed + w->npending);
		json_close(j, '}');
	}
	/* each run (a search's trial) on its own: its uplinks wherever they arrived, its latencies */
	if (w->schedule) {
		json_open(j, "runs", '[');
		for (size_t i = 0; i < w->nruns; i++) {
			const struct wh_run *r = &w->runs[i];

			json_open(j, NULL, '{');
			json_u64(j, "first_n", r->sched.first_n);
			json_double(j, "t0_unix", r->sched.t0_unix);
			json_double(j, "pps", r->sched.pps);
			json_u64(j, "uplinks", r->uplinks);
			latency_json(j, &r->lat);
			json_close(j, '}');
			json_close(j, '}');
		}
		json_close(j, ']');
		json_u64(j, "runs_ignored", w->runs_ignored);
	}
	json_close(j, '}');
}

static void witness_event(void *ctx, const char *body, size_t len)
{
	webhook_event(ctx, body, len);
}

static uint64_t witness_events(const void *ctx)
{
	return ((const struct webhook *)ctx)->events;
}

static void witness_text(void *ctx, FILE *f)
{
	webhook_text(ctx, f);
}

static void witness_json(void *ctx, struct json *j)
{
	webhook_json(ctx, j);
}

static void witness_free(void *ctx)
{
	webhook_free(ctx);
}

void webhook_witness(struct webhook *w, struct app_witness *out)
{
	static const struct app_witness_ops ops = { .event = witness_event,
						    .events = witness_events,
						    .text = witness_text,
						    .json = witness_json,
						    .free = witness_free };

	*out = (struct app_witness){ .ops = &ops, .ctx = w };
}
