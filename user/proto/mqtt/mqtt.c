// SPDX-License-Identifier: GPL-2.0
/*
 * gen mqtt: MQTT publishers on gen tcp's socket-less sessions. Session c
 * connects (its client id holds c), publishes --messages messages in bursts of
 * --burst, each burst answered before the next (PUBACKs at QoS 1, a PINGRESP
 * at QoS 0), and says DISCONNECT on its FIN; all of it in XDP
 * (bpf/proto/mqtt.bpf.h on bpf/proto/tcp.bpf.h). Here: the options, the
 * stream (stream.c) and the books of every message asked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "proto/tcp/session.h"
#include "proto/mqtt/app.h"
#include "proto/mqtt/broker.h"
#include "proto/mqtt/stream.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/bytes.h"
#include "util/jsonpath.h"
#include "util/log.h"
#include "util/units.h"

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
static const char *const mqtt_pattern_names[] = { "", "fire", "notify", "sync", "async" };
/* the published benchmark's names, for the report */
static const char *const mqtt_pattern_titles[] = { "", "fire & forget", "notifications",
						   "sync calls", "async calls" };
/* async calls in flight per caller unless --burst says (the bench's choice, fewer when large) */
#define MQTT_ASYNC_WINDOW 10
/*
 * The default burst's bytes (QoS 0, an async window): what the figures in
 * docs/mqtt.md were measured with; a larger burst takes more round trips of
 * XR_TCP_FLIGHT_SEGS segments each before its answer
 */
#define MQTT_BURST_DEFAULT_BYTES 16384

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

