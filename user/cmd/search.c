// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay search: the highest load a server takes within a loss goal.
 *
 * Each trial runs the trial's sender (replay, gen PROTO or lorawan send,
 * parsed here once with the shared send options) at one rate for one trial
 * duration, then reads what the server received from a witness: a counter
 * over HTTP (xdpreplay count --listen), the answers the protocol counted
 * (--witness replies: its witness field), or a command that prints a number.
 *
 * The search is MLRsearch-style bisection (RFC 9971's vocabulary, a subset of
 * its method): each goal is a loss ratio (or a p99 latency) with an exceed
 * ratio and a duration sum; a load is classified from all its trials
 * (user/search/mlr.c); the interval between the relevant bounds is halved
 * until it is narrower than the width. Trial results are shared between
 * goals. Not implemented: trial duration escalation.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd/cli.h"
#include "util/time.h"
#include "measure/httpd.h"
#include "search/search.h"
#include "util/log.h"
#include "util/units.h"

/* the trial's own --help is its command's */
static void trial_usage(FILE *f, const struct xr_proto *p)
{
	fprintf(f, "the trial's options: see 'xdpreplay %s --help'\n", p->gen ? "gen" : p->name);
}

/* Whether argv[1..argc) has arg before a "--" */
static bool has_arg(int argc, char **argv, const char *arg)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], arg))
			return true;
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay search [options] -- replay|gen|lorawan send ARGS...\n"
		"\n"
		"Finds the highest load the server takes within each loss goal: trials of ARGS at\n"
		"chosen rates (--pps and --duration are added; gen mqtt --msg-rate search and gen\n"
		"tcp --request-rate search: that rate over the trial's own --count sessions),\n"
		"each read from a witness of what the server received, bisected until the bounds\n"
		"are within --width of each other.\n"
		"Loss is counted against the frames asked for, so the sender's own shortfall\n"
		"counts too (a trial says \"sender short\").\n"
		"\n"
		"Options:\n"
		"      --witness W      http://ADDR:PORT/ (xdpreplay count --listen on the server, or\n"
		"                       count --webhook: each trial's uplinks that reached the\n"
		"                       application, wherever they arrived),\n"
		"                       replies (the SYN-ACKs of gen syn, the PUSH_ACKs of lorawan\n"
		"                       send), or cmd:COMMAND (prints a\n"
		"                       running count of frames received)\n"
		"      --witness-field F  with an http witness: the JSON field that counts what was\n"
		"                       received (default delivered: what the server's sockets\n"
		"                       took, past every drop; matched, what reached its XDP hook,\n"
		"                       where the counter has no deliveries; e.g. kernel.Udp.NoPorts);\n"
		"                       every attribution counter and drop reason that grows during\n"
		"                       a trial is shown with it\n"
		"      --goal NAME=LOSS[,exceed=X][,dsum=T]  a loss ratio goal (repeatable; default\n"
		"                       NDR=0 and PDR=0.005, both exceed=0.5 and dsum 3 trials, as\n"
		"                       FD.io CSIT: one trial on a busy host decides nothing); with\n"
		"                       RFC 9971's exceed ratio X (default 0) and duration sum T a\n"
		"                       load gets trials until T is judged, and passes while at\n"
		"                       most X of it is above the loss ratio\n"
		"      --latency-goal NAME=T  highest load whose p99 stays within T, with\n"
		"                       --witness replies: gen syn's round trip, gen tcp's response\n"
		"                       time (request to last byte), gen mqtt's burst to its\n"
		"                       answer (--pattern notify: publish to delivery), paced\n"
		"                       ones from their departure; with an http witness that is\n"
		"                       count --webhook (and the trial's --schedule): the uplinks'\n"
		"                       latency from departure to the application; e.g. p99=10ms\n"
		"      --preset P       default, quick (0.5 s trials, 2%% width) or rfc2544 (60 s\n"
		"                       trials, zero loss)\n"
		"      --min R, --max R loads to search between (default 1k and 1M frames/s)\n"
		"      --width W        relative width of the final interval (default 0.005)\n"
		"      --trial T        trial duration (default 1s)\n"
		"      --settle T       wait after a trial before reading the witness (default 300ms):\n"
		"                       frames still in queues and backlogs are counted\n"
		"      --pause T        between trials (e.g. to let a server's queues drain)\n"
		"      --witness-token-file F  an http witness's bearer token (count --token-file)\n"
		"      --warmup T       first a trial of T at --min, not counted (warms caches, ARP,\n"
		"                       connection tracking)\n"
		"      --fail-if EXPR   exit 5 when what was found meets EXPR (repeatable): limit\n"
		"                       (the goals' lowest lower bound) < RATE or < F*target (F of\n"
		"                       --max), short_trials (the sender fell short) > N. E.g.\n"
		"                       --fail-if 'limit<50k' --fail-if 'short_trials>0'\n"
		"      --max-trials N   at most N trials (default 128, at most 256)\n"
		"      --max-time T     no trial starts after T (default 30m); either limit reports\n"
		"                       the bounds so far and why it stopped\n"
		"      --json [FILE], --csv FILE, --svg FILE   results (no FILE: standard output), every trial, a plot\n"
		"      --html FILE      the results as one self-contained page (xdpreplay report's)\n"
		"      --json-stream FILE|-  one JSON object per line as the search goes: start\n"
		"                       (system, settings), each trial as it ends, end (the --json result)\n"
		"\n"
		"A trial whose sender fell behind its schedule is marked SENDER SHORT, tried once\n"
		"more, and never classified; a second one at the same load lowers the searched\n"
		"maximum to what the sender keeps. Ctrl-C stops the search and still writes the\n"
		"bounds found so far (text, JSON, CSV, SVG).\n"
		"\n"
		"Many senders (built with MPI): under 'mpiexec -n N', rank 0 searches and every\n"
		"rank sends its shard of each trial (the trial's --shard RANK/N: 1/N of the load,\n"
		"its own sources), all from one start time (clocks synchronised across hosts);\n"
		"the figures are the ranks' sums. A rank that cannot send flags the trial (RANK R\n"
		"FAILED, with its reason), and a second time at the load ends the search. Each\n"
		"rank may give its own trial options (mpiexec's ':'), e.g. its own --netns.\n"
		"\n"
		"Exit status: 0 every goal found, 1 the search ended early (trial limit, the\n"
		"sender cannot offer --min, a rank cannot send), 2 bad usage, 3 the environment (a trial or the witness\n"
		"failed), 4 interrupted, 5 a --fail-if threshold failed.\n"
		"\n"
		"Examples:\n"
		"  xdpreplay search --witness http://198.18.0.2:9100/ --max 2M -- replay -i eth1 frame.pcap\n"
		"  xdpreplay search --witness replies --goal p=0.001 -- gen syn -i eth1 --dst 198.18.0.2:80\n"
		"  xdpreplay search --witness replies --latency-goal p99=10ms -- gen syn -i eth1 --dst 198.18.0.2:80\n"
		"  xdpreplay search --witness replies --latency-goal p99=10ms --max 100k -- gen tcp -i eth1 \\\n"
		"      --dst 198.18.0.2 --src 198.18.64.0/23 --http 'GET /'\n"
		"  xdpreplay search --witness replies --latency-goal p99=10ms --max 200k -- gen mqtt -i eth1 \\\n"
		"      --dst 198.18.0.2 --qos 1 --count 100 --msg-rate search\n"
		"  xdpreplay search --witness replies --max 100k -- lorawan send -i eth1 --fleet f/ --server 198.18.0.2\n"
		"  xdpreplay search --witness http://198.18.0.2:8090/ --latency-goal p99=15s --trial 3m \\\n"
		"      --pause 1m --max 5k -- lorawan send -i eth1 --fleet f/ --server 198.18.0.2 --schedule s.json\n"
		"  mpiexec -hosts gen1,gen2,gen3 -n 3 xdpreplay search --witness replies --max 10M -- \\\n"
		"      gen syn -i eth1 --dst 198.18.0.2:80 --src 198.18.64.1-198.18.64.240 --seed 7741\n");
}

