/* SPDX-License-Identifier: GPL-2.0 */
/* Internet checksums in XDP: folding, incremental updates (RFC 1624), a whole UDP segment. */
#ifndef __XR_LIB_CSUM_BPF_H
#define __XR_LIB_CSUM_BPF_H

/* Folds a 32-bit one's-complement sum to 16 bits and complements it. */
static __always_inline __u16 fold_csum(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* One's-complement update of a checksum for one 16-bit word (RFC 1624, eqn. 3). */
static __always_inline __u16 csum_replace(__u16 csum, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~csum + (__u16)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/*
 * The UDP or TCP checksum of an IPv4 frame (no IP options) or, v6, an IPv6
 * one (no extension headers), recomputed from scratch over the segment in
 * the packet. tail: 64 bytes of per-CPU scratch for the last partial block.
 * proto is a constant at every call, and v6 one or read-only, so each
 * caller gets its own straight-line copy.
 */
static __always_inline int ip_l4_csum(struct xdp_md *ctx, __u8 proto, __u8 *tail, bool v6)
{
	/* the checksum's offset in the segment: UDP's at 6, TCP's at 16 */
	const __u32 check_off = proto == IPPROTO_UDP ? 6 : 16;
	const __u32 l3len = v6 ? 40 : 20;
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	void *l3 = data + sizeof(struct ethhdr);
	void *l4 = l3 + l3len, *p = l4;
	__u32 rest, len;
	__u16 *check;
	__s64 sum;
	__u16 c;

	if (l4 + check_off + 2 > data_end)
		return -1;
	check = l4 + check_off;
	len = data_end - l4;
	*check = 0;
	if (v6) {
		/* RFC 8200 §8.1: addresses, then the 32-bit length and 24 zero bits and next header */
		const __u32 *a = l3 + 8;

		sum = bpf_htonl(len) + (__u64)bpf_htonl(proto);
		for (int i = 0; i < 8; i++)
			sum += a[i];
	} else {
		struct iphdr *iph = l3;

		/* pseudo-header as 32-bit words in memory order: addresses, then 0, protocol, length */
		sum = (__u64)iph->saddr + iph->daddr +
		      bpf_htonl((__u32)proto << 16 | (len & 0xffff));
	}
	/* the helper's seed is 32 bits: fold the carry in first */
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	/* bpf_csum_diff takes at most 512 bytes and whole words: 64 at a time, the rest from a zeroed copy */
	for (int i = 0; i < XR_MAX_FRAME / 64; i++) {
		if (p + 64 > data_end)
			break;
		sum = bpf_csum_diff(NULL, 0, p, 64, sum);
		p += 64;
	}
	/* below 64 after the loop; the mask tells the verifier */
	rest = (__u32)(data_end - p) & 63;
	if (rest) {
		__u64 *t = (__u64 *)tail;

		for (int i = 0; i < 8; i++)
			t[i] = 0;
		/*
		 * rest is 1..63 here, but 6.1's verifier does not carry the
		 * 32-bit "not zero" over to the copy in the size argument
		 * (size=0 refused): the same value in a form it bounds
		 */
		if (bpf_xdp_load_bytes(ctx, p - data, tail, ((rest - 1) & 63) + 1))
			return -1;
		sum = bpf_csum_diff(NULL, 0, (void *)tail, 64, sum);
	}
	c = fold_csum(sum);
	/* UDP: a computed zero is sent as all ones, zero means "no checksum" */
	if (proto == IPPROTO_UDP && !c)
		c = 0xffff;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	check = data + sizeof(struct ethhdr) + l3len + check_off;
	if ((void *)(check + 1) > data_end)
		return -1;
	*check = c;
	return 0;
}

#endif /* __XR_LIB_CSUM_BPF_H */
