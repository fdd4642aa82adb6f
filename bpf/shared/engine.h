/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel engine's shared layout (bpf/gen.bpf.c, user/engine/kengine.c):
 * sizes, the frame set in maps, its read-only configuration and the per-CPU
 * state the senders and the tracepoints count in. No protocol here.
 */
#ifndef __XR_SHARED_ENGINE_H
#define __XR_SHARED_ENGINE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif
#include "shared/plan.h"
#include "shared/proto.h"
#include "shared/replies.h"

#ifndef XR_MAX_CPUS
#define XR_MAX_CPUS 256
#endif

/*
 * A live-frames page is 4096 bytes, less 256 of XDP headroom and 320 of
 * skb_shared_info: 3520 bytes of frame at most. Round down.
 */
#define XR_MAX_FRAME 3072
#define XR_MIN_FRAME 14

/*
 * Frame bytes live packed in chunks of an mmapable BPF array. A frame starts
 * below XR_CHUNK_SIZE and may run into the XR_MAX_FRAME bytes of slack after
 * it: that is what lets the verifier prove every copy stays inside the value.
 */
#define XR_CHUNK_SIZE (1U << 20)
#define XR_CHUNK_VALUE (XR_CHUNK_SIZE + XR_MAX_FRAME)

/* One per frame of the frame set: where its bytes are and when it was seen. */
/* xr_frame.flags */
enum xr_frame_flags {
	XR_FRAME_UNPLANNED = 1, /* --misfit send: the plan's ops skip this frame */
};

struct xr_frame {
	__u32 chunk;
	__u32 off;
	__u16 len;
	__u16 flags; /* enum xr_frame_flags */
	__u32 pad;
	__u64 ts_ns; /* capture time relative to the first frame */
};

enum xr_pace {
	XR_PACE_NONE = 0, /* top speed */
	XR_PACE_RATE = 1, /* fixed interval between packets */
	XR_PACE_PCAP = 2, /* capture timestamps divided by a multiplier */
};

/* How the program waits out a full ring (gen.bpf.c: ring_full_backoff). */
enum xr_backoff {
	XR_BACKOFF_SKIP = 0, /* skip iterations: the receiver may need this CPU */
	XR_BACKOFF_SPIN = 1, /* spin first: the receiver drains on another CPU */
};

/* Read-only configuration of the kernel engine (rodata). */
struct xr_gen_cfg {
	__u64 nframes;
	__u32 ifindex;
	__u32 netns_ino; /* tracepoints fire for every netns: match ours */
	__u32 copy; /* 0: the template in data_in is the only frame */
	__u32 pace; /* enum xr_pace */
	__u32 nthreads; /* sequence numbers are interleaved across threads */
	__u32 shards; /* --shard I/N: N (0 or 1: not sharded); see xr_seq */
	__u64 span_ns; /* XR_PACE_PCAP: capture duration of one round */
	__u64 mult_milli; /* XR_PACE_PCAP: speed multiplier x 1000 */
	__u32 nops;
	__u32 stamp; /* record send times in send_ts for reply round trips */
	__u64 first_n; /* sequence numbers start here (successive runs need not repeat them) */
	__u64 frame_div; /* frame of n: (n / frame_div) mod nframes; 0 or 1: n mod nframes */
	__u32 ts_mask; /* send_ts slot of n: n & ts_mask */
	__u32 hook; /* enum xr_hook: the protocol's per-packet rewrite after the plan */
	__u32 reply_kind; /* enum xr_reply_kind: what the reply program answers */
	__u32 shard; /* --shard I/N: I */
	__u32 backoff; /* enum xr_backoff: how the program waits when the driver refuses frames */
	struct xr_op ops[XR_MAX_OPS];
	struct xr_nocopy nc;
	struct xr_reply_match rpl;
};

