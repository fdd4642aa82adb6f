// SPDX-License-Identifier: GPL-2.0
/*
 * The server's kernel drops by reason: skb:kfree_skb (with its enum
 * skb_drop_reason), for the skbs of the counter's
 * network namespace whose IPv4 headers match its filter, inbound (to the
 * counted address) and outbound (the server's answers). Loaded by
 * xdpreplay count beside its XDP counter; see bpf/shared/drops.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "xdpreplay.h"

const volatile struct xr_drops_cfg dcfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_drops_stats);
} drop_stats SEC(".maps");

/* Where the unspecific reasons (NOT_SPECIFIED and a subsystem's) were taken, for the report. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DROP_LOCATIONS);
	__type(key, struct xr_drop_loc);
	__type(value, __u64);
} drop_locs SEC(".maps");

/* The skb's namespace: its device's, or its socket's once it has left the device. */
static __always_inline __u32 skb_netns(const struct sk_buff *skb, const struct sock *sk)
{
	const struct net_device *dev = BPF_CORE_READ(skb, dev);

	if (dev)
		return BPF_CORE_READ(dev, nd_net.net, ns.inum);
	if (!sk)
		sk = BPF_CORE_READ(skb, sk);
	if (sk)
		return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	return 0;
}

/* The direction of a matching skb (XR_DROP_IN or XR_DROP_OUT), or -1 when it is not one of the counter's. */
static __always_inline int skb_dir(const struct sk_buff *skb, const struct sock *sk)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	struct iphdr iph;
	__u16 ports[2];
	int dir;

	__u32 ns = skb_netns(skb, sk);

	/*
	 * A UDP datagram read by its socket has neither device nor socket left
	 * (UDP accounts its memory without skb->sk): such an skb counts when its
	 * addresses are the counted interface's, the filter below.
	 */
	if (ns != dcfg.netns_ino && (ns || !dcfg.local_addr))
		return -1;
	if (dcfg.proto == 255)
		return XR_DROP_IN;
	/* an skb dropped before its network header was set is not one we can tell */
	if (BPF_CORE_READ(skb, protocol) != bpf_htons(0x0800) || nh == (__u16)~0U ||
	    bpf_probe_read_kernel(&iph, sizeof(iph), head + nh) || iph.version != 4)
		return -1;
	if (!dcfg.local_addr || iph.daddr == dcfg.local_addr)
		dir = XR_DROP_IN;
	else if (iph.saddr == dcfg.local_addr)
		dir = XR_DROP_OUT;
	else
		return -1;
	if (dcfg.proto && iph.protocol != dcfg.proto)
		return -1;
	if (dcfg.peer_addr && (dir == XR_DROP_IN ? iph.saddr : iph.daddr) != dcfg.peer_addr)
		return -1;
	if (!dcfg.port && !dcfg.peer_port)
		return dir;
	if ((iph.protocol != IPPROTO_UDP && iph.protocol != IPPROTO_TCP) ||
	    bpf_probe_read_kernel(ports, sizeof(ports), head + nh + iph.ihl * 4))
		return -1;
	/* inbound: to the server's port from the peer's; outbound: the other way */
	if (dcfg.port && ports[dir == XR_DROP_IN ? 1 : 0] != dcfg.port)
		return -1;
	if (dcfg.peer_port && ports[dir == XR_DROP_IN ? 0 : 1] != dcfg.peer_port)
		return -1;
	return dir;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(xr_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason,
	     struct sock *rx_sk)
{
	struct xr_drops_stats *st;
	__u32 zero = 0, r = reason;
	int dir = skb_dir(skb, rx_sk);

	if (dir < 0)
		return 0;
	st = bpf_map_lookup_elem(&drop_stats, &zero);
	if (!st)
		return 0;
	if (r >= XR_DROP_REASONS)
		r = XR_DROP_SUBSYS;
	/* clang drops the mask as redundant after the clamp; the verifier needs it on the index register */
	barrier_var(r);
	r &= XR_DROP_REASONS - 1;
	st->dropped[dir & 1][r]++;
	if (r == XR_DROP_NOT_SPECIFIED || r == XR_DROP_SUBSYS) {
		struct xr_drop_loc key = { .location = (__u64)location,
					   .reason = reason,
					   .dir = dir };
		__u64 one = 1, *v = bpf_map_lookup_elem(&drop_locs, &key);

		if (v)
			__sync_fetch_and_add(v, 1);
		else
			bpf_map_update_elem(&drop_locs, &key, &one, BPF_NOEXIST);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
