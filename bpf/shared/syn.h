/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen syn's replies (bpf/proto/syn.bpf.h): SYN-ACKs and RSTs to the SYNs the
 * kernel engine sent, matched to their sequence number n through the ISN
 * (isn = isn_base + n * isn_step, isn_step odd, so
 * n = (isn - isn_base) * isn_inv mod 2^32), and their round trips.
 */
#ifndef __XR_SHARED_SYN_H
#define __XR_SHARED_SYN_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct xr_syn_cfg {
	__u32 isn_base, isn_inv;
	__u8 complete; /* answer SYN-ACKs with an ACK, FINs with a RST */
	__u8 pad[7];
};

/* xr_replies_stats.ctr[]: answered = SYN-ACKs, repeated = SYN-ACKs retransmitted */
enum xr_syn_ctr {
	XR_SYN_RSTS = 0,
	XR_SYN_COMPLETED = 1, /* --complete: handshakes we completed */
	XR_SYN_CLOSED = 2, /* --complete: closes we answered with a RST */
};

#define XR_ANSWERED_FIN 2 /* xr_send_ts.answered: n's FIN came */

#endif /* __XR_SHARED_SYN_H */
