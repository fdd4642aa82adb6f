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

/* The bytes before a reply's payload: Ethernet, IPv4 or IPv6 (v6), and a 20-byte TCP header. */
#define TCP_REPLY_HDRS(v6) ((v6) ? 74 : 54)

/*
 * Resizes the server's segment to a reply of TCP_REPLY_HDRS + plen bytes and
 * turns it around: addresses and ports swapped, the IP header and the TCP
 * header's fields filled in (its checksum is the caller's). v6: the
 * segment is IPv6 (a constant, or read-only, at every call). The segment's
 * TCP header, or NULL when the frame cannot be one.
 */
static __always_inline struct tcphdr *tcp_reply_header(struct xdp_md *ctx, bool v6, __u8 flags,
						       __u32 seq, __u32 ack, __u32 plen)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	const int hdrs = TCP_REPLY_HDRS(v6);
	int len = data_end - data;
	struct ethhdr *eth;
	struct tcphdr *th;

	if (len < hdrs)
		return NULL;
	if (bpf_xdp_adjust_tail(ctx, hdrs + (int)plen - len)) {
		/*
		 * No tailroom: a frame the driver built in place (veth takes an
		 * uncloned skb as it is, and a SYN-ACK's has little room after it).
		 * Grow at the front instead, into the headroom XDP always has, and
		 * move the headers there; the payload overwrites what follows.
		 */
		__u8 hdr[74];

		if (bpf_xdp_load_bytes(ctx, 0, hdr, hdrs) ||
		    bpf_xdp_adjust_head(ctx, len - hdrs - (int)plen) ||
		    bpf_xdp_store_bytes(ctx, 0, hdr, hdrs))
			return NULL;
	}
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if (v6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		th = (void *)(ip6 + 1);
		if ((void *)(th + 1) > data_end)
			return NULL;
		ip6_turn_around(eth, ip6, &th->source, 20 + plen);
	} else {
		struct iphdr *iph = (void *)(eth + 1);

		th = (void *)(iph + 1);
		if ((void *)(th + 1) > data_end)
			return NULL;
		ip4_turn_around(eth, iph, &th->source, 40 + plen);
	}
	tcp_fill(th, flags, seq, ack);
	return th;
}

/*
 * Turns the TCP segment in place into a bare reply (20-byte header, no data)
 * with the given flags, seq and ack, addressed back to its sender.
 */
static __always_inline int tcp_reply(struct xdp_md *ctx, bool v6, __u8 flags, __u32 seq, __u32 ack)
{
	struct tcphdr *th = tcp_reply_header(ctx, v6, flags, seq, ack, 0);
	__u32 sum = bpf_htons(IPPROTO_TCP) + bpf_htons(20);
	__u16 *w;

	if (!th)
		return -1;
	/* the pseudo-header's addresses, the 16-bit words before the TCP header */
	if (v6) {
		w = (__u16 *)((void *)th - 32);
		for (int i = 0; i < 16; i++)
			sum += w[i];
	} else {
		w = (__u16 *)((void *)th - 8);
		for (int i = 0; i < 4; i++)
			sum += w[i];
	}
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
static __always_inline int tcp_reply_data(struct xdp_md *ctx, bool v6, __u8 flags, __u32 seq,
					  __u32 ack, const __u8 *payload, __u32 plen, __u8 *tail)
{
	if (plen > XR_TCP_PAYLOAD_MAX || !tcp_reply_header(ctx, v6, flags, seq, ack, plen))
		return -1;
	/*
	 * the verifier wants a length it can bound, and refuses a zero-length
	 * store: ((plen - 1) & 0x7ff) + 1 is plen, in [1, 2048] for it
	 */
	if (plen &&
	    bpf_xdp_store_bytes(ctx, TCP_REPLY_HDRS(v6), (void *)payload, ((plen - 1) & 0x7ff) + 1))
		return -1;
	return ip_l4_csum(ctx, IPPROTO_TCP, tail, v6);
}

#endif /* __XR_LIB_TCP_BPF_H */
