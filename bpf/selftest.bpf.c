// SPDX-License-Identifier: GPL-2.0
/*
 * Test programs for bpf/lib/ (xdpreplay selftest, never attached): each runs
 * one library function on a packet from BPF_PROG_RUN and its inputs from a
 * map, for userspace to hold the result against its own reference.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdpreplay.h"
#include "lib/csum.bpf.h"
#include "lib/parse.bpf.h"
#include "lib/tcp.bpf.h"
/* the MQTT reader books deliveries and times them as the reply handlers do */
#include "lib/replies.bpf.h"
#include "proto/mqtt.bpf.h"
#include "proto/http.bpf.h"
#include "proto/fields.bpf.h"

_Static_assert(XR_TEST_PAYLOAD_MAX == XR_TCP_PAYLOAD_MAX, "the test payload is a reply's largest");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_tcp_reply_test);
} tcp_reply_test SEC(".maps");

SEC("xdp")
int xr_tcp_reply_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_tcp_reply_test *t = bpf_map_lookup_elem(&tcp_reply_test, &zero);

	if (!t)
		return XDP_ABORTED;
	if (t->plen ? tcp_reply_data(ctx, t->ipv6, t->flags, t->seq, t->ack, t->payload, t->plen,
				     t->tail) :
		      tcp_reply(ctx, t->ipv6, t->flags, t->seq, t->ack))
		return XDP_DROP;
	return XDP_TX;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_mqtt_patch_test);
} mqtt_patch_test SEC(".maps");

/* gen mqtt's per-session bytes (mqtt_cfg set before load), in place in the map */
SEC("xdp")
int xr_mqtt_patch_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_mqtt_patch_test *t = bpf_map_lookup_elem(&mqtt_patch_test, &zero);

	if (!t || t->len > sizeof(t->seg))
		return XDP_ABORTED;
	mqtt_patch(&t->s, t->seg, t->off, t->len);
	return XDP_PASS;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_mqtt_read_test);
} mqtt_read_test SEC(".maps");

/* gen mqtt's reader of the broker's stream (a subscriber's deliveries) on the frame's bytes past 14 */
SEC("xdp")
int xr_mqtt_read_test(struct xdp_md *ctx)
{
	/* the helper's length: clang spilled ctx->data as 32 bits, which the verifier refuses */
	__u32 zero = 0, plen = bpf_xdp_get_buff_len(ctx) - 14;
	struct xr_mqtt_read_test *t = bpf_map_lookup_elem(&mqtt_read_test, &zero);
	int why = 0;

	if (!t)
		return XDP_ABORTED;
	t->nacks = 0;
	t->ret = mqtt_read(ctx, &t->s, &t->st, t->buf, 14, plen, &why,
			   mqtt_cfg.responder ? NULL : &t->ring,
			   mqtt_cfg.responder ? &t->answers : NULL, &t->nacks);
	t->why = why;
	return XDP_PASS;
}

/* A subscriber's replies fill_from .. into seg, as mqtt_replies_send writes them, from mqtt_read_test's rings */
SEC("xdp")
int xr_mqtt_fill_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_mqtt_read_test *t = bpf_map_lookup_elem(&mqtt_read_test, &zero);
	struct mqtt_reply_fill fill = { .from = t ? t->fill_from : 0 };

	if (!t || t->fill_n > XR_MQTT_SEG_REPLIES)
		return XDP_ABORTED;
	fill.seg = t->seg;
	fill.ring = &t->ring;
	fill.answers = &t->answers;
	bpf_loop(t->fill_n, mqtt_cfg.responder ? mqtt_answer_fill : mqtt_puback_fill, &fill, 0);
	return XDP_PASS;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_http_read_test);
} http_read_test SEC(".maps");

/* gen tcp's HTTP reader on the frame's bytes past 14, counted into the session as the handler does */
SEC("xdp")
int xr_http_read_test(struct xdp_md *ctx)
{
	__u32 zero = 0, plen = ctx->data_end - ctx->data - 14;
	struct xr_http_read_test *t = bpf_map_lookup_elem(&http_read_test, &zero);

	if (!t)
		return XDP_ABORTED;
	http_read(ctx, &t->s, 14, plen, t->buf);
	t->s.resp_got += plen;
	return XDP_PASS;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_tcp_fields_test);
} tcp_fields_test SEC(".maps");

/* gen tcp's {c} and {k}, in place in the map */
SEC("xdp")
int xr_tcp_fields_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_tcp_fields_test *t = bpf_map_lookup_elem(&tcp_fields_test, &zero);

	if (!t)
		return XDP_ABORTED;
	tcp_fields_patch(&t->f, &t->s, t->seg, t->off, t->len);
	return XDP_PASS;
}

/* A round trip of 1 us, in the histogram region of the CPU the run is on. */
SEC("xdp")
int xr_hist_test(struct xdp_md *ctx)
{
	record_hist(&rtt_hist, bpf_ktime_get_ns() - 1000);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
