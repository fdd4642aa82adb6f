// SPDX-License-Identifier: GPL-2.0
/* The sender commands' shared options: one table, parsed once into struct send_opts. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "frames/static.h"
#include "measure/httpd.h"
#include "send/opts.h"
#include "send/verdict.h"
#include "util/log.h"
#include "util/units.h"

enum {
	O_ENGINE = 256,
	O_TOPSPEED,
	O_PPS,
	O_RATE,
	O_MULT,
	O_COUNT,
	O_DURATION,
	O_THREADS,
	O_BATCH,
	O_JSON,
	O_REWRITE,
	O_DST,
	O_SRC,
	O_SPORT,
	O_SIZE,
	O_DSTMAC,
	O_WAIT,
	O_FIRST,
	O_LISTEN,
	O_TOKEN,
	O_PCAPOUT,
	O_VLAN,
	O_SHARD,
	O_NETNS,
	O_SEED,
	O_START_AT,
	O_CONCURRENCY,
	O_BACKOFF,
	O_FAIL_IF,
	O_SPECTRUM,
	O_STREAM,
	O_HLOG,
};

/* set: the protocol must accept it (enum send_opt_set); 0: every sender command takes it */
static const struct send_opt_row {
	const char *name;
	int has_arg, id;
	unsigned int set;
} rows[] = {
	{ "iface", required_argument, 'i', 0 },
	{ "engine", required_argument, O_ENGINE, 0 },
	{ "topspeed", no_argument, O_TOPSPEED, 0 },
	{ "pps", required_argument, O_PPS, 0 },
	{ "rate", required_argument, O_RATE, 0 },
	{ "multiplier", required_argument, O_MULT, 0 },
	{ "count", required_argument, O_COUNT, 0 },
	{ "duration", required_argument, O_DURATION, 0 },
	{ "threads", required_argument, O_THREADS, 0 },
	{ "batch", required_argument, O_BATCH, 0 },
	{ "backoff", required_argument, O_BACKOFF, 0 },
	{ "json", required_argument, O_JSON, 0 },
	{ "fail-if", required_argument, O_FAIL_IF, 0 },
	{ "latency-spectrum", required_argument, O_SPECTRUM, 0 },
	{ "json-stream", required_argument, O_STREAM, 0 },
	{ "latency-log", required_argument, O_HLOG, 0 },
	{ "first-seq", required_argument, O_FIRST, 0 },
	{ "listen", required_argument, O_LISTEN, 0 },
	{ "token-file", required_argument, O_TOKEN, 0 },
	{ "quiet", no_argument, 'q', 0 },
	{ "verbose", no_argument, 'v', 0 },
	{ "help", no_argument, 'h', 0 },
	{ "rewrite", required_argument, O_REWRITE, SO_REWRITE },
	{ NULL /* p->dst_name */, required_argument, O_DST, SO_DST },
	{ "src", required_argument, O_SRC, SO_SRC },
	{ "sport", required_argument, O_SPORT, SO_SPORT },
	{ "size", required_argument, O_SIZE, SO_SIZE },
	{ "dst-mac", required_argument, O_DSTMAC, SO_DSTMAC },
	{ "wait", required_argument, O_WAIT, SO_WAIT },
	{ "pcap-out", required_argument, O_PCAPOUT, 0 },
	{ "shard", required_argument, O_SHARD, 0 },
	{ "netns", required_argument, O_NETNS, 0 },
	{ "seed", required_argument, O_SEED, SO_SEED },
	{ "start-at", required_argument, O_START_AT, 0 },
	{ "vlan", required_argument, O_VLAN, SO_VLAN },
	{ "concurrency", required_argument, O_CONCURRENCY, SO_CONCURRENCY },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))
#define MAX_PROTO_OPTS 32
/* sessions open at once: a session table's worth (bpf/shared/tcp.h) */
#define XR_CONCURRENCY_MAX (1U << 20)

