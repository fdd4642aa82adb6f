// SPDX-License-Identifier: GPL-2.0
/* gen mqtt's options, each parsed once, and what they say together (checked before the run). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "proto/mqtt/mqtt.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/json.h"
#include "util/log.h"
#include "util/units.h"

const char *const mqtt_pattern_names[] = { "", "fire", "notify", "sync", "async" };
/* the published benchmark's names, for the report */
const char *const mqtt_pattern_titles[] = { "", "fire & forget", "notifications", "sync calls",
					    "async calls" };

const struct option mqtt_opts[] = {
	{ "client-id", required_argument, NULL, O_CLIENT_ID },
	{ "username", required_argument, NULL, O_USERNAME },
	{ "password", required_argument, NULL, O_PASSWORD },
	{ "topic", required_argument, NULL, O_TOPIC },
	{ "mqtt-version", required_argument, NULL, O_VERSION },
	{ "qos", required_argument, NULL, O_QOS },
	{ "retain", no_argument, NULL, O_RETAIN },
	{ "keepalive", required_argument, NULL, O_KEEPALIVE },
	{ "payload", required_argument, NULL, O_PAYLOAD },
	{ "messages", required_argument, NULL, O_MESSAGES },
	{ "burst", required_argument, NULL, O_BURST },
	{ "subscribe", required_argument, NULL, O_SUBSCRIBE },
	{ "publishers", required_argument, NULL, O_PUBLISHERS },
	{ "answer", required_argument, NULL, O_ANSWER },
	{ "await", required_argument, NULL, O_AWAIT },
	{ "pattern", required_argument, NULL, O_PATTERN },
	{ "peer", required_argument, NULL, O_PEER },
	{ "peer-netns", required_argument, NULL, O_PEER_NETNS },
	{ "subscribers", required_argument, NULL, O_SUBSCRIBERS },
	{ "msg-rate", required_argument, NULL, O_MSG_RATE },
	{ "broker-stats", no_argument, NULL, O_BROKER_STATS },
	{},
};

