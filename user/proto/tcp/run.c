// SPDX-License-Identifier: GPL-2.0
/*
 * The sessions' run: session c's SYN goes from the engine (the source pair c
 * mod pairs, ISN a keyed function of c, as gen syn); bpf/proto/tcp.bpf.h on
 * the sender's interface carries the rest of the conversation (requests,
 * acknowledgements, the close) from 64 bytes per session. This file builds
 * the run from the stream a protocol filled, gives the engine its hooks,
 * starts and stops the threads that send beside XDP, and reads the table at
 * the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "report/figures.h"
#include "proto/proto.h"
#include "proto/syn/handshake.h"
#include "proto/tcp/session.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/prom.h"
#include "util/json.h"
#include "util/log.h"
#include "gen.skel.h"

static int tcp_before_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	struct tcp *t = ctx;

	skel->rodata->tcp_cfg = t->cfg;
	if (t->app && t->app->before_load) {
		int err = t->app->before_load(t->app->ctx, t, skel);

		if (err)
			return err;
	}
	return bpf_map__set_max_entries(skel->maps.tcp_sessions, t->table)	       ?:
		       bpf_map__set_max_entries(skel->maps.tcp_pump, XR_TCP_PUMP_RING) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_request, 2 + (t->cap ? t->cap->nkeys : 0)) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_flows, t->cap ? t->cap->nflows : 1) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_steps, t->cap ? t->cap->nsteps : 1) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_pace,
						t->pace.ps ? t->pace.sessions : 1);
}

static int tcp_after_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	struct tcp *t = ctx;
	uint8_t *v = calloc(1, XR_TCP_REQUEST_VALUE);
	int err = 0;

	if (!v)
		return -ENOMEM;
	/* [0] requests 1.., [1] request 0; replay --sessions: the capture's at [2 + key] */
	for (__u32 key = 0; key < 2 && !t->cap && !err; key++) {
		memcpy(v, key ? t->first : t->req, key ? t->first_len : t->req_len);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.tcp_request), &key, v, 0)) {
			err = -errno;
			pr_warn("cannot load the requests into their map: %s\n", strerror(errno));
		}
	}
	for (__u32 key = 0; t->cap && key < t->cap->nkeys && !err; key++) {
		__u32 at = 2 + key;

		memset(v, 0, XR_TCP_REQUEST_VALUE);
		memcpy(v, t->cap->req[key], t->cap->req_len[key]);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.tcp_request), &at, v, 0)) {
			err = -errno;
			pr_warn("cannot load the capture's requests into their map: %s\n",
				strerror(errno));
		}
	}
	free(v);
	if (t->cap && !err)
		err = tcp_flows_load(t->cap, skel);
	t->skel = skel;
	t->sessions = engine_map_mmap(skel->maps.tcp_sessions, &t->sessions_sz);
	t->rs.ts = engine_map_mmap(skel->maps.send_ts, &t->rs.ts_sz);
	if (!err && !t->sessions)
		err = -ENOMEM;
	if (!err && t->app && t->app->after_load)
		err = t->app->after_load(t->app->ctx, t, skel);
	return err;
}

/* The threads that send (pacer, pump, retransmissions) end with the run's wait. */
static void tcp_threads_stop(struct tcp *t)
{
	tcp_pace_stop(t);
	tcp_pump_stop(t);
	tcp_resend_stop(t);
}

/* ... and then the socket they sent through */
static void tcp_senders_close(struct tcp *t)
{
	tcp_threads_stop(t);
	tcp_resend_close(t);
}

static int tcp_start(void *ctx, const struct xr_gen_slot *slots, const struct engine_opts *o)
{
	struct tcp *t = ctx;
	int err = tcp_resend_start(t, slots, o)	     ?:
			  tcp_pump_start(t, t->skel) ?:
						       tcp_pace_start(t, t->skel);

	if (err)
		tcp_senders_close(t);
	return err;
}

/* engine_proto.ended: what XDP ended, and what the retransmission thread gave up */
static uint64_t tcp_ended_now(void *ctx)
{
	struct tcp *t = ctx;
	struct xr_replies_stats r;

	if (engine_replies_sum(bpf_map__fd(t->skel->maps.replies_stats), &r))
		return 0;
	return tcp_ended(t, &r) + atomic_load(&t->rs.syns_given_up) +
	       atomic_load(&t->rs.sessions_given_up);
}

static bool tcp_settled(void *ctx, uint64_t sent)
{
	struct xr_replies_stats r;

	const struct tcp *t = ctx;

	return !engine_replies_sum(bpf_map__fd(t->skel->maps.replies_stats), &r) &&
	       tcp_ended(t, &r) >= sent;
}