const char send_opts_help[] =
	"  -i, --iface IFACE       interface to send from (required)\n"
	"      --engine E          auto (default: kernel where live frames work, else\n"
	"                          xsk), kernel or xsk; XDPREPLAY_ENGINE=kernel|xsk in\n"
	"                          the environment makes auto choose that one\n"
	"      --topspeed          as fast as possible (default)\n"
	"      --pps N             N frames per second in total (e.g. 1000, 10k, 2.5M)\n"
	"      --rate R            R bit/s on the wire, counting FCS, preamble and gap\n"
	"                          (24 bytes per frame; e.g. 100Mbit, 1Gbit)\n"
	"      --multiplier X      capture timing, X times faster (2 = half the time)\n"
	"      --count N           send N frames in all\n"
	"      --duration T        stop after T (e.g. 500ms, 30s, 5m)\n"
	"      --threads N         sender threads, one per CPU (default 1); on a veth at most one\n"
	"                          per receive queue of its peer, and none on the CPU another\n"
	"                          queue's NAPI thread is pinned to\n"
	"      --batch N           live-frames batch size (default 192)\n"
	"      --backoff B         when the driver refuses frames (a full ring), the kernel\n"
	"                          engine waits: skip (skip iterations, so that a receiver\n"
	"                          on this CPU runs), spin (spin on the clock first: a\n"
	"                          receiver on another CPU drains meanwhile), or auto\n"
	"                          (default: spin where a veth peer's NAPI runs in threads)\n"
	"      --first-seq N       start sequence numbers at N (default 0), so that runs in a\n"
	"                          row do not repeat sources, ports, ISNs or stamps (kernel\n"
	"                          engine)\n"
	"      --json FILE|-       write the result as JSON\n"
	"      --json-stream FILE|-  one JSON object per line as the run goes (iperf3's\n"
	"                          layout): start (system, settings), an interval a second,\n"
	"                          end (the --json result)\n"
	"      --fail-if EXPR      exit 5 when the run's figures meet EXPR (repeatable):\n"
	"                          METRIC<VALUE, <=, > or >=; loss (answers that did not\n"
	"                          come, of frames sent: 0.001 or 0.1%), unsent (of frames\n"
	"                          asked), rate (frames/s: 50k, or 0.99*target with --pps),\n"
	"                          p50, p90, p99, p99.9, p99.99, max (the answers' round\n"
	"                          trip: 250us, 10ms), sessions_failed (gen tcp and mqtt,\n"
	"                          replay --sessions). E.g. --fail-if 'p99>10ms'\n"
	"      --latency-spectrum FILE|-  the answers' round trips as a percentile spectrum\n"
	"                          to the max, in wrk2's and HdrHistogram's layout (.hgrm;\n"
	"                          milliseconds); also in JSON (replies.rtt_spectrum)\n"
	"      --latency-log FILE|-  the round trips as an HdrHistogram interval log (.hlog,\n"
	"                          a histogram a second), for HdrHistogram's tools\n"
	"      --listen ADDR:PORT  serve the live figures over HTTP while it runs: / (JSON),\n"
	"                          /metrics (Prometheus or OpenMetrics; labels run, command,\n"
	"                          iface, shard, a search's trial; round trips as the\n"
	"                          histogram xdpreplay_sender_rtt_seconds); :PORT = loopback only\n"
	"      --token-file F      the token --listen asks for ('Authorization: Bearer'): F's\n"
	"                          first line\n"
	"      --pcap-out FILE     send nothing: write the frames the run would send (its\n"
	"                          --count, or one pass of the frame set; at most 1M) to\n"
	"                          FILE as pcap, each as it would leave (--rewrite ops\n"
	"                          applied by the reference BPF is held to)\n"
	"      --shard I/N         be shard I (0 to N-1) of N senders that together make one\n"
	"                          run: this one sends every N-th sequence number from I on\n"
	"                          (its sources, ports, ISNs, devices with them) at 1/N of\n"
	"                          --pps or --rate; --count and --duration are the whole\n"
	"                          run's. Start the N with any launcher (pdsh, a Kubernetes\n"
	"                          Indexed Job: --shard $(JOB_COMPLETION_INDEX)/N)\n"
	"      --start-at T        first departure at UNIX time T (seconds, e.g. 1767225600.5),\n"
	"                          after set-up: shards on hosts with synchronised clocks\n"
	"                          start together\n"
	"      --netns NAME|PATH   send from network namespace NAME (/run/netns/NAME), as\n"
	"                          'ip netns exec' would; --listen stays where it started\n"
	"  -q, --quiet             no progress line or summary\n"
	"  -v, --verbose           more detail (-vv: libbpf's messages)\n";