enum {
	O_WITNESS = 256,
	O_GOAL,
	O_PRESET,
	O_MIN,
	O_MAX,
	O_WIDTH,
	O_TRIAL,
	O_SETTLE,
	O_JSON,
	O_STREAM,
	O_CSV,
	O_SVG,
	O_HTML,
	O_FIELD,
	O_LATENCY,
	O_PAUSE,
	O_WARMUP,
	O_MAX_TRIALS,
	O_FAIL_IF,
	O_MAX_TIME,
	O_TOKEN
};

static const struct option search_opts[] = {
	{ "witness", required_argument, NULL, O_WITNESS },
	{ "goal", required_argument, NULL, O_GOAL },
	{ "witness-field", required_argument, NULL, O_FIELD },
	{ "latency-goal", required_argument, NULL, O_LATENCY },
	{ "preset", required_argument, NULL, O_PRESET },
	{ "min", required_argument, NULL, O_MIN },
	{ "max", required_argument, NULL, O_MAX },
	{ "width", required_argument, NULL, O_WIDTH },
	{ "trial", required_argument, NULL, O_TRIAL },
	{ "settle", required_argument, NULL, O_SETTLE },
	{ "pause", required_argument, NULL, O_PAUSE },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "max-trials", required_argument, NULL, O_MAX_TRIALS },
	{ "fail-if", required_argument, NULL, O_FAIL_IF },
	{ "max-time", required_argument, NULL, O_MAX_TIME },
	{ "witness-token-file", required_argument, NULL, O_TOKEN },
	{ "json", optional_argument, NULL, O_JSON },
	{ "json-stream", required_argument, NULL, O_STREAM },
	{ "csv", required_argument, NULL, O_CSV },
	{ "svg", required_argument, NULL, O_SVG },
	{ "html", required_argument, NULL, O_HTML },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* Where the results go (NULL: not asked for) */
