// SPDX-License-Identifier: GPL-2.0
/*
 * Server-side counter. Attached to the server's interface; counts every frame
 * and the frames that match a filter (protocol, addresses, ports), per CPU,
 * and passes them on to the stack (or drops them with --drop, as a sink).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdpreplay.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8

const volatile struct xr_count_cfg cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_count_stats);
} count_stats SEC(".maps");

/* Frames matched in each second after the first matched frame (per CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_SERIES_MAX);
	__type(key, __u32);
	__type(value, __u64);
} series SEC(".maps");

/* Arrival of the first matched frame on any CPU: the origin of the series. */
__u64 series_origin_ns = 0;

struct l4ports {
	__u16 sport;
	__u16 dport;
};

/* Returns true when the frame passes the filter of cfg. */
static __always_inline bool match(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct l4ports *ports;
	__u16 proto;
	__u8 l4;
	void *l4h;

	if (cfg.proto == 255)
		return true;
	if ((void *)(eth + 1) > data_end)
		return false;
	proto = eth->h_proto;
	l4h = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_hdr *vh = l4h;

		if ((void *)(vh + 1) > data_end)
			return false;
		proto = vh->h_vlan_encapsulated_proto;
		l4h = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = l4h;

		if ((void *)(iph + 1) > data_end || iph->ihl < 5)
			return false;
		if (cfg.daddr && iph->daddr != cfg.daddr)
			return false;
		if (cfg.saddr && iph->saddr != cfg.saddr)
			return false;
		l4 = iph->protocol;
		l4h = (void *)iph + iph->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = l4h;

		/* an IPv4 address filter never matches IPv6 */
		if ((void *)(ip6h + 1) > data_end || cfg.daddr || cfg.saddr)
			return false;
		l4 = ip6h->nexthdr;
		l4h = ip6h + 1;
	} else {
		return false;
	}
	if (cfg.proto && l4 != cfg.proto)
		return false;
	if (!cfg.sport && !cfg.dport)
		return true;
	if (l4 != IPPROTO_UDP && l4 != IPPROTO_TCP)
		return false;
	ports = l4h;
	if ((void *)(ports + 1) > data_end)
		return false;
	if (cfg.dport && ports->dport != cfg.dport)
		return false;
	if (cfg.sport && ports->sport != cfg.sport)
		return false;
	return true;
}

SEC("xdp")
int xr_count(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct xr_count_stats *st;
	__u32 key = 0;
	__u64 now;

	st = bpf_map_lookup_elem(&count_stats, &key);
	if (!st)
		return XDP_PASS;
	st->seen++;
	if (!match(data, data_end))
		return XDP_PASS;
	now = bpf_ktime_get_ns();
	if (!st->first_ns)
		st->first_ns = now;
	if (!series_origin_ns)
		__sync_val_compare_and_swap(&series_origin_ns, 0, now);
	if (now >= series_origin_ns) {
		__u32 sec = (now - series_origin_ns) / 1000000000ULL;
		__u64 *bin = bpf_map_lookup_elem(&series, &sec);

		if (bin)
			(*bin)++;
	}
	st->last_ns = now;
	st->matched++;
	st->matched_bytes += data_end - data;
	if (cfg.drop) {
		st->dropped++;
		return XDP_DROP;
	}
	st->passed++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
