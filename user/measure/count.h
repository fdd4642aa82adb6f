/* SPDX-License-Identifier: GPL-2.0 */
/* The server-side counter (xdpreplay count): what it is asked, parsed once by user/cmd/count.c. */
#ifndef __XR_MEASURE_COUNT_H
#define __XR_MEASURE_COUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>
#include "xdpreplay.h"
#include "measure/appwitness.h"
#include "util/threshold.h"

struct count_opts {
	const char *ifname; /* NULL: --webhook alone */
	struct xr_count_cfg cfg; /* what the XDP program matches, and --seq */
	const char *seq_spec; /* --seq as given, for the report */
	uint32_t seq_bucket; /* --seq-bucket: sequence numbers per bucket of the drops' histogram */
	uint64_t duration_ns, idle_ns;
	const char *ready, *json_path;
	const char *stream_path; /* --json-stream */
	bool use_nft, quiet;
	bool no_drop_reasons; /* --no-drop-reasons */
	bool have_listen, have_webhook;
	struct sockaddr_in listen, webhook;
	char token[260]; /* --token-file's token; empty: none */
	struct app_witness witness; /* --webhook's, made by the command (ctx NULL without) */
	uint32_t respond_body; /* --respond-body: bytes of the HTTP response's body */
	pid_t server_pid; /* --server-pid: the server process whose CPU is watched; 0: none */
	struct thresholds fail_if; /* --fail-if */
};

/* What count read from its program's maps. */
struct count_totals {
	uint64_t seen, matched, bytes, passed, dropped, first_ns, last_ns;
	bool respond; /* --respond: rsp holds what the XDP server answered */
	struct xr_respond_stats rsp;
};

/* --seq: the flows' sequence numbers summed */
struct seq_totals {
	uint64_t flows, received, lost, dup, reordered, too_late, untracked;
};

/*
 * --respond's answer: an HTTP/1.1 200 whose body is `body` bytes of 'x',
 * into buf (XR_RESPOND_MAX bytes of room); its length, or -1 when longer.
 */
int respond_http(uint8_t *buf, uint32_t body);

/* Counts until --duration, --idle or a signal, then reports. The exit status. */
int count_run(const struct count_opts *co);

#endif
