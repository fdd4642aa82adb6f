/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server's kernel drops by reason (bpf/drops.bpf.c): attached beside
 * count's XDP counter for its namespace and filter; reason names from the
 * running kernel's BTF, unspecific drops by kernel location (kallsyms).
 * Without the tracepoints count falls back to its counters and says so.
 */
#ifndef __XR_MEASURE_DROPS_H
#define __XR_MEASURE_DROPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "util/json.h"
#include "xdpreplay.h"

struct drops;

/* The totals of a run (or of a live read): by direction and reason. */
struct drops_totals {
	uint64_t dropped[2][XR_DROP_REASONS];
	uint64_t in_total, out_total; /* dropped, summed; in_total has the listen drops too */
	bool books; /* the sockets' side was traced: the figures below are there */
	uint64_t delivered_udp; /* datagrams the application read */
	uint64_t queued_udp; /* and the ones still in its sockets */
	uint64_t delivered_tcp; /* segments TCP sockets took */
	uint64_t listen_dropped; /* SYNs a listener refused: freed as consumed, in ListenDrops */
	uint64_t pre_xdp; /* inbound, freed before the counter's XDP program saw them (veth_xmit) */
};

/*
 * Loads and attaches the tracer for namespace netns_ino, the counted
 * interface's IPv4 local_addr (network order; 0: every skb counts as
 * inbound) and count's filter; with its --seq, the sequence numbers of the
 * drops in buckets of seq_bucket. NULL, after one line saying why, when this
 * kernel cannot (the report then says the reasons are unavailable).
 */
/*
 * How many arguments the kernel's skb:kfree_skb tracepoint has (its BTF): 4
 * with rx_sk, 3 with the drop reason (5.17 on), 2 before; or -errno.
 */
int drops_tracepoint_args(void);
/*
 * Whether count's drop tracer loads and attaches here (then detached): 0,
 * -EOPNOTSUPP when the tracepoint carries no reason (before 5.17), or -errno;
 * *books: with the programs that trace deliveries to sockets too.
 */
int drops_probe(bool *books);
struct drops *drops_open(uint32_t netns_ino, uint32_t local_addr, const struct xr_count_cfg *cfg,
			 uint32_t seq_bucket);
void drops_close(struct drops *d);
/* listen_drops: the kernel's TcpExt ListenDrops over the same time (the refused SYNs have no reason) */
int drops_read(struct drops *d, uint64_t listen_drops, struct drops_totals *t);
/* The reason's name ("NO_SOCKET"), or "REASON_n" when the kernel's BTF has none. */
const char *drops_reason_name(const struct drops *d, unsigned int r);

/* "  kernel drops by reason: ...": the reasons that counted, the locations of the unspecific ones. */
void drops_report(struct drops *d, const struct drops_totals *t, FILE *f);
/* "drops": {"inbound": {...}, "outbound": {...}, "inbound_total", ..., "locations": [...]} */
void drops_json(struct drops *d, const struct drops_totals *t, struct json *j);
/* xdpreplay_drops_total{reason=...,direction=...}, xdpreplay_delivered_total, xdpreplay_unattributed */
struct prom;
void drops_metrics(struct drops *d, const struct drops_totals *t, uint64_t passed, struct prom *p);

/* With count --seq: which sequence numbers died, per peer and reason, in ranges of buckets. */
void drops_seq_report(struct drops *d, FILE *f);
/* "drops_bucket": N, "drops": [{"peer", "port", "proto", "reason", "first", "last", "dropped"}] */
void drops_seq_json(struct drops *d, struct json *j);

/* passed (what count's XDP program let up) - delivered - dropped inbound: 0 when the books balance */
int64_t drops_unattributed(const struct drops_totals *t, uint64_t passed);
/* "    books: passed ... = delivered ... + dropped ... + unattributed N" */
void drops_books(const struct drops_totals *t, uint64_t passed, FILE *f);
/* "delivered": N, "books": {...}; nothing when the sockets' side is not traced */
void drops_books_json(const struct drops_totals *t, uint64_t passed, struct json *j);

#endif
