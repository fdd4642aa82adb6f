/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Gateways' PULL_DATA keepalives (Semtech UDP): each gateway of a fleet sends
 * one every interval, from its own address when it has one, as a packet
 * forwarder does (every 5 s by default there), so that the server knows the
 * gateway and where to send its downlinks: the first round before the first
 * uplink, the next ones spread evenly. A thread sends them through a
 * packet socket beside the kernel engine's uplinks; the PULL_ACKs are counted
 * per gateway in XDP (bpf/proto/lorawan.bpf.h, lora_reply).
 *
 * With a stat interval the same thread sends each gateway's status (a
 * PUSH_DATA with a "stat" object, as lora_pkt_fwd sends every 30 s, which
 * network servers take as the gateway being online), first one interval
 * after the start, spread as the keepalives are. Its token goes into
 * lora_stat_tok before it leaves, so that XDP counts its PUSH_ACK for the
 * gateway, not for an uplink.
 */
#ifndef __XR_PROTO_LORAWAN_KEEPALIVE_H
#define __XR_PROTO_LORAWAN_KEEPALIVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "proto/lorawan/lorawan.h"

#define LW_PULL_DATA_LEN (14 + 20 + 8 + 12)
#define LW_STAT_MAX 256 /* bytes of a stat PUSH_DATA frame, headers included */

struct xr_lora_gw_ctr;

struct lw_keepalive {
	uint64_t interval_ns; /* PULL_DATA every interval; 0: none */
	uint64_t stat_interval_ns; /* stat every stat interval; 0: none */
	int stat_tok_fd; /* lora_stat_tok */
	const volatile struct xr_lora_gw_ctr *gw_ctr; /* mmapped: a stat's dwnb and txnb */
	/* the sequence number the senders are at (NULL: unknown): a stat's token keeps away from it */
	uint64_t (*cur_n)(void *ctx);
	void *cur_n_ctx;
	uint64_t t0; /* the first round's time: all at once, before the first uplink */
	/* gateways g with g mod step == first: a shard's share of the fleet's */
	unsigned int first, step;
	int fd, ifindex;
	uint8_t dst_mac[6];
	uint8_t *frames; /* one PULL_DATA per gateway, LW_PULL_DATA_LEN bytes each */
	const struct lw_fleet *fleet;
	struct lw_net net;
	uint64_t *stat_prev; /* per gateway: downlinks, TX_ACKs, copies and PUSH_ACKs at its last stat */
	struct lw_gw_index gw_index; /* with cur_n: the copies each gateway received (rxnb) */
	size_t ngw;
	atomic_bool stop;
	bool started, running;
	pthread_t tid;
	/* results */
	uint64_t sent, failed; /* failed: the socket refused them (last_errno) */
	uint64_t stat_sent, stat_failed; /* stat_failed: not sent (socket or token map) */
	uint32_t stat_seq; /* stats made so far: each one's token its own (send_stat) */
	int last_errno;
};

/*
 * Builds gateway g's PULL_DATA (token g, which its PULL_ACK echoes) from its
 * address (or net's) to the server into out (LW_PULL_DATA_LEN bytes).
 */
void lw_build_pull_data(const struct lw_fleet *f, size_t g, const struct lw_net *net, uint8_t *out);

/*
 * Gateway g's status since its last: uplinks received (all with a right CRC
 * and forwarded: rxnb = rxok = rxfw), the share of its PUSH_DATA that were
 * acknowledged (ackr, %), downlinks received and sent (dwnb, txnb).
 */
struct lw_stat_counts {
	uint64_t rx, dwnb, txnb;
	double ackr;
};

/* Builds gateway g's stat PUSH_DATA (token tok, time at unix time now) into out (LW_STAT_MAX bytes): its length. */
size_t lw_build_stat(const struct lw_fleet *f, size_t g, const struct lw_net *net, uint16_t tok,
		     const struct lw_stat_counts *sc, time_t now, uint8_t *out);

/* Starts sending f's keepalives (and stats) on ifindex: 0 or -errno after a one-line message. */
int lw_keepalive_start(struct lw_keepalive *ka, const struct lw_fleet *f, const struct lw_net *net,
		       int ifindex);
/* Stops the thread; the counters stay. */
void lw_keepalive_stop(struct lw_keepalive *ka);

#endif
