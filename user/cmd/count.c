// SPDX-License-Identifier: GPL-2.0
/* xdpreplay count: its options and usage; the counter itself is user/measure/count.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include "cmd/cli.h"
#include "measure/count.h"
#include "measure/count_verdict.h"
#include "measure/httpd.h"
#include "proto/lorawan/webhook.h"
#include "util/log.h"
#include "util/units.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay count -i IFACE [filter] [options]\n"
		"\n"
		"Counts, with an XDP program on IFACE, the frames that arrive and match the\n"
		"filter, then passes them on to the stack (or drops them with --drop). At the\n"
		"end it reads the kernel's own counters (interface, ethtool, /proc/net/snmp,\n"
		"/proc/net/netstat, softnet) and attributes what was passed up: delivered to\n"
		"sockets, dropped at a full socket buffer, no socket on the port, listen queue\n"
		"overflows, ... The kernel counters cover the whole network namespace.\n"
		"Runs until --duration, --idle, SIGINT or SIGTERM.\n"
		"\n"
		"Filter (all given must match; default: every IP packet):\n"
		"      --udp | --tcp | --proto N   IP protocol\n"
		"      --any                       every frame, IP or not\n"
		"      --dst ADDR, --src ADDR      IPv4 addresses\n"
		"      --dport N, --sport N        UDP/TCP ports\n"
		"Sequence tracking per flow (IPv4), from a field the sender stamps:\n"
		"      --seq ip.id                 the IPv4 identification (16 bits, wrapping)\n"
		"      --seq payload@OFF:W         W bytes (2, 4, 8) big-endian at OFF in the UDP/TCP payload\n"
		"                                  reports received, lost (gaps), duplicated, reordered\n"
		"      --seq-bucket N              and which numbers the kernel dropped, by reason, in\n"
		"                                  buckets of N (default 1000; ip.id wraps at 65536)\n"
		"Options:\n"
		"  -i, --iface IFACE     interface to count on (required)\n"
		"      --drop            drop matched frames in XDP (a sink that counts)\n"
		"      --respond         with --tcp --dport: answer matched segments in XDP instead,\n"
		"                        a stateless HTTP server for benchmarks whose server must\n"
		"                        not be the limit: SYN-ACK to a SYN, an HTTP/1.1 200 to a\n"
		"                        request (data with PSH), FIN-ACK to a FIN, nothing to ACKs\n"
		"      --respond-body N  the 200's body: N bytes (default 2; header and body at\n"
		"                        most 1400; what does not fit the frame the request came\n"
		"                        in is dropped and counted: on veth a kernel client's\n"
		"                        frames have ~200 bytes of room, xdpreplay's 1400)\n"
		"      --respond-close   FIN with every response, as to 'Connection: close' (one\n"
		"                        request a connection; wrk, ab and h2load need it)\n"
		"      --duration T      stop after T (e.g. 10s)\n"
		"      --idle T          stop when nothing matched for T after the first frame\n"
		"      --ready-file F    create F once the counter is attached (for scripts)\n"
		"      --json [FILE]     write the result as JSON (no FILE, or -: standard output)\n"
		"      --json-stream FILE|-  one JSON object per line as the count goes: start,\n"
		"                        an interval a second (matched so far and in it), end\n"
		"                        (the --json result)\n"
		"      --no-drop-reasons  do not trace the kernel's drops by reason (skb:kfree_skb; by\n"
		"                        default every skb the server's namespace drops that matches\n"
		"                        the filter is counted by reason and direction)\n"
		"      --nft             also read nftables rule counters: drops by rules that drop\n"
		"                        or reject are attributed to the firewall\n"
		"      --listen ADDR:PORT  serve the live figures over HTTP: / (JSON), /metrics\n"
		"                        (Prometheus text, or OpenMetrics when asked; labels run\n"
		"                        and iface), for a sender on another host; :PORT\n"
		"                        listens on loopback only (0.0.0.0:PORT on every address)\n"
		"      --token-file F    requests to --listen and --webhook must carry\n"
		"                        'Authorization: Bearer TOKEN' (TOKEN: F's first line)\n"
		"      --server-pid PID  the server process on this host (a broker, nginx's\n"
		"                        worker): its CPU while count ran, and its busiest\n"
		"                        thread's busiest second; 95%% of a core or more there\n"
		"                        says it was at its CPU limit, a cause of loss\n"
		"Application-level receipt (a LoRaWAN network server's HTTP integration):\n"
		"      --webhook ADDR:PORT  receive the server's uplink events (POST, JSON, one per\n"
		"                        deduplicated uplink, as ChirpStack's HTTP integration\n"
		"                        posts them) and count them per device by FCnt: received,\n"
		"                        lost (gaps), duplicated, reordered; -i is then optional\n"
		"      --fleet DIR       the fleet the sender used (devices by DevEUI, FCnt starts)\n"
		"      --schedule FILE   the senders' schedule (lorawan send --schedule appends a\n"
		"                        line per run; lines already there when count starts are\n"
		"                        not read): latency from each uplink's departure to its\n"
		"                        event, and each run's own uplinks and latency (a search's\n"
		"                        trials, wherever their uplinks arrive)\n"
		"      --fail-if EXPR    exit 5 when the count's figures meet EXPR (repeatable):\n"
		"                        METRIC<VALUE (or <=, >, >=); METRIC one of matched,\n"
		"                        rate (first to last), dropped (the kernel's drops of\n"
		"                        matched frames), unattributed, loss (--seq). E.g.\n"
		"                        --fail-if 'dropped>0' --fail-if 'loss>0.1%%'\n"
		"  -q, --quiet           no progress line or report\n"
		"  -v, --verbose         more detail\n"
		"\n"
		"Exit status: 0 counted (SIGINT/SIGTERM is a normal end: counting until stopped),\n"
		"2 bad usage, 3 the environment is the problem (no XDP, no such interface, ...),\n"
		"5 a --fail-if threshold failed.\n"
		"\n"
		"Examples:\n"
		"  xdpreplay count -i eth1 --udp --dport 1700 --duration 30s\n"
		"  xdpreplay count -i eth1 --any --drop --idle 2s --json -\n"
		"  xdpreplay count -i eth1 --udp --listen 0.0.0.0:9100  # curl http://HOST:9100/metrics\n"
		"  xdpreplay count -i eth1 --udp --dport 9 --seq ip.id --idle 1s\n"
		"  xdpreplay count -i eth1 --tcp --dport 80 --respond --idle 2s  # for gen tcp\n"
		"  xdpreplay count --webhook :8090 --fleet fleet/ --schedule sched.json --idle 5s\n"
		"  xdpreplay count -i eth1 --tcp --dport 1883 --server-pid $(pidof mosquitto) --idle 2s\n"
		"  xdpreplay count -i eth1 --udp --dport 53 --idle 2s --fail-if 'dropped>0'\n");
}

static int parse_port(const char *arg, __u16 *port)
{
	uint64_t v;

	if (parse_count(arg, &v) || v < 1 || v > 65535) {
		pr_warn("'%s' is not a port (1-65535)\n", arg);
		return -EINVAL;
	}
	*port = htons(v);
	return 0;
}

/* --seq ip.id | payload@OFF:W (W = 2, 4 or 8 bytes, big-endian, after the UDP/TCP header) */
static int parse_seq(const char *arg, struct xr_count_cfg *cfg)
{
	unsigned int off, width;
	const char *end;

	if (!strcmp(arg, "ip.id")) {
		cfg->seq_kind = XR_SEQ_IP_ID;
		cfg->seq_width = 2;
		return 0;
	}
	if (!strncmp(arg, "payload@", 8) && !parse_uint(arg + 8, 65535, &off, &end) &&
	    *end == ':' && !parse_uint(end + 1, 8, &width, &end) && !*end &&
	    (width == 2 || width == 4 || width == 8)) {
		cfg->seq_kind = XR_SEQ_PAYLOAD;
		cfg->seq_off = off;
		cfg->seq_width = width;
		return 0;
	}
	pr_warn("--seq: '%s' is not ip.id or payload@OFFSET:WIDTH (width 2, 4 or 8)\n", arg);
	return -EINVAL;
}

