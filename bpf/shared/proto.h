/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocols the kernel engine knows, by number: the per-packet hook that
 * runs after the plan, and the reply handler xr_replies dispatches to
 * (bpf/proto/registry.bpf.h). A new protocol adds its entries here.
 */
#ifndef __XR_SHARED_PROTO_H
#define __XR_SHARED_PROTO_H

/* Per-packet rewrites beyond the plan, one per protocol that needs one (bpf/proto/registry.bpf.h). */
enum xr_hook {
	XR_HOOK_NONE = 0,
	XR_HOOK_LORAWAN =
		1, /* FCnt, FRMPayload, MIC, token, gateway, tmst (bpf/proto/lorawan.bpf.h) */
};

/* What answers what: the reply handler of a run, a program of its own in bpf/gen.bpf.c. */
enum xr_reply_kind {
	XR_REPLY_NONE = 0,
	XR_REPLY_SYN = 1, /* SYN-ACKs, RSTs, FINs to gen syn's SYNs (bpf/proto/syn.bpf.h) */
	XR_REPLY_LORA_ACK = 2, /* Semtech PUSH_ACKs to PUSH_DATA (bpf/proto/lorawan.bpf.h) */
	XR_REPLY_DNS = 3, /* DNS responses to gen dns's queries (bpf/proto/dns.bpf.h) */
	XR_REPLY_TCP =
		4, /* gen tcp's sessions: the whole conversation after the SYN (bpf/proto/tcp.bpf.h) */
};

/* The gen object's program for each reply kind, by name (loaded only for its kind). */
#define XR_REPLY_PROGS                                                                      \
	{                                                                                   \
		[XR_REPLY_SYN] = "xr_replies_syn", [XR_REPLY_LORA_ACK] = "xr_replies_lora", \
		[XR_REPLY_DNS] = "xr_replies_dns", [XR_REPLY_TCP] = "xr_replies_tcp",       \
	}

/*
 * A reply kind's lighter program, for kernels without the helpers of its
 * full one, and what it leaves out; a run takes it only when it can do
 * without that (engine_proto.answers_unread_ok)
 */
#define XR_REPLY_PROGS_LITE                                  \
	{                                                    \
		[XR_REPLY_LORA_ACK] = "xr_replies_lora_acks" \
	}
#define XR_REPLY_LITE_LEAVES                                                                  \
	{                                                                                     \
		[XR_REPLY_LORA_ACK] = "the server's data downlinks are counted, not read or " \
				      "answered with TX_ACK (JoinAccepts are)",               \
	}

/*
 * Helpers not every kernel has (engine/session.c names each and the first
 * kernel with it), and which programs call them: a run a kernel cannot load
 * is refused in words before its load would fail.
 */
#define XR_NEEDS_LOOP (1u << 0) /* bpf_loop */
#define XR_NEEDS_XDP_BYTES (1u << 1) /* bpf_xdp_load_bytes, bpf_xdp_store_bytes */
#define XR_BUILD_NEEDS XR_NEEDS_XDP_BYTES /* xr_build: frames copied in, the plan */
#define XR_REPLY_NEEDS                                               \
	{                                                            \
		[XR_REPLY_LORA_ACK] = XR_NEEDS_XDP_BYTES,            \
		[XR_REPLY_TCP] = XR_NEEDS_LOOP | XR_NEEDS_XDP_BYTES, \
	}

/* The commands each reply kind answers for (xdpreplay probe's rows). */
#define XR_REPLY_USERS                                                              \
	{                                                                           \
		[XR_REPLY_SYN] = "gen syn", [XR_REPLY_LORA_ACK] = "lorawan send",   \
		[XR_REPLY_DNS] = "gen dns",                                         \
		[XR_REPLY_TCP] = "gen tcp, gen mqtt, gen redis, replay --sessions", \
	}

#endif /* __XR_SHARED_PROTO_H */