static int bad_addr_option(const char *cmd, const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "xdpreplay %s: --%s '%s': %s\n", cmd, opt, arg, why);
	return XR_EXIT_USAGE;
}

/* arg's place among an option's n words (an enum's values in order), or -1 having said what it takes */
static int parse_word(const char *cmd, const char *opt, const char *arg, const char *const *words,
		      int n)
{
	char list[128];
	size_t len = 0;

	for (int i = 0; i < n; i++)
		if (!strcmp(arg, words[i]))
			return i;
	for (int i = 0; i < n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", words[i],
				i == n - 1 ? "" :
				i == n - 2 ? " or " :
					     ", ");
	cli_usage_error(cmd, "--%s: '%s' is not %s", opt, arg, list);
	return -1;
}

/* parse_one's answers besides XR_EXIT_USAGE: an option taken, or one for another group */
#define OPT_TAKEN -1
#define OPT_OTHER -2

/* The interface, engine, pace and amount: OPT_TAKEN, XR_EXIT_USAGE (said), or OPT_OTHER when opt is not one of them */
static int parse_pacing(struct send_opts *so, int opt, const char *arg, int *paced)
{
	static const char *const engines[] = { "auto", "kernel", "xsk" }; /* enum send_engine */
	static const char *const backoffs[] = { "auto", "spin", "skip" }; /* enum send_backoff */
	const char *cmd = so->cmd;
	uint64_t v;
	int w;

	switch (opt) {
	case 'i': so->ifname = arg; break;
	case O_ENGINE:
		w = parse_word(cmd, "engine", arg, engines, 3);
		if (w < 0)
			return XR_EXIT_USAGE;
		so->engine = (enum send_engine)w;
		break;
	case O_TOPSPEED:
		so->pace = XR_PACE_NONE;
		(*paced)++;
		break;
	case O_PPS:
		if (cli_number(cmd, "pps", arg, &so->pps))
			return XR_EXIT_USAGE;
		if (so->pps <= 0)
			return cli_usage_error(cmd, "--pps must be above 0");
		so->pace = XR_PACE_RATE;
		so->rate_bps = 0;
		(*paced)++;
		break;
	case O_RATE:
		if (cli_bitrate(cmd, "rate", arg, &so->rate_bps))
			return XR_EXIT_USAGE;
		if (so->rate_bps <= 0)
			return cli_usage_error(cmd, "--rate must be above 0");
		so->pace = XR_PACE_RATE;
		(*paced)++;
		break;
	case O_MULT:
		if (cli_number(cmd, "multiplier", arg, &so->multiplier))
			return XR_EXIT_USAGE;
		if (so->multiplier < 0.001 || so->multiplier > 1e6)
			return cli_usage_error(cmd,
					       "--multiplier must be between 0.001 and 1000000");
		so->pace = XR_PACE_PCAP;
		(*paced)++;
		break;
	case O_COUNT:
		if (cli_count(cmd, "count", arg, &so->count))
			return XR_EXIT_USAGE;
		if (!so->count)
			return cli_usage_error(cmd, "--count must be above 0");
		break;
	case O_DURATION:
		if (cli_duration(cmd, "duration", arg, &so->duration_ns))
			return XR_EXIT_USAGE;
		if (!so->duration_ns)
			return cli_usage_error(cmd, "--duration must be above 0");
		break;
	case O_THREADS:
		if (cli_count(cmd, "threads", arg, &v))
			return XR_EXIT_USAGE;
		if (v < 1 || v > (uint64_t)sysconf(_SC_NPROCESSORS_ONLN) || v > XR_MAX_CPUS)
			return cli_usage_error(
				cmd, "--threads must be between 1 and the number of CPUs (%ld)",
				sysconf(_SC_NPROCESSORS_ONLN));
		so->threads = v;
		break;
	case O_BATCH:
		if (cli_count(cmd, "batch", arg, &v))
			return XR_EXIT_USAGE;
		if (v < 1 || v > 256)
			return cli_usage_error(cmd, "--batch must be between 1 and 256");
		so->batch = v;
		break;
	case O_BACKOFF:
		w = parse_word(cmd, "backoff", arg, backoffs, 3);
		if (w < 0)
			return XR_EXIT_USAGE;
		so->backoff = (enum send_backoff)w;
		break;
	default: return OPT_OTHER;
	}
	return OPT_TAKEN;
}

