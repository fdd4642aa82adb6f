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
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_RTT_CELLS);
	__type(key, __u32);
	__type(value, __u64);
} tcp_resp_hist SEC(".maps");

/* Request to first response byte, per second, as rtt_hist. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_RTT_CELLS);
	__type(key, __u32);
	__type(value, __u64);
} tcp_first_hist SEC(".maps");

#include "proto/mqtt.bpf.h"

struct tcp_scratch {
	__u8 head[XR_TCP_READ_MAX]; /* the bytes of a server's segment, to read */
	__u8 tail[64]; /* the checksum's last partial block */
	__u8 seg[2048]; /* a segment of ours whose bytes are the session's own (gen mqtt) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tcp_scratch);
} tcp_scratch SEC(".maps");

#define TCP_MQTT (tcp_cfg.response == XR_TCP_RESP_MQTT)
/* replay --sessions: each session its flow's own requests */
#define TCP_FLOWS (tcp_cfg.flows != 0)
#define TCP_PACED (tcp_cfg.pace_ps != 0)

#include "proto/http.bpf.h"
#include "proto/fields.bpf.h"

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

	if (TCP_MQTT && MQTT_REPLIES)
		seq += MQTT_REPLY_LEN * s->pa_sent;
	if (TCP_MQTT && MQTT_PUBLISHER)
		seq += 2 * (__u32)s->pings;
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
static __always_inline void tcp_pump_fill(struct xr_tcp_session *s, struct xr_replies_stats *st,
					  int counter)
{
	__u32 rlen = tcp_req_len(s), mss = tcp_seg_max(s), waits = 0, asked = 0;

	if (!mss)
		return;
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
	if (TCP_MQTT || tcp_cfg.fields.kind[0]) {
		/* the session's own bytes: the template's, its {c} (and stamps) written in */
		if (bpf_probe_read_kernel(sc->seg, len & 0x7ff, payload))
			return -1;
		if (TCP_MQTT) {
			mqtt_patch(s, sc->seg, off, len);
		} else {
			/*
			 * member by member from the volatile rodata: through a plain
			 * pointer, clang would take the initializer's zeros for them
			 */
			struct xr_tcp_fields f;

			for (int i = 0; i < XR_TCP_FIELDS; i++) {
				f.off[i] = tcp_cfg.fields.off[i];
				f.kind[i] = tcp_cfg.fields.kind[i];
			}
			tcp_fields_patch(&f, s, sc->seg, off, len);
		}
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
	/* a replying subscriber's count of replies places its goodbye */
	if (!(TCP_MQTT && MQTT_REPLIES))
		s->mq_acked = 0;
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

/* s->dupacks of a replying subscriber whose unacknowledged replies are due again */
#define XR_TCP_REPLIES_DUE 0xff

/*
 * A replying subscriber's replies from its j-th on (PUBACKs from their ids
 * in mqtt_pubacks, answers from their stamps in mqtt_answers), as many as a
 * segment, the window, want and room (the bytes the broker's frame can grow
 * to) take: those not sent yet, or again from the first the broker did not
 * take (its duplicate ACKs say one was lost; its inflight window waits for
 * it). Those left unsent are counted in s->in_flight, a subscriber's
 * replies not sent yet. 0 and the frame ready for XDP_TX. One caller: each
 * inlined copy cost the verifier ~100k instructions.
 */
static __always_inline int tcp_replies_send(struct xdp_md *ctx, struct xr_tcp_session *s,
					    struct xr_replies_stats *st, struct tcp_scratch *sc,
					    __u32 slot, __u32 j, __u32 want, bool again, __u32 room)
{
	struct mqtt_reply_fill fill = { .seg = sc->seg };
	__u32 n = want, len = MQTT_REPLY_LEN, unsent, ahead;

	/* unsent ones that a retransmission after the timeout sent and the broker took */
	if ((__s32)(j - s->pa_acked) < 0) {
		n = s->pa_acked - j >= n ? 0 : n - (s->pa_acked - j);
		j = s->pa_acked;
	}
	fill.from = j;
	/* never past the window's right edge: it counts from the broker's ACK, not from j */
	ahead = (j - s->pa_acked) * len;
	if (!len || !n || ahead >= s->wnd)
		return -1;
	if (n > room / len)
		n = room / len;
	if (n > (s->wnd - ahead) / len)
		n = (s->wnd - ahead) / len;
	if (n > tcp_seg_max(s) / len)
		n = tcp_seg_max(s) / len;
	if (n > XR_MQTT_SEG_REPLIES)
		n = XR_MQTT_SEG_REPLIES;
	if (!n)
		return -1;
	if (mqtt_cfg.responder) {
		fill.answers = bpf_map_lookup_elem(&mqtt_answers, &slot);
		if (!fill.answers)
			return -1;
		bpf_loop(n, mqtt_answer_fill, &fill, 0);
	} else {
		fill.ring = bpf_map_lookup_elem(&mqtt_pubacks, &slot);
		if (!fill.ring)
			return -1;
		bpf_loop(n, mqtt_puback_fill, &fill, 0);
	}
	if (tcp_reply_data(ctx, REPLY_V6, TCP_ACK | TCP_PSH,
			   s->isn + 1 + tcp_cfg.first_len + len * j, s->rcv_nxt, sc->seg, len * n,
			   sc->tail))
		return -1;
	unsent = s->pa_sent - j - n;
	if (unsent < s->in_flight)
		s->in_flight = unsent;
	if (again) {
		st->ctr[XR_TCP_RESENT]++;
		st->ctr[XR_TCP_FAST_RESENT]++;
		s->t_sent = bpf_ktime_get_ns();
	}
	return 0;
}

/* Request k sent whole, the broker's answer to it read whole, and our replies to it (PUBACKs, answers) taken. */
static __always_inline bool tcp_mqtt_answered(const struct xr_tcp_session *s)
{
	return s->state == XR_TCP_RESPONSE && !s->mq_state && s->resp_got >= mqtt_wanted(s) &&
	       (!MQTT_REPLIES || s->pa_acked == s->pa_sent);
}

static __always_inline int tcp_session_reply(struct xdp_md *ctx)
{
	__u32 seq, ack, slot, tkey, plen, doff, zero = 0;
	struct xr_replies_stats *st;
	struct xr_tcp_session *s;
	struct tcp_scratch *sc;
	__u32 pa_from = 0, pa_want = 0;
	bool in_order, fin, pa_again;
	struct tcphdr *th;
	struct pkt p;
	__u8 flags;
	__u16 wnd;

	if (parse_reply(ctx, &cfg.rpl, IPPROTO_TCP, sizeof(struct tcphdr), &p))
		return XDP_PASS;
	th = p.l4;
	st = reply_stats();
	sc = bpf_map_lookup_elem(&tcp_scratch, &zero);
	if (!st || !sc)
		return XDP_DROP;
	flags = ((__u8 *)th)[13];
	seq = bpf_ntohl(th->seq);
	ack = bpf_ntohl(th->ack_seq);
	wnd = bpf_ntohs(th->window);
	doff = th->doff * 4;
	plen = p.l4_bytes;
	if (doff < 20 || plen < doff)
		return XDP_DROP;
	plen -= doff;
	/* the slot of our (address, port) pair: the engine gave session c the pair c mod pairs */
	tkey = p.src_idx + (bpf_ntohs(th->dest) - cfg.rpl.sport_base) * cfg.rpl.src_count + 1;
	slot = tkey & tcp_cfg.table_mask;
	s = bpf_map_lookup_elem(&tcp_sessions, &slot);
	if (!s)
		return XDP_DROP;
	if ((flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK))
		return tcp_on_synack(ctx, s, tkey, seq, ack, wnd, tcp_synack_mss(th, p.data_end),
				     st, sc);
	if (flags & TCP_SYN)
		return XDP_DROP;
	if (flags & TCP_RST) {
		if (s->tkey != tkey || s->state == XR_TCP_FREE) {
			/* a RST to a SYN: the server refused the session (its ACK names our ISN + 1) */
			__u32 c32;
			struct xr_send_ts *t = tcp_syn_sent(ack, &c32);

			if (t && !(t->answered & XR_ANSWERED_FIRST)) {
				t->answered |= XR_ANSWERED_FIRST;
				st->ctr[XR_TCP_REFUSED]++;
			} else {
				st->ctr[XR_TCP_STRAY]++;
			}
		} else if (s->state != XR_TCP_DONE) {
			tcp_done(s, st, XR_TCP_RESET);
		}
		return XDP_DROP;
	}
	fin = flags & TCP_FIN;
	if (s->tkey != tkey || s->state == XR_TCP_FREE) {
		st->ctr[XR_TCP_STRAY]++;
		return tcp_reply(ctx, REPLY_V6, TCP_RST, ack, 0) ? XDP_DROP : XDP_TX;
	}
	if (s->state == XR_TCP_DONE) {
		/* a late FIN (our last ACK was lost): acknowledged again, statelessly */
		if (fin)
			return tcp_reply(ctx, REPLY_V6, TCP_ACK, ack, seq + plen + 1) ? XDP_DROP :
											XDP_TX;
		return XDP_DROP;
	}

	/* what the server acknowledged of ours, and its window for what comes next */
	if (flags & TCP_ACK) {
		bool opened = !s->wnd && wnd, same_wnd = s->wnd == wnd;

		s->wnd = wnd;
		if (s->state == XR_TCP_REQUEST) {
			__u32 got = ack - tcp_our_seq(s, 0);
			bool more = opened && !s->in_flight;

			if (got > s->acked && got <= s->acked + s->in_flight) {
				s->in_flight -= got - s->acked;
				s->acked = got;
				s->retries = 0;
				s->dupacks = 0;
				/* one segment in place at a time; the pump's fill the window */
				more = !s->in_flight || (s->flags & XR_TCPF_PUMPED);
				if (got == tcp_req_len(s)) {
					st->ctr[XR_TCP_REQUESTS]++;
					if (TCP_MQTT && !s->k)
						st->ctr[XR_MQTT_CONNECTS]++;
					s->state = XR_TCP_RESPONSE;
					more = false;
				}
			} else if (got == s->acked && s->in_flight && (s->flags & XR_TCPF_PUMPED) &&
				   !plen && !fin && same_wnd) {
				/* a duplicate ACK (RFC 5681: no data, the same window) */
				tcp_pump_dupack(s, st);
			}
			/* more of the request to send, and nothing of the server's to answer first */
			if (more && !plen && !fin) {
				return tcp_send_request(ctx, s, st, sc, XR_TCP_SEGMENTS) ?
					       XDP_DROP :
					       XDP_TX;
			}
		} else if (s->state == XR_TCP_RESPONSE && TCP_MQTT && MQTT_REPLIES) {
			/* a subscriber's replies the broker took (they follow request 0) */
			__u32 got = ack - (s->isn + 1 + tcp_cfg.first_len), len = MQTT_REPLY_LEN;

			if (got > len * s->pa_acked && got <= len * s->pa_sent && len) {
				s->pa_acked = got / len;
				s->retries = 0;
				s->dupacks = 0;
				s->t_sent = bpf_ktime_get_ns();
			} else if (got == len * s->pa_acked && s->pa_sent != s->pa_acked) {
				/*
				 * a lost reply: two duplicate ACKs say so, or 16 segments of
				 * deliveries whose ACK stayed there (a broker that goes on
				 * delivering sends no pure duplicate ACK)
				 */
				bool dup = !plen && !fin && same_wnd;

				s->dupacks += dup ? 8 : 1;
				if (s->dupacks >= 16) {
					/*
					 * due, in the session: a flag on the stack split the
					 * verifier's states in two all the way through
					 * mqtt_read (~300k more instructions)
					 */
					s->dupacks = XR_TCP_REPLIES_DUE;
					if (dup)
						goto replies;
				}
			}
			/*
			 * replies a segment could not take (the window, the frame's
			 * room) go when the broker's ACK moves on or its window
			 * opens: a window update repeats the ACK
			 */
			if (s->in_flight && !plen && !fin && s->dupacks != XR_TCP_REPLIES_DUE) {
				pa_from = s->pa_sent - s->in_flight;
				pa_want = s->in_flight;
				goto replies;
			}
		} else if (s->state == XR_TCP_FIN_SENT && ack == tcp_snd_nxt(s)) {
			s->flags |= XR_TCPF_FIN_ACKED;
		}
	}

	if (!plen && !fin) {
		if (s->state == XR_TCP_FIN_SENT && (s->flags & XR_TCPF_FIN_ACKED) &&
		    (s->flags & XR_TCPF_FIN_RCVD))
			tcp_done(s, st, XR_TCP_COMPLETED);
		/* a captured request the server answered with nothing (replay --sessions) */
		if (TCP_FLOWS && tcp_cfg.response == XR_TCP_RESP_SIZE &&
		    s->state == XR_TCP_RESPONSE && !s->step_resp) {
			s->status = 200;
			st->ctr[XR_TCP_2XX]++;
			return tcp_answered(ctx, s, st, sc);
		}
		/* the broker's packets came before the ACK of the request's last byte */
		if (TCP_MQTT && tcp_mqtt_answered(s))
			return tcp_answered(ctx, s, st, sc);
		return XDP_DROP;
	}
	in_order = seq == s->rcv_nxt;
	if (!in_order) {
		/* a repeat or a gap: say again what we have, so that the server resends from there */
		st->ctr[XR_TCP_OUT_OF_ORDER]++;
		return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP :
										       XDP_TX;
	}
	if (TCP_MQTT && MQTT_REPLIES && plen &&
	    s->pa_sent - s->pa_acked +
			    plen / (mqtt_cfg.responder ? XR_MQTT_STAMPED_MIN : XR_MQTT_QOS1_MIN) +
			    1 >
		    XR_MQTT_REPLY_RING) {
		/*
		 * its replies could overrun those the broker has not acknowledged:
		 * not taken now. So many unacknowledged say one was lost: they go
		 * again (the broker sends the held segment again when its timer
		 * fires, a timer that doubles each time, so waiting costs seconds).
		 */
		st->ctr[XR_MQTT_HELD]++;
		s->dupacks = XR_TCP_REPLIES_DUE;
		goto replies;
	}
	s->rcv_nxt += plen + fin;
	if (fin)
		s->flags |= XR_TCPF_FIN_RCVD;

	if (s->state == XR_TCP_FIN_SENT) {
		/* past our FIN: taken before the session is DONE, whose snd_nxt is its last request's end */
		__u32 snd_nxt = tcp_snd_nxt(s);

		if (s->flags & XR_TCPF_FIN_ACKED)
			tcp_done(s, st, XR_TCP_COMPLETED);
		return tcp_reply(ctx, REPLY_V6, TCP_ACK, snd_nxt, s->rcv_nxt) ? XDP_DROP : XDP_TX;
	}
	if (TCP_MQTT) {
		struct xr_mqtt_pubacks *ring = NULL;
		struct xr_mqtt_answers *answers = NULL;
		__u32 nacks = 0, unsent;
		int why = 0;

		/*
		 * checked here, not in bpf_loop's body: a maybe-NULL ring there
		 * split every state the verifier walked in two
		 */
		if (MQTT_REPLIES && mqtt_cfg.responder) {
			answers = bpf_map_lookup_elem(&mqtt_answers, &slot);
			if (!answers)
				return XDP_DROP;
		} else if (MQTT_REPLIES) {
			ring = bpf_map_lookup_elem(&mqtt_pubacks, &slot);
			if (!ring)
				return XDP_DROP;
		}
		if (plen && mqtt_read(ctx, s, st, sc->head, 14 + p.l3len + doff, plen, &why, ring,
				      answers, &nacks) < 0) {
			tcp_done(s, st, why);
			return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_snd_nxt(s),
					 s->rcv_nxt) ?
				       XDP_DROP :
				       XDP_TX;
		}
		/* in_flight: a replying subscriber's replies not sent yet (tcp_replies_send) */
		if (MQTT_REPLIES && s->state == XR_TCP_RESPONSE) {
			s->in_flight += nacks;
			unsent = s->in_flight;
		} else {
			unsent = nacks;
		}
		if (unsent || s->dupacks == XR_TCP_REPLIES_DUE) {
			/* the deliveries' replies, on the ACK of their segment */
			if (nacks && s->pa_sent - nacks == s->pa_acked)
				s->t_sent = bpf_ktime_get_ns();
			st->ctr[XR_MQTT_REPLIES] += nacks;
			if (fin) {
				tcp_done(s, st, XR_TCP_CLOSED_EARLY);
				return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_snd_nxt(s),
						 s->rcv_nxt) ?
					       XDP_DROP :
					       XDP_TX;
			}
			/* or from the lost one on, these with it as far as a segment takes */
			pa_from = s->pa_sent - unsent;
			pa_want = unsent;
			goto replies;
		}
		if (tcp_mqtt_answered(s))
			return tcp_answered(ctx, s, st, sc);
		if (fin) {
			tcp_done(s, st, XR_TCP_CLOSED_EARLY);
			return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_snd_nxt(s),
					 s->rcv_nxt) ?
				       XDP_DROP :
				       XDP_TX;
		}
		/* a burst longer than a segment: a PUBACK may come before its end */
		if (s->state == XR_TCP_REQUEST && (s->flags & XR_TCPF_PUMPED))
			tcp_pump_fill(s, st, XR_TCP_SEGMENTS);
		else if (s->state == XR_TCP_REQUEST && !s->in_flight &&
			 !tcp_send_request(ctx, s, st, sc, XR_TCP_SEGMENTS))
			return XDP_TX;
		if (MQTT_PUBLISHER && s->state == XR_TCP_RESPONSE && tcp_ack_later(s, st))
			return XDP_DROP;
		return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP :
										       XDP_TX;
	}
	if (plen && s->state == XR_TCP_REQUEST) {
		/*
		 * an answer before the whole request: not a server this client can
		 * read. The RST at what the server acknowledged, its rcv_nxt (once
		 * DONE, snd_nxt would say the request's end, past what it has)
		 */
		tcp_done(s, st, XR_TCP_MALFORMED);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, ack, s->rcv_nxt) ? XDP_DROP :
										      XDP_TX;
	}
	if (plen) {
		if (!s->resp_got)
			record_hist(&tcp_first_hist, s->t_req);
		if (!s->resp_got && tcp_cfg.resp_first)
			s->status = tcp_payload_first(ctx, 14 + p.l3len + doff) ==
						    tcp_cfg.resp_first ?
					    200 :
					    0;
		if (tcp_cfg.response == XR_TCP_RESP_HTTP) {
			http_read(ctx, s, 14 + p.l3len + doff, plen, sc->head);
			if (s->http_phase == XR_HTTP_BAD) {
				tcp_done(s, st, XR_TCP_MALFORMED);
				return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK,
						 tcp_our_seq(s, tcp_req_len(s)), s->rcv_nxt) ?
					       XDP_DROP :
					       XDP_TX;
			}
		}
		s->resp_got += plen;
	}
	if (tcp_cfg.response == XR_TCP_RESP_SIZE ?
		    s->resp_got >= (TCP_FLOWS ? s->step_resp : tcp_cfg.resp_size) :
		    s->http_phase == XR_HTTP_DONE || (s->http_phase == XR_HTTP_TO_FIN && fin)) {
		if (tcp_cfg.response == XR_TCP_RESP_SIZE && !tcp_cfg.resp_first)
			s->status = 200;
		/* constant indices: clang turns a computed one into a division the verifier cannot bound */
		switch (s->status / 100) {
		case 2: st->ctr[XR_TCP_2XX]++; break;
		case 3: st->ctr[XR_TCP_2XX + 1]++; break;
		case 4: st->ctr[XR_TCP_2XX + 2]++; break;
		case 5: st->ctr[XR_TCP_2XX + 3]++; break;
		default: st->ctr[XR_TCP_OTHER_STATUS]++;
		}
		return tcp_answered(ctx, s, st, sc);
	}
	if (fin) {
		/* the server closed mid-response */
		tcp_done(s, st, XR_TCP_CLOSED_EARLY);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_our_seq(s, tcp_req_len(s)),
				 s->rcv_nxt) ?
			       XDP_DROP :
			       XDP_TX;
	}
	return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_our_seq(s, tcp_req_len(s)), s->rcv_nxt) ?
		       XDP_DROP :
		       XDP_TX;
replies:
	/* a subscriber's replies: a segment's new ones, or again from the first not taken */
	pa_again = s->dupacks == XR_TCP_REPLIES_DUE;
	if (pa_again) {
		s->dupacks = 0;
		pa_from = s->pa_acked;
		pa_want = s->pa_sent - s->pa_acked;
	}
	/* as much as the broker's frame can grow to */
	if (!tcp_replies_send(ctx, s, st, sc, slot, pa_from, pa_want, pa_again,
			      plen + doff - 20 + XR_TCP_SMALL_SEGMENT))
		return XDP_TX;
	return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP : XDP_TX;
}

#endif /* __XR_PROTO_TCP_BPF_H */