static const struct option mqtt_opts[] = {
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

static int mqtt_opt(void *st, int id, const char *arg, const struct send_opts *so)
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
static int mqtt_check_pace(struct mqtt *m, const struct send_opts *so)
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

static int mqtt_check(void *st, const struct send_opts *so)
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

/* How long --broker-stats waits for the broker: its CONNACK, the $SYS ticks of its default 10 s */
#define MQTT_BROKER_WAIT_NS (25 * 1000000000ULL)

/*
 * --broker-stats: a socket client, from the address this host routes to the
 * broker from; XDP takes the broker's segments to the sessions' sources, so
 * that address must not be one of them
 */
static int mqtt_broker_stats_start(struct mqtt *m, const struct send_opts *so,
				   const struct xr_reply_match *pool)
{
	bool v6 = so->net.dst.ipv6;
	int af = v6 ? AF_INET6 : AF_INET;
	struct sockaddr_in6 to6 = { .sin6_family = AF_INET6, .sin6_port = htons(so->net.dst.port) },
			    from6;
	struct sockaddr_in to4 = { .sin_family = AF_INET, .sin_port = htons(so->net.dst.port) },
			   from4;
	socklen_t len = v6 ? sizeof(from6) : sizeof(from4);
	char host[INET6_ADDRSTRLEN], here[INET6_ADDRSTRLEN];
	const uint8_t *a;
	bool ours;
	int fd, err = 0;

	memcpy(&to6.sin6_addr, so->net.dst.addr, 16);
	memcpy(&to4.sin_addr, so->net.dst.addr, 4);
	inet_ntop(af, so->net.dst.addr, host, sizeof(host));
	fd = socket(af, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    connect(fd, v6 ? (struct sockaddr *)&to6 : (struct sockaddr *)&to4,
		    v6 ? sizeof(to6) : sizeof(to4)) ||
	    getsockname(fd, v6 ? (struct sockaddr *)&from6 : (struct sockaddr *)&from4, &len))
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (err) {
		pr_warn("--broker-stats: no route to %s: %s\n", host, strerror(-err));
		return err;
	}
	a = v6 ? from6.sin6_addr.s6_addr : (const uint8_t *)&from4.sin_addr;
	ours = v6 ? !memcmp(a, pool->src_hi6, 8) &&
			       get64(a + 8) - pool->src_base6 < pool->src_count :
		    get32(a) - pool->src_base < pool->src_count;
	if (ours) {
		inet_ntop(af, a, here, sizeof(here));
		pr_warn("--broker-stats connects from %s, one of the sessions' sources (XDP takes "
			"their segments): give --src a pool without it\n",
			here);
		return -EINVAL;
	}
	return mqtt_broker_start(&m->broker,
				 &(struct mqtt_broker_opts){ .host = host,
							     .port = so->net.dst.port,
							     .username = m->so.username,
							     .password = m->so.password,
							     .timeout_ns = MQTT_BROKER_WAIT_NS });
}

static int mqtt_build(void *st, const struct send_opts *so, const struct iface *ifc,
		      struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct mqtt *m = st;
	struct tcp *t = &m->t;
	struct mqtt_app *a = &m->app;
	int err;

	err = mqtt_stream_build(&m->so, &t->first, &t->first_len, &t->req, &t->req_len,
				&m->app.cfg);
	if (err)
		return err;
	t->requests = 1 + m->messages / m->so.burst;
	/* --msg-rate: a burst departs every burst / rate seconds */
	if (m->msg_rate) {
		t->pace.ps = 1e12 * m->so.burst / m->msg_rate;
		/* publishers' keep-alives (callers and subscribers hear from the broker) */
		if (!m->so.subscribe && !m->so.await)
			t->pace.keepalive_ns = m->so.keepalive_s * 1000000000ULL;
	}
	if (m->so.await) {
		/*
		 * callers: each books its own answers, caller c's in mqtt_recv[c %
		 * rows], as many rows as the run has callers (a search's trial:
		 * its rate times its time), so that no two share one
		 */
		double callers = so->count ? so->count : so->pps * (so->duration_ns / 1e9) + 1;

		if ((!so->count && (!so->pps || !so->duration_ns || so->concurrency)) ||
		    callers > XR_MQTT_PAIRS_MAX) {
			pr_warn("--await: callers need --count (at most %u), or --pps with --duration "
				"and no --concurrency: each one's answers are booked apart\n",
				XR_MQTT_PAIRS_MAX);
			return -EINVAL;
		}
		a->cfg.pubs = callers;
		a->cfg.subs = 1;
	}
	if (m->so.subscribe) {
		/* one request, CONNECT and SUBSCRIBE, answered by CONNACK, SUBACK and the deliveries */
		t->req = t->first;
		t->req_len = t->first_len;
		t->requests = 1;
		a->cfg.subscriber = 1;
		a->cfg.sub_qos = m->so.qos;
		a->cfg.qos = 0;
		a->cfg.pubs = m->publishers;
		a->cfg.pub_base = m->pub_base;
		a->cfg.subs = so->count;
		a->cfg.sub_expect = m->publishers * m->messages;
	}
	t->response = XR_TCP_RESP_MQTT;
	t->close = XR_TCP_CLOSE_FIN;
	memcpy(t->bye, "\xe0\0", 2); /* DISCONNECT, normal (3.1.1 and 5.0) */
	t->bye_len = 2;
	t->patch = mqtt_stream_patch;
	t->patch_ctx = &m->app.cfg;
	mqtt_app_attach(&m->app, t);
	err = tcp_sessions_build(t, so, ifc, fs, plan, o);
	if (!err && m->broker_stats)
		err = mqtt_broker_stats_start(m, so, &o->rpl);
	return err;
}

/* Every message asked, by what became of it. */
struct mqtt_books {
	uint64_t asked, sent, acked, nacked, unanswered, not_sent;
};

static void mqtt_books(const struct mqtt *m, const struct engine_result *res, struct mqtt_books *b)
{
	const __u64 *c = res->replies.st.ctr;
	/* a burst partly on the wire when the run ended was sent too (the broker may have it) */
	uint64_t bursts = c[XR_TCP_REQUESTS] - c[XR_MQTT_CONNECTS] + m->t.stalled.request_partial;

	*b = (struct mqtt_books){ .asked = res->asked * m->messages,
				  .sent = bursts * m->so.burst,
				  .acked = c[XR_MQTT_ACKED],
				  .nacked = c[XR_MQTT_NACKED] };
	b->unanswered = b->sent - b->acked - b->nacked;
	b->not_sent = b->asked - b->sent;
}

/* A reason code's name (MQTT 5.0 2.4, and 3.1.1's CONNACK return codes), or NULL. */
static const char *mqtt_reason_name(uint32_t cell)
{
	static const struct {
		uint16_t cell;
		const char *name;
	} names[] = {
		{ XR_MQTT_WHY_CONNACK + 1, "unacceptable protocol version" },
		{ XR_MQTT_WHY_CONNACK + 2, "identifier rejected" },
		{ XR_MQTT_WHY_CONNACK + 3, "server unavailable" },
		{ XR_MQTT_WHY_CONNACK + 4, "bad user name or password" },
		{ XR_MQTT_WHY_CONNACK + 5, "not authorised" },
		{ XR_MQTT_WHY_CONNACK + 0x84, "unsupported protocol version" },
		{ XR_MQTT_WHY_CONNACK + 0x85, "client identifier not valid" },
		{ XR_MQTT_WHY_CONNACK + 0x86, "bad user name or password" },
		{ XR_MQTT_WHY_CONNACK + 0x87, "not authorized" },
		{ XR_MQTT_WHY_CONNACK + 0x88, "server unavailable" },
		{ XR_MQTT_WHY_CONNACK + 0x89, "server busy" },
		{ XR_MQTT_WHY_CONNACK + 0x8a, "banned" },
		{ XR_MQTT_WHY_CONNACK + 0x95, "packet too large" },
		{ XR_MQTT_WHY_CONNACK + 0x97, "quota exceeded" },
		{ XR_MQTT_WHY_CONNACK + 0x9f, "connection rate exceeded" },
		{ XR_MQTT_WHY_PUBACK + 0x10, "no matching subscribers" },
		{ XR_MQTT_WHY_PUBACK + 0x80, "unspecified error" },
		{ XR_MQTT_WHY_PUBACK + 0x83, "implementation specific error" },
		{ XR_MQTT_WHY_PUBACK + 0x87, "not authorized" },
		{ XR_MQTT_WHY_PUBACK + 0x90, "topic name invalid" },
		{ XR_MQTT_WHY_PUBACK + 0x91, "packet identifier in use" },
		/* not one of 5.0's PUBACK codes, but Mosquitto's past message_size_limit */
		{ XR_MQTT_WHY_PUBACK + 0x95, "packet too large" },
		{ XR_MQTT_WHY_PUBACK + 0x97, "quota exceeded" },
		{ XR_MQTT_WHY_PUBACK + 0x99, "payload format invalid" },
		{ XR_MQTT_WHY_DISCONNECT + 0x81, "malformed packet" },
		{ XR_MQTT_WHY_DISCONNECT + 0x82, "protocol error" },
		{ XR_MQTT_WHY_DISCONNECT + 0x87, "not authorized" },
		{ XR_MQTT_WHY_DISCONNECT + 0x89, "server busy" },
		{ XR_MQTT_WHY_DISCONNECT + 0x8b, "server shutting down" },
		{ XR_MQTT_WHY_DISCONNECT + 0x8d, "keep alive timeout" },
		{ XR_MQTT_WHY_DISCONNECT + 0x8e, "session taken over" },
		{ XR_MQTT_WHY_DISCONNECT + 0x90, "topic name invalid" },
		{ XR_MQTT_WHY_DISCONNECT + 0x93, "receive maximum exceeded" },
		{ XR_MQTT_WHY_DISCONNECT + 0x95, "packet too large" },
		{ XR_MQTT_WHY_DISCONNECT + 0x97, "quota exceeded" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].cell == cell)
			return names[i].name;
	return NULL;
}

/* What the broker said, by reason, from cell base: "code (name) count, ..." or JSON */
static void mqtt_reasons(const struct mqtt_app *a, uint32_t base, FILE *human, struct json *j,
			 const char *key)
{
	const char *sep = "";

	if (j)
		json_open(j, key, '{');
	for (uint32_t rc = 0; rc < 256 && base + rc < XR_MQTT_WHY_CELLS; rc++) {
		char k[8];

		if (!a->why[base + rc])
			continue;
		snprintf(k, sizeof(k), "0x%02x", rc);
		if (human) {
			const char *name = mqtt_reason_name(base + rc);

			fprintf(human, "%s%s%s%s%s %llu", sep, k, name ? " (" : "",
				name ? name : "", name ? ")" : "",
				(unsigned long long)a->why[base + rc]);
		}
		if (j)
			json_u64(j, k, a->why[base + rc]);
		sep = ", ";
	}
	if (j)
		json_close(j, '}');
}

/*
 * "N PACKET VERB, M refused (codes: ...)": the broker's CONNACKs (whose
 * 3.1.1 codes are return codes) or SUBACKs, the refused by code
 */
static void mqtt_acks_line(const struct mqtt_app *a, FILE *human, const char *packet,
			   const char *verb, uint64_t ok, uint64_t refused, uint32_t base)
{
	fprintf(human, "%llu %s %s, %llu refused", (unsigned long long)ok, packet, verb,
		(unsigned long long)refused);
	if (refused) {
		fprintf(human, " (%s: ", base == XR_MQTT_WHY_CONNACK ? "return codes" : "codes");
		mqtt_reasons(a, base, human, NULL, NULL);
		fputc(')', human);
	}
}

/* Deliveries to the subscribers, by what became of each one they waited for. */
struct mqtt_deliveries {
	uint64_t expected, received, lost, duplicated, reordered;
	uint64_t pubs_complete; /* publishers whose every message reached every subscriber */
	uint64_t worst_pub, worst_got; /* the publisher the fewest reached */
};

/* Publisher p's deliveries, summed over the subscribers. */
static void mqtt_publisher_sum(const struct mqtt_app *a, uint64_t p, struct xr_mqtt_recv *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint64_t i = 0; i < a->cfg.subs && a->nrecv; i++) {
		const struct xr_mqtt_recv *v = &a->recv[i * a->cfg.pubs + p];

		sum->got += v->got;
		sum->dup += v->dup;
		sum->late += v->late;
	}
}

