/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdpreplay search's state: trials, goals, the search. The parts: mlr.c
 * (RFC 9971 load classification, pure), witness.c (what the server
 * received), trial.c (one trial and the bisection), report.c (text, JSON,
 * CSV, SVG); the command's options in user/cmd/search.c.
 */
#ifndef __XR_SEARCH_H
#define __XR_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "util/jstream.h"
#include "util/threshold.h"
#include "proto/proto.h"
#include "send/opts.h"

#define MAX_TRIALS 256 /* the most --max-trials allows */
#define MAX_GOALS 4

#define MAX_ATTR 48

/* ranks.c: one trial as rank 0 broadcasts it to every rank (stop: the search is over) */
struct rank_trial {
	double load; /* the whole trial's pps: each rank sends 1/N of it */
	uint64_t first_n, trial_ns;
	uint64_t start_unix_ns; /* the first departure, CLOCK_REALTIME (every rank's --start-at) */
	int32_t stop;
	uint32_t trial; /* its number, from 1 (a --warmup trial shares 1 with the first) */
};

/* What one rank's shard of a trial did, gathered to rank 0. */
struct rank_result {
	uint64_t asked, sent, witness,
		behind; /* witness: the protocol's replies when they witness */
	double p99_us; /* < 0: none */
	double start_unix; /* its first departure */
	double rx_s; /* the seconds its witness's count came over (0: the trial's) */
	uint64_t unit; /* sequence numbers that go to one shard together (shard.unit) */
	int32_t exit; /* the shard's exit status; -1 when it did not exit */
	int32_t ran; /* its JSON was read */
	char why[200]; /* when it failed: its last line on stderr */
};

extern int xr_rank, xr_nranks; /* this process's rank and how many; 0 and 1 without MPI */
int ranks_init(int *argc, char ***argv);
int ranks_bcast(struct rank_trial *t);
int ranks_gather(const struct rank_result *mine, struct rank_result *all);
void ranks_finish(void);

struct trial {
	double load; /* asked frames per second */
	uint64_t asked, sent, received;
	double loss; /* (asked - received) / asked */
	double duration_s;
	double rx_s; /* what was received came over this time (a paced trial's, to its last answer); 0: duration_s */
	double p99_us; /* gen syn: 99th percentile round trip; < 0 when unknown */
	uint64_t behind; /* frames the sender fell behind on (its own shortfall) */
	bool sender_short; /* the sender did not keep the trial's schedule: not the server's result */
	bool witness_reset; /* the witness's count went down (it restarted): nothing to read */
	/* under MPI: each rank's part (malloc'ed, nranks of them), the spread of their starts */
	struct rank_result *ranks;
	int nranks;
	bool rank_failed; /* a rank could not run its shard: failed_rank, why in ranks[] */
	int failed_rank;
	double start_skew_us;
	/*
	 * count --webhook: the witness counted this trial's own uplinks (its run
	 * in the schedule), wherever they arrived: received as is, and the
	 * latency from departure is the one its goals judge
	 */
	bool from_run;
	bool witness_webhook; /* the witness has count --webhook's figures */
	bool webhook_alone; /* and nothing else (no -i): received is the run's, not delivered's growth */
	double run_p99_us; /* < 0: no uplink of the run was timed */
	/*
	 * count --listen --server-pid: the server process's CPU seconds from the
	 * witness's read before the trial to the one after it, and as cores over
	 * that time; < 0: the witness has none
	 */
	double server_cpu_s, server_cores;
	/* count --listen: the attribution's counters, growth during the trial */
	int nattr;
	char attr_name[MAX_ATTR][32];
	uint64_t attr[MAX_ATTR];
};

struct goal {
	double loss; /* ratio, e.g. 0 for NDR, 0.005 for PDR */
	double exceed; /* MLRsearch exceed ratio: share of the duration sum allowed above the loss */
	double dsum; /* MLRsearch duration sum in s: trial time a load needs before it is judged */
	int dsum_trials; /* > 0: dsum is this many --trial durations (the default goals) */
	double pending; /* a load whose trials do not decide yet (needs another trial); 0 = none */
	double p99_us; /* > 0: a latency goal, p99 at most this (a round trip, or the webhook's latency) */
	const char *name;
	double lower, upper; /* loads; 0 = none found */
};

