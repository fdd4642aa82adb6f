// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "util/json.h"
#include "engine/pacer.h"
#include "send/live.h"

const char *send_live_serve(const char *method, const char *path, const char *body, size_t len,
			    FILE *f, void *ctx)
{
	struct send_live *sl = ctx;
	struct engine_live v;
	double el;

	if (strcmp(method, "GET") || (strcmp(path, "/") && strcmp(path, "/metrics")))
		return NULL;
	pthread_mutex_lock(&sl->live.lock);
	v = sl->live;
	pthread_mutex_unlock(&sl->live.lock);
	/* before the first frame: the run is being set up */
	el = v.start_ns && v.now_ns > v.start_ns ? (v.now_ns - v.start_ns) / 1e9 : 0;
	if (!strcmp(path, "/")) {
		struct json j = { .f = f };

		json_open(&j, NULL, '{');
		json_str(&j, "command", sl->cmd);
		json_str(&j, "interface", sl->ifname);
		json_flag(&j, "running", v.running);
		json_u64(&j, "sent", v.sent);
		json_u64(&j, "failed", v.failed);
		json_u64(&j, "bytes", v.bytes);
		if (v.total != XR_FOREVER)
			json_u64(&j, "planned", v.total);
		json_double(&j, "elapsed_s", el);
		json_double(&j, "pps", el > 0 ? v.sent / el : 0);
		json_double(&j, "target_pps", sl->target_pps);
		if (v.have_replies) {
			json_open(&j, "replies", '{');
			json_u64(&j, "answered", v.replies.answered);
			json_u64(&j, "repeated", v.replies.repeated);
			json_u64(&j, "unmatched", v.replies.unmatched);
			if (sl->proto && sl->proto->live_json)
				sl->proto->live_json(sl->proto->ctx, &v.replies, &j);
			json_close(&j, '}');
		}
		json_close(&j, '}');
		return "application/json";
	}
	fprintf(f,
		"# HELP xdpreplay_sender_sent_total Frames the driver took.\n"
		"# TYPE xdpreplay_sender_sent_total counter\n"
		"xdpreplay_sender_sent_total{command=\"%s\",iface=\"%s\"} %llu\n"
		"# HELP xdpreplay_sender_failed_total Frames asked for and not sent (every reason).\n"
		"# TYPE xdpreplay_sender_failed_total counter\n"
		"xdpreplay_sender_failed_total{command=\"%s\",iface=\"%s\"} %llu\n"
		"# TYPE xdpreplay_sender_bytes_total counter\n"
		"xdpreplay_sender_bytes_total{command=\"%s\",iface=\"%s\"} %llu\n"
		"# TYPE xdpreplay_sender_target_pps gauge\n"
		"xdpreplay_sender_target_pps{command=\"%s\",iface=\"%s\"} %.3f\n"
		"# TYPE xdpreplay_sender_running gauge\n"
		"xdpreplay_sender_running{command=\"%s\",iface=\"%s\"} %d\n",
		sl->cmd, sl->ifname, (unsigned long long)v.sent, sl->cmd, sl->ifname,
		(unsigned long long)v.failed, sl->cmd, sl->ifname, (unsigned long long)v.bytes,
		sl->cmd, sl->ifname, sl->target_pps, sl->cmd, sl->ifname, v.running);
	if (v.total != XR_FOREVER)
		fprintf(f,
			"# TYPE xdpreplay_sender_planned_frames gauge\n"
			"xdpreplay_sender_planned_frames{command=\"%s\",iface=\"%s\"} %llu\n",
			sl->cmd, sl->ifname, (unsigned long long)v.total);
	if (v.have_replies) {
		char labels[160];

		snprintf(labels, sizeof(labels), "{command=\"%s\",iface=\"%s\"}", sl->cmd,
			 sl->ifname);
		fprintf(f,
			"# HELP xdpreplay_sender_answered_total Frames of this run the server answered.\n"
			"# TYPE xdpreplay_sender_answered_total counter\n"
			"xdpreplay_sender_answered_total%s %llu\n",
			labels, (unsigned long long)v.replies.answered);
		if (sl->proto && sl->proto->live_metrics)
			sl->proto->live_metrics(sl->proto->ctx, &v.replies, f, labels);
	}
	return "text/plain; version=0.0.4";
}
