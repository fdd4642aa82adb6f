/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocols of the kernel engine, and the two places it calls them:
 * the per-packet hook after the plan (enum xr_hook) and the reply handler
 * of xr_replies (enum xr_reply_kind). rodata makes both switches constant:
 * the verifier keeps only the chosen protocol's code. A new protocol adds
 * its bpf/proto/X.bpf.h here and a case to either switch.
 */
#ifndef __XR_PROTO_REGISTRY_BPF_H
#define __XR_PROTO_REGISTRY_BPF_H

#include "proto/syn.bpf.h"
#include "proto/lorawan.bpf.h"
#include "proto/lorawan_downlink.bpf.h"
#include "proto/dns.bpf.h"
#include "proto/tcp_reply.bpf.h"

/* tag: a value the reply handler gets back with n's answer (struct xr_send_ts) */
static __always_inline int proto_hook(struct xdp_md *ctx, struct xr_gen_slot *s, __u64 n,
				      __u16 *tag)
{
	switch (cfg.hook) {
	case XR_HOOK_LORAWAN: return lora_rewrite(ctx, s, n, tag);
	default: return 0;
	}
}

static __always_inline int proto_reply(struct xdp_md *ctx)
{
	switch (cfg.reply_kind) {
	case XR_REPLY_SYN: return syn_reply(ctx);
	case XR_REPLY_LORA_ACK: return lora_reply(ctx);
	case XR_REPLY_DNS: return dns_reply(ctx);
	case XR_REPLY_TCP: return tcp_session_reply(ctx);
	default: return XDP_PASS;
	}
}

#endif /* __XR_PROTO_REGISTRY_BPF_H */
