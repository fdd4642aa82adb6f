/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A TCP segment built in place from the server's: addressed back to it, a
 * 20-byte header with the given flags, seq and ack, and optionally a payload
 * of up to an MTU's worth of bytes. What a socket-less client answers with.
 */
#ifndef __XR_LIB_TCP_BPF_H
#define __XR_LIB_TCP_BPF_H

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

static __always_inline void tcp_fill(struct tcphdr *th, __u8 flags, __u32 seq, __u32 ack)
{
	th->seq = bpf_htonl(seq);
	th->ack_seq = bpf_htonl(ack);
	((__u8 *)th)[12] = 5 << 4;
	((__u8 *)th)[13] = flags;
	th->window = bpf_htons(flags & TCP_RST ? 0 : 64240);
	th->check = 0;
	th->urg_ptr = 0;
}

/*
 * Resizes the server's segment to a reply of 54 + plen bytes and turns it
 * around: addresses and ports swapped, the IPv4 header and the TCP header's
 * fields filled in (its checksum is the caller's). The segment's TCP header,
 * or NULL when the frame cannot be one.
 */
static __always_inline struct tcphdr *tcp_reply_header(struct xdp_md *ctx, __u8 flags, __u32 seq,
						       __u32 ack, __u32 plen)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	int len = data_end - data;
	struct ethhdr *eth;
	struct iphdr *iph;
	struct tcphdr *th;

	if (len < 54)
		return NULL;
	if (bpf_xdp_adjust_tail(ctx, 54 + (int)plen - len)) {
		/*
		 * No tailroom: a frame the driver built in place (veth takes an
		 * uncloned skb as it is, and a SYN-ACK's has little room after it).
		 * Grow at the front instead, into the headroom XDP always has, and
		 * move the headers there; the payload overwrites what follows.
		 */
		__u8 hdr[54];

		if (bpf_xdp_load_bytes(ctx, 0, hdr, sizeof(hdr)) ||
		    bpf_xdp_adjust_head(ctx, len - 54 - (int)plen) ||
		    bpf_xdp_store_bytes(ctx, 0, hdr, sizeof(hdr)))
			return NULL;
	}
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	iph = (void *)(eth + 1);
	th = (void *)(iph + 1);
	if ((void *)(th + 1) > data_end)
		return NULL;
	ip4_turn_around(eth, iph, &th->source, 40 + plen);
	tcp_fill(th, flags, seq, ack);
	return th;
}

/*
 * Turns the TCP segment in place into a bare reply (20-byte header, no data)
 * with the given flags, seq and ack, addressed back to its sender.
 */
static __always_inline int tcp_reply(struct xdp_md *ctx, __u8 flags, __u32 seq, __u32 ack)
{
	struct tcphdr *th = tcp_reply_header(ctx, flags, seq, ack, 0);
	struct iphdr *iph;
	__u32 sum;
	__u16 *w;

	if (!th)
		return -1;
	iph = (void *)th - sizeof(*iph);
	/* pseudo-header, then the 20-byte header */
	sum = (iph->saddr & 0xffff) + (iph->saddr >> 16) + (iph->daddr & 0xffff) +
	      (iph->daddr >> 16) + bpf_htons(IPPROTO_TCP) + bpf_htons(20);
	w = (__u16 *)th;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	th->check = fold_csum(sum);
	return 0;
}

/*
 * The same reply carrying plen bytes of payload (at most
 * XR_TCP_PAYLOAD_MAX) from payload, which must lie in a map value or on the
 * stack; tail is 64 bytes of scratch for the checksum. The segment grows or
 * shrinks to fit: the server's segment may have been shorter.
 */
static __always_inline int tcp_reply_data(struct xdp_md *ctx, __u8 flags, __u32 seq, __u32 ack,
					  const __u8 *payload, __u32 plen, __u8 *tail)
{
	if (plen > XR_TCP_PAYLOAD_MAX || !tcp_reply_header(ctx, flags, seq, ack, plen))
		return -1;
	/*
	 * the verifier wants a length it can bound, and refuses a zero-length
	 * store: ((plen - 1) & 0x7ff) + 1 is plen, in [1, 2048] for it
	 */
	if (plen && bpf_xdp_store_bytes(ctx, 54, (void *)payload, ((plen - 1) & 0x7ff) + 1))
		return -1;
	return ip4_l4_csum(ctx, IPPROTO_TCP, tail);
}

#endif /* __XR_LIB_TCP_BPF_H */