/* --listen: the sessions so far, and the application's figures */
static void tcp_live_json(void *ctx, const struct xr_replies_stats *r, struct json *j)
{
	const struct tcp *t = ctx;

	json_open(j, "sessions", '{');
	json_u64(j, "completed", r->ctr[XR_TCP_COMPLETED]);
	json_u64(j, "ended", tcp_ended(t, r));
	json_u64(j, "responses", r->ctr[XR_TCP_RESPONSES]);
	json_close(j, '}');
	if (t->app && t->app->live_json)
		t->app->live_json(t->app->ctx, r, j);
}

static void tcp_live_metrics(void *ctx, const struct xr_replies_stats *r, struct prom *p)
{
	const struct tcp *t = ctx;

	figure_prom_family(p, "xdpreplay_sessions_completed", PROM_COUNTER);
	prom_u64(p, r->ctr[XR_TCP_COMPLETED], NULL);
	prom_family(p, "xdpreplay_sessions_ended", PROM_COUNTER,
		    "Sessions that ended, completed or failed.");
	prom_u64(p, tcp_ended(t, r), NULL);
	if (t->app && t->app->live_metrics)
		t->app->live_metrics(t->app->ctx, r, p);
}

static void tcp_finish(void *ctx, struct gen_bpf *skel)
{
	struct tcp *t = ctx;
	struct veth_peer vp;

	memset(&t->stalled, 0, sizeof(t->stalled));
	if (t->veth_peer_xdp && !iface_veth_peer(t->rs.ifindex, &vp) && !vp.xdp)
		pr_warn("the veth peer %s lost its XDP program during the run: what this run sent "
			"by XDP_TX after that waited there for its next other frame\n",
			t->veth_peer);
	tcp_threads_stop(t);
	tcp_reset_open(t);
	tcp_resend_close(t);
	for (uint32_t i = 0; t->sessions && i < t->table; i++) {
		const struct xr_tcp_session *s = &t->sessions[i];

		/* requests after the first answered: the paced ones (each session its own slot) */
		if (t->pace.ps && s->state != XR_TCP_FREE && s->k > 1)
			t->pace.answered += s->k - 1;
		/* a request after the first with bytes on the wire, whatever became of its session */
		t->stalled.request_partial += s->state == XR_TCP_REQUEST && s->k >= 1 &&
					      (s->acked || s->in_flight);
		if (s->state >= XR_TCP_REQUEST && s->state <= XR_TCP_FIN_SENT &&
		    s->retries >= XR_TCP_MAX_RETRIES)
			t->stalled.timeout++;
		else if (s->state == XR_TCP_REQUEST || s->state == XR_TCP_PACED)
			t->stalled.request++;
		else if (s->state == XR_TCP_RESPONSE)
			t->stalled.response++;
		else if (s->state == XR_TCP_FIN_SENT)
			t->stalled.close++;
	}
	engine_hist_read(bpf_map__fd(skel->maps.tcp_resp_hist), &t->resp);
	engine_hist_read(bpf_map__fd(skel->maps.tcp_first_hist), &t->first_byte);
	t->last_answer_ns = skel->bss->tcp_last_answer_ns;
	if (t->app && t->app->finish)
		t->app->finish(t->app->ctx, skel);
}

static void tcp_close(void *ctx)
{
	struct tcp *t = ctx;

	tcp_senders_close(t);
	if (t->sessions)
		munmap(t->sessions, t->sessions_sz);
	if (t->rs.ts)
		munmap(t->rs.ts, t->rs.ts_sz);
	if (t->app && t->app->close)
		t->app->close(t->app->ctx);
	t->rs.ts = NULL;
	t->sessions = NULL;
	t->skel = NULL;
}

static uint32_t next_pow2(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < XR_TCP_TABLE_MAX)
		p <<= 1;
	return p;
}