struct search_outputs {
	const char *json, *csv, *svg, *html, *stream;
};

/* The goals' names, which struct goal points into */
static char goal_names[MAX_GOALS][32];

/* --goal NAME=LOSS[,exceed=X][,dsum=T]: the next goal. 0, or XR_EXIT_USAGE after a line. */
static int parse_loss_goal(struct search *s, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char lossbuf[32], *comma;
	double v, exceed = 0;
	uint64_t dsum = 0;

	snprintf(lossbuf, sizeof(lossbuf), "%s", eq ? eq + 1 : "");
	comma = strchr(lossbuf, ',');
	if (comma)
		*comma = 0;
	/* optional ,exceed=X,dsum=T (RFC 9971's goal exceed ratio and duration sum) */
	for (const char *p = eq ? strchr(eq, ',') : NULL; p; p = strchr(p + 1, ',')) {
		char val[32];

		if (sscanf(p, ",exceed=%31[^,]", val) == 1 && !parse_number(val, &exceed) &&
		    exceed < 1)
			continue;
		if (sscanf(p, ",dsum=%31[^,]", val) == 1 && !parse_duration(val, &dsum))
			continue;
		eq = NULL;
		break;
	}
	if (!eq || eq == arg || eq - arg >= 32 || s->ng >= MAX_GOALS || parse_number(lossbuf, &v) ||
	    v >= 1) {
		return cli_usage_error("search",
				       "--goal: '%s' is not NAME=LOSS[,exceed=X][,dsum=T] "
				       "(e.g. PDR=0.005)",
				       arg);
	}
	snprintf(goal_names[s->ng], sizeof(goal_names[0]), "%.*s", (int)(eq - arg), arg);
	s->g[s->ng] = (struct goal){ .loss = v,
				     .exceed = exceed,
				     .dsum = dsum / 1e9,
				     .name = goal_names[s->ng] };
	s->ng++;
	return 0;
}

/* --latency-goal NAME=DURATION: the next goal. 0, or XR_EXIT_USAGE after a line. */
static int parse_latency_goal(struct search *s, const char *arg)
{
	const char *eq = strchr(arg, '=');
	uint64_t ns;

	if (!eq || eq == arg || eq - arg >= 32 || s->ng >= MAX_GOALS ||
	    parse_duration(eq + 1, &ns) || !ns) {
		return cli_usage_error(
			"search", "--latency-goal: '%s' is not NAME=DURATION (e.g. p99=10ms)", arg);
	}
	snprintf(goal_names[s->ng], sizeof(goal_names[0]), "%.*s", (int)(eq - arg), arg);
	s->g[s->ng] = (struct goal){ .p99_us = ns / 1e3, .name = goal_names[s->ng] };
	s->ng++;
	return 0;
}

