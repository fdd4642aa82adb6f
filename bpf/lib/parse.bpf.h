/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Header parsing for reply handlers: IPv4 without options (or, for the
 * replies of a run to an IPv6 server, IPv6 without extension headers), then
 * UDP or TCP.
 */
#ifndef __XR_LIB_PARSE_BPF_H
#define __XR_LIB_PARSE_BPF_H

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_ALEN 6

struct pkt4 {
	struct ethhdr *eth;
	struct iphdr *iph;
	void *l4; /* struct udphdr or struct tcphdr */
	void *data_end;
};

/*
 * An IPv4 frame (no options) of protocol proto whose l4len bytes of
 * transport header lie inside the packet: 0 and p filled in, or -1.
 */
static __always_inline int parse_ip4(struct xdp_md *ctx, __u8 proto, __u32 l4len, struct pkt4 *p)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    iph->protocol != proto || iph->ihl != 5)
		return -1;
	if ((void *)(iph + 1) + l4len > data_end)
		return -1;
	p->eth = eth;
	p->iph = iph;
	p->l4 = iph + 1;
	p->data_end = data_end;
	return 0;
}

/* Whether an answer comes from the server to one of our addresses and ports (host order m->*_base). */
static __always_inline bool from_server_to_us(const volatile struct xr_reply_match *m,
					      const struct iphdr *iph, __u16 sport, __u16 dport)
{
	return iph->saddr == m->server_addr && sport == m->server_port &&
	       bpf_ntohl(iph->daddr) - m->src_base < m->src_count &&
	       (__u32)(bpf_ntohs(dport) - m->sport_base) < m->sport_count;
}

/*
 * A reply: an IPv4 or IPv6 frame. l3len is 20 or 40; l4_bytes what its IP
 * header says the transport's header and payload take; src_idx which of our
 * addresses it goes to (its place in the match's pool).
 */
struct pkt {
	struct ethhdr *eth;
	void *l3;
	void *l4; /* struct udphdr or struct tcphdr */
	void *data_end;
	__u32 l3len;
	__u32 l4_bytes;
	__u32 src_idx;
};

/*
 * A frame of protocol proto from the server to one of our addresses and
 * ports, with l4len bytes of transport header in the packet, of the match's
 * IP version (m->ipv6, read-only: the verifier follows one branch): 0 and p
 * filled in, or -1.
 */
static __always_inline int parse_reply(struct xdp_md *ctx, const volatile struct xr_reply_match *m,
				       __u8 proto, __u32 l4len, struct pkt *p)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u16 *ports;

	if (m->ipv6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		const __u32 *s, *d;
		__u64 lo;

		if ((void *)(ip6 + 1) + l4len > data_end || eth->h_proto != bpf_htons(ETH_P_IPV6) ||
		    ip6->nexthdr != proto)
			return -1;
		s = (const __u32 *)&ip6->saddr;
		d = (const __u32 *)&ip6->daddr;
		if (s[0] != m->server_addr6[0] || s[1] != m->server_addr6[1] ||
		    s[2] != m->server_addr6[2] || s[3] != m->server_addr6[3] ||
		    d[0] != m->src_hi6[0] || d[1] != m->src_hi6[1])
			return -1;
		lo = (__u64)bpf_ntohl(d[2]) << 32 | bpf_ntohl(d[3]);
		if (lo - m->src_base6 >= m->src_count)
			return -1;
		p->src_idx = lo - m->src_base6;
		p->l3 = ip6;
		p->l3len = sizeof(*ip6);
		p->l4 = ip6 + 1;
		p->l4_bytes = bpf_ntohs(ip6->payload_len);
	} else {
		struct iphdr *iph = (void *)(eth + 1);
		__u32 tot;

		if ((void *)(iph + 1) + l4len > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
		    iph->protocol != proto || iph->ihl != 5 || iph->saddr != m->server_addr ||
		    bpf_ntohl(iph->daddr) - m->src_base >= m->src_count)
			return -1;
		p->src_idx = bpf_ntohl(iph->daddr) - m->src_base;
		p->l3 = iph;
		p->l3len = sizeof(*iph);
		p->l4 = iph + 1;
		tot = bpf_ntohs(iph->tot_len);
		p->l4_bytes = tot >= sizeof(*iph) ? tot - sizeof(*iph) : 0;
	}
	ports = p->l4;
	if (ports[0] != m->server_port ||
	    (__u32)(bpf_ntohs(ports[1]) - m->sport_base) >= m->sport_count)
		return -1;
	p->eth = eth;
	p->data_end = data_end;
	return 0;
}

/*
 * Swaps the addresses and ports (the first two words of a UDP or TCP header)
 * and fills in the IPv4 header of a reply of ip_len bytes of IP.
 */
static __always_inline void ip4_turn_around(struct ethhdr *eth, struct iphdr *iph, __be16 *ports,
					    __u16 ip_len)
{
	__u8 mac[ETH_ALEN];
	__u32 sum = 0, a;
	__u16 p, *w;

	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	a = iph->saddr;
	iph->saddr = iph->daddr;
	iph->daddr = a;
	iph->ihl = 5;
	iph->tot_len = bpf_htons(ip_len);
	iph->ttl = 64;
	iph->check = 0;
	w = (__u16 *)iph;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	iph->check = fold_csum(sum);
	p = ports[0];
	ports[0] = ports[1];
	ports[1] = p;
}

/* The same for IPv6: a reply of payload_len bytes after the IPv6 header. */
static __always_inline void ip6_turn_around(struct ethhdr *eth, struct ipv6hdr *ip6, __be16 *ports,
					    __u16 payload_len)
{
	__u8 mac[ETH_ALEN];
	__u32 *s = (__u32 *)&ip6->saddr, *d = (__u32 *)&ip6->daddr, a;
	__u16 p;

	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	for (int i = 0; i < 4; i++) {
		a = s[i];
		s[i] = d[i];
		d[i] = a;
	}
	/* version 6, no traffic class, no flow label */
	*(__u32 *)ip6 = bpf_htonl(6U << 28);
	ip6->payload_len = bpf_htons(payload_len);
	ip6->hop_limit = 64;
	p = ports[0];
	ports[0] = ports[1];
	ports[1] = p;
}

#endif /* __XR_LIB_PARSE_BPF_H */