static void mqtt_deliveries(const struct mqtt *m, struct mqtt_deliveries *d)
{
	const struct mqtt_app *a = &m->app;
	uint64_t per_pub = m->messages * a->cfg.subs;

	*d = (struct mqtt_deliveries){ .expected = per_pub * a->cfg.pubs, .worst_got = UINT64_MAX };
	for (uint64_t p = 0; p < a->cfg.pubs; p++) {
		struct xr_mqtt_recv sum;

		mqtt_publisher_sum(a, p, &sum);
		d->received += sum.got;
		d->duplicated += sum.dup;
		d->reordered += sum.late;
		d->pubs_complete += sum.got == per_pub;
		if (sum.got < d->worst_got) {
			d->worst_got = sum.got;
			d->worst_pub = p;
		}
	}
	/* a sequence number past --messages is booked as received: lost never goes below 0 */
	d->lost = d->expected > d->received ? d->expected - d->received : 0;
}

/* Per-publisher rows in the JSON up to this many publishers */
#define MQTT_JSON_PUBLISHERS 10000

/* --broker-stats: the broker's count after the run, read once (the report may be written twice) */
static void mqtt_broker_read(struct mqtt *m)
{
	if (!m->broker_stats || m->broker_read)
		return;
	m->broker_err = mqtt_broker_dropped(&m->broker, MQTT_BROKER_WAIT_NS, &m->broker_dropped);
	m->broker_read = true;
}

/* lost deliveries against the broker's count of drops: a line (human) or JSON members (j) */
static void mqtt_lost_attributed(const struct mqtt *m, uint64_t lost, FILE *human, struct json *j)
{
	uint64_t unattributed = lost > m->broker_dropped ? lost - m->broker_dropped : 0;

	if (human)
		fprintf(human,
			"  lost: %llu; the broker dropped %llu (its inflight and queue limits, for "
			"all its clients: $SYS/broker/publish/messages/dropped over the run), %llu "
			"not attributed\n",
			(unsigned long long)lost, (unsigned long long)m->broker_dropped,
			(unsigned long long)unattributed);
	if (j) {
		json_u64(j, "broker_dropped", m->broker_dropped);
		json_u64(j, "lost_unattributed", unattributed);
	}
}

static void mqtt_report_subscribers(struct mqtt *m, const struct engine_result *res, FILE *human,
				    struct json *j)
{
	const struct mqtt_app *a = &m->app;
	const __u64 *c = res->replies.st.ctr;
	struct mqtt_deliveries d;

