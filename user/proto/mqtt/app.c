// SPDX-License-Identifier: GPL-2.0
/* gen mqtt on the TCP sessions: the hooks of proto/tcp/app.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "report/figures.h"
#include "proto/mqtt/app.h"
#include "proto/mqtt/stream.h"
#include "engine/replies.h"
#include "util/json.h"
#include "util/prom.h"
#include "gen.skel.h"

/* Replying subscribers (QoS 1, or responders): their replies follow request 0 (bpf/shared/mqtt.h) */
static bool mqtt_subscribers_reply(const struct xr_mqtt_cfg *c)
{
	return c->subscriber && (c->sub_qos || c->responder);
}

/* Sessions that book stamps in mqtt_recv: subscribers, and callers (their answers) */
static bool mqtt_books_stamps(const struct xr_mqtt_cfg *c)
{
	return c->subscriber || c->caller;
}

static int mqtt_before_load(void *ctx, const struct tcp *t, struct gen_bpf *skel)
{
	struct mqtt_app *a = ctx;
	const struct xr_mqtt_cfg *c = &a->cfg;

	a->table = t->table;
	skel->rodata->mqtt_cfg = *c;
	return bpf_map__set_max_entries(skel->maps.mqtt_recv, mqtt_books_stamps(c) ? c->subs * c->pubs : 1) ?:
		       bpf_map__set_max_entries(skel->maps.mqtt_pubacks, c->subscriber && c->sub_qos && !c->responder ? t->table : 1) ?:
		       bpf_map__set_max_entries(skel->maps.mqtt_answers,
						c->responder ? t->table : 1);
}

static int mqtt_after_load(void *ctx, const struct tcp *t, struct gen_bpf *skel)
{
	struct mqtt_app *a = ctx;

	if (a->cfg.responder)
		a->answers = engine_map_mmap(skel->maps.mqtt_answers, &a->answers_sz);
	else if (mqtt_subscribers_reply(&a->cfg))
		a->pubacks = engine_map_mmap(skel->maps.mqtt_pubacks, &a->pubacks_sz);
	return mqtt_subscribers_reply(&a->cfg) && !a->pubacks && !a->answers ? -ENOMEM : 0;
}

static void mqtt_reply_at(const void *ctx, uint32_t slot, uint32_t at, uint8_t *buf)
{
	const struct mqtt_app *a = ctx;

	if (a->answers)
		mqtt_reply_write(&a->cfg, a->answers[slot].stamp[at], 0, buf);
	else
		mqtt_reply_write(&a->cfg, NULL, a->pubacks[slot].pid[at], buf);
}

static uint64_t mqtt_ended(const __u64 *ctr)
{
	return ctr[XR_MQTT_REFUSED] + ctr[XR_MQTT_PROTOCOL] + ctr[XR_MQTT_SUB_REFUSED];
}

static uint64_t mqtt_ready(const __u64 *ctr)
{
	return ctr[XR_MQTT_SUBACKED];
}

static void mqtt_failed(const __u64 *ctr, uint64_t *refused, uint64_t *protocol)
{
	*refused = ctr[XR_MQTT_REFUSED] + ctr[XR_MQTT_SUB_REFUSED];
	*protocol = ctr[XR_MQTT_PROTOCOL];
}

/* --listen: the subscribers' deliveries, or the messages the broker took */
static void mqtt_live_json(const void *ctx, const struct xr_replies_stats *r, struct json *j)
{
	const struct mqtt_app *a = ctx;

	if (a->cfg.subscriber) {
		json_open(j, "deliveries", '{');
		json_u64(j, "subacked", r->ctr[XR_MQTT_SUBACKED]);
		json_u64(j, "expected", (uint64_t)a->cfg.subs * a->cfg.sub_expect);
		json_u64(j, "delivered", r->ctr[XR_MQTT_DELIVERED]);
		json_close(j, '}');
		return;
	}
	json_open(j, "messages", '{');
	json_u64(j, "acked", r->ctr[XR_MQTT_ACKED]);
	json_u64(j, "refused", r->ctr[XR_MQTT_NACKED]);
	json_close(j, '}');
}

