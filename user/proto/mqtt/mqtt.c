// SPDX-License-Identifier: GPL-2.0
/*
 * gen mqtt: MQTT publishers on gen tcp's socket-less sessions. Session c
 * connects (its client id holds c), publishes --messages messages in bursts of
 * --burst, each burst answered before the next (PUBACKs at QoS 1, a PINGRESP
 * at QoS 0), and says DISCONNECT on its FIN; all of it in XDP
 * (bpf/proto/mqtt.bpf.h on bpf/proto/tcp.bpf.h). Here: the run, built from
 * the options (opts.c) with the stream (stream.c) on the sessions (app.c),
 * its other end under --pattern, its search trials; the books in report.c.
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
#include "proto/mqtt/mqtt.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/bytes.h"
#include "util/jsonpath.h"
#include "util/log.h"
#include "util/units.h"

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
	.frames_are = "sessions",
	.headline = mqtt_headline,
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
