/* SPDX-License-Identifier: GPL-2.0 */
/* What xdpreplay selftest hands the test programs of bpf/selftest.bpf.c (user/cmd/selftest_lib.c). */
#ifndef __XR_SHARED_SELFTEST_H
#define __XR_SHARED_SELFTEST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define XR_TEST_PAYLOAD_MAX 1460 /* XR_TCP_PAYLOAD_MAX of bpf/shared/tcp.h */

/* tcp_reply_data's inputs: flags, seq, ack, and plen bytes of payload. */
struct xr_tcp_reply_test {
	__u32 seq, ack;
	__u32 plen;
	__u8 flags;
	__u8 ipv6; /* the server's segment and the reply are IPv6 */
	__u8 pad[2];
	__u8 tail[64];
	__u8 payload[XR_TEST_PAYLOAD_MAX];
};

/* mqtt_patch's inputs and output: session s's request s->k, bytes [off, off + len), in seg. */
struct xr_mqtt_patch_test {
	struct xr_tcp_session s;
	__u32 off, len;
	__u8 seg[2048];
};

/* tcp_fields_patch's inputs and output: request s->k's bytes [off, off + len) in seg. */
struct xr_tcp_fields_test {
	struct xr_tcp_fields f;
	__u8 pad[4];
	struct xr_tcp_session s;
	__u32 off, len;
	__u8 seg[2048];
};

/* http_read's session, read on from one segment (the test frame's bytes past 14) to the next. */
struct xr_http_read_test {
	struct xr_tcp_session s;
	__u8 buf[XR_TCP_READ_MAX];
};

/* mqtt_read's subscriber session and counters, read on from one segment of the broker's to the next. */
struct xr_mqtt_read_test {
	struct xr_tcp_session s;
	struct xr_replies_stats st;
	__s32 ret; /* mqtt_read's */
	__s32 why;
	/* the segment's replies: a QoS-1 subscriber's PUBACKs' ids in ring, a responder's stamps in answers */
	__u32 nacks;
	__u32 fill_from, fill_n; /* xr_mqtt_fill_test: replies fill_from .. + fill_n - 1 into seg */
	__u8 buf[XR_TCP_READ_MAX];
	__u8 seg[2048];
	struct xr_mqtt_pubacks ring;
	struct xr_mqtt_answers answers;
};

#endif /* __XR_SHARED_SELFTEST_H */