static int parse_addr(const char *arg, __u32 *addr)
{
	struct in_addr a;

	if (inet_pton(AF_INET, arg, &a) != 1) {
		pr_warn("'%s' is not an IPv4 address\n", arg);
		return -EINVAL;
	}
	*addr = a.s_addr;
	return 0;
}

/* Frames per second from the first matched frame to the last (n frames span n - 1 intervals). */
enum {
	O_UDP = 256,
	O_TCP,
	O_PROTO,
	O_ANY,
	O_DST,
	O_SRC,
	O_DPORT,
	O_SPORT,
	O_DROP,
	O_DURATION,
	O_IDLE,
	O_READY,
	O_JSON,
	O_LISTEN,
	O_SEQ,
	O_SEQ_BUCKET,
	O_NFT,
	O_NO_REASONS,
	O_WEBHOOK,
	O_FLEET,
	O_SCHEDULE,
	O_TOKEN,
	O_RESPOND,
	O_RESPOND_BODY,
	O_RESPOND_CLOSE,
	O_SERVER_PID,
	O_FAIL_IF,
	O_STREAM
};
static const struct option count_opts_table[] = {
	{ "iface", required_argument, NULL, 'i' },
	{ "udp", no_argument, NULL, O_UDP },
	{ "tcp", no_argument, NULL, O_TCP },
	{ "proto", required_argument, NULL, O_PROTO },
	{ "any", no_argument, NULL, O_ANY },
	{ "dst", required_argument, NULL, O_DST },
	{ "src", required_argument, NULL, O_SRC },
	{ "dport", required_argument, NULL, O_DPORT },
	{ "sport", required_argument, NULL, O_SPORT },
	{ "drop", no_argument, NULL, O_DROP },
	{ "respond", no_argument, NULL, O_RESPOND },
	{ "respond-body", required_argument, NULL, O_RESPOND_BODY },
	{ "respond-close", no_argument, NULL, O_RESPOND_CLOSE },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "idle", required_argument, NULL, O_IDLE },
	{ "ready-file", required_argument, NULL, O_READY },
	{ "json", optional_argument, NULL, O_JSON },
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "seq", required_argument, NULL, O_SEQ },
	{ "seq-bucket", required_argument, NULL, O_SEQ_BUCKET },
	{ "nft", no_argument, NULL, O_NFT },
	{ "no-drop-reasons", no_argument, NULL, O_NO_REASONS },
	{ "webhook", required_argument, NULL, O_WEBHOOK },
	{ "fleet", required_argument, NULL, O_FLEET },
	{ "schedule", required_argument, NULL, O_SCHEDULE },
	{ "token-file", required_argument, NULL, O_TOKEN },
	{ "server-pid", required_argument, NULL, O_SERVER_PID },
	{ "fail-if", required_argument, NULL, O_FAIL_IF },
	{ "json-stream", required_argument, NULL, O_STREAM },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* What count's options say beyond struct count_opts: checked together, then turned into it */
