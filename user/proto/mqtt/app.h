/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt on the TCP sessions (proto/tcp/app.h): its configuration in XDP,
 * its maps, its subscribers' replies and its publishers' keep-alives, what
 * the broker said and what the subscribers received.
 */
#ifndef __XR_PROTO_MQTT_APP_H
#define __XR_PROTO_MQTT_APP_H

#include "proto/tcp/session.h"

struct mqtt_app {
	struct xr_mqtt_cfg cfg;
	struct tcp_app tcp;
	uint32_t table; /* the sessions' table slots (its pubacks' and answers' too) */
	uint64_t why[XR_MQTT_WHY_CELLS]; /* what the broker said (mqtt_reasons) */
	/* subscribers and callers: the deliveries' books per pair (copied at the end), their latencies */
	struct xr_mqtt_recv *recv;
	uint64_t nrecv;
	struct engine_replies deliver;
	/* QoS-1 subscribers: their PUBACKs' ids (mqtt_pubacks, mapped), for retransmissions */
	struct xr_mqtt_pubacks *pubacks;
	size_t pubacks_sz;
	/* responders: their answers' stamps (mqtt_answers, mapped), for retransmissions */
	struct xr_mqtt_answers *answers;
	size_t answers_sz;
};

/* a's hooks for its sessions (once a->cfg is whole), into t->app */
void mqtt_app_attach(struct mqtt_app *a, struct tcp *t);

void mqtt_app_free(struct mqtt_app *a);

#endif /* __XR_PROTO_MQTT_APP_H */