	mqtt_deliveries(m, &d);
	mqtt_broker_read(m);
	if (human) {
		fprintf(human, "  subscribers: ");
		mqtt_acks_line(a, human, "CONNACK", "accepted", c[XR_MQTT_CONNACKED],
			       c[XR_MQTT_REFUSED], XR_MQTT_WHY_CONNACK);
		fprintf(human, "; ");
		mqtt_acks_line(a, human, "SUBACK", "granted", c[XR_MQTT_SUBACKED],
			       c[XR_MQTT_SUB_REFUSED], XR_MQTT_WHY_SUBACK);
		fputc('\n', human);
		fprintf(human,
			"  deliveries: %llu expected (%llu publishers x %llu messages x %u "
			"subscribers), %llu received, %llu lost, %llu duplicated, %llu reordered\n",
			(unsigned long long)d.expected, (unsigned long long)a->cfg.pubs,
			(unsigned long long)m->messages, a->cfg.subs,
			(unsigned long long)d.received, (unsigned long long)d.lost,
			(unsigned long long)d.duplicated, (unsigned long long)d.reordered);
		if (m->broker_stats && !m->broker_err)
			mqtt_lost_attributed(m, d.lost, human, NULL);
		fprintf(human, "  publishers: %llu of %llu reached every subscriber whole",
			(unsigned long long)d.pubs_complete, (unsigned long long)a->cfg.pubs);
		if (d.pubs_complete < a->cfg.pubs)
			fprintf(human, "; the fewest: publisher %llu, %llu of %llu",
				(unsigned long long)d.worst_pub, (unsigned long long)d.worst_got,
				(unsigned long long)(m->messages * a->cfg.subs));
		fputc('\n', human);
		if (c[XR_MQTT_UNSTAMPED] || c[XR_MQTT_FOREIGN])
			fprintf(human,
				"  deliveries not booked: %llu without a stamp (payload under %u B), "
				"%llu from publishers past --publishers\n",
				(unsigned long long)c[XR_MQTT_UNSTAMPED], XR_MQTT_STAMP,
				(unsigned long long)c[XR_MQTT_FOREIGN]);
		if (a->cfg.sub_qos)
			fprintf(human,
				"  QoS-1 subscription: %llu PUBACKs sent; %llu segments of "
				"deliveries held back until the broker took earlier PUBACKs; "
				"their ids kept in %.1f MiB\n",
				(unsigned long long)c[XR_MQTT_REPLIES],
				(unsigned long long)c[XR_MQTT_HELD], a->pubacks_sz / 1048576.0);
		if (a->cfg.responder)
			fprintf(human,
				"  responder: %llu answers sent to %s (%u B each, the request's "
				"stamp); %llu segments of requests held back until the broker "
				"took earlier answers; their stamps kept in %.1f MiB\n",
				(unsigned long long)c[XR_MQTT_REPLIES], m->so.answer,
				a->cfg.ans_len, (unsigned long long)c[XR_MQTT_HELD],
				a->answers_sz / 1048576.0);
		if (a->deliver.hist)
			replies_hist_line(human, "publish to delivery", &a->deliver);
	}
	if (!j)
		return;
	json_open(j, "subscribers", '{');
	json_u64(j, "connacked", c[XR_MQTT_CONNACKED]);
	json_u64(j, "refused", c[XR_MQTT_REFUSED]);
	mqtt_reasons(a, XR_MQTT_WHY_CONNACK, NULL, j, "refused_by_code");
	json_u64(j, "subacked", c[XR_MQTT_SUBACKED]);
	json_u64(j, "sub_refused", c[XR_MQTT_SUB_REFUSED]);
	mqtt_reasons(a, XR_MQTT_WHY_SUBACK, NULL, j, "sub_refused_by_code");
	json_str(j, "filter", m->so.subscribe);
	json_u64(j, "qos", a->cfg.sub_qos);
	if (m->so.answer)
		json_str(j, "answer_topic", m->so.answer);
	json_close(j, '}');
	json_open(j, "deliveries", '{');
	json_u64(j, "expected", d.expected);
	json_u64(j, "delivered", c[XR_MQTT_DELIVERED]);
	json_u64(j, "received", d.received);
	json_u64(j, "lost", d.lost);
	if (m->broker_stats && !m->broker_err)
		mqtt_lost_attributed(m, d.lost, NULL, j);
	json_u64(j, "duplicated", d.duplicated);
	json_u64(j, "reordered", d.reordered);
	json_u64(j, "unstamped", c[XR_MQTT_UNSTAMPED]);
	json_u64(j, "foreign", c[XR_MQTT_FOREIGN]);
	json_u64(j, "pubacks_sent", a->cfg.responder ? 0 : c[XR_MQTT_REPLIES]);
	json_u64(j, "answers_sent", a->cfg.responder ? c[XR_MQTT_REPLIES] : 0);
	json_u64(j, "held", c[XR_MQTT_HELD]);
	json_u64(j, "puback_ids_bytes", a->pubacks_sz);
	json_u64(j, "answer_stamps_bytes", a->answers_sz);
	json_u64(j, "publishers", a->cfg.pubs);
	json_u64(j, "per_publisher_messages", m->messages);
	json_u64(j, "publishers_complete", d.pubs_complete);
	if (a->deliver.hist)
		replies_hist_json(j, "latency_us", &a->deliver);
	if (a->cfg.pubs <= MQTT_JSON_PUBLISHERS) {
		json_open(j, "per_publisher", '[');
		for (uint64_t p = 0; p < a->cfg.pubs; p++) {
			struct xr_mqtt_recv sum;
			uint64_t want = m->messages * a->cfg.subs;

			mqtt_publisher_sum(a, p, &sum);
			json_open(j, NULL, '{');
			json_u64(j, "publisher", p);
			json_u64(j, "received", sum.got);
			json_u64(j, "lost", want > sum.got ? want - sum.got : 0);
			json_u64(j, "duplicated", sum.dup);
			json_u64(j, "reordered", sum.late);
			json_close(j, '}');
		}
		json_close(j, ']');
	}
	json_close(j, '}');
}

/* A call's median round trip in ms (its request to its answer), 0 before any */
static double mqtt_call_ms(const struct mqtt_app *a)
{
	return a->deliver.hist ? replies_hist_quantile_us(&a->deliver, 0.5) / 1e3 : 0;
}

/*
 * Callers' calls in the published flood benchmark's shape: count, size,
 * seconds, per second, ms each; and their answers' books.
 */
static void mqtt_report_calls(struct mqtt *m, const struct engine_result *res,
			      const struct mqtt_books *b, FILE *human, struct json *j)
{
	const struct tcp *t = &m->t;
	const struct mqtt_app *a = &m->app;
	const __u64 *c = res->replies.st.ctr;
	double secs = tcp_answers_seconds(t, res), ms_each = mqtt_call_ms(a);
	struct mqtt_deliveries d;
	char x[16];

	mqtt_deliveries(m, &d);
	if (human) {
		fprintf(human,
			"  calls: %llu asked (%llu callers x %llu, %u at a time: %s, %u B requests), "
			"%llu sent, %llu answered in %.3f s (%s/s), %.3f ms each (median round "
			"trip); %llu sent but not answered, %llu not sent\n",
			(unsigned long long)b->asked, (unsigned long long)a->cfg.pubs,
			(unsigned long long)m->messages, m->so.burst,
			m->so.burst == 1 ? "sync" : "async", m->so.payload,
			(unsigned long long)b->sent, (unsigned long long)b->acked, secs,
			fmt_si(tcp_answers_per_s(t, res, b->acked), x, sizeof(x)), ms_each,
			(unsigned long long)b->unanswered, (unsigned long long)b->not_sent);
		fprintf(human,
			"  answers: %llu read, %llu lost, %llu duplicated, %llu reordered, %llu "
			"another caller's, %llu without a stamp\n",
			(unsigned long long)c[XR_MQTT_DELIVERED], (unsigned long long)d.lost,
			(unsigned long long)d.duplicated, (unsigned long long)d.reordered,
			(unsigned long long)c[XR_MQTT_FOREIGN],
			(unsigned long long)c[XR_MQTT_UNSTAMPED]);
		if (a->deliver.hist)
			replies_hist_line(human, "call (request to its answer)", &a->deliver);
	}
	if (!j)
		return;
	json_open(j, "calls", '{');
	json_str(j, "pattern", m->so.burst == 1 ? "sync" : "async");
	json_u64(j, "asked", b->asked);
	json_u64(j, "sent", b->sent);
	json_u64(j, "answered", b->acked);
	json_u64(j, "unanswered", b->unanswered);
	json_u64(j, "not_sent", b->not_sent);
	json_u64(j, "window", m->so.burst);
	json_u64(j, "payload_bytes", m->so.payload);
	json_double(j, "seconds", secs);
	json_double(j, "per_s", tcp_answers_per_s(t, res, b->acked));
	json_double(j, "ms_each", ms_each);
	json_u64(j, "answers_read", c[XR_MQTT_DELIVERED]);
	json_u64(j, "lost", d.lost);
	json_u64(j, "duplicated", d.duplicated);
	json_u64(j, "reordered", d.reordered);
	json_u64(j, "foreign", c[XR_MQTT_FOREIGN]);
	json_u64(j, "unstamped", c[XR_MQTT_UNSTAMPED]);
	json_u64(j, "callers_complete", d.pubs_complete);
	if (a->deliver.hist)
		replies_hist_json(j, "latency_us", &a->deliver);
	json_close(j, '}');
}

