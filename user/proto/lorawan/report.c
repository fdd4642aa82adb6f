// SPDX-License-Identifier: GPL-2.0
/*
 * lorawan send's report: uplinks and their PUSH_ACKs per gateway, the
 * gateways' keep-alives and status messages, downlinks (confirmed uplinks'
 * ACKs, MAC answers, join-accepts) and what the crypto cost, as lines and as
 * JSON members.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include "proto/lorawan/report.h"
#include "proto/lorawan/keepalive.h"
#include <math.h>
#include "engine/replies.h"
#include "report/headline.h"
#include "util/json.h"
#include "util/units.h"

/* The gateways' counters, summed (and how many answered at all) */
struct lw_gw_sums {
	uint64_t acked, gmin, gmax, pull_acks, pull_acked, misdirected, pull_resps, tx_acks,
		dl_other, stat_acks, stat_acked;
};

/* What every part of the report reads */
struct lw_report_ctx {
	const struct lw_report_in *in;
	const struct engine_result *res;
	uint64_t ready_ns;
	struct lw_gw_sums g;
	bool confirmed; /* some uplinks were confirmed (or the fleet has such devices) */
	double dur,
		up; /* the run's seconds, its uplinks (PUSH_DATA over the gateways that hear each) */
	struct rusage ru;
};

static void lw_gw_sums(const struct lw_report_in *in, struct lw_gw_sums *g)
{
	const struct lw_fleet *f = in->f;

	*g = (struct lw_gw_sums){ .gmin = UINT64_MAX };
	for (size_t i = 0; i < f->ngw && in->lk->gw_ctr; i++) {
		const struct xr_lora_gw_ctr *c = &in->lk->gw_ctr[i];

		g->acked += c->push_acks > 0;
		g->gmin = c->push_acks < g->gmin ? c->push_acks : g->gmin;
		g->gmax = c->push_acks > g->gmax ? c->push_acks : g->gmax;
		g->pull_acks += c->pull_acks;
		g->pull_acked += c->pull_acks > 0;
		g->misdirected += c->misdirected;
		g->pull_resps += c->pull_resps;
		g->tx_acks += c->tx_acks;
		g->stat_acks += c->stat_acks;
		g->stat_acked += c->stat_acks > 0;
	}
	for (int i = 0; i < XR_LORA_DL_CTRS; i++)
		g->dl_other += in->lk->dl_ctr[i];
	if (!f->ngw || !in->lk->gw_ctr)
		g->gmin = 0;
}

/* The replies, the fleet and its uplinks */
static void lw_text_uplinks(const struct lw_report_ctx *c, FILE *human)
{
	const struct lw_fleet *f = c->in->f;
	const struct lw_gw_sums *g = &c->g;
	const struct engine_result *res = c->res;
	const struct xr_replies_stats *r = &c->res->replies.st;
	char a[16], b[16];

	if (res->replies.hist) {
		fprintf(human,
			"  replies: %llu PUSH_ACKs (%s/s), %llu duplicated, %llu unmatched\n",
			(unsigned long long)r->answered,
			fmt_si(replies_per_s(res, r->answered), a, sizeof(a)),
			(unsigned long long)r->repeated, (unsigned long long)r->unmatched);
		replies_rtt_line(res, human);
	}
	fprintf(human,
		"  lorawan: %zu devices, %zu gateways, heard by %u; ready in %.2f s, peak RSS %.0f MiB\n",
		f->ndev, f->ngw, f->heard_by, c->ready_ns / 1e9, c->ru.ru_maxrss / 1024.0);
	fprintf(human,
		"  uplinks: %.0f offered (%s/s), PUSH_DATA %s/s; PUSH_ACKed %.2f%%; "
		"gateways answered %llu of %zu (%llu..%llu each)\n",
		c->up, fmt_si(c->dur > 0 ? c->up / c->dur : 0, a, 16),
		fmt_si(c->dur > 0 ? res->sent / c->dur : 0, b, 16),
		res->sent ? 100.0 * r->answered / res->sent : 0, (unsigned long long)g->acked,
		f->ngw, (unsigned long long)g->gmin, (unsigned long long)g->gmax);
}

