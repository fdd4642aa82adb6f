/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options every sender command shares (replay, gen, lorawan send, and
 * search for its trials), parsed once from one table into struct send_opts.
 * Nothing here is text to parse again: search sets a trial's rate, duration
 * and first sequence number in a copy and runs it.
 */
#ifndef __XR_SEND_OPTS_H
#define __XR_SEND_OPTS_H

#include "util/threshold.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include "frames/template.h"
#include "proto/proto.h"

#define XR_MAX_SHARDS 65536

enum send_engine { SEND_ENGINE_AUTO, SEND_ENGINE_KERNEL, SEND_ENGINE_XSK };
/* --backoff: auto spins where a veth peer's NAPI runs in threads */
enum send_backoff { SEND_BACKOFF_AUTO, SEND_BACKOFF_SPIN, SEND_BACKOFF_SKIP };

struct send_opts {
	const char *cmd; /* as the user typed it: "replay", "gen syn", "lorawan send" */
	int argc; /* the command line, for the JSON */
	char **argv;
	const char *ifname;
	enum send_engine engine;
	enum xr_pace pace;
	double pps; /* XR_PACE_RATE from --pps */
	double rate_bps; /* XR_PACE_RATE from --rate: pps follows from the frames' mean size */
	double multiplier; /* XR_PACE_PCAP */
	uint64_t count; /* --count; 0 = not given */
	uint64_t duration_ns; /* --duration; 0 = none */
	unsigned int threads, batch;
	enum send_backoff backoff;
	uint64_t first_n;
	unsigned int shard, shards; /* --shard I/N; shards 1 when not given */
	bool have_seed;
	uint64_t seed; /* --seed: the run's keys (TCP ISNs) from it instead of at random */
	const char *netns; /* --netns: a name under /run/netns, or a path */
	uint64_t start_unix_ns; /* --start-at: CLOCK_REALTIME of the first departure; 0 = at once */
	uint64_t reply_wait_ns; /* --wait */
	uint64_t concurrency; /* --concurrency: sessions open at once (0: an open loop, as paced) */
	const char *json_path;
	const char *spectrum_path; /* --latency-spectrum: the round trips' spectrum (.hgrm) */
	const char *stream_path; /* --json-stream: a JSON object per line as the run goes */
	const char *hlog_path; /* --latency-log: an HdrHistogram interval log of the round trips */
	const char *pcap_out; /* --pcap-out: write the frames instead of sending them */
	bool quiet;
	bool have_listen;
	struct sockaddr_in listen;
	bool have_token;
	char token[260];
	struct send_plan plan; /* --rewrite: the user's specs */
	struct template_net net; /* --dst, --src, --sport, --size, --dst-mac */
	bool search; /* parsed for search's trials: each sets its rate, time and first number */
	unsigned int trial; /* a search's trial (from 1) for --listen's labels; 0: none */
	struct thresholds fail_if; /* --fail-if EXPR... (send/verdict.h) */
	char **files; /* FILE... (SO_FILES) */
	int nfiles;
};

/*
 * Parses argv (argv[0] is the command) into so, and p's own options into st
 * (p->state_size bytes, zeroed here). usage prints the command's --help.
 * Returns -1 to go on, or the exit status (0 after --help).
 */
int send_opts_parse(struct send_opts *so, const struct xr_proto *p, void *st, int argc, char **argv,
		    void (*usage)(FILE *f, const struct xr_proto *p));

/* The shared options' help, for each command's --help. */
extern const char send_opts_help[];

#endif
