/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server counter's configuration and records (bpf/count.bpf.c, user/measure/count.c).
 */
#ifndef __XR_SHARED_COUNT_H
#define __XR_SHARED_COUNT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif

enum xr_seq_kind {
	XR_SEQ_NONE = 0,
	XR_SEQ_IP_ID = 1, /* the IPv4 identification field */
	XR_SEQ_PAYLOAD = 2, /* big-endian field at seq_off in the UDP/TCP payload */
};

/* Server counter: what it counts, set in rodata. */
#define XR_PROTO_ANY_FRAME 255 /* xr_count_cfg.proto: every frame, IP or not (count --any) */

struct xr_count_cfg {
	__u32 drop; /* XDP_DROP matched packets instead of XDP_PASS */
	__u8 seq_kind; /* enum xr_seq_kind */
	__u8 seq_width; /* bytes: 2, 4 or 8 */
	__u16 seq_off;
	__u8 proto; /* IPPROTO_*; 0 = any IP; XR_PROTO_ANY_FRAME */
	__u8 pad[3];
	__u32 daddr; /* IPv4, network order; 0 = any */
	__u16 dport; /* network order; 0 = any */
	__u16 sport; /* network order; 0 = any */
	__u32 saddr; /* IPv4, network order; 0 = any */
	__u32 respond; /* enum xr_respond: answer matched TCP segments in XDP (bpf/count.bpf.c) */
	__u32 resp_len; /* bytes of the answer to a request (respond_body) */
	__u32 pad2;
};

/*
 * count --respond: a stateless TCP server in XDP, for benchmarks whose server
 * must not be the limit. A SYN gets a SYN-ACK (ISN a hash of the client's
 * address, port and ISN); a segment with data and PSH gets the response
 * (seq: the client's acknowledgement, so nothing is kept), one without PSH
 * a bare ACK; a FIN a FIN-ACK; everything else of the port is dropped.
 * XR_RESPOND_CLOSE sends its FIN with the response, as a server does to
 * 'Connection: close', and then only acknowledges the client's.
 */
enum xr_respond {
	XR_RESPOND_NONE = 0,
	XR_RESPOND_KEEP = 1, /* the client closes (keep-alive: any number of requests) */
	XR_RESPOND_CLOSE = 2, /* FIN on every response: one request a connection */
};
#define XR_RESPOND_MAX 1400
struct xr_respond_stats {
	__u64 syn_acks; /* SYNs answered */
	__u64 responses; /* requests answered (data with PSH) */
	__u64 data_acks; /* data without PSH: acknowledged */
	__u64 fin_acks; /* FINs answered */
	__u64 absorbed; /* bare ACKs and RSTs: nothing to answer */
	__u64 not_tcp; /* matched but not a TCP segment this server reads (dropped) */
	__u64 no_room; /* the frame could not grow to the answer (dropped) */
	__u64 pad;
};

/* Server counter: frames matched per second since the first one, for rate spreads. */
#define XR_SERIES_MAX 3600

/* Server counter: per-flow sequence tracking (IPv4 5-tuple). */
#define XR_MAX_FLOWS 65536
#define XR_SEQ_WINDOW 64 /* late frames this far back are told from duplicates */

struct xr_flow_key {
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u8 proto;
	__u8 pad[3];
};

struct xr_flow_state {
	struct bpf_spin_lock lock;
	__u32 started;
	__u64 next; /* the sequence number expected next (unwrapped) */
	__u64 window; /* bit i: next - 1 - i has been received */
	__u64 received;
	__u64 lost; /* gaps not (yet) filled by late frames */
	__u64 dup;
	__u64 reordered; /* arrived after a later one: filled a gap */
	__u64 too_late; /* older than the window: counted as reordered too */
};

/* Server counter: one per CPU (a PERCPU_ARRAY of one entry). */
struct xr_count_stats {
	__u64 seen; /* every frame the XDP program ran on */
	__u64 matched; /* frames that passed the filter */
	__u64 matched_bytes; /* their bytes, Ethernet header included */
	__u64 passed;
	__u64 dropped;
	__u64 first_ns; /* arrival of the first and last matched frame */
	__u64 last_ns;
	/* the program's own: the series' bin, second bin_sec, which ends at bin_end_ns */
	__u64 bin_end_ns;
	__u32 bin_sec;
	__u32 pad;
};

#endif /* __XR_SHARED_COUNT_H */