int tcp_sessions_build(struct tcp *t, const struct send_opts *so, const struct iface *ifc,
		       struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct template_addr ta;
	struct veth_peer vp;
	struct syn_isn isn;
	double planned;
	int err;

	if (!t->first) {
		t->first = t->req;
		t->first_len = t->req_len;
	}
	err = syn_template(so, ifc, fs, plan, &ta, &isn, "sessions", &planned, 0x02 /* SYN */);
	if (err)
		return err;
	memcpy(t->rs.eth, fs->bytes + fs->frames[0].off, 14);
	t->rs.syn_len = fs->frames[0].len < sizeof(t->rs.syn) ? fs->frames[0].len :
								sizeof(t->rs.syn);
	memcpy(t->rs.syn, fs->bytes + fs->frames[0].off, t->rs.syn_len);
	t->rs.isn_step = isn.step;
	t->rs.fd = -1;
	t->rs.ready_fd = o->ready_fd;
	t->concurrency = so->concurrency;
	t->veth = !strcmp(ifc->driver, "veth");
	/*
	 * measured on 6.18: a veth hands the frames its end sends by XDP_TX
	 * (every ACK and request after the SYN) to the peer at once only when
	 * the peer has an XDP program (veth_xdp_flush); with GRO alone they wait
	 * for its next ordinary frame, a retransmission 200 ms on, and a server
	 * that holds its answer for our ACK (Nagle) can wait forever
	 */
	if (t->veth && !iface_veth_peer(ifc->ifindex, &vp)) {
		t->veth_peer_xdp = vp.xdp;
		memcpy(t->veth_peer, vp.name, sizeof(t->veth_peer));
		if (!vp.xdp)
			pr_warn("%s's veth peer %s has no XDP program: the ACKs and requests this run "
				"sends by XDP_TX wait there for its next other frame; attach one to it "
				"(xdpreplay count -i %s --any)\n",
				ifc->name, vp.name, vp.name);
	}
	if (!planned && t->cap && (so->pace == XR_PACE_NONE || so->pace == XR_PACE_PCAP) &&
	    !so->duration_ns)
		planned = t->cap->nflows; /* replay --sessions: its flows once */
	if (!planned)
		planned = XR_TCP_TABLE_MAX;
	/*
	 * A closed loop's open sessions are a window of consecutive numbers,
	 * so of consecutive slots: room for eight such windows keeps a session
	 * that waits for a retransmission out of the way of the next ones, and
	 * the retransmission thread's pass over the table short (a million
	 * slots, 80 MiB then, read 20 times a second, took more CPU than the sessions)
	 */
	if (so->concurrency && planned > 8.0 * so->concurrency)
		planned = 8.0 * so->concurrency;
	if (ta.tuples && planned > ta.tuples)
		planned = ta.tuples;
	/*
	 * session c's slot is its (source, port) pair's number + 1; where the
	 * application keeps much in a slot (an MQTT responder's 32 KiB of
	 * stamps), as many as there are sessions, not the usual 1,024 at least
	 */
	if (t->app && t->app->large_slots)
		t->table = next_pow2(planned + 1);
	else
		t->table = next_pow2(planned < 1024 ? 1024 : planned);
	t->cfg = (struct xr_tcp_cfg){ .isn_base = isn.base,
				      .isn_inv = isn.inv,
				      .req_len = t->req_len,
				      .first_len = t->first_len,
				      .requests = t->requests,
				      .table_mask = t->table - 1,
				      .resp_size = t->resp_size,
				      .resp_first = t->resp_first,
				      .response = t->response,
				      .close = t->close,
				      .bye_len = t->bye_len,
				      .fields = t->fields,
				      .flows = t->cap ? t->cap->nflows : 0 };
	if (t->pace.ps) {
		/* the protocol asked for paced requests: its sessions, from the run's first */
		t->pace.sessions = so->count;
		t->pace.base = so->first_n;
		t->pace.departures = so->count * (t->requests - 1);
		t->cfg.pace_ps = t->pace.ps;
		t->cfg.pace_sessions = so->count;
		t->cfg.pace_base = so->first_n;
		/*
		 * --wait counts from the schedule's end (tcp_pace_wait_until),
		 * not from the last SYN; until the schedule starts, from the
		 * last SYN and the schedule's length
		 */
		t->pace.wait_ns = o->reply_wait_ns;
		o->reply_wait_ns += tcp_pace_span(&t->pace);
	}
	memcpy(t->cfg.bye, t->bye, sizeof(t->cfg.bye));
	if (t->fields.kind[0] && !t->patch) {
		t->patch = tcp_fields_write;
		t->patch_ctx = &t->cfg.fields;
	}
	t->ops = (struct engine_proto){ .ctx = t,
					.before_load = tcp_before_load,
					.after_load = tcp_after_load,
					.start = tcp_start,
					.settled = tcp_settled,
					.wait_until = tcp_pace_wait_until,
					.finish = tcp_finish,
					.close = tcp_close,
					.ended = tcp_ended_now,
					.live_json = tcp_live_json,
					.live_metrics = tcp_live_metrics };
	o->proto = &t->ops;
	o->reply_kind = XR_REPLY_TCP;
	o->rpl = ta.match;
	return 0;
}

void tcp_sessions_free(struct tcp *t)
{
	if (t->first != t->req)
		free(t->first);
	free(t->req);
	free(t->resp.hist);
	free(t->first_byte.hist);
}
