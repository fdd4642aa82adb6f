/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel drop reasons on the server (bpf/drops.bpf.c, user/measure/drops.c):
 * every skb freed in the counter's network namespace whose headers match its
 * filter is counted by direction and by reason (tracepoint skb:kfree_skb).
 * Reason numbers are the
 * kernel's enum skb_drop_reason, named from its BTF.
 */
#ifndef __XR_SHARED_DROPS_H
#define __XR_SHARED_DROPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define XR_DROP_REASONS 256 /* the core reasons; a subsystem's (reason >> 16 != 0) go last */
#define XR_DROP_SUBSYS (XR_DROP_REASONS - 1)
#define XR_DROP_LOCATIONS 1024 /* kernel locations of the unspecific reasons */
/* SKB_DROP_REASON_NOT_SPECIFIED: the same number in every kernel with drop reasons */
#define XR_DROP_NOT_SPECIFIED 2

enum xr_drop_dir { XR_DROP_IN = 0, XR_DROP_OUT = 1 };
enum xr_delivered { XR_DELIVERED_UDP = 0, XR_DELIVERED_TCP = 1 };

struct xr_drops_cfg {
	__u32 netns_ino; /* the counter's namespace */
	__u32 local_addr; /* IPv4 of the counted interface (network order): in = to it, out = from it; 0 = all in */
	__u32 peer_addr; /* the filter's --src (network order); 0 = any */
	__u16 port; /* the filter's --dport: the server's port (network order); 0 = any */
	__u16 peer_port; /* the filter's --sport (network order); 0 = any */
	__u8 proto; /* IPPROTO_*; 0 = any IP; 255 = any frame */
	__u8 books_tcp; /* the TCP side of the books is traced */
	__u8 seq_kind; /* count --seq: enum xr_seq_kind (bpf/shared/count.h); 0 = none */
	__u8 seq_width; /* bytes: 2, 4 or 8 */
	__u16 seq_off; /* in the UDP/TCP payload */
	__u16 pad;
	__u32 seq_bucket; /* sequence numbers per histogram bucket */
	/*
	 * Kernel text where skbs die before any XDP program saw them (veth_xmit:
	 * the peer's receive ring is full); counted apart, not as inbound drops.
	 * 0, 0: none known.
	 */
	__u64 pre_xdp_lo, pre_xdp_hi;
	/*
	 * cookie_v4_check's text: a SYN cookie's ACK that finds no room for its
	 * socket is freed there (NO_SOCKET) and counted in ListenDrops as well.
	 */
	__u64 cookie_lo, cookie_hi;
};

/* Per CPU, in wire frames (a GRO skb counts its segments): the books of what the stack got. */
struct xr_drops_stats {
	__u64 dropped[2][XR_DROP_REASONS]; /* [dir][reason] */
	__u64 delivered[2]; /* [enum xr_delivered]: UDP read by the application; TCP taken by a socket */
	__u64 pre_xdp; /* inbound, freed before the counter's XDP program (see pre_xdp_lo) */
	__u64 cookie_drops; /* inbound, freed in cookie_v4_check (see cookie_lo) */
};

/* count --seq: how many of a peer's sequence numbers [bucket * width, +width) died, by reason. */
#define XR_SEQ_DROP_BUCKETS 16384

struct xr_seq_drop_key {
	__u32 peer; /* the sender's address and port (network order) */
	__u16 peer_port;
	__u8 proto;
	__u8 pad;
	__u32 reason;
	__u32 bucket; /* sequence number / seq_bucket */
};

struct xr_drop_loc {
	__u64 location;
	__u32 reason;
	__u32 dir;
};

#endif /* __XR_SHARED_DROPS_H */