/*
 * --pattern's figures in the published benchmark's shape (count, size,
 * seconds, per second, ms each) with what its other end saw: the messages
 * the broker took over the publishers' time (first SYN to last answer), or
 * the calls answered and their median round trip.
 */
static void mqtt_report_pattern(struct mqtt *m, const struct engine_result *res,
				const struct mqtt_books *b, FILE *human, struct json *j)
{
	const struct tcp *t = &m->t;
	const struct mqtt_app *a = &m->app;
	const struct mqtt_peer_figures *f = &m->peer;
	bool calls = m->pattern >= MQTT_PATTERN_SYNC;
	double secs = tcp_answers_seconds(t, res), ms_each = calls    ? mqtt_call_ms(a) :
							     b->acked ? secs * 1e3 / b->acked :
									0;
	uint64_t n = b->acked;
	bool attributed = m->broker_stats && f->ran && !calls;
	char x[16];

	if (attributed)
		mqtt_broker_read(m);
	attributed = attributed && !m->broker_err;
	if (human) {
		fprintf(human, "  pattern: %s, %llu %s of %u B in %.3f s: %s/s, %.3f ms each",
			mqtt_pattern_titles[m->pattern], (unsigned long long)n,
			calls ? "calls" : "messages", m->so.payload, secs,
			fmt_si(tcp_answers_per_s(t, res, n), x, sizeof(x)), ms_each);
		if (calls)
			fprintf(human, " (median round trip, %u at a time)", m->so.burst);
		fputc('\n', human);
		if (m->pattern == MQTT_PATTERN_FIRE) {
		} else if (!f->ran) {
			fprintf(human,
				"  the other end on %s: its figures could not be read (exit %d)\n",
				m->peer_ifname, f->exit);
		} else if (calls) {
			fprintf(human,
				"  responder on %s: subscribed %llu of %llu; %llu requests read, %llu "
				"answered\n",
				m->peer_ifname, (unsigned long long)f->subacked,
				(unsigned long long)f->sessions, (unsigned long long)f->received,
				(unsigned long long)f->answers);
		} else {
			fprintf(human,
				"  subscribers on %s: subscribed %llu of %llu; %llu of %llu "
				"deliveries, %llu lost, %llu duplicated, %llu reordered; publish to "
				"delivery p50 %.3f ms, p99 %.3f ms\n",
				m->peer_ifname, (unsigned long long)f->subacked,
				(unsigned long long)f->sessions, (unsigned long long)f->received,
				(unsigned long long)f->expected, (unsigned long long)f->lost,
				(unsigned long long)f->duplicated, (unsigned long long)f->reordered,
				f->p50_us / 1e3, f->p99_us / 1e3);
			if (attributed)
				mqtt_lost_attributed(m, f->lost, human, NULL);
		}
	}
	if (!j)
		return;
	json_open(j, "pattern", '{');
	json_str(j, "name", mqtt_pattern_names[m->pattern]);
	json_u64(j, "count", n);
	json_u64(j, "payload_bytes", m->so.payload);
	json_double(j, "seconds", secs);
	json_double(j, "per_s", tcp_answers_per_s(t, res, n));
	json_double(j, "ms_each", ms_each);
	if (calls)
		json_u64(j, "window", m->so.burst);
	if (m->pattern != MQTT_PATTERN_FIRE) {
		json_open(j, "peer", '{');
		json_str(j, "iface", m->peer_ifname);
		json_u64(j, "read", f->ran);
		json_u64(j, "exit", f->exit);
		json_u64(j, "sessions", f->sessions);
		json_u64(j, "subacked", f->subacked);
		json_u64(j, "refused", f->refused);
		json_u64(j, "expected", f->expected);
		json_u64(j, "received", f->received);
		/* a paced search's witness, in messages: each is a delivery to every subscriber */
		json_u64(j, "received_per_subscriber", f->sessions ? f->received / f->sessions : 0);
		json_u64(j, "lost", f->lost);
		if (attributed)
			mqtt_lost_attributed(m, f->lost, NULL, j);
		json_u64(j, "duplicated", f->duplicated);
		json_u64(j, "reordered", f->reordered);
		json_u64(j, "answers", f->answers);
		json_u64(j, "publishers_complete", f->pubs_complete);
		json_double(j, "latency_p50_us", f->p50_us);
		json_double(j, "latency_p99_us", f->p99_us);
		json_close(j, '}');
	}
	json_close(j, '}');
}

static void mqtt_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
			struct json *j)
{
	struct mqtt *m = st;
	struct tcp *t = &m->t;
	struct mqtt_app *a = &m->app;
	const __u64 *c = res->replies.st.ctr;
	struct mqtt_books b;
	char x[16];

