/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen dns's answers on the sender's interface: a DNS response from the
 * server to one of our ports is matched to its query by id and port
 * (bpf/shared/dns.h), counted with its round trip and by RCODE, and
 * dropped: nothing listens on our ports.
 */
#ifndef __XR_PROTO_DNS_BPF_H
#define __XR_PROTO_DNS_BPF_H

static __always_inline int dns_reply(struct xdp_md *ctx)
{
	struct xr_replies_stats *st;
	struct xr_send_ts *t;
	struct udphdr *uh;
	struct pkt p;
	__u32 id, slot;
	__u8 *h;

	if (parse_reply(ctx, &cfg.rpl, IPPROTO_UDP, sizeof(struct udphdr) + XR_DNS_HDR, &p))
		return XDP_PASS;
	uh = p.l4;
	h = (void *)(uh + 1);
	st = reply_stats();
	if (!st)
		return XDP_DROP;
	/* QR: a response; anything else from the server's port is not an answer to us */
	if (!(h[2] & 0x80)) {
		st->unmatched++;
		return XDP_DROP;
	}
	id = (__u32)h[0] << 8 | h[1];
	slot = (id | (__u32)(bpf_ntohs(uh->dest) - cfg.rpl.sport_base) << 16) & cfg.ts_mask;
	t = sent_frame(slot, slot, cfg.ts_mask);
	if (count_answer(st, t))
		st->ctr[h[3] & 0x0f]++;
	return XDP_DROP;
}

#endif /* __XR_PROTO_DNS_BPF_H */