struct count_args {
	const char *listen, *webhook, *token_file, *fleet, *schedule;
	bool have_body;
};

/* One option into co (or a). -1 (taken), or the exit status (bad usage, or --help). */
static int parse_opt(struct count_opts *co, struct count_args *a, int opt, int argc, char **argv)
{
	uint64_t proto;

	switch (opt) {
	case 'i': co->ifname = optarg; break;
	case O_UDP: co->cfg.proto = IPPROTO_UDP; break;
	case O_TCP: co->cfg.proto = IPPROTO_TCP; break;
	case O_PROTO:
		if (cli_count("count", "proto", optarg, &proto))
			return XR_EXIT_USAGE;
		if (proto < 1 || proto > 254)
			return cli_usage_error("count", "--proto must be between 1 and 254");
		co->cfg.proto = proto;
		break;
	case O_ANY: co->cfg.proto = XR_PROTO_ANY_FRAME; break;
	case O_DST:
		if (parse_addr(optarg, &co->cfg.daddr))
			return XR_EXIT_USAGE;
		break;
	case O_SRC:
		if (parse_addr(optarg, &co->cfg.saddr))
			return XR_EXIT_USAGE;
		break;
	case O_DPORT:
		if (parse_port(optarg, &co->cfg.dport))
			return XR_EXIT_USAGE;
		break;
	case O_SPORT:
		if (parse_port(optarg, &co->cfg.sport))
			return XR_EXIT_USAGE;
		break;
	case O_DROP: co->cfg.drop = 1; break;
	case O_RESPOND:
		if (!co->cfg.respond)
			co->cfg.respond = XR_RESPOND_KEEP;
		break;
	case O_RESPOND_CLOSE: co->cfg.respond = XR_RESPOND_CLOSE; break;
	case O_RESPOND_BODY: {
		uint64_t v;

		if (cli_count("count", "respond-body", optarg, &v))
			return XR_EXIT_USAGE;
		/* the header takes 38 bytes and the length's digits */
		if (v > XR_RESPOND_MAX - 42)
			return cli_usage_error("count", "--respond-body: at most %u bytes",
					       XR_RESPOND_MAX - 42);
		co->respond_body = v;
		a->have_body = true;
		break;
	}
	case O_DURATION:
		if (cli_duration("count", "duration", optarg, &co->duration_ns))
			return XR_EXIT_USAGE;
		break;
	case O_IDLE:
		if (cli_duration("count", "idle", optarg, &co->idle_ns))
			return XR_EXIT_USAGE;
		break;
	case O_READY: co->ready = optarg; break;
	case O_JSON: co->json_path = cli_json_path(argc, argv, optarg); break;
	case O_LISTEN: a->listen = optarg; break;
	case O_NFT: co->use_nft = true; break;
	case O_NO_REASONS: co->no_drop_reasons = true; break;
	case O_WEBHOOK: a->webhook = optarg; break;
	case O_FLEET: a->fleet = optarg; break;
	case O_SCHEDULE: a->schedule = optarg; break;
	case O_TOKEN: a->token_file = optarg; break;
	case O_STREAM: co->stream_path = optarg; break;
	case O_FAIL_IF:
		if (threshold_add(&co->fail_if, "count", optarg, count_threshold_metrics,
				  count_nthreshold_metrics))
			return XR_EXIT_USAGE;
		break;
	case O_SERVER_PID: {
		char proc[32];
		uint64_t v;

		if (cli_count("count", "server-pid", optarg, &v))
			return XR_EXIT_USAGE;
		if (v < 1 || v > INT32_MAX)
			return cli_usage_error("count", "--server-pid: '%s' is not a process id",
					       optarg);
		snprintf(proc, sizeof(proc), "/proc/%llu", (unsigned long long)v);
		if (access(proc, F_OK))
			return cli_usage_error("count", "--server-pid %llu: no such process",
					       (unsigned long long)v);
		co->server_pid = v;
		break;
	}
	case O_SEQ_BUCKET: {
		uint64_t n;

		if (cli_count("count", "seq-bucket", optarg, &n))
			return XR_EXIT_USAGE;
		if (n < 1 || n > UINT32_MAX)
			return cli_usage_error("count", "--seq-bucket must be between 1 and %u",
					       UINT32_MAX);
		co->seq_bucket = n;
		break;
	}
	case O_SEQ:
		co->seq_spec = optarg;
		if (parse_seq(optarg, &co->cfg))
			return XR_EXIT_USAGE;
		break;
	case 'q':
		co->quiet = true;
		xr_verbosity = XR_LOG_WARN;
		break;
	case 'v': xr_verbosity++; break;
	case 'h': usage(stdout); return XR_EXIT_OK;
	default: return cli_bad_option("count", argv, opt);
	}
	return -1;
}

