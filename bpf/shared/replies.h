/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Replies: the server's answers to the frames of a run, counted on the sender's
 * interface (bpf/gen.bpf.c, xr_replies) and matched to their sequence number n.
 */
#ifndef __XR_SHARED_REPLIES_H
#define __XR_SHARED_REPLIES_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif

/*
 * Every frame of a run that expects an answer records its send time in
 * send_ts at slot n & ts_mask; a reply handler (bpf/proto/X.bpf.h) recovers
 * n from the answer (the ISN, a token, a query id and port), checks that the
 * slot is n's, and counts the answer and its round trip.
 */
#define XR_TS_RING (1U << 20) /* send times of the last 2^20 frames */
#define XR_RTT_BUCKETS 512 /* 16 per octave of ns: about 4% wide */
#define XR_RTT_SECS 64 /* per-second histograms, a ring of seconds */
#define XR_RTT_CELLS (XR_RTT_SECS * XR_RTT_BUCKETS)

struct xr_send_ts {
	__u64 ts_ns;
	__u32 n32; /* low 32 bits of n: the entry is n's, not an older one's */
	__u16 answered; /* XR_ANSWERED_FIRST, and the reply kind's own bits */
	__u16 tag; /* what the per-packet hook wants back with the answer (LoRaWAN: the gateway) */
};

#define XR_ANSWERED_FIRST 1 /* n's answer came; later ones are repeats */

/*
 * Who answers whom: the server's address and port, our sources and ports.
 * IPv6 (ipv6 set): the server's server_addr6, and our sources the addresses
 * src_hi6 | src_base6 + i for i < src_count (the pool within one /64).
 */
struct xr_reply_match {
	__u32 server_addr; /* network order */
	__u16 server_port; /* network order */
	__u16 pad;
	__u32 src_base; /* host order: our source addresses */
	__u32 src_count;
	__u16 sport_base; /* host order: our source ports */
	__u16 pad2;
	__u32 sport_count;
	__u32 ipv6;
	__u32 server_addr6[4]; /* network order */
	__u32 src_hi6[2]; /* network order: our addresses' upper 64 bits */
	__u64 src_base6; /* host order: the lower 64 bits of our first address */
};

#define XR_REPLY_CTRS 38

struct xr_replies_stats {
	__u64 answered; /* first answer to a frame of this run */
	__u64 repeated; /* further answers to it */
	__u64 unmatched; /* to our addresses and ports, but not from a frame of this run */
	__u64 ctr[XR_REPLY_CTRS]; /* the reply kind's own counters (bpf/shared/X.h names them) */
};

#endif /* __XR_SHARED_REPLIES_H */