/* One of the search's own options. -1 (taken), or the exit status (bad usage, or --help). */
static int parse_opt(struct search *s, int opt, int argc, char **argv, struct search_outputs *out)
{
	switch (opt) {
	case O_WITNESS: s->witness = optarg; break;
	case O_GOAL: return parse_loss_goal(s, optarg) ?: -1;
	case O_FIELD: s->field = optarg; break;
	case O_LATENCY: return parse_latency_goal(s, optarg) ?: -1;
	case O_PRESET:
		if (!strcmp(optarg, "quick")) {
			s->trial_ns = 500000000ULL;
			s->width = 0.02;
		} else if (!strcmp(optarg, "rfc2544")) {
			s->trial_ns = 60000000000ULL;
			s->ng = 1;
			s->g[0] = (struct goal){ .loss = 0, .name = "NDR" };
		} else if (strcmp(optarg, "default")) {
			return cli_usage_error("search",
					       "--preset: '%s' is not default, quick or rfc2544",
					       optarg);
		}
		break;
	case O_MIN:
		if (cli_number("search", "min", optarg, &s->min))
			return XR_EXIT_USAGE;
		break;
	case O_MAX:
		if (cli_number("search", "max", optarg, &s->max))
			return XR_EXIT_USAGE;
		break;
	case O_WIDTH:
		if (cli_number("search", "width", optarg, &s->width) || s->width <= 0 ||
		    s->width >= 1) {
			return cli_usage_error("search", "--width must be between 0 and 1");
		}
		break;
	case O_TRIAL:
		if (cli_duration("search", "trial", optarg, &s->trial_ns))
			return XR_EXIT_USAGE;
		break;
	case O_SETTLE:
		if (cli_duration("search", "settle", optarg, &s->settle_ns))
			return XR_EXIT_USAGE;
		break;
	case O_PAUSE:
		if (cli_duration("search", "pause", optarg, &s->pause_ns))
			return XR_EXIT_USAGE;
		break;
	case O_WARMUP:
		if (cli_duration("search", "warmup", optarg, &s->warmup_ns))
			return XR_EXIT_USAGE;
		break;
	case O_FAIL_IF:
		if (threshold_add(&s->fail_if, "search", optarg, search_threshold_metrics,
				  search_nthreshold_metrics))
			return XR_EXIT_USAGE;
		break;
	case O_MAX_TRIALS: {
		uint64_t n;

		if (cli_count("search", "max-trials", optarg, &n))
			return XR_EXIT_USAGE;
		if (n < 1 || n > MAX_TRIALS)
			return cli_usage_error("search", "--max-trials must be between 1 and %d",
					       MAX_TRIALS);
		s->max_trials = n;
		break;
	}
	case O_MAX_TIME:
		if (cli_duration("search", "max-time", optarg, &s->max_time_ns))
			return XR_EXIT_USAGE;
		break;
	case O_TOKEN:
		if (httpd_read_token(optarg, s->token, sizeof(s->token)))
			return XR_EXIT_USAGE;
		break;
	case O_JSON: out->json = cli_json_path(argc, argv, optarg); break;
	case O_STREAM: out->stream = optarg; break;
	case O_CSV: out->csv = optarg; break;
	case O_SVG: out->svg = optarg; break;
	case O_HTML: out->html = optarg; break;
	case 'v': xr_verbosity++; break;
	case 'h': usage(stdout); return XR_EXIT_OK;
	default: return cli_bad_option("search", argv, opt);
	}
	return -1;
}

/*
 * The trial after "--" (argv[optind..)): its protocol, what it may not set
 * (the search's), what the witness and the load count. 0, or XR_EXIT_USAGE
 * after a line.
 */