/* The gateways' keep-alives (PULL_DATA) and status messages */
static void lw_text_gateways(const struct lw_report_ctx *c, FILE *human)
{
	const struct lw_fleet *f = c->in->f;
	const struct lw_keepalive *ka = &c->in->lk->ka;
	const struct lw_gw_sums *g = &c->g;
	char a[16];

	if (ka->interval_ns)
		fprintf(human,
			"  keepalives: %llu PULL_DATA (every %s), %llu refused by the socket%s%s; "
			"%llu PULL_ACKs, gateways answered %llu of %zu\n",
			(unsigned long long)ka->sent, fmt_duration(ka->interval_ns, a, 16),
			(unsigned long long)ka->failed, ka->failed ? ": " : "",
			ka->failed ? strerror(ka->last_errno) : "",
			(unsigned long long)g->pull_acks, (unsigned long long)g->pull_acked,
			f->ngw);
	if (ka->stat_interval_ns)
		fprintf(human,
			"  stats: %llu stat messages (every %s), %llu not sent%s%s; "
			"%llu PUSH_ACKed, gateways answered %llu of %zu\n",
			(unsigned long long)ka->stat_sent,
			fmt_duration(ka->stat_interval_ns, a, 16),
			(unsigned long long)ka->stat_failed, ka->stat_failed ? ": " : "",
			ka->stat_failed ? strerror(ka->last_errno) : "",
			(unsigned long long)g->stat_acks, (unsigned long long)g->stat_acked,
			f->ngw);
}

/* Downlinks to our gateways, and the confirmed uplinks' ACKs */
static void lw_text_downlinks(const struct lw_report_ctx *c, FILE *human)
{
	const struct lw_kernel *lk = c->in->lk;
	const struct lw_gw_sums *g = &c->g;

	if (g->pull_resps || g->dl_other || c->confirmed)
		fprintf(human,
			"  downlinks: %llu PULL_RESP to our gateways, %llu answered with TX_ACK; "
			"%llu to no gateway of ours, %llu malformed, %llu without ACK bit, "
			"%llu to unknown devices, %llu before an uplink, %llu with a wrong MIC\n",
			(unsigned long long)g->pull_resps, (unsigned long long)g->tx_acks,
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_UNKNOWN_GW],
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_MALFORMED],
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_NOT_ACK],
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_UNKNOWN_DEV],
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_NO_UPLINK],
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_BAD_MIC]);
	if (lk->dl_ctr[XR_LORA_DL_UNREAD])
		fprintf(human,
			"  downlinks not read: %llu PULL_RESP counted and dropped, no TX_ACK (this "
			"kernel's XDP cannot load their bytes: bpf_xdp_load_bytes came in 5.18)\n",
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_UNREAD]);
	if (c->confirmed) {
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
}