	if (!res->replies.hist)
		return;
	tcp_sessions_report(t, res, human, j);
	/* every CONNECT refused, publishers' or subscribers': the verdict's one line */
	m->refused_all = 0;
	for (uint32_t rc = 1; rc < 256 && c[XR_MQTT_REFUSED] && !c[XR_MQTT_CONNACKED]; rc++)
		if (a->why[XR_MQTT_WHY_CONNACK + rc]) {
			m->refused_all = rc + 1;
			break;
		}
	if (m->so.subscribe) {
		mqtt_report_subscribers(m, res, human, j);
		return;
	}
	mqtt_books(m, res, &b);
	m->nacked_all = 0;
	for (uint64_t rc = 0x80, most = 0; rc < 256 && b.nacked && !b.acked; rc++)
		if (a->why[XR_MQTT_WHY_PUBACK + rc] > most) {
			most = a->why[XR_MQTT_WHY_PUBACK + rc];
			m->nacked_all = rc + 1;
		}
	if (human) {
		fprintf(human, "  connects: ");
		mqtt_acks_line(a, human, "CONNACK", "accepted", c[XR_MQTT_CONNACKED],
			       c[XR_MQTT_REFUSED], XR_MQTT_WHY_CONNACK);
		if (m->so.await) {
			fprintf(human, "; ");
			mqtt_acks_line(a, human, "SUBACK", "granted", c[XR_MQTT_SUBACKED],
				       c[XR_MQTT_SUB_REFUSED], XR_MQTT_WHY_SUBACK);
		}
		fputc('\n', human);
	}
	if (m->so.await)
		mqtt_report_calls(m, res, &b, human, j);
	if (human && !m->so.await) {
		fprintf(human,
			"  messages: %llu asked (%llu per session, bursts of %u, QoS %u, %u B "
			"payload), %llu sent, %llu taken by the broker (%s/s)",
			(unsigned long long)b.asked, (unsigned long long)m->messages, m->so.burst,
			m->so.qos, m->so.payload, (unsigned long long)b.sent,
			(unsigned long long)b.acked,
			fmt_si(tcp_answers_per_s(t, res, b.acked), x, sizeof(x)));
		if (b.nacked) {
			fprintf(human,
				", %llu refused (reason codes: ", (unsigned long long)b.nacked);
			mqtt_reasons(a, XR_MQTT_WHY_PUBACK, human, NULL, NULL);
			fputc(')', human);
		}
		if (b.unanswered)
			fprintf(human, ", %llu sent but not answered",
				(unsigned long long)b.unanswered);
		if (b.not_sent)
			fprintf(human, ", %llu not sent (their session failed or ended first)",
				(unsigned long long)b.not_sent);
		fputc('\n', human);
		tcp_pace_report(t, res, "burst", b.acked, human, NULL);
	}
	if (human) {
		if (c[XR_MQTT_PROTOCOL] || c[XR_TCP_CLOSED_EARLY]) {
			fprintf(human, "  the broker's DISCONNECTs (reason codes): ");
			mqtt_reasons(a, XR_MQTT_WHY_DISCONNECT, human, NULL, NULL);
			fprintf(human, "; packets not asked for (by type): ");
			mqtt_reasons(a, XR_MQTT_WHY_TYPE, human, NULL, NULL);
			fputc('\n', human);
		}
		if (c[XR_TCP_RESPONSES])
			tcp_answers_report(t,
					   m->so.await ? "burst of calls to its last answer" :
					   m->so.qos   ? "burst to its last PUBACK" :
							 "burst to its PINGRESP",
					   human, NULL, NULL);
		if (m->pattern)
			mqtt_report_pattern(m, res, &b, human, NULL);
	}
	if (!j)
		return;
	json_open(j, "connects", '{');
	json_u64(j, "sent", c[XR_MQTT_CONNECTS]);
	json_u64(j, "accepted", c[XR_MQTT_CONNACKED]);
	json_u64(j, "refused", c[XR_MQTT_REFUSED]);
	mqtt_reasons(a, XR_MQTT_WHY_CONNACK, NULL, j, "refused_by_code");
	json_close(j, '}');
	json_open(j, "messages", '{');
	json_u64(j, "asked", b.asked);
	json_u64(j, "sent", b.sent);
	json_u64(j, "acked", b.acked);
	/* from the first SYN to the last answer */
	json_double(j, "acked_per_s", tcp_answers_per_s(t, res, b.acked));
	json_double(j, "seconds", tcp_answers_seconds(t, res));
	json_u64(j, "refused", b.nacked);
	mqtt_reasons(a, XR_MQTT_WHY_PUBACK, NULL, j, "refused_by_code");
	json_u64(j, "unanswered", b.unanswered);
	json_u64(j, "not_sent", b.not_sent);
	json_u64(j, "per_session", m->messages);
	json_u64(j, "burst", m->so.burst);
	json_u64(j, "qos", m->so.qos);
	json_u64(j, "payload_bytes", m->so.payload);
	json_u64(j, "message_bytes", a->cfg.msg_len);
	tcp_answers_report(t, NULL, NULL, j, "burst_us");
	tcp_pace_report(t, res, "burst", b.acked, NULL, j);
	json_close(j, '}');
	json_open(j, "broker", '{');
	mqtt_reasons(a, XR_MQTT_WHY_DISCONNECT, NULL, j, "disconnect_by_code");
	mqtt_reasons(a, XR_MQTT_WHY_TYPE, NULL, j, "unexpected_by_type");
	json_close(j, '}');
	if (m->pattern)
		mqtt_report_pattern(m, res, &b, NULL, j);
}

/* A filter that matches every topic of template t: each level that holds {c} becomes '+'. */
static char *mqtt_filter_of(const char *t)
{
	char *f = malloc(strlen(t) + 1), *o = f;
	const char *level = t;

	if (!f)
		return NULL;
	for (;;) {
		const char *end = strchr(level, '/');
		size_t len = end ? (size_t)(end - level) : strlen(level);

		if (memmem(level, len, "{c}", 3)) {
			*o++ = '+';
		} else {
			memcpy(o, level, len);
			o += len;
		}
		if (!end)
			break;
		*o++ = '/';
		level = end + 1;
	}
	*o = 0;
	return f;
}

/*
 * --pattern notify's subscribers (one per --subscribers, each listening to
 * every publisher's topic) or sync and async calls' responder (one session
 * that answers every request on the caller's res/{c}), made from this run's
 * options: the same broker, credentials and MQTT version.
 */
static int mqtt_peer(void *st, const struct send_opts *so, struct send_opts *peer_so, void *peer_st,
		     uint64_t *linger_ns)
{
	struct mqtt *m = st, *e = peer_st;
	bool notify = m->pattern == MQTT_PATTERN_NOTIFY;

	if (m->pattern < MQTT_PATTERN_NOTIFY)
		return 0;
	if (!peer_so)
		return 1;
	e->peer_filter = mqtt_filter_of(m->so.topic);
	if (!e->peer_filter)
		return -1;
	e->so.subscribe = e->peer_filter;
	e->so.client_id = notify ? "xr-sub-{c}" : "xr-responder-{c}";
	e->so.username = m->so.username;
	e->so.password = m->so.password;
	e->so.version = m->so.version;
	e->so.qos = notify ? m->so.qos : 0;
	e->so.answer = notify ? NULL : m->so.await;
	/* a search trial's: its rate times its time (and one more, a run's last), from its first */
	e->publishers = so->count ? so->count : (uint64_t)(so->pps * (so->duration_ns / 1e9)) + 1;
	e->pub_base = so->first_n;
	e->messages = m->messages;
	peer_so->ifname = m->peer_ifname;
	peer_so->netns = m->peer_netns;
	peer_so->count = notify ? m->subscribers : 1;
	peer_so->pace = XR_PACE_NONE;
	peer_so->pps = peer_so->rate_bps = 0;
	peer_so->duration_ns = peer_so->concurrency = peer_so->first_n = 0;
	peer_so->threads = 1;
	peer_so->shard = 0;
	peer_so->shards = 1;
	peer_so->start_unix_ns = 0;
	peer_so->have_listen = false;
	peer_so->search = false;
	peer_so->pcap_out = NULL;
	peer_so->plan.nspecs = 0;
	peer_so->net.have_src = peer_so->net.have_sport = peer_so->net.have_mac = false;
	/* it ends by itself once every message came, or when this run has ended and lingered */
	peer_so->reply_wait_ns = 24 * 3600 * 1000000000ULL;
	/* subscribers: what is still on its way to them; a responder has nothing left to do */
	*linger_ns = notify ? so->reply_wait_ns : 0;
	return mqtt_check(e, peer_so) ? -1 : 1;
}