/* A row of sessions.per_second: the subscribers' deliveries, or the messages the broker took */
static void mqtt_second_json(const void *ctx, const struct xr_replies_stats *now,
			     const struct xr_replies_stats *before, struct json *j)
{
	const struct mqtt_app *a = ctx;

	if (a->cfg.subscriber)
		json_u64(j, "delivered",
			 now->ctr[XR_MQTT_DELIVERED] - before->ctr[XR_MQTT_DELIVERED]);
	else
		json_u64(j, "messages_acked", now->ctr[XR_MQTT_ACKED] - before->ctr[XR_MQTT_ACKED]);
}

static void mqtt_live_metrics(const void *ctx, const struct xr_replies_stats *r, struct prom *p)
{
	const struct mqtt_app *a = ctx;

	if (a->cfg.subscriber) {
		prom_family(p, "xdpreplay_mqtt_delivered", PROM_COUNTER,
			    "PUBLISH packets delivered to the subscribers.");
		prom_u64(p, r->ctr[XR_MQTT_DELIVERED], NULL);
		return;
	}
	figure_prom_family(p, "xdpreplay_mqtt_acked", PROM_COUNTER);
	prom_u64(p, r->ctr[XR_MQTT_ACKED], NULL);
}

/* The broker's reasons, and the deliveries' books copied before the maps go */
static void mqtt_finish(void *ctx, struct gen_bpf *skel)
{
	struct mqtt_app *a = ctx;
	struct xr_mqtt_recv *m;
	size_t sz;

	engine_percpu_sum(bpf_map__fd(skel->maps.mqtt_reasons), XR_MQTT_WHY_CELLS, a->why);
	if (!mqtt_books_stamps(&a->cfg))
		return;
	m = engine_map_mmap(skel->maps.mqtt_recv, &sz);
	engine_hist_read(bpf_map__fd(skel->maps.mqtt_deliver_hist), &a->deliver);
	a->nrecv = (uint64_t)a->cfg.subs * a->cfg.pubs;
	a->recv = m ? malloc(a->nrecv * sizeof(*a->recv)) : NULL;
	if (a->recv)
		memcpy(a->recv, m, a->nrecv * sizeof(*a->recv));
	else
		a->nrecv = 0;
	if (m)
		munmap(m, sz);
}

static void mqtt_close(void *ctx)
{
	struct mqtt_app *a = ctx;

	if (a->pubacks)
		munmap(a->pubacks, a->pubacks_sz);
	if (a->answers)
		munmap(a->answers, a->answers_sz);
	a->pubacks = NULL;
	a->answers = NULL;
}

void mqtt_app_attach(struct mqtt_app *a, struct tcp *t)
{
	const struct xr_mqtt_cfg *c = &a->cfg;
	bool publisher = !c->subscriber && !c->caller;

	a->tcp = (struct tcp_app){
		.ctx = a,
		.before_load = mqtt_before_load,
		.after_load = mqtt_after_load,
		.reply_len = !mqtt_subscribers_reply(c) ? 0 :
			     c->responder		? c->ans_len :
							  4,
		.reply_ring = XR_MQTT_REPLY_RING,
		.reply_write = mqtt_reply_at,
		.ping = { 0xc0, 0 }, /* PINGREQ */
		.ping_len = publisher ? 2 : 0,
		.pings_answered = XR_MQTT_PINGS_ANSWERED,
		/* a responder's slots hold 32 KiB of stamps each */
		.large_slots = c->responder,
		.ended = mqtt_ended,
		.ready = mqtt_ready,
		.failed = mqtt_failed,
		.second_json = mqtt_second_json,
		.live_json = mqtt_live_json,
		.live_metrics = mqtt_live_metrics,
		.finish = mqtt_finish,
		.close = mqtt_close,
	};
	t->app = &a->tcp;
}

void mqtt_app_free(struct mqtt_app *a)
{
	free(a->deliver.hist);
	free(a->recv);
}