int mqtt_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct mqtt *m = st;
	uint64_t v;

	switch (id) {
	case O_CLIENT_ID: m->so.client_id = arg; break;
	case O_USERNAME: m->so.username = arg; break;
	case O_PASSWORD: m->so.password = arg; break;
	case O_TOPIC: m->so.topic = arg; break;
	case O_VERSION:
		if (!strcmp(arg, "3.1.1") || !strcmp(arg, "4"))
			m->so.version = 4;
		else if (!strcmp(arg, "5") || !strcmp(arg, "5.0"))
			m->so.version = 5;
		else
			return cli_usage_error(so->cmd, "--mqtt-version: 3.1.1 or 5, not '%s'",
					       arg);
		break;
	case O_QOS:
		if (strcmp(arg, "0") && strcmp(arg, "1"))
			return cli_usage_error(so->cmd, "--qos: 0 or 1, not '%s'", arg);
		m->so.qos = arg[0] - '0';
		break;
	case O_RETAIN: m->so.retain = true; break;
	case O_KEEPALIVE:
		if (cli_duration(so->cmd, "keepalive", arg, &v))
			return XR_EXIT_USAGE;
		if (v / 1000000000ULL > 65535)
			return cli_usage_error(so->cmd, "--keepalive: at most 65535 s");
		m->so.keepalive_s = v / 1000000000ULL;
		m->keepalive_set = true;
		break;
	case O_PAYLOAD:
		if (cli_count(so->cmd, "payload", arg, &v))
			return XR_EXIT_USAGE;
		if (v > XR_MQTT_PAYLOAD_MAX)
			return cli_usage_error(so->cmd, "--payload: at most %u bytes (64 KiB)",
					       XR_MQTT_PAYLOAD_MAX);
		m->so.payload = v;
		m->payload_set = true;
		break;
	case O_MESSAGES:
		if (cli_count(so->cmd, "messages", arg, &m->messages))
			return XR_EXIT_USAGE;
		if (!m->messages)
			return cli_usage_error(so->cmd, "--messages: at least 1");
		m->messages_set = true;
		break;
	case O_BURST:
		if (cli_count(so->cmd, "burst", arg, &v))
			return XR_EXIT_USAGE;
		if (!v || v > XR_MQTT_BATCH_MAX)
			return cli_usage_error(so->cmd, "--burst: 1 to %u messages",
					       XR_MQTT_BATCH_MAX);
		m->so.burst = v;
		m->burst_set = true;
		break;
	case O_SUBSCRIBE: m->so.subscribe = arg; break;
	case O_ANSWER: m->so.answer = arg; break;
	case O_AWAIT: m->so.await = arg; break;
	case O_PATTERN:
		m->pattern = MQTT_PATTERN_NONE;
		for (int i = MQTT_PATTERN_FIRE; i <= MQTT_PATTERN_ASYNC; i++)
			if (!strcmp(arg, mqtt_pattern_names[i]))
				m->pattern = i;
		if (!m->pattern)
			return cli_usage_error(
				so->cmd, "--pattern: fire, notify, sync or async, not '%s'", arg);
		break;
	case O_PEER: m->peer_ifname = arg; break;
	case O_PEER_NETNS: m->peer_netns = arg; break;
	case O_SUBSCRIBERS:
		if (cli_count(so->cmd, "subscribers", arg, &m->subscribers))
			return XR_EXIT_USAGE;
		if (!m->subscribers)
			return cli_usage_error(so->cmd, "--subscribers: at least 1");
		break;
	case O_BROKER_STATS: m->broker_stats = true; break;
	case O_MSG_RATE:
		if (!strcmp(arg, "search")) {
			m->rate_searched = true;
			break;
		}
		if (parse_number(arg, &m->msg_rate) || !(m->msg_rate > 0) || m->msg_rate > 1e9)
			return cli_usage_error(
				so->cmd,
				"--msg-rate: messages per second, above 0 (e.g. 500, 10k, 1.5M), not '%s'",
				arg);
		break;
	case O_PUBLISHERS:
		if (cli_count(so->cmd, "publishers", arg, &m->publishers))
			return XR_EXIT_USAGE;
		if (!m->publishers)
			return cli_usage_error(so->cmd, "--publishers: at least 1");
		break;
	}
	return -1;
}

/*
 * --msg-rate: every publisher connected first, then the bursts at one
 * total rate over all of them (user/proto/tcp/pace.c), so the run is
 * --count publishers x --messages; a publisher idle for half its keep-alive
 * meanwhile sends a PINGREQ.
 */
int mqtt_check_pace(struct mqtt *m, const struct send_opts *so)
{
	if (tcp_pace_check("--msg-rate", so, m->rate_searched))
		return XR_EXIT_USAGE;
	if (1e12 * m->so.burst / m->msg_rate < 1000)
		return cli_usage_error(so->cmd, "--msg-rate: at most one burst per ns");
	return 0;
}

/*
 * What publishers and subscribers share: the defaults (client id cid,
 * keep-alive keepalive_s), {c} once in the client id, credentials.
 */
static int mqtt_check_connect(struct mqtt *m, const struct send_opts *so, const char *cid,
			      uint16_t keepalive_s)
{
	const char *c;

	if (!m->so.client_id)
		m->so.client_id = cid;
	if (!m->so.version)
		m->so.version = 4;
	if (!m->keepalive_set)
		m->so.keepalive_s = keepalive_s;
	if (!m->messages)
		m->messages = 100;
	c = strstr(m->so.client_id, "{c}");
	if (!c || strstr(c + 1, "{c}"))
		return cli_usage_error(so->cmd,
				       "--client-id needs {c} once: a broker keeps one session per "
				       "client id and drops the older one");
	if (m->so.password && !m->so.username && m->so.version == 4)
		return cli_usage_error(so->cmd, "--password goes with --username in MQTT 3.1.1");
	return 0;
}