static int trial_find(struct search *s, int argc, char **argv)
{
	if (optind < argc && !strcmp(argv[optind], "replay"))
		s->proto = proto_find(has_arg(argc - optind, argv + optind, "--sessions") ?
					      "sessions" :
					      "capture");
	else if (optind + 1 < argc && !strcmp(argv[optind], "gen"))
		s->proto = proto_find(argv[optind + 1]);
	else if (optind + 1 < argc && !strcmp(argv[optind], "lorawan") &&
		 !strcmp(argv[optind + 1], "send"))
		s->proto = proto_find("lorawan");
	if (!s->proto || (!strcmp(argv[optind], "gen") && !s->proto->gen))
		return cli_usage_error(
			"search", "give the trial after --: replay ARGS..., gen PROTO ARGS... or "
				  "lorawan send ARGS...");
	if (!s->witness || (strncmp(s->witness, "http://", 7) && strcmp(s->witness, "replies") &&
			    strncmp(s->witness, "cmd:", 4))) {
		return cli_usage_error(
			"search", "--witness http://ADDR:PORT/, replies or cmd:COMMAND is needed");
	}
	if (s->min <= 0 || s->min >= s->max)
		return cli_usage_error("search", "--min must be above 0 and below --max");
	s->unit = s->proto->load_unit ?: "frames";
	/* --msg-rate search: the trials pace that rate over their own --count sessions */
	if (s->proto->paced_opt) {
		char opt[40], eq[48];

		snprintf(opt, sizeof(opt), "--%s", s->proto->paced_opt);
		snprintf(eq, sizeof(eq), "%s=search", opt);
		for (int i = optind + 1; i < argc; i++)
			if (!strcmp(argv[i], eq) || (!strcmp(argv[i], opt) && i + 1 < argc &&
						     !strcmp(argv[i + 1], "search")))
				s->paced = true;
		if (s->paced)
			s->unit = s->proto->paced_unit;
		if (s->paced && xr_nranks > 1)
			return cli_usage_error("search",
					       "%s search: one sender, not under MPI for now", opt);
	}
	for (int i = optind + 1; i < argc; i++) {
		/* a paced search's sessions and their connection rate are the trial's own */
		if (s->paced && (!strcmp(argv[i], "--count") || !strcmp(argv[i], "--pps")))
			continue;
		if (s->paced && !strcmp(argv[i], "--wait"))
			return cli_usage_error(
				"search",
				"--%s search: a trial counts what is answered by its "
				"schedule's end and --settle (the search's), not --wait",
				s->proto->paced_opt);
		if (!strcmp(argv[i], "--pps") || !strcmp(argv[i], "--rate") ||
		    !strcmp(argv[i], "--duration") || !strcmp(argv[i], "--count") ||
		    !strcmp(argv[i], "--topspeed") || !strcmp(argv[i], "--json") ||
		    !strcmp(argv[i], "--fail-if")) {
			return cli_usage_error("search", "the trial's %s is the search's to set",
					       argv[i]);
		}
	}
	/* the replies witness counts the answers a protocol counts itself: nothing else answers a trial */
	if (!strcmp(s->witness, "replies") && !s->proto->witness) {
		char names[128] = "";

		for (const struct xr_proto *const *q = xr_protos; *q; q++)
			if ((*q)->witness)
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s%s", names[0] ? ", " : "", (*q)->gen ? "gen " : "",
					 (*q)->gen			 ? (*q)->name :
					 !strcmp((*q)->name, "sessions") ? "replay --sessions" :
									   "lorawan send");
		return cli_usage_error(
			"search",
			"--witness replies counts the answers of %s; for %s use "
			"http://ADDR:PORT/ (count --listen on the server) or cmd:COMMAND",
			names, argv[optind]);
	}
	return 0;
}

/*
 * The goals whole: the default loss goals unless the user gave some, each
 * one's duration sum. 0, or XR_EXIT_USAGE after a line.
 */
