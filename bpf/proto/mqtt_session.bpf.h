/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt's part of the session reader (tcp_reply.bpf.h): a replying
 * subscriber's PUBACKs and answers sent on the sessions' segments, and when
 * a request counts as answered.
 */
#ifndef __XR_PROTO_MQTT_SESSION_BPF_H
#define __XR_PROTO_MQTT_SESSION_BPF_H

#include "proto/tcp.bpf.h"

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
static __always_inline int mqtt_replies_send(struct xdp_md *ctx, struct xr_tcp_session *s,
					     struct xr_replies_stats *st, struct tcp_scratch *sc,
					     __u32 slot, __u32 j, __u32 want, bool again,
					     __u32 room)
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
static __always_inline bool mqtt_answered(const struct xr_tcp_session *s)
{
	return s->state == XR_TCP_RESPONSE && !s->mq_state && s->resp_got >= mqtt_wanted(s) &&
	       (!MQTT_REPLIES || s->pa_acked == s->pa_sent);
}

/*
 * What the broker acknowledged of a subscriber's replies (they follow
 * request 0): taken, or one lost (its duplicate ACKs), or those a segment
 * could not take due now. TCP_GO_ON, or TCP_GO_REPLIES with what goes.
 */
static __always_inline int mqtt_ack_replies(struct xr_tcp_session *s, __u32 ack, __u32 plen,
					    bool fin, bool same_wnd, __u32 *pa_from, __u32 *pa_want)
{
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
				return TCP_GO_REPLIES;
		}
	}
	/*
	 * replies a segment could not take (the window, the frame's
	 * room) go when the broker's ACK moves on or its window
	 * opens: a window update repeats the ACK
	 */
	if (s->in_flight && !plen && !fin && s->dupacks != XR_TCP_REPLIES_DUE) {
		*pa_from = s->pa_sent - s->in_flight;
		*pa_want = s->in_flight;
		return TCP_GO_REPLIES;
	}
	return TCP_GO_ON;
}

/*
 * A segment whose deliveries' replies could overrun those the broker has not acknowledged (plen
 * bytes): not taken, its replies due again
 */
static __always_inline bool mqtt_replies_held(struct xr_tcp_session *s, struct xr_replies_stats *st,
					      __u32 plen)
{
	if (s->pa_sent - s->pa_acked +
		    plen / (mqtt_cfg.responder ? XR_MQTT_STAMPED_MIN : XR_MQTT_QOS1_MIN) + 1 <=
	    XR_MQTT_REPLY_RING)
		return false;
	/*
	 * its replies could overrun those the broker has not acknowledged:
	 * not taken now. So many unacknowledged say one was lost: they go
	 * again (the broker sends the held segment again when its timer
	 * fires, a timer that doubles each time, so waiting costs seconds).
	 */
	st->ctr[XR_MQTT_HELD]++;
	s->dupacks = XR_TCP_REPLIES_DUE;
	return true;
}

/*
 * The broker's bytes in order (at off, plen of them) and its FIN: its packets
 * read (mqtt_read), the replies they ask for, the next burst or the close.
 * The verdict, or TCP_GO_REPLIES with the replies that go.
 */
static __always_inline int mqtt_on_data(struct xdp_md *ctx, struct xr_tcp_session *s,
					struct xr_replies_stats *st, struct tcp_scratch *sc,
					__u32 slot, __u32 off, __u32 plen, bool fin, __u32 *pa_from,
					__u32 *pa_want)
{
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
	if (plen && mqtt_read(ctx, s, st, sc->head, off, plen, &why, ring, answers, &nacks) < 0) {
		tcp_done(s, st, why);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ?
			       XDP_DROP :
			       XDP_TX;
	}
	/* in_flight: a replying subscriber's replies not sent yet (mqtt_replies_send) */
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
		*pa_from = s->pa_sent - unsent;
		*pa_want = unsent;
		return TCP_GO_REPLIES;
	}
	if (mqtt_answered(s))
		return tcp_answered(ctx, s, st, sc);
	if (fin) {
		tcp_done(s, st, XR_TCP_CLOSED_EARLY);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ?
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
	return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP : XDP_TX;
}

#endif /* __XR_PROTO_MQTT_SESSION_BPF_H */