/* A subscriber's: it needs its publishers' numbers to book their stamps. */
static int mqtt_check_subscriber(struct mqtt *m, const struct send_opts *so)
{
	/*
	 * keep-alive off: a subscriber only reads, and a broker closes a client
	 * that sent nothing for 1.5 keep-alives however much it delivers to it
	 */
	if (mqtt_check_connect(m, so, "xr-sub-{c}", 0))
		return XR_EXIT_USAGE;
	if (m->so.keepalive_s)
		return cli_usage_error(
			so->cmd, "--keepalive with --subscribe: a subscriber sends no PINGREQ "
				 "for now, and a broker closes a client silent for 1.5 "
				 "keep-alives: leave it off");
	if (!m->so.subscribe[0] || strlen(m->so.subscribe) > 65535)
		return cli_usage_error(so->cmd, "--subscribe: a topic filter of 1 to 65535 bytes");
	if (m->so.retain || m->so.payload || m->burst_set || m->so.topic)
		return cli_usage_error(so->cmd,
				       "--retain, --payload, --burst and --topic are a "
				       "publisher's (a subscriber's --qos is its subscription's)");
	if (!m->publishers)
		return cli_usage_error(so->cmd, "--subscribe needs --publishers N: the publishers' "
						"--count, whose stamps (0 to N-1) it books");
	if (m->so.answer) {
		const char *c = strstr(m->so.answer, "{c}");

		if (m->so.qos)
			return cli_usage_error(so->cmd,
					       "--answer: a responder subscribes and answers at "
					       "QoS 0 (no --qos 1 for now)");
		if (!m->so.answer[0] || strpbrk(m->so.answer, "#+") || (c && strstr(c + 1, "{c}")))
			return cli_usage_error(so->cmd,
					       "--answer: a topic name, {c} (the caller) at most "
					       "once, no wildcards");
	}
	if (!so->count || so->concurrency || so->duration_ns)
		return cli_usage_error(so->cmd,
				       "--subscribe needs --count (subscribers), without "
				       "--concurrency or --duration: --wait bounds the run");
	if (so->count * m->publishers > XR_MQTT_PAIRS_MAX)
		return cli_usage_error(so->cmd,
				       "--count x --publishers: at most %u (subscriber, publisher) "
				       "pairs, not %llu",
				       XR_MQTT_PAIRS_MAX,
				       (unsigned long long)(so->count * m->publishers));
	if (m->publishers * m->messages > UINT32_MAX - 2)
		return cli_usage_error(so->cmd,
				       "--publishers x --messages: at most %u deliveries "
				       "per subscriber",
				       UINT32_MAX - 2);
	m->so.burst = 1;
	return 0;
}

