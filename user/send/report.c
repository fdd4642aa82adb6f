// SPDX-License-Identifier: GPL-2.0
/* A sender run's summary and JSON: what was asked, sent and not sent and why, then the protocol's part. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/headline.h"
#include "send/run.h"
#include "send/verdict.h"
#include "measure/sysinfo.h"
#include "util/json.h"
#include "util/units.h"

void send_summary(const struct send_report *r, FILE *f)
{
	const struct engine_result *res = r->res;
	double dur = (res->end_ns - res->start_ns) / 1e9, pps = dur > 0 ? res->sent / dur : 0;
	double bps = dur > 0 ? (res->sent_bytes + (double)res->sent * WIRE_OVERHEAD) * 8 / dur : 0;
	const struct engine_unsent *u = &res->unsent;
	unsigned int threads = r->o->threads;
	char a[16], b[16];

	if (r->headline[0])
		fprintf(f, "%s: %s\n", r->so->cmd, r->headline);
	fprintf(f, "%s: %s engine, %u thread%s, %zu frame%s in the set\n", r->so->cmd, res->engine,
		threads, threads > 1 ? "s" : "", r->frames, r->frames > 1 ? "s" : "");
	if (r->o->shards > 1) {
		fprintf(f, "  shard %u of %u (from 0):", r->so->shard, r->o->shards);
		if (r->whole_count != XR_FOREVER)
			fprintf(f, " %llu of the run's %llu frames",
				(unsigned long long)r->o->count,
				(unsigned long long)r->whole_count);
		else
			fprintf(f, " every %u-th frame of the run", r->o->shards);
		if (r->o->pace == XR_PACE_RATE)
			fprintf(f, ", %s of its %s pps", fmt_si(r->o->pps, a, sizeof(a)),
				fmt_si(r->whole_pps, b, sizeof(b)));
		fputc('\n', f);
	}
	fprintf(f,
		"  asked %llu, sent %llu, not sent %llu in %.3f s: %s pps, %sbit/s on the wire\n",
		(unsigned long long)res->asked, (unsigned long long)res->sent,
		(unsigned long long)engine_unsent_total(u), dur, fmt_si(pps, a, sizeof(a)),
		fmt_si(bps, b, sizeof(b)));
	if (u->ring_full)
		fprintf(f, "  not sent: %llu refused by the driver (%s)\n",
			(unsigned long long)u->ring_full,
			res->xmit_err == -ENXIO ? "peer not ready: no NAPI" : "transmit ring full");
	if (u->redirect)
		fprintf(f, "  not sent: %llu refused before the driver: %s\n",
			(unsigned long long)u->redirect, strerror(-res->redirect_errno));
	if (u->bad_frame)
		fprintf(f, "  not sent: %llu could not be built\n",
			(unsigned long long)u->bad_frame);
	if (u->interrupted)
		fprintf(f, "  not sent: %llu, interrupted\n", (unsigned long long)u->interrupted);
	if (u->duration)
		fprintf(f, "  not sent: %llu, --duration reached first\n",
			(unsigned long long)u->duration);
	if (u->behind)
		fprintf(f,
			"  not sent: %llu due before the end, the sender fell behind its schedule\n",
			(unsigned long long)u->behind);
	if (u->device_error)
		fprintf(f, "  not sent: %llu, the device failed first\n",
			(unsigned long long)u->device_error);
	if (u->unaccounted)
		fprintf(f, "  not sent: %llu with no outcome reported (a bug: please report it)\n",
			(unsigned long long)u->unaccounted);
	/* without the gen program the protocol's figures are its answers', which nothing counted */
	if (res->replies_uncounted)
		fprintf(f, "  replies: not counted (no reply program could be loaded here)\n");
	else if (r->p->report)
		r->p->report(r->st, res, r->ready_ns, f, NULL);
	send_thresholds_judge(&r->so->fail_if, r->o, res, f, NULL);
}

