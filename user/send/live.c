// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/figures.h"
#include "util/json.h"
#include "util/prom.h"
#include "util/time.h"
#include "measure/httpd.h"
#include "send/live.h"

static void live_json(const struct send_live *sl, const struct engine_live *v, double el, FILE *f)
{
	struct json j = { .f = f };

	json_open(&j, NULL, '{');
	json_str(&j, "command", sl->cmd);
	json_str(&j, "interface", sl->ifname);
	json_str(&j, "run_id", prom_run_id());
	json_flag(&j, "running", v->running);
	json_u64(&j, "sent", v->sent);
	json_u64(&j, "failed", v->failed);
	json_u64(&j, "bytes", v->bytes);
	if (v->total != XR_FOREVER)
		json_u64(&j, "planned", v->total);
	json_double(&j, "elapsed_s", el);
	json_double(&j, "pps", el > 0 ? v->sent / el : 0);
	json_double(&j, "target_pps", sl->target_pps);
	if (v->have_replies) {
		json_open(&j, "replies", '{');
		json_u64(&j, "answered", v->replies.answered);
		json_u64(&j, "repeated", v->replies.repeated);
		json_u64(&j, "unmatched", v->replies.unmatched);
		if (sl->proto && sl->proto->live_json)
			sl->proto->live_json(sl->proto->ctx, &v->replies, &j);
		json_close(&j, '}');
	}
	json_close(&j, '}');
}

/* Bounds of the round-trip histogram, in seconds: 1-2.5-5 steps from 10 us to 10 s */
static const double rtt_le[] = { 10e-6,	 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3,
				 2.5e-3, 5e-3,	10e-3, 25e-3,  50e-3,  100e-3, 250e-3,
				 500e-3, 1,	2.5,   5,      10 };
#define RTT_LE_N (sizeof(rtt_le) / sizeof(rtt_le[0]))

/*
 * The round trips so far from the BPF histogram (every second of the ring):
 * a 4% bucket counts under a bound when its upper edge is at or below it, so
 * each cumulative count is exact for "certainly within"; the sum takes each
 * bucket's middle.
 */
static void rtt_histogram(struct prom *p, int fd)
{
	uint64_t *cells = calloc(XR_RTT_CELLS, sizeof(uint64_t)), cum[RTT_LE_N] = {}, count = 0;
	double sum = 0;

	if (!cells || engine_hist_sum(fd, cells)) {
		free(cells);
		return;
	}
	for (unsigned int c = 0; c < XR_RTT_CELLS; c++) {
		unsigned int b = c % XR_RTT_BUCKETS;
		uint64_t lo = rtt_bucket_floor(b), hi = rtt_bucket_floor(b + 1);

		if (!cells[c])
			continue;
		count += cells[c];
		sum += cells[c] * (lo + hi) / 2e9;
		for (unsigned int i = 0; i < RTT_LE_N; i++)
			if (hi <= rtt_le[i] * 1e9)
				cum[i] += cells[c];
	}
	free(cells);
	prom_family(p, "xdpreplay_sender_rtt_seconds", PROM_HISTOGRAM,
		    "Round trips from the scheduled departure to the answer.");
	prom_histogram(p, rtt_le, cum, RTT_LE_N, count, sum, NULL);
}

static void live_metrics(const struct send_live *sl, const struct engine_live *v, struct prom *p)
{
	figure_prom_family(p, "xdpreplay_sender_sent", PROM_COUNTER);
	prom_u64(p, v->sent, NULL);
	figure_prom_family(p, "xdpreplay_sender_failed", PROM_COUNTER);
	prom_u64(p, v->failed, NULL);
	figure_prom_family(p, "xdpreplay_sender_bytes", PROM_COUNTER);
	prom_u64(p, v->bytes, NULL);
	figure_prom_family(p, "xdpreplay_sender_target_pps", PROM_GAUGE);
	prom_double(p, sl->target_pps, NULL);
	prom_family(p, "xdpreplay_sender_running", PROM_GAUGE, "1 while frames are being sent.");
	prom_u64(p, v->running, NULL);
	if (v->total != XR_FOREVER) {
		prom_family(p, "xdpreplay_sender_planned_frames", PROM_GAUGE,
			    "Frames the run is to send.");
		prom_u64(p, v->total, NULL);
	}
	if (!v->have_replies)
		return;
	prom_family(p, "xdpreplay_sender_answered", PROM_COUNTER,
		    "Frames of this run the server answered.");
	prom_u64(p, v->replies.answered, NULL);
	if (v->rtt_fd >= 0)
		rtt_histogram(p, v->rtt_fd);
	if (sl->proto && sl->proto->live_metrics)
		sl->proto->live_metrics(sl->proto->ctx, &v->replies, p);
}

const char *send_live_serve(const struct httpd_request *rq, FILE *f, void *ctx)
{
	struct send_live *sl = ctx;
	struct engine_live v;
	struct prom p;
	char num[16];
	double el;

	if (strcmp(rq->method, "GET") || (strcmp(rq->path, "/") && strcmp(rq->path, "/metrics")))
		return NULL;
	pthread_mutex_lock(&sl->live.lock);
	v = sl->live;
	pthread_mutex_unlock(&sl->live.lock);
	/* before the first frame: the run is being set up */
	el = v.start_ns && v.now_ns > v.start_ns ? (v.now_ns - v.start_ns) / 1e9 : 0;
	if (!strcmp(rq->path, "/")) {
		live_json(sl, &v, el, f);
		return "application/json";
	}
	prom_begin(&p, f, rq->accept);
	prom_common(&p, "run", prom_run_id());
	prom_common(&p, "command", sl->cmd);
	prom_common(&p, "iface", sl->ifname);
	if (sl->shards > 1) {
		snprintf(num, sizeof(num), "%u", sl->shard);
		prom_common(&p, "shard", num);
	}
	if (sl->trial) {
		snprintf(num, sizeof(num), "%u", sl->trial);
		prom_common(&p, "trial", num);
	}
	live_metrics(sl, &v, &p);
	return prom_end(&p);
}
