// SPDX-License-Identifier: GPL-2.0
/*
 * lorawan send: one Semtech UDP PUSH_DATA per device of a fleet, rewritten
 * per packet in BPF into valid uplinks (bpf/proto/lorawan.bpf.h); PUSH_ACKs
 * counted per gateway on the sending interface.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <arpa/inet.h>
#include "cmd/cli.h"
#include "util/time.h"
#include "proto/lorawan/webhook.h"
#include "proto/lorawan/keepalive.h"
#include "proto/lorawan/kernel.h"
#include "proto/lorawan/report.h"
#include "proto/proto.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/log.h"
#include "util/units.h"

enum {
	O_FLEET = PROTO_OPT_BASE,
	O_ROUNDS,
	O_SCHEDULE,
	O_STATIC,
	O_NOPRE,
	O_KEEPALIVE,
	O_JOIN,
	O_JOINED,
	O_STAT,
	O_MAC,
	O_MAC_EVERY
};

struct lw_send {
	const char *fleet_dir;
	uint64_t rounds;
	bool have_rounds, is_static, no_precompute;
	const char *schedule;
	bool schedule_failed;
	double pps;
	uint64_t first_n;
	uint64_t keepalive_ns;
	uint64_t stat_ns; /* --stat: each gateway's status message every this */
	uint8_t mac_asks; /* --mac: what the uplinks ask in FOpts (XR_LORA_ASK_*) */
	uint64_t mac_every; /* --mac-every K: the devices d with d mod K = 0 ask */
	bool join; /* --join: one JoinRequest per device */
	const char *joined_dir; /* --joined: where the fleet goes with its new sessions */
	bool joined_failed;
	struct lw_fleet fleet;
	struct lw_net net; /* the frames' addressing (without --src, every gateway's) */
	struct lw_kernel lk;
};

static const struct option lw_opts[] = {
	{ "fleet", required_argument, NULL, O_FLEET },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "schedule", required_argument, NULL, O_SCHEDULE },
	{ "static", no_argument, NULL, O_STATIC },
	{ "no-precompute", no_argument, NULL, O_NOPRE },
	{ "keepalive", required_argument, NULL, O_KEEPALIVE },
	{ "join", no_argument, NULL, O_JOIN },
	{ "joined", required_argument, NULL, O_JOINED },
	{ "stat", required_argument, NULL, O_STAT },
	{ "mac", required_argument, NULL, O_MAC },
	{ "mac-every", required_argument, NULL, O_MAC_EVERY },
	{},
};

