// SPDX-License-Identifier: GPL-2.0
/* A sender's --json-stream (send/stream.h). */
#include <errno.h>
#include <time.h>
#include "util/time.h"
#include "measure/sysinfo.h"
#include "send/stream.h"
#include "util/prom.h"

/* One interval's line: second k of the run (from its first departure) and what it added */
static void interval(struct send_stream *s, unsigned int k, const struct engine_live *v,
		     const struct engine_live *prev)
{
	struct json j;

	jstream_begin(&s->js, &j, "interval");
	json_u64(&j, "second", k);
	json_u64(&j, "sent", v->sent);
	json_u64(&j, "sent_in_interval", v->sent - prev->sent);
	json_u64(&j, "failed", v->failed);
	json_u64(&j, "bytes", v->bytes);
	if (v->have_replies) {
		json_u64(&j, "answered", v->replies.answered);
		json_u64(&j, "answered_in_interval", v->replies.answered - prev->replies.answered);
	}
	json_flag(&j, "running", v->running);
	jstream_emit(&s->js, &j);
}

/* sleeps until t (CLOCK_MONOTONIC ns) or the stop flag, in steps of 50 ms */
static void stream_sleep_until(struct send_stream *s, uint64_t t)
{
	while (!atomic_load(&s->stop) && now_ns() < t) {
		uint64_t left = t - now_ns();
		struct timespec ts = { 0, left < 50000000 ? (long)left : 50000000 };

		nanosleep(&ts, NULL);
	}
}

static void *interval_thread(void *arg)
{
	struct send_stream *s = arg;
	struct engine_live v, prev = {};
	unsigned int k = 0;

	for (;;) {
		pthread_mutex_lock(&s->sl->live.lock);
		v = s->sl->live;
		pthread_mutex_unlock(&s->sl->live.lock);
		/* before the first departure the run is being set up: the seconds count from it */
		if (!v.start_ns) {
			stream_sleep_until(s, now_ns() + 10000000);
			if (atomic_load(&s->stop))
				return NULL;
			continue;
		}
		stream_sleep_until(s, v.start_ns + (k + 1) * 1000000000ULL);
		if (atomic_load(&s->stop))
			return NULL;
		pthread_mutex_lock(&s->sl->live.lock);
		v = s->sl->live;
		pthread_mutex_unlock(&s->sl->live.lock);
		interval(s, k++, &v, &prev);
		prev = v;
	}
}

int send_stream_start(struct send_stream *s, const char *path, struct send_live *sl,
		      const struct iface *ifc, double target_pps, uint64_t planned)
{
	struct json j;
	int err = jstream_open(&s->js, path);

	if (err)
		return err;
	s->sl = sl;
	atomic_store(&s->stop, false);
	jstream_begin(&s->js, &j, "start");
	json_str(&j, "command", sl->cmd);
	json_str(&j, "interface", sl->ifname);
	sysinfo_json(&j, ifc, NULL);
	json_open(&j, "settings", '{');
	json_double(&j, "target_pps", target_pps);
	if (planned != XR_FOREVER)
		json_u64(&j, "planned", planned);
	json_close(&j, '}');
	jstream_emit(&s->js, &j);
	err = -pthread_create(&s->thread, NULL, interval_thread, s);
	s->started = !err;
	return err;
}

int send_stream_end(struct send_stream *s, void (*write)(void *ctx, FILE *f), void *ctx)
{
	if (!s->js.f)
		return 0;
	atomic_store(&s->stop, true);
	if (s->started)
		pthread_join(s->thread, NULL);
	s->started = false;
	if (write)
		jstream_document(&s->js, "end", write, ctx);
	return jstream_close(&s->js);
}
