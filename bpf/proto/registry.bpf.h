/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocols of the kernel engine, and the two places it calls them:
 * the per-packet hook after the plan (enum xr_hook; rodata makes the switch
 * constant, so the verifier keeps only the chosen protocol's code) and the
 * reply handlers, one program each in bpf/gen.bpf.c (enum xr_reply_kind,
 * XR_REPLY_PROGS). A new protocol adds its bpf/proto/X.bpf.h here, and a
 * case to the switch or a reply program.
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

#endif /* __XR_PROTO_REGISTRY_BPF_H */
