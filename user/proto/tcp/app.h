/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An application on the TCP sessions: what the core (sessions, segments,
 * retransmission, pump, pacing) asks of the protocol that fills their
 * stream, so that it names none. gen tcp's requests and replay --sessions'
 * flows need nothing of it; gen mqtt's subscribers, responders and
 * keep-alives do (proto/mqtt/app.c). Every member may be 0 or NULL.
 */
#ifndef __XR_PROTO_TCP_APP_H
#define __XR_PROTO_TCP_APP_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

struct gen_bpf;
struct json;
struct prom;
struct tcp;
struct xr_replies_stats;

struct tcp_app {
	void *ctx;
	/* its configuration into skel's rodata and its maps sized; after load, what it maps */
	int (*before_load)(void *ctx, const struct tcp *t, struct gen_bpf *skel);
	int (*after_load)(void *ctx, const struct tcp *t, struct gen_bpf *skel);
	/*
	 * Replies of ours to what the server pushes, sent while a session reads
	 * (XR_TCP_RESPONSE): reply_len bytes each, the last reply_ring of them
	 * kept; reply number at of table slot slot written into buf.
	 */
	uint32_t reply_len, reply_ring;
	void (*reply_write)(const void *ctx, uint32_t slot, uint32_t at, uint8_t *buf);
	/* a paced session's keep-alive while it waits, and the counter of its answers */
	uint8_t ping[2];
	uint8_t ping_len;
	uint32_t pings_answered;
	/* a slot holds much of the application's state: as many slots as sessions, no spare */
	bool large_slots;
	/* sessions it ended (refused, a protocol error), and those ready for the run that waits */
	uint64_t (*ended)(const __u64 *ctr);
	uint64_t (*ready)(const __u64 *ctr);
	/* of the ended: refused by the server after the handshake, a packet not asked for */
	void (*failed)(const __u64 *ctr, uint64_t *refused, uint64_t *protocol);
	/* a row of sessions.per_second: what it counts that the second added */
	void (*second_json)(const void *ctx, const struct xr_replies_stats *now,
			    const struct xr_replies_stats *before, struct json *j);
	/* --listen: its figures so far */
	void (*live_json)(const void *ctx, const struct xr_replies_stats *r, struct json *j);
	void (*live_metrics)(const void *ctx, const struct xr_replies_stats *r, struct prom *p);
	/* the run is over (threads stopped, XDP detached): what it reads of skel */
	void (*finish)(void *ctx, struct gen_bpf *skel);
	/* what after_load mapped, unmapped */
	void (*close)(void *ctx);
};

#endif /* __XR_PROTO_TCP_APP_H */
