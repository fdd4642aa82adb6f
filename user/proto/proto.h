/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A protocol, as the sender commands see it. Each user/proto/X/ fills one
 * struct xr_proto and registers it in user/proto/registry.c; replay, gen
 * and lorawan send, search and the engine then know it by this interface
 * alone. The kernel side is bpf/proto/X.bpf.h (bpf/proto/registry.bpf.h).
 *
 * A run: the command line is parsed once into struct send_opts, the
 * protocol's own options go to parse_opt into its state; build makes the
 * frame set, adds its plan specs and sets up the engine (hook, reply kind, its
 * engine_proto for the kernel engine's maps); after the run report adds its
 * lines to the summary and its object to the JSON.
 */
#ifndef __XR_PROTO_H
#define __XR_PROTO_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/engine.h"
#include "frames/rewrite.h"
#include "util/json.h"

struct send_opts;
struct json_object;
struct words;

/*
 * Where a search trial's figures are in its JSON (struct xr_proto's
 * trial_paths); seconds: over which the witness's count came (NULL: the
 * trial's time).
 */
struct trial_paths {
	const char *witness, *latency, *asked, *sent, *behind, *seconds;
};

/* What the shared send options a protocol takes (struct send_opts, user/send/opts.c). */
enum send_opt_set {
	SO_REWRITE = 1 << 0, /* --rewrite */
	SO_DST = 1 << 1, /* --dst ADDR[:PORT] (named dst_name) */
	SO_SRC = 1 << 2, /* --src RANGE */
	SO_SPORT = 1 << 3, /* --sport LO-HI */
	SO_SIZE = 1 << 4, /* --size N */
	SO_DSTMAC = 1 << 5, /* --dst-mac MAC */
	SO_WAIT = 1 << 6, /* --wait T: replies after the last frame */
	SO_FILES = 1 << 7, /* FILE... arguments */
	SO_VLAN = 1 << 8, /* --vlan VID[:PRI] */
	SO_SEED = 1 << 9, /* --seed N: the run's keys (TCP ISNs) */
	SO_CONCURRENCY =
		1 << 10, /* --concurrency C: a closed loop of sessions (engine_proto.ended) */
};

/* The plan specs of a run: the user's --rewrite ops, then those the protocol adds (source, port, ISN). */
struct send_plan {
	struct rewrite_spec specs[XR_MAX_USER_SPECS + 3];
	int nspecs;
};

/* Ids of a protocol's own options start here (struct option.val). */
#define PROTO_OPT_BASE 1000

struct xr_proto {
	const char *name; /* gen NAME, or the command's own (capture, lorawan) */
	bool gen; /* xdpreplay gen NAME sends it */
	const char *summary; /* one line, for gen --help */
	const char *usage; /* its own options, for --help; NULL: none */
	const struct option *opts; /* its own long options, val >= PROTO_OPT_BASE; NULL-terminated */
	unsigned int accepts; /* enum send_opt_set */
	const char *dst_name; /* the destination option's name: "dst" (default) or "server" */
	uint16_t default_port; /* the destination port when --dst gives none */
	size_t state_size; /* bytes of state, zeroed before parse_opt */
	/* one of opts; arg as typed. 0 or XR_EXIT_USAGE (after a one-line message) */
	int (*parse_opt)(void *st, int id, const char *arg, const struct send_opts *so);
	/* all options parsed: what they say together. 0 or XR_EXIT_USAGE (after a one-line message) */
	int (*check)(void *st, const struct send_opts *so);
	/*
	 * The frames into fs and the engine's set-up into o (ops, reply kind,
	 * match, hook, engine_proto). 0 or -errno, printed: -EINVAL is bad input,
	 * anything else the environment.
	 */
	int (*build)(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o);
	/* frames the run sends when neither --count nor --duration says (0: the frame set once) */
	uint64_t (*default_count)(void *st, const struct send_opts *so, const struct frameset *fs);
	/* after the run: its lines (human) and its JSON members (j); either may be NULL */
	void (*report)(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		       struct json *j);
	/* what its frames are, plural, in the run's headline ("SYNs"; NULL: frames) */
	const char *frames_are;
	/*
	 * its clauses of the run's headline (report/headline.h), from the run's
	 * JSON: what the answers say (answered, sessions completed, messages
	 * taken). NULL: none
	 */
	void (*headline)(struct json_object *result, struct words *w);
	/* after the run: whether something it had to write failed (the run then exits 3) */
	bool (*failed)(void *st);
	/* after report: XR_EXIT_FAIL when the run's figures say the set-up is wrong (every
	 * CONNECT refused), after a one-line message; 0 otherwise */
	int (*verdict)(void *st);
	/*
	 * gen mqtt --pattern: the run's other end (subscribers, a responder), run
	 * by a child process on another interface (user/send/peer.c) from this
	 * run's parsed options: peer_so (a copy of so) and peer_st (zeroed) made
	 * that end's, *linger_ns how long it may go on after this run before it
	 * is stopped. 1: there is one; 0: none; XR_EXIT_USAGE after a one-line
	 * message. peer_so NULL: only whether there is one. NULL: never one.
	 */
	int (*peer)(void *st, const struct send_opts *so, struct send_opts *peer_so, void *peer_st,
		    uint64_t *linger_ns);
	/* the other end's JSON after its run (NULL: unreadable) and exit status, before report */
	void (*peer_done)(void *st, struct json_object *peer, int exit_status);
	/*
	 * A search trial's paths in its JSON when this run's are not witness,
	 * latency, asked, sent and failed_reasons.fell_behind (gen mqtt
	 * --pattern notify: the subscribers' books; a paced search: the
	 * paced requests'). NULL: those.
	 */
	void (*trial_paths)(void *st, struct trial_paths *p);
	/* the JSON path of the answers counted in the run's JSON (search --witness replies), or NULL */
	const char *witness;
	/* the JSON path of the p99 in microseconds that search --latency-goal judges (NULL: the round trip's) */
	const char *latency;
	/* what a search trial's load counts, plural (NULL: frames) */
	const char *load_unit;
	/*
	 * A search over a paced rate: the option (without its dashes) whose
	 * value "search" makes each trial's load that rate, over the trial's
	 * own --count sessions connected at its own --pps; paced_unit is what
	 * it counts. paced_trial sets the trial's rate and duration in st and
	 * so: 0, or an exit status after a one-line message.
	 */
	const char *paced_opt, *paced_unit;
	int (*paced_trial)(void *st, struct send_opts *so, double rate, uint64_t trial_ns);
	void (*free)(void *st);
};

/* The registration table (user/proto/registry.c), NULL-terminated. */
extern const struct xr_proto *const xr_protos[];
/* The protocol named name, or NULL. */
const struct xr_proto *proto_find(const char *name);

#endif