static int goals_complete(struct search *s)
{
	int loss_goals = 0;

	for (int gi = 0; gi < s->ng; gi++) {
		if (s->g[gi].p99_us > 0 && !strncmp(s->witness, "cmd:", 4))
			return cli_usage_error(
				"search",
				"--latency-goal needs --witness replies (the round trips of gen "
				"syn or lorawan send, the response times of gen tcp) or an http "
				"witness that is count --webhook (uplinks' latency from departure)");
		loss_goals += s->g[gi].p99_us <= 0;
	}
	/* the default loss goals stay unless the user gave loss goals of their own */
	if (!loss_goals) {
		if (s->ng + 2 > MAX_GOALS)
			return cli_usage_error("search",
					       "at most %d goals with the default NDR and PDR",
					       MAX_GOALS - 2);
		memmove(&s->g[2], &s->g[0], s->ng * sizeof(s->g[0]));
		/*
		 * RFC 9971's exceed ratio and duration sum, as FD.io CSIT's defaults:
		 * a load is judged on three trials' time, and passes while at most half
		 * of it is above the loss, so that one trial on a busy host decides
		 * nothing
		 */
		s->g[0] =
			(struct goal){ .loss = 0, .exceed = 0.5, .dsum_trials = 3, .name = "NDR" };
		s->g[1] = (struct goal){ .loss = 0.005,
					 .exceed = 0.5,
					 .dsum_trials = 3,
					 .name = "PDR" };
		s->ng += 2;
		if (s->ng > 2)
			fprintf(stderr,
				"search: with the default goals NDR (loss 0) and PDR (loss 0.5%%)\n");
	}
	/* without a duration sum, one trial judges a load */
	for (int gi = 0; gi < s->ng; gi++) {
		if (s->g[gi].dsum_trials)
			s->g[gi].dsum = s->g[gi].dsum_trials * (s->trial_ns / 1e9);
		if (s->g[gi].dsum < s->trial_ns / 1e9)
			s->g[gi].dsum = s->trial_ns / 1e9;
	}
	return 0;
}

/*
 * The trial's options, parsed once (a bad one fails here, before any trial);
 * replay --sessions' without the mode into *trial_argv (freed by the caller).
 * 0, or the exit status after a line.
 */
static int trial_parse(struct search *s, int argc, char **argv, char ***trial_argv)
{
	int skip = strcmp(argv[optind], "replay") ? 2 : 1, targc = argc - optind - skip + 1, err;
	bool sessions = !strcmp(s->proto->name, "sessions");
	char **targv = argv + optind + skip - 1, cmdname[32];

	snprintf(cmdname, sizeof(cmdname), "%s%s%s", argv[optind], skip == 2 ? " " : "",
		 skip == 2 ? argv[optind + 1] :
		 sessions  ? " --sessions" :
			     "");
	if (sessions) {
		/* replay's mode chose the protocol: its options are the rest */
		*trial_argv = calloc(targc + 1, sizeof(**trial_argv));
		if (!*trial_argv)
			return XR_EXIT_ENV;
		for (int i = 0, j = 0, seen = 0; i < targc; i++)
			if (seen || strcmp(targv[i], "--sessions"))
				(*trial_argv)[j++] = targv[i];
			else
				seen = 1;
		targv = *trial_argv;
		targc--;
	}
	s->so.cmd = strdup(cmdname);
	s->proto_state = s->proto->state_size ? calloc(1, s->proto->state_size) : NULL;
	if (!s->so.cmd || (s->proto->state_size && !s->proto_state))
		return XR_EXIT_ENV;
	/* argv[0] of the trial is its command: the last word of its name */
	s->so.search = true;
	err = send_opts_parse(&s->so, s->proto, s->proto_state, targc, targv, trial_usage);
	xr_cmd = "search";
	if (err >= 0)
		return err ? err : XR_EXIT_USAGE;
	/* each trial starts its own other end: under MPI, each rank's would be apart */
	if (xr_nranks > 1 && s->proto->peer &&
	    s->proto->peer(s->proto_state, &s->so, NULL, NULL, NULL)) {
		return cli_usage_error("search",
				       "--pattern: its other end (subscribers, a "
				       "responder) runs beside one sender, not under MPI");
	}
	/*
	 * each shard's search would choose its own loads: nothing would add
	 * up; under MPI a rank's shard is its rank
	 */
	if (s->so.concurrency)
		return cli_usage_error("search", "--concurrency: a closed loop has no rate for a "
						 "search to vary; give the trial none");
	/* a paced trial's sessions each get one paced request at least */
	if (s->paced && s->so.count > s->min * (s->trial_ns / 1e9))
		return cli_usage_error(
			"search",
			"--%s search: --min %g x --trial %.3g s is %g %s, fewer than "
			"--count %llu: every session is paced once a trial at least, so "
			"the lowest trials would ask for more than their rate; raise "
			"--min or --trial, or lower --count",
			s->proto->paced_opt, s->min, s->trial_ns / 1e9,
			s->min * (s->trial_ns / 1e9), s->proto->paced_unit,
			(unsigned long long)s->so.count);
	/* the lowest and the highest trial must be possible (each is set again in its trial) */
	if (s->paced) {
		struct send_opts so = s->so;

		err = s->proto->paced_trial(s->proto_state, &so, s->max, s->trial_ns) ?:
			      s->proto->paced_trial(s->proto_state, &so, s->min, s->trial_ns);
		if (err)
			return err;
	}
	if (s->so.shards > 1)
		return cli_usage_error("search",
				       "--shard: the shards of a trial must share its load and "
				       "start: run the search under MPI (mpiexec -n N xdpreplay "
				       "search ...), where each rank sends its shard");
	return 0;
}