/* The JSON document's members, its object left open (report/headline.h) */
static void send_json_members(struct json *jp, const void *ctx)
{
	static const char *const pace[] = { [XR_PACE_NONE] = "topspeed",
					    [XR_PACE_RATE] = "rate",
					    [XR_PACE_PCAP] = "capture" };
	const struct send_report *r = ctx;
	const struct engine_result *res = r->res;
	const struct engine_opts *o = r->o;
	double dur = (res->end_ns - res->start_ns) / 1e9;
	const struct engine_unsent *u = &res->unsent;
	struct json j = *jp;
	char line[4096];
	size_t at = 0;

	json_open(&j, NULL, '{');
	/* the command without its protocol ("gen", not "gen syn"): the protocol has a field of its own */
	json_str(&j, "command", strncmp(r->so->cmd, "gen ", 4) ? r->so->cmd : "gen");
	json_str(&j, "protocol", r->p->name);
	line[0] = 0;
	for (int i = 0; i < r->so->argc && at < sizeof(line); i++)
		at += snprintf(line + at, sizeof(line) - at, "%s%s", i ? " " : "", r->so->argv[i]);
	json_str(&j, "command_line", line);
	json_str(&j, "version", XR_VERSION);
	json_str(&j, "interface", o->ifc->name);
	json_double(&j, "start_unix", r->start_unix);
	sysinfo_json(&j, o->ifc, res->engine);
	json_open(&j, "target", '{');
	json_str(&j, "pace", pace[o->pace]);
	if (o->pace == XR_PACE_RATE)
		json_double(&j, "pps", o->pps);
	if (o->pace == XR_PACE_PCAP)
		json_double(&j, "multiplier", o->multiplier);
	if (o->count != XR_FOREVER)
		json_u64(&j, "count", o->count);
	if (o->duration_ns)
		json_double(&j, "duration_s", o->duration_ns / 1e9);
	json_u64(&j, "first_seq", o->first_n);
	json_close(&j, '}');
	if (o->shards > 1) {
		json_open(&j, "shard", '{');
		json_u64(&j, "index", r->so->shard);
		json_u64(&j, "of", o->shards);
		json_u64(&j, "unit", o->frame_div > 1 ? o->frame_div : 1);
		if (r->whole_count != XR_FOREVER)
			json_u64(&j, "run_count", r->whole_count);
		if (o->pace == XR_PACE_RATE)
			json_double(&j, "run_pps", r->whole_pps);
		json_close(&j, '}');
	}
	json_open(&j, "rewrites", '[');
	for (int i = 0; i < r->plan->nspecs; i++)
		json_str(&j, NULL, r->plan->specs[i].text);
	json_close(&j, ']');
	json_flag(&j, "interrupted", res->interrupted);
	json_str(&j, "engine", res->engine);
	json_u64(&j, "threads", o->threads);
	if (!strcmp(res->engine, "kernel")) {
		json_open(&j, "backoff", '{');
		json_str(&j, "mode", o->backoff == XR_BACKOFF_SPIN ? "spin" : "skip");
		json_u64(&j, "skipped_iterations", res->backoff_skipped);
		json_double(&j, "spun_s", res->spun_ns / 1e9);
		json_close(&j, '}');
	}
	json_u64(&j, "frames_in_set", r->frames);
	json_u64(&j, "asked", res->asked);
	json_u64(&j, "sent", res->sent);
	json_u64(&j, "failed", engine_unsent_total(u));
	json_open(&j, "failed_reasons", '{');
	json_u64(&j, "driver_refused", u->ring_full);
	json_u64(&j, "redirect_error", u->redirect);
	json_u64(&j, "bad_frame", u->bad_frame);
	json_u64(&j, "interrupted", u->interrupted);
	json_u64(&j, "duration_reached", u->duration);
	json_u64(&j, "fell_behind", u->behind);
	json_u64(&j, "device_error", u->device_error);
	json_u64(&j, "unaccounted", u->unaccounted);
	json_close(&j, '}');
	if (res->xmit_err)
		json_str(&j, "driver_error", strerror(-res->xmit_err));
	json_double(&j, "duration_s", dur);
	json_double(&j, "pps", dur > 0 ? res->sent / dur : 0);
	json_double(&j, "bps",
		    dur > 0 ? (res->sent_bytes + (double)res->sent * WIRE_OVERHEAD) * 8 / dur : 0);
	json_u64(&j, "bytes", res->sent_bytes);
	if (res->replies_run_cnt) {
		json_u64(&j, "replies_xdp_ns", res->replies_run_ns);
		json_u64(&j, "replies_xdp_runs", res->replies_run_cnt);
	}
	json_open(&j, "sent_per_second", '[');
	for (unsigned int i = 0; i < res->nsec; i++)
		json_u64(&j, NULL, res->per_sec[i]);
	json_close(&j, ']');
	json_flag(&j, "replies_counted", !res->replies_uncounted);
	if (!res->replies_uncounted && r->p->report)
		r->p->report(r->st, res, r->ready_ns, NULL, &j);
	send_thresholds_judge(&r->so->fail_if, r->o, res, NULL, &j);
	*jp = j;
}

void send_headline(struct send_report *r)
{
	headline_json(NULL, send_json_members, r, r->headline, sizeof(r->headline));
}

void send_json(const struct send_report *r, FILE *f)
{
	headline_json(f, send_json_members, r, NULL, 0);
}
