/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN's part in a kernel-engine run: the device table and gateway EUIs
 * in the program's maps, the AES-NI precompute ring and its producer thread,
 * PUSH_ACKs per gateway at the end (bpf/proto/lorawan.bpf.h).
 */
#ifndef __XR_PROTO_LORAWAN_KERNEL_H
#define __XR_PROTO_LORAWAN_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"
#include "proto/lorawan/lorawan.h"

struct lw_kernel {
	struct engine_proto ops; /* ops.ctx is this */
	const struct lw_fleet *fleet;
	bool rewrite; /* false: --static, the frames go out as built */
	bool precompute; /* AES-NI ahead of the senders into the ring */
	struct xr_lora_dev *devs; /* mmapped device records, also read by the producer */
	size_t devs_sz;
	struct xr_lora_ring_slot *ring;
	size_t ring_sz;
	uint64_t *gw_acks_map; /* mmapped PUSH_ACKs per gateway */
	size_t gw_acks_sz;
	/* results */
	uint64_t *gw_acks; /* PUSH_ACKs per gateway (fleet->ngw), malloc'ed by finish */
	bool ring_used;
	/* the producer thread */
	const struct xr_gen_slot *slots;
	const struct engine_opts *o;
	uint64_t next_u, made;
	unsigned int u_step; /* from one uplink of this run to its next: --shard's N */
	volatile bool stop;
	bool running;
	pthread_t tid;
	int cpu;
};

/* Sets lk up for fleet f, and o (a kernel-engine run) to send its frames with LoRaWAN's hook and replies. */
void lw_kernel_init(struct lw_kernel *lk, const struct lw_fleet *f, bool rewrite, bool precompute,
		    struct engine_opts *o);
void lw_kernel_free(struct lw_kernel *lk);

/* Runs the BPF AES-128 and AES-CMAC (xr_aes_test) on t's inputs; t receives the results. For the tests. */
int lw_kernel_aes_test(struct xr_aes_test *t);

#endif
