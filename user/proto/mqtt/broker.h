/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt --broker-stats: the broker's own account of the deliveries it
 * dropped, read from its $SYS tree through libmosquitto (a socket client
 * beside the sessions), before the run and after it.
 */
#ifndef __XR_MQTT_BROKER_H
#define __XR_MQTT_BROKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct mosquitto;

struct mqtt_broker {
	struct mosquitto *mosq;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool lib, loop, connected;
	int connack; /* the CONNACK's code, -1 before it */
	uint64_t ticks; /* $SYS/broker/uptime publications so far */
	int64_t dropped; /* the last $SYS/broker/publish/messages/dropped, -1 before one */
	int64_t before; /* its value as the run started (0 when the broker had published none) */
};

struct mqtt_broker_opts {
	const char *host; /* the broker's address, as text for libmosquitto */
	uint16_t port;
	const char *username, *password;
	uint64_t timeout_ns; /* for the CONNACK and each $SYS publication waited for */
};

/*
 * Connects, subscribes to the counters and reads their values as the run
 * starts. 0, or -errno after one line naming the problem.
 */
int mqtt_broker_start(struct mqtt_broker *b, const struct mqtt_broker_opts *o);

/*
 * What the broker dropped since start: its counter after two more of its
 * $SYS ticks (the first may have been under way as the run ended). 0 and
 * *dropped, or -ETIMEDOUT / -ECONNRESET after one line.
 */
int mqtt_broker_dropped(struct mqtt_broker *b, uint64_t timeout_ns, uint64_t *dropped);

void mqtt_broker_stop(struct mqtt_broker *b);

#endif /* __XR_MQTT_BROKER_H */
