/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen syn's replies on the sender's interface: counts the server's answers to
 * our SYNs and drops them, so that our own kernel never answers a SYN-ACK with
 * a RST (which would empty the server's SYN queue). With --complete it
 * answers a SYN-ACK with the handshake's ACK and the server's FIN with a RST,
 * statelessly. Matching and counters: bpf/shared/syn.h.
 */
#ifndef __XR_PROTO_SYN_BPF_H
#define __XR_PROTO_SYN_BPF_H

const volatile struct xr_syn_cfg syn_cfg = {};

static __always_inline int syn_reply(struct xdp_md *ctx)
{
	struct xr_replies_stats *st;
	__u32 flags, n32, seq, ack;
	struct xr_send_ts *t;
	struct tcphdr *th;
	struct pkt p;
	bool first;

	if (parse_reply(ctx, &cfg.rpl, IPPROTO_TCP, sizeof(struct tcphdr), &p))
		return XDP_PASS;
	th = p.l4;
	st = reply_stats();
	if (!st)
		return XDP_DROP;
	flags = ((__u8 *)th)[13];
	seq = bpf_ntohl(th->seq);
	ack = bpf_ntohl(th->ack_seq);
	/* both a SYN-ACK and a FIN acknowledge our ISN + 1 (we send no data): n comes back from it */
	n32 = (ack - 1 - syn_cfg.isn_base) * syn_cfg.isn_inv;
	t = sent_frame(n32 & (XR_TS_RING - 1), n32, 0xffffffff);
	if ((flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK)) {
		if (!t) {
			/* an earlier run's, or nobody's: never completed or counted as ours */
			st->unmatched++;
			if (syn_cfg.complete && !tcp_reply(ctx, REPLY_V6, TCP_RST, ack, 0))
				return XDP_TX;
			return XDP_DROP;
		}
		/* a repeat: the server did not get our ACK (or we sent none), it asks again */
		first = count_answer(st, t);
		if (syn_cfg.complete && !tcp_reply(ctx, REPLY_V6, TCP_ACK, ack, seq + 1)) {
			/* a handshake completes once, however often the server asked */
			if (first)
				st->ctr[XR_SYN_COMPLETED]++;
			return XDP_TX;
		}
		return XDP_DROP;
	}
	if (flags & TCP_RST) {
		st->ctr[XR_SYN_RSTS]++;
		return XDP_DROP;
	}
	if ((flags & TCP_FIN) && syn_cfg.complete) {
		/* the server closed: we never keep state, so a RST ends it */
		if (!tcp_reply(ctx, REPLY_V6, TCP_RST, ack, 0)) {
			/* a connection closes once, however often its FIN comes */
			if (!t)
				st->unmatched++;
			else if (!(t->answered & XR_ANSWERED_FIN))
				st->ctr[XR_SYN_CLOSED]++;
			if (t)
				t->answered |= XR_ANSWERED_FIN;
			return XDP_TX;
		}
	}
	return XDP_DROP;
}

#endif /* __XR_PROTO_SYN_BPF_H */
