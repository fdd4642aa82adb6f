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
	const struct lw_fleet *f = &s->fleet;
	const struct xr_replies_stats *r = &res->replies.st;
	double dur = (res->end_ns - res->start_ns) / 1e9, up = (double)res->sent / f->heard_by;
	uint64_t gmin = UINT64_MAX, gmax = 0, acked = 0, pull_acks = 0, pull_acked = 0,
		 misdirected = 0, pull_resps = 0, tx_acks = 0, dl_other = 0, stat_acks = 0,
		 stat_acked = 0;
	const struct lw_kernel *lk = &s->lk;
	bool confirmed = lk->confirmed_uplinks;
	const struct lw_keepalive *ka = &s->lk.ka;
	uint64_t ring_hits = res->hook_ctr[XR_LORA_RING_HITS],
		 computed = res->hook_ctr[XR_LORA_COMPUTED];
	struct rusage ru;
	char a[16], b[16];

	getrusage(RUSAGE_SELF, &ru);
	for (size_t d = 0; d < f->ndev && !f->joining && !confirmed; d++)
		confirmed = f->dev[d].confirmed;
	for (size_t g = 0; g < f->ngw && s->lk.gw_ctr; g++) {
		const struct xr_lora_gw_ctr *c = &s->lk.gw_ctr[g];

		acked += c->push_acks > 0;
		gmin = c->push_acks < gmin ? c->push_acks : gmin;
		gmax = c->push_acks > gmax ? c->push_acks : gmax;
		pull_acks += c->pull_acks;
		pull_acked += c->pull_acks > 0;
		misdirected += c->misdirected;
		pull_resps += c->pull_resps;
		tx_acks += c->tx_acks;
		stat_acks += c->stat_acks;
		stat_acked += c->stat_acks > 0;
	}
	for (int i = 0; i < XR_LORA_DL_CTRS; i++)
		dl_other += lk->dl_ctr[i];
	if (!f->ngw || !s->lk.gw_ctr)
		gmin = 0;
	if (human && res->replies.hist) {
		fprintf(human,
			"  replies: %llu PUSH_ACKs (%s/s), %llu duplicated, %llu unmatched\n",
			(unsigned long long)r->answered,
			fmt_si(replies_per_s(res, r->answered), a, sizeof(a)),
			(unsigned long long)r->repeated, (unsigned long long)r->unmatched);
		replies_rtt_line(res, human);
	}
	if (human) {
		fprintf(human,
			"  lorawan: %zu devices, %zu gateways, heard by %u; ready in %.2f s, peak RSS %.0f MiB\n",
			f->ndev, f->ngw, f->heard_by, ready_ns / 1e9, ru.ru_maxrss / 1024.0);
		fprintf(human,
			"  uplinks: %.0f offered (%s/s), PUSH_DATA %s/s; PUSH_ACKed %.2f%%; "
			"gateways answered %llu of %zu (%llu..%llu each)\n",
			up, fmt_si(dur > 0 ? up / dur : 0, a, 16),
			fmt_si(dur > 0 ? res->sent / dur : 0, b, 16),
			res->sent ? 100.0 * r->answered / res->sent : 0, (unsigned long long)acked,
			f->ngw, (unsigned long long)gmin, (unsigned long long)gmax);
		if (ka->interval_ns)
			fprintf(human,
				"  keepalives: %llu PULL_DATA (every %s), %llu refused by the socket%s%s; "
				"%llu PULL_ACKs, gateways answered %llu of %zu\n",
				(unsigned long long)ka->sent, fmt_duration(ka->interval_ns, a, 16),
				(unsigned long long)ka->failed, ka->failed ? ": " : "",
				ka->failed ? strerror(ka->last_errno) : "",
				(unsigned long long)pull_acks, (unsigned long long)pull_acked,
				f->ngw);
		if (ka->stat_interval_ns)
			fprintf(human,
				"  stats: %llu stat messages (every %s), %llu not sent%s%s; "
				"%llu PUSH_ACKed, gateways answered %llu of %zu\n",
				(unsigned long long)ka->stat_sent,
				fmt_duration(ka->stat_interval_ns, a, 16),
				(unsigned long long)ka->stat_failed, ka->stat_failed ? ": " : "",
				ka->stat_failed ? strerror(ka->last_errno) : "",
				(unsigned long long)stat_acks, (unsigned long long)stat_acked,
				f->ngw);
		if (pull_resps || dl_other || confirmed)
			fprintf(human,
				"  downlinks: %llu PULL_RESP to our gateways, %llu answered with TX_ACK; "
				"%llu to no gateway of ours, %llu malformed, %llu without ACK bit, "
				"%llu to unknown devices, %llu before an uplink, %llu with a wrong MIC\n",
				(unsigned long long)pull_resps, (unsigned long long)tx_acks,
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_UNKNOWN_GW],
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_MALFORMED],
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_NOT_ACK],
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_UNKNOWN_DEV],
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_NO_UPLINK],
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_BAD_MIC]);
		if (confirmed) {
			fprintf(human,
				"  confirmed uplinks: %llu sent, %llu ACKed (%.2f%%), %llu unanswered, "
				"%llu duplicate ACKs\n",
				(unsigned long long)lk->confirmed_uplinks,
				(unsigned long long)lk->confirmed_acked,
				lk->confirmed_uplinks ?
					100.0 * lk->confirmed_acked / lk->confirmed_uplinks :
					0,
				(unsigned long long)(lk->confirmed_uplinks - lk->confirmed_acked),
				(unsigned long long)lk->dup_acks);
			if (lk->confirmed_acked)
				replies_hist_line(human, "uplink to its ACK", &lk->ack_hist);
		}
		if (s->mac_asks) {
			const struct lw_mac_result *m = &lk->mac;

			fprintf(human,
				"  MAC commands: %llu uplinks asked, %llu answered (%.2f%%), %llu unanswered, "
				"%llu answered twice; %llu LinkCheckAns (GwCnt %.2f on average), "
				"%llu DeviceTimeAns; %llu other commands, %llu unknown CIDs\n",
				(unsigned long long)m->uplinks, (unsigned long long)m->answered,
				m->uplinks ? 100.0 * m->answered / m->uplinks : 0,
				(unsigned long long)(m->uplinks > m->answered ?
							     m->uplinks - m->answered :
							     0),
				(unsigned long long)m->dup, (unsigned long long)m->link_check,
				m->link_check ? (double)m->gw_cnt_sum / m->link_check : 0,
				(unsigned long long)m->device_time,
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_MAC_OTHER],
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_MAC_UNKNOWN]);
			if (m->device_time_devices)
				fprintf(human,
					"  device time: the server's time minus the uplink's departure, "
					"%.3f ms on average, at most %.3f ms apart (last answer of %llu devices)\n",
					m->device_time_err_mean_ms, m->device_time_err_max_ms,
					(unsigned long long)m->device_time_devices);
			if (m->answered)
				replies_hist_line(human, "uplink to its MAC answers", &m->hist);
		}
		if (misdirected)
			fprintf(human,
				"  misdirected: %llu answers reached another gateway's address (not counted above)\n",
				(unsigned long long)misdirected);
		if (f->joining) {
			const struct lw_join *jn = &lk->join;
			uint64_t joined = atomic_load(&jn->joined), lat[4];

			lw_join_latency(jn, f->ndev, lat);
			fprintf(human,
				"  joins: %llu devices sent a JoinRequest, %llu joined (%.2f%%), %llu not answered; "
				"%llu JoinAccepts: %llu duplicates, %llu for no device of ours, %llu malformed, "
				"%llu lost (ring full)\n",
				(unsigned long long)jn->requested, (unsigned long long)joined,
				jn->requested ? 100.0 * joined / jn->requested : 0,
				(unsigned long long)(jn->requested > joined ?
							     jn->requested - joined :
							     0),
				(unsigned long long)jn->accepts, (unsigned long long)jn->duplicates,
				(unsigned long long)jn->unmatched,
				(unsigned long long)jn->malformed,
				(unsigned long long)lk->dl_ctr[XR_LORA_DL_JOIN_LOST]);
			if (joined)
				fprintf(human,
					"  time to join: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
					lat[0] / 1e6, lat[1] / 1e6, lat[2] / 1e6, lat[3] / 1e6);
		}
		fprintf(human,
			"  crypto: %llu uplinks precomputed (AES-NI%s), %llu computed in BPF\n",
			(unsigned long long)ring_hits, s->lk.ring_used ? "" : ": off",
			(unsigned long long)computed);
	}
	if (!j)
		return;
	if (res->replies.hist) {
		json_open(j, "replies", '{');
		json_u64(j, "push_acks", r->answered);
		json_u64(j, "push_ack_dups", r->repeated);
		json_double(j, "push_acks_per_s", replies_per_s(res, r->answered));
		json_u64(j, "unmatched", r->unmatched);
		replies_rtt_json(res, j);
		json_close(j, '}');
	}
	json_open(j, "lorawan", '{');
	json_u64(j, "devices", f->ndev);
	json_u64(j, "gateways", f->ngw);
	json_u64(j, "heard_by", f->heard_by);
	json_double(j, "ready_s", ready_ns / 1e9);
	json_double(j, "peak_rss_mib", ru.ru_maxrss / 1024.0);
	json_double(j, "uplinks", up);
	json_double(j, "uplinks_per_s", dur > 0 ? up / dur : 0);
	json_double(j, "push_data_per_s", dur > 0 ? res->sent / dur : 0);
	json_u64(j, "push_acks", r->answered);
	json_u64(j, "gateways_answered", acked);
	json_u64(j, "gateway_acks_min", gmin);
	json_u64(j, "gateway_acks_max", gmax);
	json_flag(j, "gateway_addrs", f->gw_addrs);
	json_u64(j, "misdirected", misdirected);
	if (ka->interval_ns) {
		json_open(j, "keepalive", '{');
		json_double(j, "interval_s", ka->interval_ns / 1e9);
		json_u64(j, "pull_data", ka->sent);
		json_u64(j, "pull_data_refused", ka->failed);
		json_u64(j, "pull_acks", pull_acks);
		json_u64(j, "gateways_answered", pull_acked);
		json_close(j, '}');
	}
	if (ka->stat_interval_ns) {
		json_open(j, "stat", '{');
		json_double(j, "interval_s", ka->stat_interval_ns / 1e9);
		json_u64(j, "sent", ka->stat_sent);
		json_u64(j, "not_sent", ka->stat_failed);
		json_u64(j, "push_acks", stat_acks);
		json_u64(j, "gateways_answered", stat_acked);
		json_close(j, '}');
	}
	json_open(j, "downlinks", '{');
	json_u64(j, "pull_resps", pull_resps);
	json_u64(j, "tx_acks", tx_acks);
	json_u64(j, "unknown_gateway", lk->dl_ctr[XR_LORA_DL_UNKNOWN_GW]);
	json_u64(j, "malformed", lk->dl_ctr[XR_LORA_DL_MALFORMED]);
	json_u64(j, "not_ack", lk->dl_ctr[XR_LORA_DL_NOT_ACK]);
	json_u64(j, "unknown_device", lk->dl_ctr[XR_LORA_DL_UNKNOWN_DEV]);
	json_u64(j, "before_uplink", lk->dl_ctr[XR_LORA_DL_NO_UPLINK]);
	json_u64(j, "tx_ack_failed", lk->dl_ctr[XR_LORA_DL_TX_ACK_FAILED]);
	json_u64(j, "bad_mic", lk->dl_ctr[XR_LORA_DL_BAD_MIC]);
	json_u64(j, "join_accepts", lk->dl_ctr[XR_LORA_DL_JOIN_ACCEPT]);
	json_u64(j, "join_accepts_lost", lk->dl_ctr[XR_LORA_DL_JOIN_LOST]);
	json_u64(j, "join_accepts_unasked", lk->dl_ctr[XR_LORA_DL_JOIN_UNASKED]);
	json_u64(j, "mac_other", lk->dl_ctr[XR_LORA_DL_MAC_OTHER]);
	json_u64(j, "mac_unknown", lk->dl_ctr[XR_LORA_DL_MAC_UNKNOWN]);
	json_close(j, '}');
	if (s->mac_asks) {
		const struct lw_mac_result *m = &lk->mac;

		json_open(j, "mac", '{');
		json_flag(j, "linkcheck", s->mac_asks & XR_LORA_ASK_LINK_CHECK);
		json_flag(j, "devicetime", s->mac_asks & XR_LORA_ASK_DEVICE_TIME);
		json_u64(j, "every", s->mac_every);
		json_u64(j, "uplinks", m->uplinks);
		json_u64(j, "answered", m->answered);
		json_u64(j, "unanswered", m->uplinks > m->answered ? m->uplinks - m->answered : 0);
		json_u64(j, "answered_twice", m->dup);
		json_u64(j, "link_check_ans", m->link_check);
		json_u64(j, "gw_cnt_sum", m->gw_cnt_sum);
		json_u64(j, "device_time_ans", m->device_time);
		json_u64(j, "device_time_devices", m->device_time_devices);
		json_double(j, "device_time_error_mean_ms", m->device_time_err_mean_ms);
		json_double(j, "device_time_error_max_ms", m->device_time_err_max_ms);
		if (m->answered)
			replies_hist_json(j, "latency_us", &m->hist);
		json_close(j, '}');
	}
	if (f->joining) {
		const struct lw_join *jn = &lk->join;
		uint64_t joined = atomic_load(&jn->joined), lat[4];

		lw_join_latency(jn, f->ndev, lat);
		json_open(j, "join", '{');
		json_u64(j, "requested", jn->requested);
		json_u64(j, "joined", joined);
		json_u64(j, "not_answered", jn->requested > joined ? jn->requested - joined : 0);
		json_u64(j, "accepts", jn->accepts);
		json_u64(j, "found_without_tmst", jn->by_trial);
		json_u64(j, "duplicates", jn->duplicates);
		json_u64(j, "unmatched", jn->unmatched);
		json_u64(j, "malformed", jn->malformed);
		json_u64(j, "lost", lk->dl_ctr[XR_LORA_DL_JOIN_LOST]);
		json_open(j, "time_to_join_us", '{');
		json_double(j, "p50", lat[0] / 1e3);
		json_double(j, "p90", lat[1] / 1e3);
		json_double(j, "p99", lat[2] / 1e3);
		json_double(j, "max", lat[3] / 1e3);
		json_close(j, '}');
		json_close(j, '}');
	}
	if (confirmed) {
		json_open(j, "confirmed", '{');
		json_u64(j, "uplinks", lk->confirmed_uplinks);
		json_u64(j, "acked", lk->confirmed_acked);
		json_u64(j, "unanswered", lk->confirmed_uplinks - lk->confirmed_acked);
		json_u64(j, "dup_acks", lk->dup_acks);
		if (lk->confirmed_acked)
			replies_hist_json(j, "ack_latency_us", &lk->ack_hist);
		json_close(j, '}');
	}
	json_flag(j, "precompute", s->lk.ring_used);
	json_u64(j, "uplinks_precomputed", ring_hits);
	json_u64(j, "uplinks_computed_in_bpf", computed);
	json_close(j, '}');
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
	.failed = lw_failed,
	.verdict = lw_verdict,
	.witness = "replies.push_acks",
	.free = lw_free,
};
