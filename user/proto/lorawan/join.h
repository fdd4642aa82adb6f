/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A join storm's answers: the JoinAccepts that XDP hands on
 * (bpf/proto/lorawan.bpf.h, lora_join_accept) are read by a thread, matched
 * to the device they are for, opened (decrypted, MIC checked) and turned into
 * sessions (DevAddr, NwkSKey and AppSKey; 1.1's four keys), timed from the JoinRequest's departure.
 *
 * A JoinAccept names no device: a device in its receive window tries to
 * open whatever it hears with its own AppKey (1.1: NwkKey). So do we, first with the
 * devices heard by the gateway it reached whose JoinRequest's tmst is the
 * txpk's less 5 or 6 s (JOIN_ACCEPT_DELAY1 and 2), then with every device
 * of that gateway still waiting.
 */
#ifndef __XR_PROTO_LORAWAN_JOIN_H
#define __XR_PROTO_LORAWAN_JOIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "proto/lorawan/lorawan.h"

struct ring_buffer;

struct lw_session {
	uint64_t join_ns; /* JoinRequest to JoinAccept; 0: not joined */
	uint32_t dev_addr;
	struct lw_keys keys;
	bool requested; /* its JoinRequest left (set by lw_join_stop) */
};

struct lw_join {
	const struct lw_fleet *fleet;
	const struct xr_lora_join *stamps; /* per device, mmapped (lora_join) */
	struct ring_buffer *rb;
	struct lw_crypto *c;
	uint32_t *gw_first,
		*gw_devs; /* gateway g's devices: gw_devs[gw_first[g] .. gw_first[g + 1]) */
	struct lw_session *sessions; /* per device */
	atomic_bool stop;
	bool running;
	pthread_t tid;
	/* results */
	atomic_uint_fast64_t joined;
	uint64_t requested; /* devices whose JoinRequest left (set by lw_join_stop) */
	uint64_t accepts; /* JoinAccepts read */
	uint64_t by_trial; /* of the joined, found without the tmst */
	uint64_t duplicates; /* opened by a device already joined */
	uint64_t unmatched; /* opened by no device of the gateway */
	uint64_t malformed; /* no txpk "data" of a JoinAccept's length in the JSON */
};

/*
 * A PULL_RESP's JSON (len bytes, not terminated) to its PHYPayload (at most
 * cap bytes) and txpk.tmst when it has one. 0 or -EINVAL.
 */
int lw_pull_resp_phy(const char *json, size_t len, uint8_t *phy, size_t cap, size_t *plen,
		     bool *has_tmst, uint32_t *tmst);

/* The matcher's tables for fleet f (no thread): 0 or -ENOMEM after a one-line message. */
int lw_join_init(struct lw_join *j, const struct lw_fleet *f, const struct xr_lora_join *stamps);
/*
 * lw_join_init, then starts reading the JoinAccepts of ring_fd (lora_join_accepts) for fleet f,
 * whose devices' departures are in stamps. 0 or -errno after a one-line message.
 */
int lw_join_start(struct lw_join *j, const struct lw_fleet *f, const struct xr_lora_join *stamps,
		  int ring_fd);
/* Stops the thread after reading what the ring still holds; the results stay. */
void lw_join_stop(struct lw_join *j);
/* Time to join (JoinRequest to JoinAccept) of the joined devices: p50, p90, p99 and max in ns. */
void lw_join_latency(const struct lw_join *j, size_t ndev, uint64_t out[4]);
/* Frees what the results need too (sessions). */
void lw_join_free(struct lw_join *j);

/*
 * One JoinAccept that reached gateway gw at rx_ns: matched, opened and
 * recorded. For the thread, and for the tests.
 */
void lw_join_accept(struct lw_join *j, uint32_t gw, uint64_t rx_ns, const char *json, size_t len);

#endif