static void mqtt_peer_done(void *st, struct json_object *peer, int exit_status)
{
	struct mqtt_peer_figures *f = &((struct mqtt *)st)->peer;

	*f = (struct mqtt_peer_figures){ .exit = exit_status };
	if (!peer || json_path_u64(peer, "asked", &f->sessions) ||
	    json_path_u64(peer, "subscribers.connacked", &f->connacked) ||
	    json_path_u64(peer, "subscribers.subacked", &f->subacked) ||
	    json_path_u64(peer, "subscribers.refused", &f->refused) ||
	    json_path_u64(peer, "deliveries.expected", &f->expected) ||
	    json_path_u64(peer, "deliveries.received", &f->received) ||
	    json_path_u64(peer, "deliveries.lost", &f->lost) ||
	    json_path_u64(peer, "deliveries.duplicated", &f->duplicated) ||
	    json_path_u64(peer, "deliveries.reordered", &f->reordered) ||
	    json_path_u64(peer, "deliveries.answers_sent", &f->answers) ||
	    json_path_u64(peer, "deliveries.publishers_complete", &f->pubs_complete))
		return;
	/* no deliveries, no latencies */
	json_path_double(peer, "deliveries.latency_us.p50", &f->p50_us);
	json_path_double(peer, "deliveries.latency_us.p99", &f->p99_us);
	f->ran = true;
}

/*
 * search -- gen mqtt --pattern notify: a trial's publishers that reached
 * every subscriber whole, and their publish-to-delivery p99 (the other
 * patterns: the sessions that completed, as without --pattern)
 */
static void mqtt_trial_paths(void *st, struct trial_paths *p)
{
	const struct mqtt *m = st;

	/* --msg-rate search: messages, their departures (a pacer behind its schedule is short) */
	if (m->rate_searched) {
		p->witness = "messages.acked";
		p->asked = "messages.asked";
		p->sent = "messages.sent";
		p->behind = "messages.pace.after_schedule_end";
		p->seconds = "messages.pace.seconds";
	}
	if (m->pattern != MQTT_PATTERN_NOTIFY)
		return;
	/* each message is a delivery to every subscriber: what they received over them */
	if (m->rate_searched)
		p->witness = "pattern.peer.received_per_subscriber";
	else
		p->witness = "pattern.peer.publishers_complete";
	p->latency = "pattern.peer.latency_p99_us";
}

/* search -- gen mqtt --msg-rate search: the trial's rate over --count publishers, for its time */
static int mqtt_paced_trial(void *st, struct send_opts *so, double rate, uint64_t trial_ns)
{
	struct mqtt *m = st;
	uint64_t bursts;

	if (tcp_pace_trial_bursts("--msg-rate", so, rate, trial_ns, m->so.burst, 65534, &bursts))
		return XR_EXIT_USAGE;
	m->messages = bursts * m->so.burst;
	m->msg_rate = rate;
	return mqtt_check_pace(m, so);
}

static int mqtt_verdict(void *st)
{
	const struct mqtt *m = st;
	const struct mqtt_peer_figures *f = &m->peer;
	const char *name;

	/* the other end ends by itself (0, 1: short) or when stopped (4); anything else failed it */
	if (m->pattern >= MQTT_PATTERN_NOTIFY &&
	    (!f->ran || (f->exit != 0 && f->exit != 1 && f->exit != XR_EXIT_INTERRUPTED))) {
		pr_warn("the other end on %s failed (exit %d): the pattern's figures are not whole\n",
			m->peer_ifname, f->exit);
		return XR_EXIT_FAIL;
	}
	if (m->pattern >= MQTT_PATTERN_NOTIFY && f->subacked < f->sessions) {
		pr_warn("the broker took %llu of the other end's %llu subscriptions on %s: the "
			"pattern's figures are not whole\n",
			(unsigned long long)f->subacked, (unsigned long long)f->sessions,
			m->peer_ifname);
		return XR_EXIT_FAIL;
	}
	if (m->nacked_all) {
		uint8_t rc = m->nacked_all - 1;

		name = mqtt_reason_name(XR_MQTT_WHY_PUBACK + rc);
		pr_warn("the broker refused every message (PUBACK reason code 0x%02x%s%s)%s\n", rc,
			name ? ", " : "", name ? name : "",
			rc == 0x87 ? ": does its ACL let --username publish to --topic?" :
			rc == 0x95 ? ": is --payload over its message_size_limit?" :
				     "");
		return XR_EXIT_FAIL;
	}
	if (!m->refused_all)
		return tcp_none_completed_verdict(&m->t);
	name = mqtt_reason_name(XR_MQTT_WHY_CONNACK + m->refused_all - 1);
	pr_warn("the broker refused every CONNECT (return code 0x%02x%s%s): check "
		"--username, --password, --client-id and --mqtt-version\n",
		m->refused_all - 1, name ? ", " : "", name ? name : "");
	return XR_EXIT_FAIL;
}

/* --broker-stats could not read the broker's count after the run: the run exits 3 */
static bool mqtt_failed(void *st)
{
	const struct mqtt *m = st;

	return m->broker_stats && m->broker_read && m->broker_err;
}

static void mqtt_free(void *st)
{
	struct mqtt *m = st;

	tcp_sessions_free(&m->t);
	mqtt_app_free(&m->app);
	free(m->peer_filter);
	mqtt_broker_stop(&m->broker);
}

