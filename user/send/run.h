/* SPDX-License-Identifier: GPL-2.0 */
/* One sender run: a protocol's frames through an engine, accounted for and reported. */
#ifndef __XR_SEND_RUN_H
#define __XR_SEND_RUN_H

#include "send/opts.h"

#define WIRE_OVERHEAD 24 /* FCS 4 + preamble 8 + inter-frame gap 12 */

/* What a run has besides its options: its other end (user/send/peer.c), or its being one. */
struct send_env {
	struct send_peer *peer; /* the run's other end in a child process (NULL: none) */
	int ready_fd; /* the other end's: written once its sessions are ready (0: none) */
};

/*
 * Builds p's frames (state st, options so), runs them and reports (env: NULL,
 * or what it has besides). Returns the exit status: 0 all sent, 1 some not
 * sent, 3 environment, 4 interrupted.
 */
int send_run(const struct send_opts *so, const struct xr_proto *p, void *st,
	     const struct send_env *env);

struct engine_opts;
struct frameset;
/*
 * --pcap-out: writes the frames of the run o describes to so->pcap_out instead
 * of sending them (dryrun.c). 0, -EOPNOTSUPP (a protocol that builds frames in
 * BPF), or -errno after one line.
 */
int send_pcap_out(const struct send_opts *so, const struct engine_opts *o,
		  const struct frameset *fs);

/* The summary of a run, and its JSON (send/report.c). */
struct send_report {
	const struct send_opts *so;
	const struct xr_proto *p;
	void *st;
	const struct engine_opts *o;
	const struct engine_result *res;
	const struct send_plan *plan;
	size_t frames; /* in the set */
	uint64_t ready_ns; /* from the command's start to the first departure */
	double start_unix;
	/* --shard: the whole run's count and pps (o has this shard's) */
	uint64_t whole_count;
	double whole_pps;
	char headline[512]; /* send_headline's: what the run did, in words */
};
/* The run's headline (report/headline.h), from its JSON, into r->headline ("" when none) */
void send_headline(struct send_report *r);
void send_summary(const struct send_report *r, FILE *f);
void send_json(const struct send_report *r, FILE *f);

/*
 * send_run with the protocol's other end of the run, if it has one
 * (user/send/peer.c): started and ready before, ended after.
 */
int send_run_with_peer(const struct send_opts *so, const struct xr_proto *p, void *st);

/* Runs a parsed command: send_opts_parse, then send_run_with_peer. For cmd/ (replay, gen, lorawan send). */
int send_command(const char *cmd, const struct xr_proto *p, int argc, char **argv,
		 void (*usage)(FILE *f, const struct xr_proto *p));

#endif
