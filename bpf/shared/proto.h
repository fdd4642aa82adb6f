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

/* What answers what: the reply handler that xr_replies dispatches to. */
enum xr_reply_kind {
	XR_REPLY_NONE = 0,
	XR_REPLY_SYN = 1, /* SYN-ACKs, RSTs, FINs to gen syn's SYNs (bpf/proto/syn.bpf.h) */
	XR_REPLY_LORA_ACK = 2, /* Semtech PUSH_ACKs to PUSH_DATA (bpf/proto/lorawan.bpf.h) */
	XR_REPLY_DNS = 3, /* DNS responses to gen dns's queries (bpf/proto/dns.bpf.h) */
	XR_REPLY_TCP =
		4, /* gen tcp's sessions: the whole conversation after the SYN (bpf/proto/tcp.bpf.h) */
};

#endif /* __XR_SHARED_PROTO_H */