/* What the options say together; the addresses and the token read. 0, or XR_EXIT_USAGE after a line. */
static int check_opts(struct count_opts *co, const struct count_args *a, int argc, char **argv)
{
	if (!co->ifname && !a->webhook)
		return cli_usage_error("count", "missing -i IFACE (or --webhook ADDR:PORT)");
	if (optind < argc)
		return cli_usage_error("count", "unexpected argument '%s'", argv[optind]);
	if (a->webhook && !a->fleet)
		return cli_usage_error(
			"count",
			"--webhook counts per device: give the --fleet DIR the sender used");
	if (co->server_pid && !co->ifname)
		return cli_usage_error("count", "--server-pid goes with -i IFACE");
	if (co->fail_if.n && !co->ifname)
		return cli_usage_error("count", "--fail-if judges what -i IFACE counted");
	if (co->stream_path && !co->ifname)
		return cli_usage_error("count", "--json-stream follows what -i IFACE counts");
	if (count_thresholds_check(&co->fail_if, co->cfg.seq_kind,
				   !co->cfg.drop && !co->cfg.respond && !co->no_drop_reasons))
		return XR_EXIT_USAGE;
	if ((a->fleet || a->schedule) && !a->webhook)
		return cli_usage_error("count", "--fleet and --schedule go with --webhook");
	if (co->cfg.respond && (co->cfg.proto != IPPROTO_TCP || !co->cfg.dport))
		return cli_usage_error("count",
				       "--respond answers TCP on one port: give --tcp --dport N");
	if (co->cfg.respond && co->cfg.drop)
		return cli_usage_error("count", "--respond or --drop, not both");
	if (a->have_body && !co->cfg.respond)
		return cli_usage_error("count", "--respond-body goes with --respond");
	if (co->cfg.proto == XR_PROTO_ANY_FRAME &&
	    (co->cfg.daddr || co->cfg.saddr || co->cfg.dport || co->cfg.sport))
		return cli_usage_error("count",
				       "--any cannot be combined with address or port filters");
	/* addresses are checked before anything is attached */
	if (a->listen && httpd_parse_addr(a->listen, &co->listen))
		return cli_usage_error(
			"count", "--listen: '%s' is not ADDR:PORT or :PORT (IPv4, port 1-65535)",
			a->listen);
	if (a->webhook && httpd_parse_addr(a->webhook, &co->webhook))
		return cli_usage_error(
			"count", "--webhook: '%s' is not ADDR:PORT or :PORT (IPv4, port 1-65535)",
			a->webhook);
	if (a->token_file && !a->listen && !a->webhook)
		return cli_usage_error("count", "--token-file goes with --listen or --webhook");
	if (a->token_file && httpd_read_token(a->token_file, co->token, sizeof(co->token)))
		return XR_EXIT_USAGE;
	co->have_listen = a->listen != NULL;
	co->have_webhook = a->webhook != NULL;
	return 0;
}

int cmd_count(int argc, char **argv)
{
	struct count_opts co = { .seq_bucket = 1000, .respond_body = 2 };
	struct count_args a = {};
	int opt, ret = -1;

	opterr = 0;
	while (ret < 0 && (opt = getopt_long(argc, argv, ":i:qvh", count_opts_table, NULL)) != -1)
		ret = parse_opt(&co, &a, opt, argc, argv);
	if (ret >= 0)
		return ret;
	ret = check_opts(&co, &a, argc, argv);
	if (ret)
		return ret;
	/* the application's events are LoRaWAN uplinks (the one witness there is today) */
	if (a.webhook) {
		static struct webhook wh;

		if (webhook_init(&wh, a.fleet, a.schedule))
			return XR_EXIT_USAGE;
		webhook_witness(&wh, &co.witness);
	}
	return count_run(&co);
}