/* --pattern's defaults and what it rules out; before the publishers' or callers' own checks. */
static int mqtt_check_pattern(struct mqtt *m, const struct send_opts *so)
{
	const char *name = mqtt_pattern_names[m->pattern];
	bool calls = m->pattern >= MQTT_PATTERN_SYNC;

	if (m->so.subscribe || m->so.answer || m->publishers || m->so.await)
		return cli_usage_error(so->cmd,
				       "--pattern %s makes its own other end: no --subscribe, "
				       "--answer, --publishers or --await",
				       name);
	if (m->pattern == MQTT_PATTERN_FIRE) {
		if (m->peer_ifname || m->peer_netns || m->subscribers)
			return cli_usage_error(so->cmd,
					       "--pattern fire: nobody listens to fire & forget "
					       "(no --peer, --peer-netns or --subscribers)");
		if (m->so.qos)
			return cli_usage_error(so->cmd, "--pattern fire is QoS 0");
		return 0;
	}
	if (!m->peer_ifname)
		return cli_usage_error(so->cmd,
				       "--pattern %s needs --peer IFACE: where its %s run, not -i "
				       "(one XDP program per interface; --peer-netns NAME when it "
				       "is in another network namespace)",
				       name, calls ? "responder" : "subscribers");
	if (so->ifname && !strcmp(m->peer_ifname, so->ifname) &&
	    (m->peer_netns == so->netns ||
	     (m->peer_netns && so->netns && !strcmp(m->peer_netns, so->netns))))
		return cli_usage_error(
			so->cmd,
			"--peer %s is -i's interface: the other end needs one of its "
			"own (one XDP program per interface)",
			m->peer_ifname);
	/* search's trials: each its own rate times its time, numbered from its first */
	if (!so->search &&
	    (!so->count || so->concurrency || so->duration_ns || so->first_n || so->shards > 1))
		return cli_usage_error(so->cmd,
				       "--pattern %s needs --count (its %s), without "
				       "--concurrency, --duration, --first-seq or --shard: the "
				       "other end books each one by its number, 0 to --count - 1",
				       name, calls ? "callers" : "publishers");
	if (m->subscribers && calls)
		return cli_usage_error(so->cmd, "--subscribers goes with --pattern notify");
	if (!m->payload_set)
		m->so.payload = XR_MQTT_STAMP;
	if (m->so.payload < XR_MQTT_STAMP)
		return cli_usage_error(so->cmd,
				       "--pattern %s needs --payload >= %u: the stamp that names "
				       "the sender and times the message",
				       name, XR_MQTT_STAMP);
	if (!m->messages)
		m->messages = 100;
	if (!calls) {
		if (!m->subscribers)
			m->subscribers = 1;
		return 0;
	}
	if (m->so.qos)
		return cli_usage_error(so->cmd, "--pattern %s: calls go at QoS 0 for now", name);
	if (!m->so.topic)
		m->so.topic = "req/{c}";
	m->so.await = "res/{c}";
	if (m->pattern == MQTT_PATTERN_SYNC) {
		if (m->burst_set && m->so.burst != 1)
			return cli_usage_error(so->cmd,
					       "--pattern sync makes one call at a time (--burst W "
					       "is --pattern async's window)");
	} else if (!m->burst_set) {
		/* a window is one burst: of at most MQTT_BURST_DEFAULT_BYTES unless one message is more */
		size_t len = mqtt_message_len(&m->so);
		uint32_t w = MQTT_ASYNC_WINDOW;

		while (w > 1 && ((uint64_t)w * len > MQTT_BURST_DEFAULT_BYTES || m->messages % w))
			w--;
		m->so.burst = w;
		m->burst_set = true;
	}
	return 0;
}

