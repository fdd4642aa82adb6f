/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt's own (not the TCP core's, not the application hooks'): its
 * options and state, shared by its files: mqtt.c (the run), opts.c (the
 * options and what they say together), report.c (the books and the report).
 */
#ifndef __XR_PROTO_MQTT_MQTT_H
#define __XR_PROTO_MQTT_MQTT_H

#include <getopt.h>
#include "proto/proto.h"
#include "proto/tcp/session.h"
#include "proto/mqtt/app.h"
#include "proto/mqtt/broker.h"
#include "proto/mqtt/stream.h"

enum {
	O_CLIENT_ID = PROTO_OPT_BASE,
	O_USERNAME,
	O_PASSWORD,
	O_TOPIC,
	O_VERSION,
	O_QOS,
	O_RETAIN,
	O_KEEPALIVE,
	O_PAYLOAD,
	O_MESSAGES,
	O_BURST,
	O_SUBSCRIBE,
	O_PUBLISHERS,
	O_ANSWER,
	O_AWAIT,
	O_PATTERN,
	O_PEER,
	O_PEER_NETNS,
	O_SUBSCRIBERS,
	O_MSG_RATE,
	O_BROKER_STATS,
};

/*
 * --pattern: the published flood benchmark's four, each a whole run: this
 * process's publishers or callers, and their other end (subscribers, a
 * responder) in a child process on --peer (user/send/peer.c).
 */
enum mqtt_pattern {
	MQTT_PATTERN_NONE = 0,
	MQTT_PATTERN_FIRE, /* fire & forget: QoS 0, nobody listens */
	MQTT_PATTERN_NOTIFY, /* notifications: --subscribers listen to every publisher */
	MQTT_PATTERN_SYNC, /* sync calls: a call at a time, answered by the responder */
	MQTT_PATTERN_ASYNC, /* async calls: --burst calls at a time */
};
extern const char *const mqtt_pattern_names[];
/* the published benchmark's names, for the report */
extern const char *const mqtt_pattern_titles[];
/* async calls in flight per caller unless --burst says (the bench's choice, fewer when large) */
#define MQTT_ASYNC_WINDOW 10
/*
 * The default burst's bytes (QoS 0, an async window): what the figures in
 * docs/mqtt.md were measured with; a larger burst takes more round trips of
 * XR_TCP_FLIGHT_SEGS segments each before its answer
 */
#define MQTT_BURST_DEFAULT_BYTES 16384

/* How long --broker-stats waits for the broker: its CONNACK, the $SYS ticks of its default 10 s */
#define MQTT_BROKER_WAIT_NS (25 * 1000000000ULL)

/* What the other end of a --pattern run reported (its JSON), for this run's report. */
struct mqtt_peer_figures {
	bool ran; /* its JSON was read */
	int exit; /* its exit status */
	uint64_t sessions, connacked, subacked, refused;
	uint64_t expected, received, lost, duplicated, reordered, answers;
	uint64_t pubs_complete; /* publishers whose every message reached every subscriber */
	double p50_us, p99_us; /* publish to delivery */
};

struct mqtt {
	struct tcp t; /* the sessions */
	struct mqtt_app app; /* gen mqtt on them */
	struct mqtt_stream_opts so;
	uint64_t messages; /* per session; a subscriber's: per publisher */
	uint64_t publishers; /* --publishers: a subscriber's */
	uint32_t pub_base; /* a subscriber's first publisher (--pattern under search: the trial's) */
	bool burst_set, keepalive_set, payload_set;
	uint8_t pattern; /* enum mqtt_pattern */
	const char *peer_ifname, *peer_netns; /* --peer, --peer-netns: the other end's */
	uint64_t subscribers; /* --subscribers: notify's */
	double msg_rate; /* --msg-rate: messages per second in all, paced (0: as the broker answers) */
	bool rate_searched; /* --msg-rate search: each search trial's load sets msg_rate, messages */
	bool messages_set;
	char *peer_filter; /* the other end's topic filter, made here (freed with the state) */
	struct mqtt_peer_figures peer;
	uint16_t refused_all; /* every CONNECT answered was refused: the first code, + 1 */
	uint16_t nacked_all; /* every message answered was refused: the commonest PUBACK code, + 1 */
	/* --broker-stats: the broker's count of dropped deliveries, read after the run once */
	bool broker_stats, broker_read;
	int broker_err;
	uint64_t broker_dropped;
	struct mqtt_broker broker;
};

extern const struct option mqtt_opts[];

/* proto_mqtt's parse_opt and check (opts.c) */
int mqtt_opt(void *st, int id, const char *arg, const struct send_opts *so);
int mqtt_check(void *st, const struct send_opts *so);
/* --msg-rate's rate against the run's options (a search trial's too). 0 or XR_EXIT_USAGE after a line */
int mqtt_check_pace(struct mqtt *m, const struct send_opts *so);

/* proto_mqtt's report and verdict (report.c) */
/* The headline's clauses: sessions, then messages acknowledged (report/headline.h) */
void mqtt_headline(struct json_object *result, struct words *w);
void mqtt_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		 struct json *j);
int mqtt_verdict(void *st);

#endif /* __XR_PROTO_MQTT_MQTT_H */