const struct xr_proto proto_mqtt = {
	.name = "mqtt",
	.gen = true,
	.summary = "MQTT publishers (CONNECT, PUBLISH QoS 0/1, DISCONNECT) on socket-less TCP "
		   "sessions, carried in XDP",
	.usage =
		"      --client-id T     client ids, {c} the session's number in 10 digits\n"
		"                        (default xr-{c})\n"
		"      --username U, --password P  credentials in the CONNECT\n"
		"      --mqtt-version 3.1.1|5  (default 3.1.1)\n"
		"      --topic T         where to publish, {c} as in --client-id (default msg/{c})\n"
		"      --qos 0|1         (default 0; a subscriber's: its subscription's, 1 to\n"
		"                        PUBACK each QoS-1 delivery)\n"
		"      --retain          the retain flag on every message\n"
		"      --payload N       bytes of each message, up to 65536 (default 0; from 16 on,\n"
		"                        each starts with a stamp: session, sequence number,\n"
		"                        send time)\n"
		"      --messages N      messages per session (default 100)\n"
		"      --burst B         messages sent together and answered before the next\n"
		"                        burst: QoS 1 by B PUBACKs (default 1), QoS 0 by the\n"
		"                        PINGRESP to a PINGREQ after them (default: what 16 KB\n"
		"                        holds, at most 64)\n"
		"      --keepalive T     the CONNECT's keep-alive (default 60s); a --msg-rate\n"
		"                        publisher idle for T/2 sends a PINGREQ (subscribers:\n"
		"                        off, since they send nothing while they read)\n"
		"      --subscribe F     subscribers, not publishers: each subscribes to filter F\n"
		"                        ({c} as in --client-id)\n"
		"                        (at --qos) and waits for --messages from each of\n"
		"                        --publishers N publishers (their stamps: publisher 0 to\n"
		"                        N-1, so their --payload >= 16), then disconnects;\n"
		"                        per publisher: received, lost, duplicated, reordered,\n"
		"                        and publish-to-delivery latency. Start them first, from\n"
		"                        another interface (one XDP program per interface), with\n"
		"                        a --wait that outlasts the publishers\n"
		"      --publishers N    with --subscribe: the publishers' --count\n"
		"      --broker-stats    with --subscribe or --pattern notify: read the broker's\n"
		"                        count of the deliveries it dropped (Mosquitto's\n"
		"                        $SYS/broker/publish/messages/dropped: its inflight and\n"
		"                        queue limits) before and after the run, through a\n"
		"                        client of libmosquitto, and attribute the lost ones\n"
		"                        (it needs sys_interval > 0, read access to $SYS/#, and\n"
		"                        waits for two $SYS updates after the run)\n"
		"      --answer T        with --subscribe: a responder, the other end of calls:\n"
		"                        each stamped delivery (a request) is answered at QoS 0\n"
		"                        on topic T, {c} the caller (the stamp's publisher,\n"
		"                        e.g. res/{c}), its payload the request's 16-byte stamp,\n"
		"                        from XDP (32 KiB of stamps a session)\n"
		"      --await T         callers, the benchmark's calls: each session subscribes to\n"
		"                        T ({c} its own number, e.g. res/{c}) with its CONNECT,\n"
		"                        publishes its requests at QoS 0 (--payload >= 16: the\n"
		"                        stamp) and waits for each burst's answers there (a\n"
		"                        responder's): --burst 1 (the default) makes sync calls,\n"
		"                        --burst W async calls, W at a time; per call: answered,\n"
		"                        round trip; per caller: lost, duplicated, reordered\n"
		"      --pattern P       the published flood benchmark's patterns, each a whole\n"
		"                        run with its other end: fire (fire & forget: QoS 0,\n"
		"                        nobody listens), notify (notifications: --subscribers\n"
		"                        on --peer read every message, booked per publisher),\n"
		"                        sync and async (calls: --count callers on req/{c}, a\n"
		"                        responder on --peer answering on res/{c}; async with\n"
		"                        --burst W calls in flight, default 10). The other end\n"
		"                        runs in a child process, ready before the first\n"
		"                        message; --payload defaults to 16 (the stamp); the\n"
		"                        report adds count, size, seconds, per second, ms each\n"
		"      --peer IFACE      --pattern's other end's interface (not -i: one XDP\n"
		"                        program per interface); --peer-netns NAME if it is in\n"
		"                        another network namespace\n"
		"      --subscribers N   --pattern notify's subscribers (default 1)\n"
		"      --msg-rate R      publishers: R messages per second in all (e.g. 500, 10k),\n"
		"                        not each as fast as the broker answers: every one of\n"
		"                        --count connects first, then burst k of publisher i\n"
		"                        departs at ((k - 1) x count + i) x burst / R s; a\n"
		"                        burst whose departure comes before the one before\n"
		"                        it was answered goes late, as that answer comes,\n"
		"                        timed (and stamped) from its departure. --burst 1\n"
		"                        for a departure per message. Under search,\n"
		"                        '--msg-rate search' makes each trial's load messages/s\n"
		"                        over --count publishers (--messages: rate x time over\n"
		"                        them; --burst 1), counted until the schedule's end and\n"
		"                        search's --settle; with --pattern notify, deliveries\n"
		"                        (a message to each subscriber)\n"
		"  --count is sessions (connections), --pps new sessions per second; each one\n"
		"  publishes as fast as the broker answers, or at --msg-rate. Every message\n"
		"  asked is taken by the broker (PUBACK, or read before the PINGRESP), refused\n"
		"  with its reason code (5.0), sent but not answered, or not sent because its\n"
		"  session failed (with its reason: CONNECT refused with its return code, reset,\n"
		"  stalled, ...).\n",
	.opts = mqtt_opts,
	.accepts = SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT | SO_SEED | SO_CONCURRENCY,
	.default_port = 1883,
	.state_size = sizeof(struct mqtt),
	.parse_opt = mqtt_opt,
	.check = mqtt_check,
	.build = mqtt_build,
	.report = mqtt_report,
	.failed = mqtt_failed,
	.verdict = mqtt_verdict,
	.peer = mqtt_peer,
	.peer_done = mqtt_peer_done,
	.trial_paths = mqtt_trial_paths,
	.paced_opt = "msg-rate",
	.paced_unit = "messages",
	.paced_trial = mqtt_paced_trial,
	.load_unit = "sessions",
	/* search offers sessions: a session completes when all its messages were answered */
	.witness = "sessions.completed",
	.latency = "messages.burst_us.p99",
	.free = mqtt_free,
};