/*
 * The sequence number of a run's m-th frame (m = k * nthreads + thread: the
 * threads interleave). A shard of `shards` (--shard I/N) takes every N-th
 * unit of `unit` consecutive sequence numbers (an uplink heard by several
 * gateways is one unit: frame_div) from its place `shard` in the run's first
 * N units, so that N shards together send each n of one whole run exactly
 * once, whatever their thread counts.
 */
static inline __u64 xr_seq(__u64 first_n, __u64 m, __u32 shard, __u32 shards, __u64 unit)
{
	if (shards <= 1)
		return first_n + m;
	if (unit <= 1)
		return first_n + m * shards + shard;
	return first_n + ((m / unit) * shards + shard) * unit + m % unit;
}

/*
 * Per-CPU state of the kernel engine, one cache line each, indexed by CPU id
 * in an mmapable array: each sender thread is pinned to its CPU, so only that
 * CPU's program and tracepoints write a slot and userspace reads it live.
 * Thread t sends m = k * nthreads + t for k in [k, k_end): sequence number
 * xr_seq(first_n, m, shard, shards, frame_div).
 */
struct xr_gen_slot {
	/* set by userspace before a run */
	__u64 k_next; /* next k to send (advanced by the program) */
	__u64 k_end; /* k at which this thread stops */
	__u64 k_base; /* pacing origin: k_base departs at t0_ns */
	__u64 t0_ns;
	/*
	 * XR_PACE_RATE: the run's frames leave per_num / per_den ns apart
	 * exactly (per_den < 2^32), and per_q, per_r are per_num / per_den and
	 * its remainder: departures need no 128-bit product (engine/pacer.c)
	 */
	__u64 per_num, per_den, per_q, per_r;
	__u32 thread;
	__u32 active;
	/* counted by the program and the tracepoints */
	__u64 tx; /* frames the program handed to XDP_TX */
	__u64 bad_frame; /* frames the program could not build */
	__u64 xmit_sent; /* frames the driver took (xdp_devmap_xmit) */
	__u64 xmit_drops; /* frames the driver refused (ring full, no NAPI) */
	__u64 redirect_err; /* frames refused before the driver (MTU, down) */
	__s32 xmit_err; /* last error the driver gave */
	__s32 redirect_errno;
	__u64 tx_bytes;
	/*
	 * Plan ops without a divisor: (n * step) mod modulus for the next n, and
	 * what it grows by from one n of this thread to the next (nthreads * step
	 * mod modulus): the same pure function of n, without a division per packet.
	 * Set by userspace with k_next; ops with a divisor divide.
	 */
	__u64 op_val[XR_MAX_OPS];
	__u64 op_inc[XR_MAX_OPS];
	/* the per-packet hook's own counters (bpf/shared/X.h names them) */
	__u64 hook_ctr[2];
	/* back-off while the driver refuses frames (gen.bpf.c: ring_full_backoff) */
	__u64 drops_seen; /* xmit_drops when last looked at */
	__u32 backoff; /* iterations to skip after the next refusal */
	__u32 backoff_left; /* iterations still to skip */
	__u32 spin_ns; /* the spin after each flush, 0: not spinning (read per frame) */
	__u32 spin_skips; /* refusals still to meet by skipping after a failed spin */
	__u64 backoff_skipped; /* iterations skipped, for the figures */
	__u64 sent_seen; /* xmit_sent when last looked at */
	__u32 spin_retry; /* what spin_skips starts at after the next failed spin */
	__u64 spun_ns; /* time spent spinning, for the figures */
	__u64 clock_ns; /* the clock when the program last read it (gen.bpf.c: frame_is_due) */
} __attribute__((aligned(64)));

/* selftest only: the program's departure times (due_ns) of ks for a slot, to hold against the userspace pacer */
#define XR_DUE_TEST_K 16
struct xr_due_test {
	struct xr_gen_slot slot;
	__u64 k[XR_DUE_TEST_K];
	__u64 due[XR_DUE_TEST_K];
	__u32 n;
	__u32 pad;
};

#endif /* __XR_SHARED_ENGINE_H */