/* The MAC commands the uplinks asked, and their answers */
static void lw_text_mac(const struct lw_report_ctx *c, FILE *human)
{
	const struct lw_kernel *lk = c->in->lk;

	if (c->in->mac_asks) {
		const struct lw_mac_result *m = &lk->mac;

		fprintf(human,
			"  MAC commands: %llu uplinks asked, %llu answered (%.2f%%), %llu unanswered, "
			"%llu answered twice; %llu LinkCheckAns (GwCnt %.2f on average), "
			"%llu DeviceTimeAns; %llu other commands, %llu unknown CIDs\n",
			(unsigned long long)m->uplinks, (unsigned long long)m->answered,
			m->uplinks ? 100.0 * m->answered / m->uplinks : 0,
			(unsigned long long)(m->uplinks > m->answered ? m->uplinks - m->answered :
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
}

/* Answers that reached another gateway, the joins, the crypto */
static void lw_text_joins(const struct lw_report_ctx *c, FILE *human)
{
	const struct lw_fleet *f = c->in->f;
	const struct lw_kernel *lk = c->in->lk;
	const struct lw_gw_sums *g = &c->g;
	const struct engine_result *res = c->res;

	if (g->misdirected)
		fprintf(human,
			"  misdirected: %llu answers reached another gateway's address (not counted above)\n",
			(unsigned long long)g->misdirected);
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
			(unsigned long long)(jn->requested > joined ? jn->requested - joined : 0),
			(unsigned long long)jn->accepts, (unsigned long long)jn->duplicates,
			(unsigned long long)jn->unmatched, (unsigned long long)jn->malformed,
			(unsigned long long)lk->dl_ctr[XR_LORA_DL_JOIN_LOST]);
		if (joined)
			fprintf(human,
				"  time to join: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
				lat[0] / 1e6, lat[1] / 1e6, lat[2] / 1e6, lat[3] / 1e6);
	}
	fprintf(human, "  crypto: %llu uplinks precomputed (AES-NI%s), %llu computed in BPF\n",
		(unsigned long long)res->hook_ctr[XR_LORA_RING_HITS], lk->ring_used ? "" : ": off",
		(unsigned long long)res->hook_ctr[XR_LORA_COMPUTED]);
}

/* JSON: the replies, the fleet and its uplinks */
static void lw_json_uplinks(const struct lw_report_ctx *c, struct json *j)
{
	const struct lw_fleet *f = c->in->f;
	const struct lw_gw_sums *g = &c->g;
	const struct engine_result *res = c->res;
	const struct xr_replies_stats *r = &c->res->replies.st;

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
	json_double(j, "ready_s", c->ready_ns / 1e9);
	json_double(j, "peak_rss_mib", c->ru.ru_maxrss / 1024.0);
	json_double(j, "uplinks", c->up);
	json_double(j, "uplinks_per_s", c->dur > 0 ? c->up / c->dur : 0);
	json_double(j, "push_data_per_s", c->dur > 0 ? res->sent / c->dur : 0);
	json_u64(j, "push_acks", r->answered);
	json_u64(j, "gateways_answered", g->acked);
	json_u64(j, "gateway_acks_min", g->gmin);
	json_u64(j, "gateway_acks_max", g->gmax);
	json_flag(j, "gateway_addrs", f->gw_addrs);
	json_u64(j, "misdirected", g->misdirected);
}

/* JSON: the keep-alives and status messages */
static void lw_json_gateways(const struct lw_report_ctx *c, struct json *j)
{
	const struct lw_keepalive *ka = &c->in->lk->ka;
	const struct lw_gw_sums *g = &c->g;

	if (ka->interval_ns) {
		json_open(j, "keepalive", '{');
		json_double(j, "interval_s", ka->interval_ns / 1e9);
		json_u64(j, "pull_data", ka->sent);
		json_u64(j, "pull_data_refused", ka->failed);
		json_u64(j, "pull_acks", g->pull_acks);
		json_u64(j, "gateways_answered", g->pull_acked);
		json_close(j, '}');
	}
	if (ka->stat_interval_ns) {
		json_open(j, "stat", '{');
		json_double(j, "interval_s", ka->stat_interval_ns / 1e9);
		json_u64(j, "sent", ka->stat_sent);
		json_u64(j, "not_sent", ka->stat_failed);
		json_u64(j, "push_acks", g->stat_acks);
		json_u64(j, "gateways_answered", g->stat_acked);
		json_close(j, '}');
	}
}

/* JSON: downlinks, MAC answers, joins, confirmed uplinks, the crypto */
static void lw_json_downlinks(const struct lw_report_ctx *c, struct json *j)
{
	const struct lw_fleet *f = c->in->f;
	const struct lw_kernel *lk = c->in->lk;
	const struct lw_gw_sums *g = &c->g;
	const struct engine_result *res = c->res;

	json_open(j, "downlinks", '{');
	json_u64(j, "pull_resps", g->pull_resps);
	json_u64(j, "tx_acks", g->tx_acks);
	json_u64(j, "unknown_gateway", lk->dl_ctr[XR_LORA_DL_UNKNOWN_GW]);
	json_u64(j, "malformed", lk->dl_ctr[XR_LORA_DL_MALFORMED]);
	json_u64(j, "not_ack", lk->dl_ctr[XR_LORA_DL_NOT_ACK]);
	json_u64(j, "unknown_device", lk->dl_ctr[XR_LORA_DL_UNKNOWN_DEV]);
	json_u64(j, "before_uplink", lk->dl_ctr[XR_LORA_DL_NO_UPLINK]);
	json_u64(j, "tx_ack_failed", lk->dl_ctr[XR_LORA_DL_TX_ACK_FAILED]);
	json_u64(j, "bad_mic", lk->dl_ctr[XR_LORA_DL_BAD_MIC]);
	json_u64(j, "unread", lk->dl_ctr[XR_LORA_DL_UNREAD]);
	json_u64(j, "join_accepts", lk->dl_ctr[XR_LORA_DL_JOIN_ACCEPT]);
	json_u64(j, "join_accepts_lost", lk->dl_ctr[XR_LORA_DL_JOIN_LOST]);
	json_u64(j, "join_accepts_unasked", lk->dl_ctr[XR_LORA_DL_JOIN_UNASKED]);
	json_u64(j, "mac_other", lk->dl_ctr[XR_LORA_DL_MAC_OTHER]);
	json_u64(j, "mac_unknown", lk->dl_ctr[XR_LORA_DL_MAC_UNKNOWN]);
	json_close(j, '}');
	if (c->in->mac_asks) {
		const struct lw_mac_result *m = &lk->mac;

		json_open(j, "mac", '{');
		json_flag(j, "linkcheck", c->in->mac_asks & XR_LORA_ASK_LINK_CHECK);
		json_flag(j, "devicetime", c->in->mac_asks & XR_LORA_ASK_DEVICE_TIME);
		json_u64(j, "every", c->in->mac_every);
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
	if (c->confirmed) {
		json_open(j, "confirmed", '{');
		json_u64(j, "uplinks", lk->confirmed_uplinks);
		json_u64(j, "acked", lk->confirmed_acked);
		json_u64(j, "unanswered", lk->confirmed_uplinks - lk->confirmed_acked);
		json_u64(j, "dup_acks", lk->dup_acks);
		if (lk->confirmed_acked)
			replies_hist_json(j, "ack_latency_us", &lk->ack_hist);
		json_close(j, '}');
	}
	json_flag(j, "precompute", lk->ring_used);
	json_u64(j, "uplinks_precomputed", res->hook_ctr[XR_LORA_RING_HITS]);
	json_u64(j, "uplinks_computed_in_bpf", res->hook_ctr[XR_LORA_COMPUTED]);
	json_close(j, '}');
}

void lw_report_write(const struct lw_report_in *in, const struct engine_result *res,
		     uint64_t ready_ns, FILE *human, struct json *j)
{
	struct lw_report_ctx c = { .in = in,
				   .res = res,
				   .ready_ns = ready_ns,
				   .confirmed = in->lk->confirmed_uplinks,
				   .dur = (res->end_ns - res->start_ns) / 1e9,
				   .up = (double)res->sent / in->f->heard_by };

	getrusage(RUSAGE_SELF, &c.ru);
	for (size_t d = 0; d < in->f->ndev && !in->f->joining && !c.confirmed; d++)
		c.confirmed = in->f->dev[d].confirmed;
	lw_gw_sums(in, &c.g);
	if (human) {
		lw_text_uplinks(&c, human);
		lw_text_gateways(&c, human);
		lw_text_downlinks(&c, human);
		lw_text_mac(&c, human);
		lw_text_joins(&c, human);
	}
	if (j) {
		lw_json_uplinks(&c, j);
		lw_json_gateways(&c, j);
		lw_json_downlinks(&c, j);
	}
}

void lw_headline(struct json_object *j, struct words *w)
{
	double up = headline_num(j, "lorawan.uplinks"), devs = headline_num(j, "lorawan.devices");
	double gws = headline_num(j, "lorawan.gateways"),
	       joined = headline_num(j, "lorawan.join.joined");
	char a[16], b[16], c[16];

	if (!isnan(joined))
		headline_done(w, joined, headline_num(j, "lorawan.join.requested"), "devices",
			      "joined (OTAA)");
	if (!isnan(up))
		words_clause(w, "%s uplinks of %s devices through %s gateways",
			     words_count(up, a, sizeof(a)), words_count(devs, b, sizeof(b)),
			     words_count(gws, c, sizeof(c)));
	headline_answered(w, j, "replies.push_acks", "acknowledged (PUSH_ACK)");
	headline_p99(w, j, "replies.rtt_us", "PUSH_ACK round trip");
}