/* What the search found, goal by goal, with the trials each bound stands on */
static void print_bounds(struct search *s)
{
	char a[16], b[16], c[16], d[16];

	for (int gi = 0; gi < s->ng; gi++) {
		struct goal *g = &s->g[gi];
		char lim[32];
		double rx;

		classify(s, g);
		if (g->p99_us > 0)
			snprintf(lim, sizeof(lim), "p99 <= %s",
				 fmt_duration((uint64_t)(g->p99_us * 1e3), d, sizeof(d)));
		else
			snprintf(lim, sizeof(lim), "loss <= %g", g->loss);
		rx = conditional_throughput(s, g);
		fprintf(stderr, "%s (%s): lower bound %s %s/s (received %s/s), upper bound %s%s\n",
			g->name, lim, fmt_si(g->lower, a, sizeof(a)), s->unit,
			fmt_si(rx, c, sizeof(c)),
			g->upper ? fmt_si(g->upper, b, sizeof(b)) : "none",
			g->lower < s->max ?
				"" :
				/* TCP loses nothing: a server past its limit answers later, not less */
				rx < 0.9 * g->lower ?
				" (nothing lost at the most offered, but it came slower: a "
				"server that makes senders wait; give --latency-goal)" :
				" (the server was never saturated: the lower bound is the "
				"most offered)");
		for (int b = 0; b < 2; b++) {
			struct load_trials lt = trials_at(s, g, b ? g->upper : g->lower);

			if (!lt.counted && !lt.short_)
				continue;
			fprintf(stderr, "  %s: %d trial%s at %s %s/s, %d over the goal",
				b ? "upper" : "lower", lt.counted, lt.counted == 1 ? "" : "s",
				fmt_si(b ? g->upper : g->lower, a, sizeof(a)), s->unit, lt.over);
			if (lt.short_)
				fprintf(stderr,
					", and %d where the sender fell short (not counted)",
					lt.short_);
			fputc('\n', stderr);
		}
	}
	int shorts = 0;

	for (int i = 0; i < s->nt; i++)
		shorts += s->t[i].sender_short;
	fprintf(stderr, "search: %d trials in %.0f s, %d where the sender fell short%s%s\n", s->nt,
		(now_ns() - s->start_ns) / 1e9, shorts, s->stop_why ? "; stopped: " : "",
		s->stop_why ? s->stop_why : "");
}

/*
 * Rank 0's search: the warm-up, the trials until every goal is found (or a
 * limit), what was found and the results' files. The exit status.
 */