/* What the run reports and where it runs: OPT_TAKEN, XR_EXIT_USAGE (said), or OPT_OTHER when opt is not one of them */
static int parse_run(struct send_opts *so, int opt, const char *arg)
{
	const char *cmd = so->cmd;

	switch (opt) {
	case O_JSON: so->json_path = arg; break;
	case O_SPECTRUM: so->spectrum_path = arg; break;
	case O_STREAM: so->stream_path = arg; break;
	case O_HLOG: so->hlog_path = arg; break;
	case O_FAIL_IF:
		if (threshold_add(&so->fail_if, cmd, arg, send_threshold_metrics,
				  send_nthreshold_metrics))
			return XR_EXIT_USAGE;
		break;
	case O_FIRST:
		if (cli_count(cmd, "first-seq", arg, &so->first_n))
			return XR_EXIT_USAGE;
		break;
	case O_LISTEN:
		if (httpd_parse_addr(arg, &so->listen))
			return cli_usage_error(
				cmd,
				"--listen: '%s' is not ADDR:PORT or :PORT (IPv4, port 1-65535)",
				arg);
		so->have_listen = true;
		break;
	case O_TOKEN:
		if (httpd_read_token(arg, so->token, sizeof(so->token)))
			return XR_EXIT_USAGE;
		so->have_token = true;
		break;
	case O_PCAPOUT: so->pcap_out = arg; break;
	case O_SHARD:
		if (parse_shard(arg, XR_MAX_SHARDS, &so->shard, &so->shards))
			return cli_usage_error(
				cmd, "--shard: '%s' is not I/N with 0 <= I < N <= %u (e.g. 0/3)",
				arg, XR_MAX_SHARDS);
		break;
	case O_START_AT: {
		double t;

		/*
		 * UNIX time: anything before 2001 is a mistake (a duration, a
		 * relative time); after 2286 (1e10 s) too, and its nanoseconds
		 * would soon overflow 64 bits (fuzz_sendopts: 4.4e10)
		 */
		if (cli_number(cmd, "start-at", arg, &t))
			return XR_EXIT_USAGE;
		if (t < 1e9 || t > 1e10)
			return cli_usage_error(
				cmd,
				"--start-at: '%s' is not a UNIX time in seconds (e.g. "
				"$(date -d '+10 sec' +%%s))",
				arg);
		so->start_unix_ns = (uint64_t)(t * 1e9);
		break;
	}
	case O_SEED:
		if (cli_count(cmd, "seed", arg, &so->seed))
			return XR_EXIT_USAGE;
		so->have_seed = true;
		break;
	case O_NETNS:
		if (!*arg)
			return cli_usage_error(cmd, "--netns: an empty name");
		so->netns = arg;
		break;
	case 'q':
		so->quiet = true;
		xr_verbosity = XR_LOG_WARN;
		break;
	case 'v': xr_verbosity++; break;
	default: return OPT_OTHER;
	}
	return OPT_TAKEN;
}