struct search {
	const char *witness; /* http://ADDR:PORT/, replies, cmd:COMMAND */
	const char *field; /* http: the JSON field that counts what was received */
	double min, max, width;
	uint64_t trial_ns, settle_ns;
	char **cmd; /* replay|gen ARGS..., or lorawan send ARGS..., as typed */
	int ncmd;
	/* the trial, parsed once: each trial runs a copy with its rate, duration and first n */
	const struct xr_proto *proto;
	void *proto_state;
	struct send_opts so;
	struct trial t[MAX_TRIALS];
	int nt;
	struct goal g[MAX_GOALS];
	int ng;
	uint64_t next_n; /* the next trial's first sequence number */
	bool interrupted; /* SIGINT/SIGTERM: the bounds so far are reported */
	const char *stop_why; /* why the search ended before every goal was done, or NULL */
	double max_asked; /* --max as given (max may be lowered to what the sender keeps) */
	uint64_t start_unix;
	char token[260]; /* --witness-token-file: sent as a bearer token */
	uint64_t pause_ns; /* between trials */
	uint64_t warmup_ns; /* a first trial at --min, not counted */
	int max_trials; /* --max-trials */
	uint64_t max_time_ns; /* --max-time: no trial starts after this much time; 0 = none */
	uint64_t start_ns;
	uint64_t start_margin_ns; /* under MPI: from the broadcast to the trial's start */
	bool paced; /* --msg-rate search: the load is the proto's paced rate (proto->paced_trial) */
	const char *unit; /* what the load counts, plural: frames, sessions, messages */
	struct thresholds fail_if; /* --fail-if, judged on what was found */
	struct jstream stream; /* --json-stream; f NULL without */
};

/* verdict.c: the metrics search's --fail-if names; each threshold judged, whether any failed */
extern const struct threshold_metric search_threshold_metrics[];
extern const unsigned int search_nthreshold_metrics;
bool search_thresholds_judge(const struct search *s, FILE *human, struct json *j);

/* report.c: a trial's members (inside an object); --json-stream's start, each trial, and end */
void search_trial_json(struct json *j, const struct trial *t);
int search_stream_start(struct search *s, const char *path);
void search_stream_trial(struct search *s, const struct trial *t, int i);
int search_stream_end(struct search *s);

/* mlr.c: whether a trial speaks for the server, meets a goal; the goal's bounds from every trial */
bool trial_counted(const struct trial *t);
bool search_has_latency_goal(const struct search *s);
bool trial_ok(const struct goal *g, const struct trial *t);
void classify(struct search *s, struct goal *g);
double conditional_throughput(const struct search *s, const struct goal *g);

/* What a bound stands on: the trials at a load, counted ones and the ones over the goal, and the
 * sender-short ones (tried, not counted). */
struct load_trials {
	int counted, over, short_;
};
struct load_trials trials_at(const struct search *s, const struct goal *g, double load);
int trials_expected(const struct search *s);

/*
 * witness.c: the witness's running total (and attribution), or with count
 * --webhook the uplinks of the run that began at first_n (attr->from_run);
 * "replies" has none (the trial's JSON says)
 */
int witness_read(const struct search *s, uint64_t first_n, uint64_t *v, struct trial *attr);

/*
 * trial.c: one trial at load pps (rank 0: every rank's shard of it); the
 * search for every goal; the other ranks' loop, running the trials rank 0
 * broadcasts until it says stop (trials_stop)
 */
int run_trial(struct search *s, double load, struct trial *t);
int serve_trials(struct search *s);
void trials_stop(void);
int do_search(struct search *s);

/*
 * report.c: the results as JSON, CSV, SVG and an HTML page (xdpreplay
 * report's), where asked for: 0, or -errno when one could not be written
 */
int write_results(const struct search *s, const char *json_path, const char *csv_path,
		  const char *svg_path, const char *html_path);
/* What it found, in words (report/headline.h), as its JSON's "summary" says it */
void search_headline(const struct search *s, char *buf, size_t len);

#endif
