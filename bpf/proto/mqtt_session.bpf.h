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

#endif /* __XR_PROTO_MQTT_SESSION_BPF_H */
