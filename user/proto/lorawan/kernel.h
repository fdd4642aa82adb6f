/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN's part in a kernel-engine run: the device table and gateway EUIs
 * in the program's maps, the AES-NI precompute ring and its producer thread,
 * the gateways' keepalives, answers per gateway at the end (bpf/proto/lorawan.bpf.h).
 */
#ifndef __XR_PROTO_LORAWAN_KERNEL_H
#define __XR_PROTO_LORAWAN_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"
#include "proto/lorawan/join.h"
#include "proto/lorawan/keepalive.h"
#include "proto/lorawan/lorawan.h"

/*
 * Uplinks precomputed ahead of the senders (AES-NI): this many ring slots,
 * kept LORA_RING_MARGIN behind the slowest sender (kernel.c).
 */
#define LORA_RING_SLOTS (1U << 17)

/* What a sender thread of the xsk engine keeps between uplinks (xsk.c): as the program's scratch. */
struct lw_xsk_thread {
	uint64_t u; /* the uplink last finished, + 1 (0: none) */
	uint32_t tmst, tmst_age;
	uint32_t tmst_even, tmst_odd; /* the sums of tmst's digits 0, 2, .. and 1, 3, .. */
	uint8_t digits[10];
};

struct lw_kernel {
	struct engine_proto ops; /* ops.ctx is this */
	const struct lw_fleet *fleet;
	bool rewrite; /* false: --static, the frames go out as built */
	bool precompute; /* AES-NI ahead of the senders into the ring */
	struct xr_lora_dev *devs; /* mmapped device records, also read by the producer */
	size_t devs_sz;
	struct xr_lora_dev11 *devs11; /* with lora_cfg.v11: what 1.1 sessions add, mmapped */
	size_t devs11_sz;
	struct xr_lora_ring_slot *ring;
	size_t ring_sz;
	struct xr_lora_gw_ctr *gw_ctr_map; /* mmapped answers per gateway */
	size_t gw_ctr_sz;
	/* keepalives, when ka.interval_ns is set (and net, the frames' addressing) */
	struct lw_keepalive ka;
	struct lw_net net;
	int ifindex;
	struct xr_lora_confirmed *confirmed_map; /* mmapped, with lora_cfg.confirmed (or MAC asks) */
	size_t confirmed_sz;
	/* a join storm (fleet->joining): the departures, mmapped, and the JoinAccepts' reader */
	struct xr_lora_join *join_map;
	size_t join_sz;
	int join_ring_fd;
	struct lw_join join;
	/* results */
	struct xr_lora_gw_ctr *gw_ctr; /* answers per gateway (fleet->ngw), malloc'ed by finish */
	/* confirmed uplinks (summed over devices) and downlinks */
	uint64_t confirmed_uplinks, confirmed_acked, dup_acks;
	uint64_t dl_ctr[XR_LORA_DL_CTRS];
	struct engine_replies ack_hist; /* confirmed uplink to its ACK */
	/* MAC commands (lorawan send --mac), summed over devices */
	struct lw_mac_result {
		uint64_t uplinks, answered, dup, link_check, device_time, gw_cnt_sum;
		uint64_t device_time_devices; /* devices with a DeviceTimeAns, for the error's mean */
		double device_time_err_mean_ms, device_time_err_max_ms; /* max: of its magnitude */
		struct engine_replies hist; /* uplink to the downlink that answered it */
	} mac;
	bool ring_used;
	struct lw_xsk_thread xsk[XR_MAX_CPUS]; /* the xsk engine's senders, by thread */
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

/* engine_proto.build (the xsk engine): frame n finished from the ring, or -EAGAIN: the program's. */
int lw_xsk_build(void *ctx, struct xr_gen_slot *s, uint64_t n, uint8_t *frame, uint32_t len,
		 uint16_t *tag);

/* Runs the BPF AES-128 and AES-CMAC (xr_aes_test) on t's inputs; t receives the results. For the tests. */
int lw_kernel_aes_test(struct xr_aes_test *t);

/*
 * Runs the BPF downlink reader (xr_lora_dl_test) on n frames (frame i at
 * frames + i x stride, lens[i] bytes), and the MIC check with dev's NwkSKey
 * (out[i].v11: dev11's SNwkSIntKey with out[i].conf_fcnt) at out[i].fcnt;
 * out[i] receives its result. For the tests.
 */
int lw_kernel_dl_test(const uint8_t *frames, size_t stride, const uint32_t *lens, size_t n,
		      const struct xr_lora_dev *dev, const struct xr_lora_dev11 *dev11,
		      struct xr_lora_dl_test *out);

#endif