int mqtt_check(void *st, const struct send_opts *so)
{
	struct mqtt *m = st;
	const char *c;

	if (!m->pattern && (m->peer_ifname || m->peer_netns || m->subscribers))
		return cli_usage_error(so->cmd,
				       "--peer, --peer-netns and --subscribers go with --pattern");
	if (m->pattern && mqtt_check_pattern(m, so))
		return XR_EXIT_USAGE;

	if (m->broker_stats &&
	    (!(m->so.subscribe || m->pattern == MQTT_PATTERN_NOTIFY) || so->search))
		return cli_usage_error(
			so->cmd, "--broker-stats goes with --subscribe or --pattern notify (it "
				 "attributes the subscribers' lost deliveries), not under search "
				 "for now");
	if (m->so.subscribe && m->so.await)
		return cli_usage_error(so->cmd,
				       "--await is a caller's, --subscribe a subscriber's");
	if (m->rate_searched) {
		if (!so->search)
			return cli_usage_error(
				so->cmd, "--msg-rate search is for search's trials (xdpreplay "
					 "search ... -- gen mqtt --msg-rate search): give a rate");
		if (m->messages_set)
			return cli_usage_error(
				so->cmd, "--msg-rate search: each trial's --messages is its rate "
					 "x time over --count publishers: give none");
		if (tcp_pace_check("--msg-rate", so, true))
			return XR_EXIT_USAGE;
		/* a departure per message: the trials' rate is their messages' */
		if (!m->burst_set) {
			m->so.burst = 1;
			m->burst_set = true;
		}
	}
	if ((m->msg_rate || m->rate_searched) && (m->so.subscribe || m->so.await))
		return cli_usage_error(so->cmd, "--msg-rate paces publishers: not with --%s",
				       m->so.subscribe ? "subscribe" :
							 "await (calls wait for their answers)");
	if (m->so.subscribe)
		return mqtt_check_subscriber(m, so);
	if (m->so.answer)
		return cli_usage_error(so->cmd, "--answer goes with --subscribe (a responder)");
	if (m->publishers)
		return cli_usage_error(so->cmd, "--publishers goes with --subscribe");
	if (mqtt_check_connect(m, so, "xr-{c}", 60))
		return XR_EXIT_USAGE;
	if (!m->so.topic)
		m->so.topic = "msg/{c}";
	c = strstr(m->so.topic, "{c}");
	if (c && strstr(c + 1, "{c}"))
		return cli_usage_error(so->cmd, "--topic holds {c} at most once");
	if (!m->so.topic[0] || strpbrk(m->so.topic, "#+"))
		return cli_usage_error(
			so->cmd, "--topic: a topic name to publish to (no wildcards, not empty)");
	if (m->so.await) {
		c = strstr(m->so.await, "{c}");
		if (!c || strstr(c + 1, "{c}") || strlen(m->so.await) > 65535)
			return cli_usage_error(so->cmd,
					       "--await needs {c} once: each caller waits for its "
					       "own answers (a responder's --answer res/{c})");
		if (m->so.qos)
			return cli_usage_error(so->cmd, "--await: calls go at QoS 0 for now");
		if (m->so.payload < XR_MQTT_STAMP)
			return cli_usage_error(
				so->cmd,
				"--await needs --payload >= %u: the stamp that names "
				"the caller and times the call",
				XR_MQTT_STAMP);
		if (so->count > XR_MQTT_PAIRS_MAX)
			return cli_usage_error(so->cmd, "--await: at most %u callers (--count)",
					       XR_MQTT_PAIRS_MAX);
	}
	if (!m->burst_set) {
		/*
		 * QoS 1: one message, one PUBACK (sync); QoS 0: what one request holds
		 * with its PINGREQ (the pump sends it in full segments: bpf/shared/tcp.h),
		 * each burst costing a round trip. Measured here, 100 x 1,000 messages of
		 * 16 B: 175k msg/s in bursts of 5, 369k in bursts of 50; one connection's
		 * 1 KB messages: 12.5k/s in bursts of 1 (one segment's worth), 55k/s in
		 * bursts of 14.
		 */
		uint64_t fit = (MQTT_BURST_DEFAULT_BYTES - 2) / mqtt_message_len(&m->so);

		/* a caller's default: sync calls, one at a time */
		m->so.burst = m->so.qos || !fit || m->so.await ? 1 :
			      fit > XR_MQTT_BATCH_MAX	       ? XR_MQTT_BATCH_MAX :
								 fit;
		while (m->messages % m->so.burst)
			m->so.burst--;
	}
	if (m->messages % m->so.burst)
		return cli_usage_error(so->cmd,
				       "--messages (%llu) must be a multiple of --burst (%u)",
				       (unsigned long long)m->messages, m->so.burst);
	if (m->messages / m->so.burst > 65534)
		return cli_usage_error(so->cmd,
				       "--messages: at most 65534 bursts per session (%llu asked)",
				       (unsigned long long)(m->messages / m->so.burst));
	return m->msg_rate ? mqtt_check_pace(m, so) : 0;
}
