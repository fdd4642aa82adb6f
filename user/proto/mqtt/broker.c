// SPDX-License-Identifier: GPL-2.0
/*
 * The broker's count of dropped deliveries (see broker.h). Mosquitto adds
 * one to $SYS/broker/publish/messages/dropped for each message it does not
 * deliver to a subscriber whose inflight window and queue are full
 * (max_inflight_messages, max_queued_messages; a QoS-0 message is dropped
 * when it cannot go at once), and publishes it, retained, at its next
 * $SYS tick when it changed (every sys_interval seconds, 10 by default),
 * with $SYS/broker/uptime at every tick. The counter is the broker's, for
 * all its clients: what our subscribers lost beyond it is not the queues'.
 */
#include <errno.h>
#include <mosquitto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "proto/mqtt/broker.h"
#include "util/log.h"

#define SYS_DROPPED "$SYS/broker/publish/messages/dropped"
#define SYS_UPTIME "$SYS/broker/uptime"

static void on_connect(struct mosquitto *mosq, void *obj, int rc)
{
	struct mqtt_broker *b = obj;

	pthread_mutex_lock(&b->lock);
	b->connack = rc;
	b->connected = !rc;
	pthread_cond_broadcast(&b->changed);
	pthread_mutex_unlock(&b->lock);
}

static void on_disconnect(struct mosquitto *mosq, void *obj, int rc)
{
	struct mqtt_broker *b = obj;

	pthread_mutex_lock(&b->lock);
	b->connected = false;
	pthread_cond_broadcast(&b->changed);
	pthread_mutex_unlock(&b->lock);
}

static void on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *msg)
{
	struct mqtt_broker *b = obj;
	char text[32];
	char *end;
	long long v;

	if (msg->payloadlen <= 0 || msg->payloadlen >= (int)sizeof(text))
		return;
	memcpy(text, msg->payload, msg->payloadlen);
	text[msg->payloadlen] = 0;
	pthread_mutex_lock(&b->lock);
	if (!strcmp(msg->topic, SYS_UPTIME)) {
		b->ticks++;
	} else if (!strcmp(msg->topic, SYS_DROPPED)) {
		errno = 0;
		v = strtoll(text, &end, 10);
		if (!errno && end != text && !*end && v >= 0)
			b->dropped = v;
	}
	pthread_cond_broadcast(&b->changed);
	pthread_mutex_unlock(&b->lock);
}

/* Until ticks reaches want (or, want 0, the CONNACK comes): 0, -ETIMEDOUT or -ECONNRESET. Locked. */
static int broker_wait(struct mqtt_broker *b, uint64_t want, uint64_t timeout_ns)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ns / 1000000000ULL;
	until.tv_nsec += timeout_ns % 1000000000ULL;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	for (;;) {
		if (!want && b->connack >= 0)
			return 0;
		if (want && b->ticks >= want)
			return 0;
		if (want && !b->connected)
			return -ECONNRESET;
		if (pthread_cond_timedwait(&b->changed, &b->lock, &until) == ETIMEDOUT)
			return -ETIMEDOUT;
	}
}

int mqtt_broker_start(struct mqtt_broker *b, const struct mqtt_broker_opts *o)
{
	pthread_condattr_t ca;
	char id[64];
	int err, rc;

	*b = (struct mqtt_broker){ .connack = -1, .dropped = -1 };
	pthread_mutex_init(&b->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->changed, &ca);
	pthread_condattr_destroy(&ca);
	mosquitto_lib_init();
	b->lib = true;
	snprintf(id, sizeof(id), "xdpreplay-stats-%d", (int)getpid());
	b->mosq = mosquitto_new(id, true, b);
	if (!b->mosq) {
		err = -errno ?: -ENOMEM;
		pr_warn("--broker-stats: cannot make its client: %s\n", strerror(-err));
		return err;
	}
	mosquitto_connect_callback_set(b->mosq, on_connect);
	mosquitto_disconnect_callback_set(b->mosq, on_disconnect);
	mosquitto_message_callback_set(b->mosq, on_message);
	if (o->username)
		mosquitto_username_pw_set(b->mosq, o->username, o->password);
	rc = mosquitto_connect_async(b->mosq, o->host, o->port, 60);
	if (rc == MOSQ_ERR_SUCCESS)
		rc = mosquitto_loop_start(b->mosq);
	if (rc != MOSQ_ERR_SUCCESS) {
		pr_warn("--broker-stats: cannot connect to %s:%u: %s\n", o->host, o->port,
			rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc));
		return -ECONNREFUSED;
	}
	b->loop = true;
	pthread_mutex_lock(&b->lock);
	err = broker_wait(b, 0, o->timeout_ns);
	pthread_mutex_unlock(&b->lock);
	if (err || b->connack) {
		pr_warn("--broker-stats: %s:%u %s\n", o->host, o->port,
			err ? "did not answer its CONNECT" : mosquitto_connack_string(b->connack));
		return err ?: -EACCES;
	}
	/*
	 * one SUBSCRIBE each, in this order: the broker sends a subscription's
	 * retained message after its SUBACK, so the counter's (if it has one)
	 * comes before the uptime's
	 */
	if (mosquitto_subscribe(b->mosq, NULL, SYS_DROPPED, 0) != MOSQ_ERR_SUCCESS ||
	    mosquitto_subscribe(b->mosq, NULL, SYS_UPTIME, 0) != MOSQ_ERR_SUCCESS) {
		pr_warn("--broker-stats: cannot subscribe to %s\n", SYS_DROPPED);
		return -EIO;
	}
	pthread_mutex_lock(&b->lock);
	err = broker_wait(b, 1, o->timeout_ns);
	/* no counter yet: the broker has dropped nothing it published */
	b->before = b->dropped < 0 ? 0 : b->dropped;
	pthread_mutex_unlock(&b->lock);
	if (err) {
		pr_warn("--broker-stats: no %s from %s:%u in %.0f s: it needs the broker's $SYS "
			"tree (sys_interval > 0) and read access to $SYS/# in its ACL\n",
			SYS_UPTIME, o->host, o->port, o->timeout_ns / 1e9);
		return err;
	}
	return 0;
}

int mqtt_broker_dropped(struct mqtt_broker *b, uint64_t timeout_ns, uint64_t *dropped)
{
	int err;

	pthread_mutex_lock(&b->lock);
	err = broker_wait(b, b->ticks + 2, timeout_ns);
	*dropped = b->dropped > b->before ? b->dropped - b->before : 0;
	pthread_mutex_unlock(&b->lock);
	if (err)
		pr_warn("--broker-stats: %s after the run: the broker's drops not read\n",
			err == -ETIMEDOUT ? "no $SYS tick" : "the broker closed the connection");
	return err;
}

void mqtt_broker_stop(struct mqtt_broker *b)
{
	if (b->mosq) {
		if (b->loop) {
			mosquitto_disconnect(b->mosq);
			mosquitto_loop_stop(b->mosq, false);
		}
		mosquitto_destroy(b->mosq);
		b->mosq = NULL;
	}
	if (b->lib) {
		mosquitto_lib_cleanup();
		pthread_cond_destroy(&b->changed);
		pthread_mutex_destroy(&b->lock);
		b->lib = false;
	}
}
