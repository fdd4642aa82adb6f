/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gateways' PULL_DATA keepalives (Semtech UDP): each gateway of a fleet sends
 * one every interval, from its own address when it has one, as a packet
 * forwarder does (every 5 s by default there), so that the server knows the
 * gateway and where to send its downlinks: the first round before the first
 * uplink, the next ones spread evenly. A thread sends them through a
 * packet socket beside the kernel engine's uplinks; the PULL_ACKs are counted
 * per gateway in XDP (bpf/proto/lorawan.bpf.h, lora_reply).
 */
#ifndef __XR_PROTO_LORAWAN_KEEPALIVE_H
#define __XR_PROTO_LORAWAN_KEEPALIVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "proto/lorawan/lorawan.h"

#define LW_PULL_DATA_LEN (14 + 20 + 8 + 12)

struct lw_keepalive {
	uint64_t interval_ns;
	uint64_t t0; /* the first round's time: all at once, before the first uplink */
	/* gateways g with g mod step == first: a shard's share of the fleet's */
	unsigned int first, step;
	int fd, ifindex;
	uint8_t dst_mac[6];
	uint8_t *frames; /* one PULL_DATA per gateway, LW_PULL_DATA_LEN bytes each */
	size_t ngw;
	atomic_bool stop;
	bool running;
	pthread_t tid;
	/* results */
	uint64_t sent, failed; /* failed: the socket refused them (last_errno) */
	int last_errno;
};

/*
 * Builds gateway g's PULL_DATA (token g, which its PULL_ACK echoes) from its
 * address (or net's) to the server into out (LW_PULL_DATA_LEN bytes).
 */
void lw_build_pull_data(const struct lw_fleet *f, size_t g, const struct lw_net *net, uint8_t *out);

/* Starts sending f's keepalives on ifindex: 0 or -errno after a one-line message. */
int lw_keepalive_start(struct lw_keepalive *ka, const struct lw_fleet *f, const struct lw_net *net,
		       int ifindex);
/* Stops the thread; the counters stay. */
void lw_keepalive_stop(struct lw_keepalive *ka);

#endif
