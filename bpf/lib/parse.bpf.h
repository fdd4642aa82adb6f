/* SPDX-License-Identifier: GPL-2.0 */
/* Header parsing for reply handlers: IPv4 without options, then UDP or TCP. */
#ifndef __XR_LIB_PARSE_BPF_H
#define __XR_LIB_PARSE_BPF_H

#define ETH_P_IP 0x0800
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

#endif /* __XR_LIB_PARSE_BPF_H */