/* What the frames are and what answers them: OPT_TAKEN, XR_EXIT_USAGE (said), or OPT_OTHER when opt is not one of them */
static int parse_frames(struct send_opts *so, const struct xr_proto *p, int opt, const char *arg)
{
	const char *cmd = so->cmd, *dst_name = p->dst_name ? p->dst_name : "dst";
	uint64_t v;

	switch (opt) {
	case O_VLAN:
		if (static_parse_vlan(arg, &so->net.vlan_tci))
			return cli_usage_error(cmd, "--vlan: '%s' is not VID[:PRI] (0-4095, 0-7)",
					       arg);
		so->net.have_vlan = true;
		break;
	case O_REWRITE:
		if (so->plan.nspecs >= XR_MAX_USER_SPECS)
			return cli_usage_error(
				cmd, "at most %d --rewrite specs (of them %d per-packet ops)",
				XR_MAX_USER_SPECS, XR_MAX_OPS);
		if (rewrite_parse(arg, &so->plan.specs[so->plan.nspecs++]))
			return XR_EXIT_USAGE;
		break;
	case O_DST:
		if (addr_parse_dst(arg, &so->net.dst)) {
			fprintf(stderr,
				"xdpreplay %s: --%s: '%s' is not ADDR, ADDR:PORT or [ADDR6]:PORT\n",
				cmd, dst_name, arg);
			return XR_EXIT_USAGE;
		}
		so->net.have_dst = true;
		break;
	case O_SRC:
		if (addr_parse_range(arg, &so->net.src))
			return bad_addr_option(
				cmd, "src", arg,
				so->net.src.ipv6 ?
					"not an IPv6 PREFIX/P with P from 64 to 128" :
					"not an IPv4 address, A.B.C.D/P or A.B.C.D-E.F.G.H");
		so->net.have_src = true;
		break;
	case O_SPORT:
		if (addr_parse_ports(arg, &so->net.sport))
			return bad_addr_option(cmd, "sport", arg,
					       "not a port or a range LO-HI (0-65535, LO <= HI)");
		so->net.have_sport = true;
		break;
	case O_SIZE:
		if (cli_count(cmd, "size", arg, &v))
			return XR_EXIT_USAGE;
		if (v < 64 || v > XR_MAX_FRAME)
			return cli_usage_error(cmd, "--size must be between 64 and %d",
					       XR_MAX_FRAME);
		so->net.size = v;
		break;
	case O_DSTMAC:
		if (parse_mac(arg, so->net.dst_mac))
			return cli_usage_error(cmd, "--dst-mac: '%s' is not a MAC address", arg);
		so->net.have_mac = true;
		break;
	case O_WAIT:
		if (cli_duration(cmd, "wait", arg, &so->reply_wait_ns))
			return XR_EXIT_USAGE;
		break;
	case O_CONCURRENCY:
		if (cli_count(cmd, "concurrency", arg, &so->concurrency))
			return XR_EXIT_USAGE;
		if (!so->concurrency || so->concurrency > XR_CONCURRENCY_MAX)
			return cli_usage_error(cmd, "--concurrency must be between 1 and %u",
					       XR_CONCURRENCY_MAX);
		break;
	default: return OPT_OTHER;
	}
	return OPT_TAKEN;
}