static int search_run(struct search *s, const struct search_outputs *out)
{
	char a[16], b[16];
	bool thresholds_failed;
	char headline[512];
	int err = 0;

	/* the trial's --first-seq is where the first trial starts */
	s->next_n = s->so.first_n;
	s->max_asked = s->max;
	s->start_unix = time(NULL);
	s->start_ns = now_ns();
	cli_catch_signals();
	fprintf(stderr, "search: %s to %s %s/s, %.1f s trials, width %.3f, witness %s",
		fmt_si(s->min, a, sizeof(a)), fmt_si(s->max, b, sizeof(b)), s->unit,
		s->trial_ns / 1e9, s->width, s->witness);
	if (xr_nranks > 1)
		fprintf(stderr, ", %d ranks (MPI), each a shard of every trial", xr_nranks);
	fputc('\n', stderr);
	if (out->stream && search_stream_start(s, out->stream))
		return XR_EXIT_ENV;
	if (s->warmup_ns) {
		uint64_t trial = s->trial_ns;
		struct trial w = {};

		s->trial_ns = s->warmup_ns;
		err = run_trial(s, s->min, &w);
		s->trial_ns = trial;
		free(w.ranks);
		if (err == -EINTR)
			s->interrupted = true;
		else if (err)
			return XR_EXIT_ENV;
		else
			fprintf(stderr, "  warm-up: %.1f s at %s %s/s, loss %.5f (not counted)\n",
				s->warmup_ns / 1e9, fmt_si(s->min, a, sizeof(a)), s->unit, w.loss);
	}
	if (!err)
		err = do_search(s);
	if (err && err != -EINTR && err != -ERANGE)
		return XR_EXIT_ENV;
	if (s->interrupted) {
		s->stop_why = "interrupted";
		fprintf(stderr, "search: interrupted after %d trials; the bounds so far:\n", s->nt);
	}
	print_bounds(s);
	thresholds_failed = search_thresholds_judge(s, stderr, NULL);
	search_headline(s, headline, sizeof(headline));
	if (headline[0])
		fprintf(stderr, "search: %s\n", headline);
	if (write_results(s, out->json, out->csv, out->svg, out->html) || search_stream_end(s))
		return XR_EXIT_ENV;
	return s->interrupted	 ? XR_EXIT_INTERRUPTED :
	       s->stop_why	 ? XR_EXIT_FAIL :
	       thresholds_failed ? XR_EXIT_THRESHOLD :
				   XR_EXIT_OK;
}

/* The search's defaults (before its options) */
static void search_defaults(struct search *s)
{
	s->start_margin_ns = 500000000ULL;
	s->min = 1000;
	s->max = 1000000;
	s->width = 0.005;
	s->trial_ns = 1000000000ULL;
	s->settle_ns = 300000000ULL;
	s->max_trials = 128;
	s->max_time_ns = 30 * 60 * 1000000000ULL;
}

int cmd_search(int argc, char **argv)
{
	struct search *s = calloc(1, sizeof(*s));
	struct search_outputs out = {};
	int opt, ret = -1;
	bool trials_started = false;
	/* replay --sessions: the trial's options without the mode (send_opts_parse keeps its FILEs) */
	char **trial_argv = NULL;

	if (!s)
		return XR_EXIT_ENV;
	/* under mpiexec: every rank parses the same options; rank 0 searches, each sends a shard */
	if (ranks_init(&argc, &argv)) {
		free(s);
		return XR_EXIT_ENV;
	}
	search_defaults(s);
	opterr = 0;
	while (ret < 0 && (opt = getopt_long(argc, argv, "+:vh", search_opts, NULL)) != -1)
		ret = parse_opt(s, opt, argc, argv, &out);
	if (ret >= 0)
		goto out;
	ret = trial_find(s, argc, argv) ?: goals_complete(s);
	if (!ret && cli_need_root("search"))
		ret = XR_EXIT_ENV;
	if (ret)
		goto out;
	s->cmd = argv + optind;
	s->ncmd = argc - optind;
	ret = trial_parse(s, argc, argv, &trial_argv);
	if (ret)
		goto out;
	if (xr_rank != 0) {
		/* the trials rank 0 broadcasts, until it says stop */
		cli_catch_signals();
		ret = serve_trials(s) ? XR_EXIT_ENV : XR_EXIT_OK;
	} else {
		trials_started = true;
		ret = search_run(s, &out);
	}
out:
	jstream_close(&s->stream);
	/* the other ranks wait for the next trial: tell them there is none */
	if (trials_started)
		trials_stop();
	ranks_finish();
	for (int i = 0; i < s->nt; i++)
		free(s->t[i].ranks);
	if (s->proto && s->proto->free && s->proto_state)
		s->proto->free(s->proto_state);
	free(s->proto_state);
	free((char *)s->so.cmd);
	free(trial_argv);
	free(s);
	return ret;
}
