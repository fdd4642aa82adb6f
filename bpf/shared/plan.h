/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rewrite plan's vocabulary, one for bpf/plan.bpf.h and user/frames/rewrite.c:
 * what changes per packet, as a pure function of the sequence number n.
 */
#ifndef __XR_SHARED_PLAN_H
#define __XR_SHARED_PLAN_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif

/*
 * Rewrite plan: what changes per packet, as a pure function of the sequence
 * number n (pages are recycled without reset, so nothing is incremented in
 * place). bpf/gen.bpf.c applies it in the kernel, user/frames/rewrite.c is the
 * reference the tests hold it against byte for byte.
 */
#define XR_MAX_OPS 8

enum xr_op_kind {
	XR_OP_NONE = 0,
	/*
	 * value = base + ((n / divisor) * step) mod modulus, wrapped to the
	 * field's width, written at off; base is the captured value with
	 * XR_OPF_RELATIVE. The divisor gives a per-source sequence when sources
	 * take turns (ip.src=A/23 with ip.id=seq/512).
	 * Counters, sequence stamps, address and port ranges are all this op.
	 */
	XR_OP_COUNTER = 1,
};

enum xr_op_flags {
	XR_OPF_BIG_ENDIAN = 1,
	XR_OPF_RELATIVE = 2,
};

/*
 * Checksums are fixed incrementally (RFC 1624) over the 16-bit words the
 * field touches, counted from even frame offsets: every region a checksum
 * covers (IPv4 header, pseudo-header addresses, UDP/TCP segment) starts at
 * an even offset in the frames a plan accepts.
 */
struct xr_op {
	__u8 kind; /* enum xr_op_kind */
	__u8 width; /* bytes: 1, 2, 4 or 8 */
	__u8 flags; /* enum xr_op_flags */
	__u8 pad;
	__u16 off; /* from the start of the frame */
	/* checksums covering the field; 0 = none */
	__u16 ip_csum_off;
	__u16 l4_csum_off;
	__u16 l4_proto; /* IPPROTO_UDP: a zero checksum means none and stays zero */
	__u32 pad2;
	__u64 base, step;
	__u64 modulus; /* 0: none (the value wraps at the field's width) */
	__u64 divisor; /* 0 or 1: none */
	/*
	 * Single-frame sets skip the copy: the template's bytes are known, so each
	 * op writes its words and the checksums absolutely from them (orig, and
	 * xr_nocopy's checksums), never from what a recycled page holds.
	 */
	__u8 orig[10]; /* the template's 16-bit words the field touches */
	__u8 nc_len; /* how many of them lie inside the frame */
	__u8 pad3[5];
};

/* Single-frame sets: the template's checksums, which the ops update in turn. */
struct xr_nocopy {
	__u16 csum_off[2]; /* IPv4 header, UDP/TCP; 0 = none */
	__u16 csum_orig[2]; /* as the template holds them (memory order) */
	__u8 udp; /* csum_off[1] is UDP's: zero means none and stays zero */
	__u8 pad[7];
};

#endif /* __XR_SHARED_PLAN_H */