/* One option of the common set: -1 when taken, XR_EXIT_USAGE (said) when not. */
static int parse_one(struct send_opts *so, const struct xr_proto *p, int opt, const char *arg,
		     int *paced)
{
	int ret = parse_pacing(so, opt, arg, paced);

	if (ret == OPT_OTHER)
		ret = parse_run(so, opt, arg);
	if (ret == OPT_OTHER)
		ret = parse_frames(so, p, opt, arg);
	return ret == OPT_OTHER ? XR_EXIT_USAGE : ret;
}

int send_opts_parse(struct send_opts *so, const struct xr_proto *p, void *st, int argc, char **argv,
		    void (*usage)(FILE *f, const struct xr_proto *p))
{
	struct option opts[NROWS + MAX_PROTO_OPTS + 1] = {};
	const char *cmd = so->cmd;
	bool search = so->search;
	int nopts = 0, opt, ret, paced = 0;

	/* so->cmd and so->search are the caller's; everything else starts at its default */
	*so = (struct send_opts){ .cmd = cmd,
				  .search = search,
				  .argc = argc,
				  .argv = argv,
				  .threads = 1,
				  .shards = 1,
				  /*
				   * 192, not the kernel's 64: with threaded NAPI one call's
				   * frames wait for the receiver's thread until the call
				   * returns, so a larger batch keeps it busy (measured in
				   * docs/benchmarks.md); 256 overfills veth's 256-frame ring
				   */
				  .batch = 192,
				  .multiplier = 1,
				  .reply_wait_ns = 1000000000ULL };
	if (st)
		memset(st, 0, p->state_size);
	for (size_t i = 0; i < NROWS; i++) {
		if (rows[i].set && !(rows[i].set & p->accepts))
			continue;
		opts[nopts++] = (struct option){ rows[i].name ? rows[i].name :
						 p->dst_name  ? p->dst_name :
								"dst",
						 rows[i].has_arg, NULL, rows[i].id };
	}
	for (const struct option *o = p->opts; o && o->name; o++) {
		/* a protocol's options past the table's room would be "unknown" without a word */
		if (nopts >= (int)(NROWS + MAX_PROTO_OPTS)) {
			pr_warn("%s: more options than MAX_PROTO_OPTS (%d) holds (a bug)\n", cmd,
				MAX_PROTO_OPTS);
			return XR_EXIT_ENV;
		}
		opts[nopts++] = *o;
	}
	/* 0, not 1: glibc then forgets an earlier parse, whose argv may be gone, whole */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:qvh", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout, p);
			return XR_EXIT_OK;
		}
		if (opt == '?' || opt == ':')
			return cli_bad_option(cmd, argv, opt);
		if (opt >= PROTO_OPT_BASE)
			ret = p->parse_opt(st, opt, optarg, so);
		else
			ret = parse_one(so, p, opt, optarg, &paced);
		if (ret >= 0)
			return ret;
	}
	if (!so->ifname)
		return cli_usage_error(cmd, "missing -i IFACE");
	if (p->accepts & SO_FILES) {
		if (optind >= argc)
			return cli_usage_error(cmd, "missing capture FILE");
		so->files = argv + optind;
		so->nfiles = argc - optind;
	} else if (optind < argc) {
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	}
	if ((p->accepts & SO_DST) && !so->net.have_dst)
		return cli_usage_error(cmd, "missing --%s ADDR[:PORT]",
				       p->dst_name ? p->dst_name : "dst");
	if (so->net.have_dst && !so->net.dst.port)
		so->net.dst.port = p->default_port;
	if (paced > 1)
		return cli_usage_error(cmd, "give one of --topspeed, --pps, --rate, --multiplier");
	if (so->concurrency && so->pace != XR_PACE_NONE)
		return cli_usage_error(cmd,
				       "--concurrency is a closed loop (a session starts as "
				       "another ends): no --pps, --rate or --multiplier with it");
	if (so->have_token && !so->have_listen)
		return cli_usage_error(cmd, "--token-file goes with --listen");
	if (p->check) {
		ret = p->check(st, so);
		if (ret)
			return ret;
	}
	return -1;
}