/* --mac linkcheck,devicetime: the requests, each once, into *asks. 0, or a usage error. */
static int parse_mac_asks(const char *cmd, const char *arg, uint8_t *asks)
{
	static const struct {
		const char *name;
		uint8_t ask;
	} names[] = { { "linkcheck", XR_LORA_ASK_LINK_CHECK },
		      { "devicetime", XR_LORA_ASK_DEVICE_TIME } };
	const char *p = arg;

	*asks = 0;
	for (;;) {
		size_t n = strcspn(p, ","), i;

		/* an empty name ("", ",", a trailing comma) matches none */
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (n == strlen(names[i].name) && !strncmp(p, names[i].name, n))
				break;
		if (i == sizeof(names) / sizeof(names[0]) || (*asks & names[i].ask))
			return cli_usage_error(
				cmd, "--mac %s: a list of linkcheck and devicetime, each once",
				arg);
		*asks |= names[i].ask;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int lw_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct lw_send *s = st;

	switch (id) {
	case O_FLEET: s->fleet_dir = arg; break;
	case O_ROUNDS:
		if (cli_count(so->cmd, "rounds", arg, &s->rounds))
			return XR_EXIT_USAGE;
		if (!s->rounds)
			return cli_usage_error(so->cmd, "--rounds must be above 0");
		s->have_rounds = true;
		break;
	case O_SCHEDULE: s->schedule = arg; break;
	case O_STATIC: s->is_static = true; break;
	case O_NOPRE: s->no_precompute = true; break;
	case O_KEEPALIVE:
		if (cli_duration(so->cmd, "keepalive", arg, &s->keepalive_ns))
			return XR_EXIT_USAGE;
		if (s->keepalive_ns && s->keepalive_ns < 1000000ULL)
			return cli_usage_error(so->cmd, "--keepalive %s: at least 1ms", arg);
		break;
	case O_STAT:
		if (cli_duration(so->cmd, "stat", arg, &s->stat_ns))
			return XR_EXIT_USAGE;
		if (s->stat_ns && s->stat_ns < 1000000ULL)
			return cli_usage_error(so->cmd, "--stat %s: at least 1ms", arg);
		break;
	case O_JOIN: s->join = true; break;
	case O_JOINED: s->joined_dir = arg; break;
	case O_MAC:
		if (parse_mac_asks(so->cmd, arg, &s->mac_asks))
			return XR_EXIT_USAGE;
		break;
	case O_MAC_EVERY:
		if (cli_count(so->cmd, "mac-every", arg, &s->mac_every))
			return XR_EXIT_USAGE;
		if (!s->mac_every || s->mac_every > UINT32_MAX)
			return cli_usage_error(so->cmd, "--mac-every %s: from 1 to 4294967295",
					       arg);
		break;
	}
	return -1;
}

static int lw_check(void *st, const struct send_opts *so)
{
	struct lw_send *s = st;

	if (!s->fleet_dir)
		return cli_usage_error(so->cmd,
				       "missing --fleet DIR (made by xdpreplay lorawan fleet)");
	if (so->net.dst.ipv6)
		return cli_usage_error(so->cmd, "--server: IPv4 only");
	if (so->net.have_src && so->net.src.ipv6)
		return cli_usage_error(so->cmd, "--src: IPv4 only");
	if (!so->net.have_src && so->net.have_sport && so->net.sport.lo != so->net.sport.hi)
		return cli_usage_error(
			so->cmd,
			"--sport: one port (the gateways' source port), not a range: ranges go with --src");
	if (s->joined_dir && !s->join)
		return cli_usage_error(so->cmd, "--joined DIR goes with --join");
	if (s->join && ((s->have_rounds && s->rounds != 1) || s->is_static))
		return cli_usage_error(
			so->cmd,
			"--join sends each device's JoinRequest once (its dev_nonce): no --rounds, no --static");
	if (s->mac_every && !s->mac_asks)
		return cli_usage_error(so->cmd, "--mac-every goes with --mac");
	if (s->mac_asks && s->join)
		return cli_usage_error(so->cmd,
				       "--mac: MAC commands ride on uplinks, not on JoinRequests");
	if (!s->mac_every)
		s->mac_every = 1;
	if (!s->have_rounds)
		s->rounds = 1;
	return 0;
}

/*
 * --mac: the requests (LoRaWAN 1.0.3 §5: LinkCheckReq and DeviceTimeReq, a
 * CID each) in the FOpts of every uplink of the devices that ask, in
 * plaintext as 1.0.x sends them. 0, or -EINVAL after a line naming the
 * first device whose uplinks they no longer fit.
 */
static int lw_add_mac(struct lw_send *s, const struct send_opts *so)
{
	struct lw_fleet *f = &s->fleet;
	char why[160];

	for (size_t d = 0; d < f->ndev; d += s->mac_every) {
		struct lw_device *dev = &f->dev[d];

		dev->fopts_len = 0;
		if (s->mac_asks & XR_LORA_ASK_LINK_CHECK)
			dev->fopts[dev->fopts_len++] = XR_LORA_CID_LINK_CHECK;
		if (s->mac_asks & XR_LORA_ASK_DEVICE_TIME)
			dev->fopts[dev->fopts_len++] = XR_LORA_CID_DEVICE_TIME;
		dev->mac_asks = s->mac_asks;
		if (lw_check_device(f, dev, why, sizeof(why))) {
			cli_usage_error(so->cmd, "--mac: device %zu: %s", d + 1, why);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * --schedule: the first departure as epoch time, written before anything is
 * sent, so that a receiver can time arrivals while the run is still going.
 */
static void write_schedule(void *ctx, uint64_t start_ns)
{
	struct lw_send *s = ctx;
	struct wh_schedule ws = { .pps = s->pps, .first_n = s->first_n };
	struct timespec rt;

	/* the engine's clock is CLOCK_MONOTONIC; a receiver elsewhere needs the epoch */
	clock_gettime(CLOCK_REALTIME, &rt);
	ws.t0_unix = rt.tv_sec + rt.tv_nsec / 1e9 + ((double)start_ns - (double)now_ns()) / 1e9;
	if (wh_schedule_write(s->schedule, &ws)) {
		pr_warn("cannot write %s: %s\n", s->schedule, strerror(errno));
		s->schedule_failed = true;
	}
}

/* One PUSH_DATA per device into fs, from IFACE's addresses to the server. */
static int lw_frames(struct lw_send *s, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct engine_opts *o)
{
	struct lw_fleet *f = &s->fleet;
	struct lw_net net = { .sport = so->net.have_sport ? so->net.sport.lo : LW_DEFAULT_PORT,
			      .dport = so->net.dst.port };
	uint8_t buf[XR_MAX_FRAME], join[LW_JOIN_REQUEST_LEN];
	struct lw_crypto *c = NULL;
	int err = 0;

	memcpy(&net.daddr, so->net.dst.addr, 4);
	o->rpl = (struct xr_reply_match){ .server_addr = net.daddr,
					  .server_port = htons(net.dport),
					  .sport_base = net.sport,
					  .src_count = 1,
					  .sport_count = 1 };
	memcpy(net.src_mac, ifc->mac, 6);
	if (so->net.have_mac)
		memcpy(net.dst_mac, so->net.dst_mac, 6);
	else if (addr_neigh_mac(&so->net.dst, ifc->name, net.dst_mac)) {
		pr_warn("no neighbour entry for the server on %s: ping it first or give --dst-mac\n",
			ifc->name);
		return -ENOENT;
	}
	if (addr_iface(ifc->name, false, (uint8_t *)&net.saddr)) {
		pr_warn("%s has no IPv4 address to send from\n", ifc->name);
		return -ENOENT;
	}
	o->rpl.src_base = ntohl(net.saddr);
	if (so->net.have_src) {
		/* each gateway its own address and port: the ports from --sport, 1700 by default */
		uint16_t lo = so->net.have_sport ? so->net.sport.lo : LW_DEFAULT_PORT,
			 hi = so->net.have_sport ? so->net.sport.hi : LW_DEFAULT_PORT;

		if (lw_fleet_gateway_addrs(f, so->net.src.base, so->net.src.count, lo,
					   hi - lo + 1U)) {
			cli_usage_error(
				so->cmd,
				"--src and --sport give %llu address and port pairs for %zu gateways",
				(unsigned long long)so->net.src.count * (hi - lo + 1U), f->ngw);
			return -EINVAL;
		}
		o->rpl.src_base = so->net.src.base;
		o->rpl.src_count = so->net.src.count < f->ngw ? so->net.src.count : f->ngw;
		o->rpl.sport_base = lo;
		o->rpl.sport_count = (f->ngw + o->rpl.src_count - 1) / o->rpl.src_count;
	}
	if (f->joining && !(c = lw_crypto_new())) {
		pr_warn("cannot set up OpenSSL's AES-CMAC for the JoinRequests\n");
		return -ENOMEM;
	}
	for (size_t d = 0; d < f->ndev && !err; d++) {
		int len;

		if (f->joining && lw_join_request(c, &f->dev[d], f->dev[d].dev_nonce, join)) {
			pr_warn("cannot compute a JoinRequest's MIC (OpenSSL)\n");
			err = -EIO;
			break;
		}
		len = lw_build_frame(f, d, &net, f->joining ? join : NULL, buf, sizeof(buf));
		if (len < 0 || len > (int)ifc->mtu + 14) {
			pr_warn("device %zu's PUSH_DATA (%d bytes) does not fit %s's MTU\n", d, len,
				ifc->name);
			err = -EINVAL;
		} else if (frameset_add(fs, buf, len, len, 0)) {
			pr_warn("out of memory for %zu frames\n", f->ndev);
			err = -ENOMEM;
		}
	}
	lw_crypto_free(c);
	s->net = net;
	return err;
}

/* --join needs OTAA devices; uplinks need every device's session. 0 or -EINVAL after a line. */
static int lw_check_sessions(struct lw_send *s, const struct send_opts *so)
{
	const struct lw_fleet *f = &s->fleet;
	size_t abp = 0, none = 0, first = SIZE_MAX;

	for (size_t d = 0; d < f->ndev; d++) {
		bool bad = s->join ? !f->dev[d].otaa : !f->dev[d].has_session;

		abp += !f->dev[d].otaa;
		none += !f->dev[d].has_session;
		if (bad && first == SIZE_MAX)
			first = d;
	}
	if (first == SIZE_MAX)
		return 0;
	if (s->join)
		cli_usage_error(so->cmd,
				"--join: %zu of %zu devices are ABP (the first is device %zu): "
				"an OTAA fleet joins (lorawan fleet --otaa)",
				abp, f->ndev, first + 1);
	else
		cli_usage_error(so->cmd,
				"%zu of %zu devices have no session (the first is device %zu): "
				"OTAA devices join first (lorawan send --join --joined DIR)",
				none, f->ndev, first + 1);
	return -EINVAL;
}

static int lw_build(void *st, const struct send_opts *so, const struct iface *ifc,
		    struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct lw_send *s = st;
	int err;

	/* a fleet that cannot be read is bad input; a missing neighbour entry is the environment */
	err = lw_fleet_load(s->fleet_dir, &s->fleet);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -EINVAL;
	if (s->rounds > (XR_FOREVER - 1) / ((uint64_t)s->fleet.ndev * s->fleet.heard_by)) {
		cli_usage_error(
			so->cmd,
			"--rounds %llu: %llu PUSH_DATA a round is more than a run can count",
			(unsigned long long)s->rounds,
			(unsigned long long)s->fleet.ndev * s->fleet.heard_by);
		return -EINVAL;
	}
	err = lw_check_sessions(s, so);
	if (err)
		return err;
	s->fleet.joining = s->join;
	if (s->mac_asks) {
		err = lw_add_mac(s, so);
		if (err)
			return err;
	}
	err = lw_frames(s, so, ifc, fs, o);
	if (err)
		return err;
	lw_kernel_init(&s->lk, &s->fleet, !s->is_static, !s->no_precompute, o);
	s->lk.ka.interval_ns = s->keepalive_ns;
	s->lk.ka.stat_interval_ns = s->stat_ns;
	s->lk.net = s->net;
	s->lk.ifindex = ifc->ifindex;
	if (s->schedule) {
		s->pps = so->pace == XR_PACE_RATE ? so->pps : 0;
		s->first_n = so->first_n;
		o->on_start = write_schedule;
		o->on_start_ctx = s;
	}
	return 0;
}

static uint64_t lw_count(void *st, const struct send_opts *so, const struct frameset *fs)
{
	const struct lw_send *s = st;

	if (so->duration_ns && !s->have_rounds && !s->join)
		return XR_FOREVER;
	return (uint64_t)s->fleet.ndev * s->fleet.heard_by * s->rounds;
}

/* Uplinks, PUSH_ACKs per gateway, set-up time and memory of a lorawan send run. */
static void lw_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		      struct json *j)
{
	const struct lw_send *s = st;
	struct lw_report_in in = { .f = &s->fleet,
				   .lk = &s->lk,
				   .mac_asks = s->mac_asks,
				   .mac_every = s->mac_every };

	lw_report_write(&in, res, ready_ns, human, j);
}

/*
 * --joined DIR: the fleet with the sessions of the devices that joined
 * (FCnt from 0), and the next DevNonce for those that asked, so that the
 * next join storm from DIR uses fresh ones.
 */
static int write_joined(struct lw_send *s)
{
	struct lw_fleet *f = &s->fleet;
	const struct lw_join *jn = &s->lk.join;

	if (!jn->sessions)
		return -ENOMEM;
	for (size_t d = 0; d < f->ndev; d++) {
		const struct lw_session *ss = &jn->sessions[d];
		struct lw_device *dev = &f->dev[d];

		/* a DevNonce is used once, answered or not */
		dev->dev_nonce += ss->requested;
		if (!ss->join_ns)
			continue;
		dev->has_session = true;
		dev->dev_addr = ss->dev_addr;
		memcpy(dev->nwk_s_key, ss->keys.nwk_s_key, 16);
		memcpy(dev->app_s_key, ss->keys.app_s_key, 16);
		memcpy(dev->s_nwk_s_int_key, ss->keys.s_nwk_s_int_key, 16);
		memcpy(dev->nwk_s_enc_key, ss->keys.nwk_s_enc_key, 16);
		/* a 1.1 device that a 1.0 server accepted (no OptNeg) runs a 1.0 session */
		dev->v11 = ss->keys.v11;
		dev->fcnt_start = 0;
	}
	return lw_fleet_save(f, s->joined_dir);
}

static bool lw_failed(void *st)
{
	struct lw_send *s = st;

	if (s->joined_dir && write_joined(s))
		s->joined_failed = true;
	return s->schedule_failed || s->joined_failed;
}

/* A join storm that no JoinAccept answered says the set-up is wrong. */
static int lw_verdict(void *st)
{
	struct lw_send *s = st;
	const struct lw_join *jn = &s->lk.join;

	if (!s->join || !jn->requested || atomic_load(&jn->joined))
		return 0;
	pr_warn("no device joined: does the server know the devices (AppKey) and the gateways, and "
		"has it where to send downlinks (--keepalive, --src)?\n");
	return XR_EXIT_FAIL;
}

static void lw_free(void *st)
{
	struct lw_send *s = st;

	lw_kernel_free(&s->lk);
	lw_fleet_free(&s->fleet);
}

const struct xr_proto proto_lorawan = {
	.name = "lorawan",
	.summary = "LoRaWAN uplinks of a fleet in Semtech UDP PUSH_DATA",
	.opts = lw_opts,
	.accepts = SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT,
	.dst_name = "server",
	.default_port = LW_DEFAULT_PORT,
	.state_size = sizeof(struct lw_send),
	.parse_opt = lw_opt,
	.check = lw_check,
	.build = lw_build,
	.default_count = lw_count,
	.report = lw_report,
	.frames_are = "PUSH_DATA",
	.headline = lw_headline,
	.failed = lw_failed,
	.verdict = lw_verdict,
	.witness = "replies.push_acks",
	.free = lw_free,
};
