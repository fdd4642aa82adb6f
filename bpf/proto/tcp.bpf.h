/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen tcp's sessions on the sender's interface. The kernel engine sent
 * session c's SYN; from the SYN-ACK on, this handler is the client: it
 * acknowledges with request 0's first segment riding on the handshake's ACK,
 * sends the rest of a request one segment per acknowledgement (never past
 * the server's window or MSS), acknowledges every server segment in order
 * (anything else gets a duplicate ACK, so the server retransmits), reads
 * each response far enough to know where it ends (HTTP/1.x status line and
 * Content-Length, or the server's FIN; or a fixed size), sends the next
 * request or closes (FIN, or RST with the exact sequence number), and drops
 * every server segment after handling it. State: one struct xr_tcp_session
 * per session, in the slot its (source, port) pair names. Layout and
 * counters: bpf/shared/tcp.h.
 */
#ifndef __XR_PROTO_TCP_BPF_H
#define __XR_PROTO_TCP_BPF_H

const volatile struct xr_tcp_cfg tcp_cfg = {};

/* What a state's handler of the session reader may say besides a verdict (XDP_*, >= 0) */
#define TCP_GO_ON -1 /* on to what comes next in the segment */
#define TCP_GO_REPLIES -2 /* a subscriber's replies go (mqtt_replies_send) */

/* Sessions by (source, port) slot; sized by userspace before load, read by it at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_tcp_session);
} tcp_sessions SEC(".maps");

/*
 * The requests' bytes: gen's, the same for every session: [0] requests 1..,
 * [1] request 0; replay --sessions: the capture's, [2 + key] (sized by userspace).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, XR_TCP_REQUEST_VALUE);
} tcp_request SEC(".maps");

/* replay --sessions: the capture's flows, and their requests (bpf/shared/tcp.h); sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_tcp_flow);
} tcp_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_tcp_step);
} tcp_steps SEC(".maps");

/* Segments asked of userspace's pump (bpf/shared/tcp.h); sized by userspace for gen tcp. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} tcp_pump SEC(".maps");
/*
 * 1 while the pump looks at its ring every few tens of microseconds
 * (user/proto/tcp/pump.c): an ask wakes nobody then. A wake-up is an
 * irq_work, a self-IPI, on the CPU that runs this program: on veth, inside
 * the server's own send (measured on this VM: QoS-1 bursts of 20, 10
 * publishers, 45k messages/s into Mosquitto with a wake-up per ask, 57k
 * without).
 */
__u32 tcp_pump_polling = 0;

/*
 * Paced requests: [i] the highest request of session pace_base + i whose
 * departure has come (written by userspace's pacer); sized by userspace.
 * 64 bits: an array's elements are 8-byte aligned, and the mapped memory
 * is read as an array of them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tcp_pace SEC(".maps");
/* When the paced requests' schedule starts (CLOCK_MONOTONIC ns), set by the pacer before its first grant. */
__u64 tcp_pace_t0_ns = 0;

/* Request to last response byte, per second, as rtt_hist. */
XR_HIST_MAP(tcp_resp_hist);

/* Request to first response byte, per second, as rtt_hist. */
XR_HIST_MAP(tcp_first_hist);

struct tcp_scratch {
	__u8 head[XR_TCP_READ_MAX]; /* the bytes of a server's segment, to read */
	__u8 tail[64]; /* the checksum's last partial block */
	__u8 seg[2048]; /* a segment of ours whose bytes are the session's own (tcp_app_patch) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tcp_scratch);
} tcp_scratch SEC(".maps");

/* replay --sessions: each session its flow's own requests */
#define TCP_FLOWS (tcp_cfg.flows != 0)
#define TCP_PACED (tcp_cfg.pace_ps != 0)

/* the applications on the sessions, reached through their hooks (tcp_app_*) */
#include "proto/tcp_apps.bpf.h"

/* The first byte of a segment's payload at off, or -1 */
static __always_inline int tcp_payload_first(struct xdp_md *ctx, __u32 off)
{
	__u8 b;

	return bpf_xdp_load_bytes(ctx, off, &b, 1) ? -1 : b;
}

/*
 * Our next sequence number at offset off of request k (k == requests: the
 * bye's and FIN's). A subscriber's replies (PUBACKs, answers) come between
 * its request 0 and its goodbye (none are sent before request 0 is
 * acknowledged whole).
 */
static __always_inline __u32 tcp_our_seq(const struct xr_tcp_session *s, __u32 off)
{
	__u32 seq = s->isn + 1 + off;

	seq += tcp_app_sent(s);
	if (TCP_FLOWS)
		return seq + s->step_off;
	if (!s->k)
		return seq;
	return seq + tcp_cfg.first_len + (__u32)(s->k - 1) * tcp_cfg.req_len;
}

/* The length of request k. */
static __always_inline __u32 tcp_req_len(const struct xr_tcp_session *s)
{
	if (TCP_FLOWS)
		return s->step_len;
	return s->k ? tcp_cfg.req_len : tcp_cfg.first_len;
}

/* The requests of session s (the close comes after the last). */
static __always_inline __u32 tcp_requests(const struct xr_tcp_session *s)
{
	return TCP_FLOWS ? s->step_requests : tcp_cfg.requests;
}

/*
 * replay --sessions: request k of session s's flow (c mod flows) into the
 * session; past the last, an empty step where the stream ends (our FIN's
 * place). 0, or -1 when the maps do not have it.
 */
static __always_inline int tcp_step_load(struct xr_tcp_session *s)
{
	__u32 f = s->c32 % tcp_cfg.flows, i;
	const struct xr_tcp_flow *fl = bpf_map_lookup_elem(&tcp_flows, &f);
	const struct xr_tcp_step *st;

	if (!fl || !fl->steps)
		return -1;
	s->step_requests = fl->steps;
	if (s->k >= fl->steps) {
		s->step_off += s->step_len;
		s->step_len = 0;
		s->step_resp = 0;
		return 0;
	}
	i = fl->first + s->k;
	st = bpf_map_lookup_elem(&tcp_steps, &i);
	if (!st)
		return -1;
	s->step_len = st->len;
	s->step_off = st->off;
	s->step_resp = st->resp;
	s->step_key = st->key;
	return 0;
}

/* What we have sent up to: where a bare ACK's sequence number is. */
static __always_inline __u32 tcp_snd_nxt(const struct xr_tcp_session *s)
{
	switch (s->state) {
	case XR_TCP_REQUEST: return tcp_our_seq(s, s->acked + s->in_flight);
	case XR_TCP_FIN_SENT: return tcp_our_seq(s, tcp_cfg.bye_len + 1);
	case XR_TCP_PACED: return tcp_our_seq(s, 0);
	default: return tcp_our_seq(s, tcp_req_len(s));
	}
}

/* Asks the pump for request k's bytes [off, off + len) of session s. 0, or -1 when its ring is full. */
static __always_inline int tcp_pump_ask(const struct xr_tcp_session *s, __u32 off, __u32 len)
{
	struct xr_tcp_pump_seg *g = bpf_ringbuf_reserve(&tcp_pump, sizeof(*g), 0);

	if (!g)
		return -1;
	g->tkey = s->tkey;
	g->c32 = s->c32;
	g->isn = s->isn;
	g->ack = s->rcv_nxt;
	g->off = off;
	g->len = len;
	g->k = s->k;
	g->t_req = s->t_req;
	bpf_ringbuf_submit(g, *(volatile __u32 *)&tcp_pump_polling ? BPF_RB_NO_WAKEUP : 0);
	return 0;
}

/*
 * A publisher's segment of PUBACKs that leaves its burst unanswered: its ACK
 * is left to the pump, which sends it when it next looks at its ring (tens
 * of microseconds later), as a socket client's ACK comes when its reader
 * wakes. On veth an ACK from here reaches the broker inside its own send of
 * the PUBACK, before it writes the next, so its Nagle never held one and each
 * PUBACK went in a segment of its own, acknowledged alone (measured, one
 * publisher's bursts of 20 into Mosquitto: 1.0 segment each way per
 * message; late, 0.29-0.34). One ask per ACK owed: the pump acknowledges
 * rcv_nxt as it is when it takes the ask. true: the ACK is the pump's.
 */
static __always_inline bool tcp_ack_later(struct xr_tcp_session *s, struct xr_replies_stats *st)
{
	/* a locked exchange: ordered after this segment's rcv_nxt, which the pump reads after its own */
	if (__sync_val_compare_and_swap(&s->ack_owed, 0, 1))
		return true;
	if (tcp_pump_ask(s, tcp_req_len(s), 0)) {
		s->ack_owed = 0;
		st->ctr[XR_TCP_ACKS_RING_FULL]++;
		return false;
	}
	st->ctr[XR_TCP_ACKS_DELAYED]++;
	return true;
}

/* The server's MSS, as much as a segment of ours carries. */
static __always_inline __u32 tcp_seg_max(const struct xr_tcp_session *s)
{
	return s->mss > XR_TCP_PAYLOAD_MAX ? XR_TCP_PAYLOAD_MAX : s->mss;
}

/*
 * Request k's bytes from acked + in_flight, as much as the window and
 * XR_TCP_FLIGHT_SEGS full segments take, asked of the pump (userspace builds
 * and sends them). A segment the ring has no room for is left to the timeout:
 * it counts as in flight, so the retransmission thread sends it.
 */
__noinline int tcp_pump_fill(struct xr_tcp_session *s, struct xr_replies_stats *st, int counter)
{
	__u32 rlen, mss, waits = 0, asked = 0;

	/* a global function (verified once, not at each caller's state: 6.1 gave up at 1M insns) */
	if (!s || !st || counter < 0 || counter >= XR_REPLY_CTRS)
		return 0;
	rlen = tcp_req_len(s);
	mss = tcp_seg_max(s);
	if (!mss)
		return 0;
	for (int i = 0; i < XR_TCP_FLIGHT_SEGS; i++) {
		__u32 pos = s->acked + s->in_flight, len = rlen - pos;

		if (pos >= rlen || s->in_flight >= XR_TCP_FLIGHT_SEGS * mss)
			break;
		if (len > mss)
			len = mss;
		if (s->in_flight + len > s->wnd) {
			waits = 1;
			/* the rest when the server's ACK opens its window: no small segments meanwhile */
			if (s->wnd <= s->in_flight || s->in_flight)
				break;
			len = s->wnd;
		}
		if (tcp_pump_ask(s, pos, len)) {
			st->ctr[XR_TCP_PUMP_FULL]++;
			if (!s->in_flight)
				s->in_flight = len;
			break;
		}
		s->in_flight += len;
		asked++;
	}
	st->ctr[counter] += asked;
	st->ctr[XR_TCP_PUMPED] += asked;
	st->ctr[XR_TCP_WINDOW_WAITS] += waits;
	if (asked)
		s->t_sent = bpf_ktime_get_ns();
	return 0;
}

/*
 * The third duplicate ACK: the server holds what came after a lost segment
 * of ours (it says so once per segment that came out of order), so the one
 * at acked goes again now instead of after the timeout (fast retransmit).
 */
static __always_inline void tcp_pump_dupack(struct xr_tcp_session *s, struct xr_replies_stats *st)
{
	__u32 len = tcp_req_len(s) - s->acked, mss = tcp_seg_max(s);

	if (++s->dupacks != 3)
		return;
	if (len > mss)
		len = mss;
	if (len > s->wnd)
		len = s->wnd;
	if (!len)
		return;
	if (tcp_pump_ask(s, s->acked, len)) {
		st->ctr[XR_TCP_PUMP_FULL]++;
		return;
	}
	st->ctr[XR_TCP_RESENT]++;
	st->ctr[XR_TCP_PUMPED]++;
	st->ctr[XR_TCP_FAST_RESENT]++;
	s->t_sent = bpf_ktime_get_ns();
}

/*
 * Request k's next segment at the session's acknowledged offset, counted in
 * counter: in place when the rest of the request fits one segment (0 and the
 * frame ready for XDP_TX), else through the pump (1: nothing to XDP_TX, as
 * when the window is closed); -1 on failure.
 */
static __always_inline int tcp_send_request(struct xdp_md *ctx, struct xr_tcp_session *s,
					    struct xr_replies_stats *st, struct tcp_scratch *sc,
					    int counter)
{
	__u32 key = TCP_FLOWS ? 2 + s->step_key : !s->k, off = s->acked, rlen = tcp_req_len(s),
	      len = rlen - s->acked;
	__u8 *req = bpf_map_lookup_elem(&tcp_request, &key);
	const __u8 *payload;

	if (!req || off >= XR_TCP_REQUEST_MAX)
		return -1;
	if (s->flags & XR_TCPF_PUMPED)
		goto pump;
	/* a window too small but open is counted by the pump, once */
	if (!s->wnd && len) {
		st->ctr[XR_TCP_WINDOW_WAITS]++;
		return 1;
	}
	if (len > s->mss || len > s->wnd || len > XR_TCP_PAYLOAD_MAX)
		goto pump;
	payload = req + off;
	if (tcp_app_patched()) {
		__u64 n = len;

		/*
		 * the session's own bytes: the template's, its {c} (and stamps)
		 * written in. The size masked in asm, on a copy: clang drops a
		 * C mask as redundant after the check above, and 6.1's verifier
		 * loses that check's bound across the length's stack spill. A
		 * barrier_var on len itself cost 6.18's verifier its million
		 * instructions (gen mqtt's async calls).
		 */
		asm volatile("%[n] &= 0x7ff" : [n] "+r"(n));
		if (bpf_probe_read_kernel(sc->seg, n, payload))
			return -1;
		tcp_app_patch(s, sc->seg, off, len);
		payload = sc->seg;
	}
	/* no room to grow the server's frame to it (veth): the pump's, from here on */
	if (tcp_reply_data(ctx, REPLY_V6, TCP_ACK | TCP_PSH, tcp_our_seq(s, off), s->rcv_nxt,
			   payload, len, sc->tail))
		goto pump;
	s->in_flight = len;
	s->t_sent = bpf_ktime_get_ns();
	st->ctr[counter]++;
	return 0;
pump:
	s->flags |= XR_TCPF_PUMPED;
	tcp_pump_fill(s, st, counter);
	return 1;
}

/* Ends session s: completed, or failed with counter why. */
static __always_inline void tcp_done(struct xr_tcp_session *s, struct xr_replies_stats *st, int why)
{
	st->ctr[why]++;
	s->state = XR_TCP_DONE;
	if (why != XR_TCP_COMPLETED)
		s->flags |= XR_TCPF_FAILED;
}

/* The server's MSS from a SYN-ACK (Linux puts it first), or TCP's default of 536. */
static __always_inline __u16 tcp_synack_mss(const struct tcphdr *th, void *data_end)
{
	const __u8 *o = (const __u8 *)(th + 1);

	if (th->doff < 6 || (void *)(o + 4) > data_end || o[0] != 2 || o[1] != 4)
		return 536;
	return (__u16)o[2] << 8 | o[3];
}

/* The send record of the session whose ISN + 1 an ACK field names (a SYN-ACK's, a RST's to our SYN), or NULL. */
static __always_inline struct xr_send_ts *tcp_syn_sent(__u32 ack, __u32 *c32)
{
	*c32 = (ack - 1 - tcp_cfg.isn_base) * tcp_cfg.isn_inv;
	return sent_frame(*c32 & (XR_TS_RING - 1), *c32, 0xffffffff);
}

static __always_inline int tcp_on_synack(struct xdp_md *ctx, struct xr_tcp_session *s, __u32 tkey,
					 __u32 seq, __u32 ack, __u16 wnd, __u16 mss,
					 struct xr_replies_stats *st, struct tcp_scratch *sc)
{
	__u32 c32;
	struct xr_send_ts *t = tcp_syn_sent(ack, &c32);

	if (!t) {
		/* an earlier run's, or nobody's: reset, so that the server lets go of it */
		st->unmatched++;
		return tcp_reply(ctx, REPLY_V6, TCP_RST, ack, 0) ? XDP_DROP : XDP_TX;
	}
	if (s->tkey == tkey && s->c32 == c32 && s->state != XR_TCP_FREE) {
		/* the server asks again: our handshake ACK (and the data on it) never came */
		count_answer(st, t);
		if (s->state == XR_TCP_REQUEST && s->k == 0) {
			s->in_flight = 0;
			return tcp_send_request(ctx, s, st, sc, XR_TCP_RESENT) ? XDP_DROP : XDP_TX;
		}
		return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP :
										       XDP_TX;
	}
	if (s->state != XR_TCP_FREE && s->state != XR_TCP_DONE) {
		/* another session still holds the slot: this one fails, once however often it is asked */
		if (count_answer(st, t))
			st->ctr[XR_TCP_TABLE_FULL]++;
		return tcp_reply(ctx, REPLY_V6, TCP_RST, ack, 0) ? XDP_DROP : XDP_TX;
	}
	count_answer(st, t);
	*s = (struct xr_tcp_session){ .tkey = tkey,
				      .c32 = c32,
				      .isn = ack - 1,
				      .rcv_nxt = seq + 1,
				      .wnd = wnd,
				      .mss = mss,
				      .state = XR_TCP_REQUEST,
				      .t_req = bpf_ktime_get_ns() };
	if (TCP_FLOWS && tcp_step_load(s)) {
		tcp_done(s, st, XR_TCP_MALFORMED);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, ack, s->rcv_nxt) ? XDP_DROP :
										      XDP_TX;
	}
	return tcp_send_request(ctx, s, st, sc, XR_TCP_SEGMENTS) ? XDP_DROP : XDP_TX;
}

/*
 * Paced: request k (>= 1) of session s waits for its departure, unless that
 * has come (the pacer granted it while request k - 1 was on its way): then
 * it goes now, late, stamped with its departure time. Whoever takes the
 * gate sends it, so it goes once. true: it waits (the pacer sends it).
 */
static __always_inline bool tcp_pace_wait(struct xr_tcp_session *s, struct xr_replies_stats *st)
{
	__u32 i = s->c32 - tcp_cfg.pace_base;
	__u64 *granted = bpf_map_lookup_elem(&tcp_pace, &i);
	__u64 d;

	if (!granted)
		return false;
	s->state = XR_TCP_PACED;
	/*
	 * The exchange (fully ordered in the kernel) puts the gate before the
	 * grant's read. __sync_lock_test_and_set is only an acquire barrier to
	 * the compiler, which then sank the state's store below it: the pacer
	 * took gates of sessions still in XR_TCP_REQUEST (gate_mismatched 2 in
	 * 1,000 bursts); the empty asm keeps the store above.
	 */
	asm volatile("" ::: "memory");
	__sync_lock_test_and_set(&s->pace_gate, 1);
	if (*(volatile __u64 *)granted < s->k)
		return true;
	if (__sync_val_compare_and_swap(&s->pace_gate, 1, 0) != 1)
		return true;
	st->ctr[XR_TCP_LATE]++;
	d = (__u64)(s->k - 1) * tcp_cfg.pace_sessions + i;
	s->t_req =
		tcp_pace_t0_ns + d * (tcp_cfg.pace_ps / 1000) + d * (tcp_cfg.pace_ps % 1000) / 1000;
	s->state = XR_TCP_REQUEST;
	return false;
}

/* Response k is complete: the next request, or the close. */
static __always_inline int tcp_next(struct xdp_md *ctx, struct xr_tcp_session *s,
				    struct xr_replies_stats *st, struct tcp_scratch *sc)
{
	s->k++;
	s->retries = 0;
	s->flags &= ~XR_TCPF_PUMPED;
	s->dupacks = 0;
	s->acked = 0;
	s->resp_got = 0;
	s->status = 0;
	/* the reader's state, MQTT's or HTTP's */
	s->http_phase = 0;
	s->http_flags = 0;
	s->http_num = 0;
	tcp_app_next(s);
	if (TCP_FLOWS && tcp_step_load(s)) {
		tcp_done(s, st, XR_TCP_MALFORMED);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_our_seq(s, 0), s->rcv_nxt) ?
			       XDP_DROP :
			       XDP_TX;
	}
	if (s->k < tcp_requests(s)) {
		if (s->flags & XR_TCPF_FIN_RCVD) {
			tcp_done(s, st, XR_TCP_CLOSED_EARLY);
			return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_our_seq(s, 0),
					 s->rcv_nxt) ?
				       XDP_DROP :
				       XDP_TX;
		}
		s->state = XR_TCP_REQUEST;
		s->t_req = bpf_ktime_get_ns();
		/* the answer acknowledged alone: the request goes at its departure */
		if (TCP_PACED && s->k && tcp_pace_wait(s, st))
			return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_our_seq(s, 0), s->rcv_nxt) ?
				       XDP_DROP :
				       XDP_TX;
		return tcp_send_request(ctx, s, st, sc, XR_TCP_SEGMENTS) ? XDP_DROP : XDP_TX;
	}
	if (tcp_cfg.close == XR_TCP_CLOSE_RST) {
		tcp_done(s, st, XR_TCP_COMPLETED);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_our_seq(s, 0), s->rcv_nxt) ?
			       XDP_DROP :
			       XDP_TX;
	}
	s->state = XR_TCP_FIN_SENT;
	s->t_sent = bpf_ktime_get_ns();
	s->retries = 0;
	if (tcp_cfg.bye_len) {
		/* the protocol's goodbye (MQTT's DISCONNECT) on the FIN */
		__u8 bye[4];

		/*
		 * byte by byte from the volatile rodata: a memcpy through a plain
		 * pointer let clang copy the initializer's zeros (Mosquitto logged
		 * every session's end as a protocol error)
		 */
		for (int i = 0; i < sizeof(bye); i++)
			bye[i] = tcp_cfg.bye[i];
		return tcp_reply_data(ctx, REPLY_V6, TCP_FIN | TCP_PSH | TCP_ACK, tcp_our_seq(s, 0),
				      s->rcv_nxt, bye,
				      tcp_cfg.bye_len > sizeof(bye) ? sizeof(bye) : tcp_cfg.bye_len,
				      sc->tail) ?
			       XDP_DROP :
			       XDP_TX;
	}
	return tcp_reply(ctx, REPLY_V6, TCP_FIN | TCP_ACK, tcp_our_seq(s, 0), s->rcv_nxt) ?
		       XDP_DROP :
		       XDP_TX;
}

/* When the run's last response completed (CPUs race to write it: at worst a few ns early). */
__u64 tcp_last_answer_ns = 0;

/* Response k is complete: timed, counted, and the session goes on. */
static __always_inline int tcp_answered(struct xdp_md *ctx, struct xr_tcp_session *s,
					struct xr_replies_stats *st, struct tcp_scratch *sc)
{
	__u64 now = bpf_ktime_get_ns();

	if (now > tcp_last_answer_ns)
		tcp_last_answer_ns = now;
	st->ctr[XR_TCP_RESPONSES]++;
	record_hist(&tcp_resp_hist, s->t_req);
	return tcp_next(ctx, s, st, sc);
}

#endif /* __XR_PROTO_TCP_BPF_H */
