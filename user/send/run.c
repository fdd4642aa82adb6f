// SPDX-License-Identifier: GPL-2.0
/* xdpreplay replay: send the frames of captures, at top speed or a precise rate. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include "cmd/cli.h"
#include "engine/engine.h"
#include "util/json.h"
#include "util/log.h"
#include "engine/pacer.h"
#include "engine/probe.h"
#include "frames/rewrite.h"
#include "frames/template.h"
#include "measure/httpd.h"
#include "send/live.h"
#include "proto/lorawan/lorawan.h"
#include "proto/lorawan/send.h"
#include "util/units.h"
#include "measure/webhook.h"

#define WIRE_OVERHEAD 24 /* FCS 4 + preamble 8 + inter-frame gap 12 */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay replay -i IFACE [options] FILE...\n"
		"\n"
		"Sends the Ethernet frames of FILE... (pcap or pcapng, plain or gzip) out of IFACE.\n"
		"Frames are read once into shared memory; the kernel engine builds each frame in\n"
		"the kernel (BPF_PROG_RUN live frames) and accounts for every one: sent, or not\n"
		"sent with the reason. Files play in order; frames of non-Ethernet interfaces,\n"
		"truncated frames and frames longer than IFACE allows are skipped and counted.\n"
		"\n"
		"Options:\n"
		"  -i, --iface IFACE       interface to send from (required)\n"
		"      --engine E          auto (default), kernel or xsk\n"
		"      --topspeed          as fast as possible (default)\n"
		"      --pps N             N frames per second in total (e.g. 1000, 10k, 2.5M)\n"
		"      --rate R            R bit/s on the wire, counting FCS, preamble and gap\n"
		"                          (24 bytes per frame; e.g. 100Mbit, 1Gbit)\n"
		"      --multiplier X      capture timing, X times faster (2 = half the time)\n"
		"      --loop N            play the files N times (default 1, or until --duration\n"
		"                          ends when that is given; 0 = until stopped)\n"
		"      --count N           send N frames in all (cycling through the files)\n"
		"      --duration T        stop after T (e.g. 500ms, 30s, 5m)\n"
		"      --threads N         sender threads, one per CPU (default 1)\n"
		"      --batch N           live-frames batch size (default 64)\n"
		"      --allow-truncated   send frames captured shorter than they were, as captured\n"
		"      --first-seq N       start sequence numbers at N (default 0), so that runs in a\n"
		"                          row do not repeat sources, ports, ISNs or stamps (kernel\n"
		"                          engine; capture timing follows the frames from there)\n"
		"      --preload N         load at most N frames (the rest of the files is not read);\n"
		"                          the frame set lives in memory: frame bytes + 24 bytes a\n"
		"                          frame in BPF maps (2 KiB a frame in an AF_XDP UMEM)\n"
		"      --max-memory N      refuse captures whose frames take more than N bytes\n"
		"                          (default: half of this machine's memory)\n"
		"      --max-ratio R       refuse gzip files that expand more than R times (200)\n"
		"      --max-gap T         shorten capture gaps longer than T to T (capture timing)\n"
		"      --rewrite SPEC      change a field in every frame as a function of the\n"
		"                          sequence number n (repeatable, up to 4); the checksums\n"
		"                          that cover the field are fixed (csum=auto says so):\n"
		"                            FIELD=seq[/DIV][%%MOD]    the field is n/DIV (mod MOD)\n"
		"                            FIELD+=STEP[/DIV][%%MOD]  captured + (n/DIV * STEP) mod MOD\n"
		"                            ip.src=198.18.64.0/23, ip.dst=A-B, ip6.src=PREFIX/64\n"
		"                            udp.sport=1024-65535 (also udp.dport, tcp.sport, ...)\n"
		"                          FIELD: ip.id, ip.src, ip.dst, ip6.src, ip6.dst, udp.sport,\n"
		"                          udp.dport, tcp.sport, tcp.dport, u8@OFF, u16be@OFF,\n"
		"                          u32be@OFF, u64be@OFF (le: little-endian; OFF from the\n"
		"                          frame start), payload@OFF:W (W bytes big-endian at OFF\n"
		"                          in the UDP/TCP payload)\n"
		"      --json FILE|-       write the result as JSON\n"
		"      --listen ADDR:PORT  serve the live figures over HTTP while it runs: / (JSON),\n"
		"                          /metrics (Prometheus); :PORT = loopback only\n"
		"      --token-file F      --listen wants 'Authorization: Bearer' F's first line\n"
		"  -q, --quiet             no progress line or summary\n"
		"  -v, --verbose           more detail (-vv: libbpf's messages)\n"
		"\n"
		XR_EXIT_HELP
		"\n"
		"Examples:\n"
		"  xdpreplay replay -i veth0 capture.pcap\n"
		"  xdpreplay replay -i veth0 --pps 100k --duration 10s uplinks.pcapng.gz\n"
		"  xdpreplay replay -i veth0 --count 10M --threads 2 --json - frame.pcap\n"
		"  xdpreplay replay -i veth0 --multiplier 2 --loop 3 a.pcap b.pcap\n"
		"  xdpreplay replay -i veth0 --count 1M --rewrite ip.id=seq frame.pcap   # count --seq ip.id\n");
}

static void print_summary(const char *cmd, const struct engine_result *r, const struct engine_opts *o,
			  const struct frameset *fs, const struct fs_skips *sk)
{
	double dur = (r->end_ns - r->start_ns) / 1e9, pps = dur > 0 ? r->sent / dur : 0;
	double bps = dur > 0 ? (r->sent_bytes + (double)r->sent * WIRE_OVERHEAD) * 8 / dur : 0;
	const struct engine_unsent *u = &r->unsent;
	uint64_t failed = engine_unsent_total(u);
	char a[16], b[16];

	fprintf(stderr, "%s: %s engine, %u thread%s, %zu frame%s in the set\n", cmd, r->engine, o->threads,
		o->threads > 1 ? "s" : "", fs->n, fs->n > 1 ? "s" : "");
	fprintf(stderr, "  asked %llu, sent %llu, not sent %llu in %.3f s: %s pps, %sbit/s on the wire\n",
		(unsigned long long)r->asked, (unsigned long long)r->sent, (unsigned long long)failed, dur,
		fmt_si(pps, a, sizeof(a)), fmt_si(bps, b, sizeof(b)));
	if (u->ring_full)
		fprintf(stderr, "  not sent: %llu refused by the driver (%s)\n", (unsigned long long)u->ring_full,
			r->xmit_err == -ENXIO ? "peer not ready: no NAPI" : "transmit ring full");
	if (u->redirect)
		fprintf(stderr, "  not sent: %llu refused before the driver: %s\n", (unsigned long long)u->redirect,
			strerror(-r->redirect_errno));
	if (u->bad_frame)
		fprintf(stderr, "  not sent: %llu could not be built\n", (unsigned long long)u->bad_frame);
	if (u->interrupted)
		fprintf(stderr, "  not sent: %llu, interrupted\n", (unsigned long long)u->interrupted);
	if (u->duration)
		fprintf(stderr, "  not sent: %llu, --duration reached first\n", (unsigned long long)u->duration);
	if (u->behind)
		fprintf(stderr, "  not sent: %llu due before the end, the sender fell behind its schedule\n",
			(unsigned long long)u->behind);
	if (u->device_error)
		fprintf(stderr, "  not sent: %llu, the device failed first\n", (unsigned long long)u->device_error);
	if (u->unaccounted)
		fprintf(stderr, "  not sent: %llu with no outcome reported (a bug: please report it)\n",
			(unsigned long long)u->unaccounted);
	if (sk->linktype || sk->truncated || sk->too_long || sk->too_short)
		fprintf(stderr, "  skipped while reading: %llu non-Ethernet, %llu truncated, %llu too long, "
			"%llu too short\n", (unsigned long long)sk->linktype, (unsigned long long)sk->truncated,
			(unsigned long long)sk->too_long, (unsigned long long)sk->too_short);
}

/* What the run was: its command line, target and set-up, for whoever reads the JSON later. */
struct run_info {
	const char *cmd;
	int argc;
	char **argv;
	double start_unix;
	const struct rewrite_spec *specs;
	int nspecs;
};

static void write_json(FILE *f, const struct engine_result *r, const struct engine_opts *o,
		       const struct frameset *fs, const struct fs_skips *sk, const struct lw_fleet *fleet,
		       uint64_t ready_ns, const struct run_info *ri)
{
	static const char *const pace[] = { [XR_PACE_NONE] = "topspeed", [XR_PACE_RATE] = "rate",
					    [XR_PACE_PCAP] = "capture" };
	double dur = (r->end_ns - r->start_ns) / 1e9;
	const struct engine_unsent *u = &r->unsent;
	struct json j = { .f = f };
	char line[4096];
	size_t at = 0;

	json_open(&j, NULL, '{');
	json_str(&j, "command", ri->cmd);
	line[0] = 0;
	for (int i = 0; i < ri->argc && at < sizeof(line); i++)
		at += snprintf(line + at, sizeof(line) - at, "%s%s", i ? " " : "", ri->argv[i]);
	json_str(&j, "command_line", line);
	json_str(&j, "version", XR_VERSION);
	json_str(&j, "interface", o->ifc->name);
	json_double(&j, "start_unix", ri->start_unix);
	json_open(&j, "target", '{');
	json_str(&j, "pace", pace[o->pace]);
	if (o->pace == XR_PACE_RATE)
		json_double(&j, "pps", o->pps);
	if (o->pace == XR_PACE_PCAP)
		json_double(&j, "multiplier", o->multiplier);
	if (o->count != XR_FOREVER)
		json_u64(&j, "count", o->count);
	if (o->duration_ns)
		json_double(&j, "duration_s", o->duration_ns / 1e9);
	json_u64(&j, "first_seq", o->first_n);
	json_close(&j, '}');
	json_open(&j, "rewrites", '[');
	for (int i = 0; i < ri->nspecs; i++)
		json_str(&j, NULL, ri->specs[i].text);
	json_close(&j, ']');
	json_flag(&j, "interrupted", r->interrupted);
	json_str(&j, "engine", r->engine);
	json_u64(&j, "threads", o->threads);
	json_u64(&j, "frames_in_set", fs->n);
	json_u64(&j, "asked", r->asked);
	json_u64(&j, "sent", r->sent);
	json_u64(&j, "failed", engine_unsent_total(u));
	json_open(&j, "failed_reasons", '{');
	json_u64(&j, "driver_refused", u->ring_full);
	json_u64(&j, "redirect_error", u->redirect);
	json_u64(&j, "bad_frame", u->bad_frame);
	json_u64(&j, "interrupted", u->interrupted);
	json_u64(&j, "duration_reached", u->duration);
	json_u64(&j, "fell_behind", u->behind);
	json_u64(&j, "device_error", u->device_error);
	json_u64(&j, "unaccounted", u->unaccounted);
	json_close(&j, '}');
	if (r->xmit_err)
		json_str(&j, "driver_error", strerror(-r->xmit_err));
	json_double(&j, "duration_s", dur);
	json_double(&j, "pps", dur > 0 ? r->sent / dur : 0);
	json_double(&j, "bps", dur > 0 ? (r->sent_bytes + (double)r->sent * WIRE_OVERHEAD) * 8 / dur : 0);
	json_u64(&j, "bytes", r->sent_bytes);
	json_open(&j, "sent_per_second", '[');
	for (unsigned int i = 0; i < r->nsec; i++)
		json_u64(&j, NULL, r->per_sec[i]);
	json_close(&j, ']');
	gen_report(r, NULL, &j);
	if (fleet)
		lorawan_report(r, fleet, ready_ns, NULL, &j);
	json_open(&j, "skipped", '{');
	json_u64(&j, "non_ethernet", sk->linktype);
	json_u64(&j, "truncated", sk->truncated);
	json_u64(&j, "too_long", sk->too_long);
	json_u64(&j, "too_short", sk->too_short);
	json_close(&j, '}');
	json_close(&j, '}');
}

static void gen_usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay gen udp|syn -i IFACE --dst ADDR[:PORT] [options]\n"
		"\n"
		"Sends built-in frames without a capture: UDP datagrams, or TCP SYNs for a\n"
		"connection-rate test. Each packet is distinct: its source address and port\n"
		"come from the ranges (n mod the range's size), a UDP payload carries the\n"
		"sequence number n in its first 8 bytes (xdpreplay count --seq payload@0:8),\n"
		"and a SYN's initial sequence number is a keyed function of n.\n"
		"\n"
		"gen syn counts the server's answers on IFACE with an XDP program: SYN-ACKs\n"
		"(matched to their SYN, with round-trip histograms per second), RSTs. It drops\n"
		"them there, so that this host's kernel never answers a SYN-ACK with a RST and\n"
		"the server's SYN queue sees a real load. --complete answers each SYN-ACK with\n"
		"the handshake's ACK and the server's FIN with a RST: the server sees whole\n"
		"connections, and this host keeps no state. Replies are counted for IPv4.\n"
		"\n"
		"Options (and all of replay's rate, count, duration, thread and output options):\n"
		"  -i, --iface IFACE     interface to send from (required)\n"
		"      --dst ADDR[:PORT] destination, IPv4 or [IPv6] (port default 9 for udp, 80 for syn)\n"
		"      --src RANGE       source addresses: A.B.C.D/P, A.B.C.D-E.F.G.H, or an IPv6\n"
		"                        PREFIX/P with P >= 64 (default: IFACE's address)\n"
		"      --sport RANGE     source ports LO-HI (default 1024-65535)\n"
		"      --size N          frame size on the wire with FCS (udp; default 64)\n"
		"      --dst-mac MAC     next hop's MAC (default: from the neighbour table, IPv4)\n"
		"      --complete        syn: complete each handshake and close it (see above)\n"
		"      --wait T          syn: how long answers may take after the last SYN (default 1s)\n"
		"\n"
		XR_EXIT_HELP
		"\n"
		"Examples:\n"
		"  xdpreplay gen udp -i eth1 --dst 198.18.0.2:9 --pps 1M --duration 10s\n"
		"  xdpreplay gen syn -i eth1 --dst 198.18.0.2:80 --src 198.18.64.0/23 --pps 50k --count 100k\n"
		"  xdpreplay gen syn -i eth1 --dst 198.18.0.2:80 --complete --pps 10k --duration 5s --json -\n");
}

struct schedule_ctx {
	const char *path;
	double pps;
	uint64_t first_n;
	bool failed;
};

/*
 * --schedule: the first departure as epoch time, written before anything is
 * sent, so that a receiver can time arrivals while the run is still going.
 */
static void write_schedule(void *ctx, uint64_t start_ns)
{
	struct schedule_ctx *sc = ctx;
	struct wh_schedule ws = { .pps = sc->pps, .first_n = sc->first_n };
	struct timespec rt;

	/* the engine's clock is CLOCK_MONOTONIC; a receiver elsewhere needs the epoch */
	clock_gettime(CLOCK_REALTIME, &rt);
	ws.t0_unix = rt.tv_sec + rt.tv_nsec / 1e9 + ((double)start_ns - (double)now_ns()) / 1e9;
	if (wh_schedule_write(sc->path, &ws)) {
		pr_warn("cannot write %s: %s\n", sc->path, strerror(errno));
		sc->failed = true;
	}
}

int replay_run(int argc, char **argv, enum run_mode mode)
{
	enum { O_ENGINE = 256, O_TOPSPEED, O_PPS, O_RATE, O_MULT, O_LOOP, O_COUNT, O_DURATION, O_THREADS,
	       O_BATCH, O_TRUNC, O_JSON, O_REWRITE, O_PRELOAD, O_DST, O_SRC, O_SPORT, O_SIZE, O_DSTMAC,
	       O_COMPLETE, O_WAIT, O_FIRST, O_FLEET, O_SERVER, O_ROUNDS, O_SCHEDULE, O_STATIC, O_NOPRE, O_LISTEN,
	       O_TOKEN, O_MAXMEM, O_MAXRATIO, O_MAXGAP };
	bool gen_mode = mode == RUN_GEN, lora_mode = mode == RUN_LORAWAN;
	const char *cmd = gen_mode ? "gen" : lora_mode ? "lorawan send" : "replay";
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "engine", required_argument, NULL, O_ENGINE },
		{ "topspeed", no_argument, NULL, O_TOPSPEED },
		{ "pps", required_argument, NULL, O_PPS },
		{ "rate", required_argument, NULL, O_RATE },
		{ "multiplier", required_argument, NULL, O_MULT },
		{ "loop", required_argument, NULL, O_LOOP },
		{ "count", required_argument, NULL, O_COUNT },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "allow-truncated", no_argument, NULL, O_TRUNC },
		{ "json", required_argument, NULL, O_JSON },
		{ "rewrite", required_argument, NULL, O_REWRITE },
		{ "preload", required_argument, NULL, O_PRELOAD },
		{ "dst", required_argument, NULL, O_DST },
		{ "src", required_argument, NULL, O_SRC },
		{ "sport", required_argument, NULL, O_SPORT },
		{ "size", required_argument, NULL, O_SIZE },
		{ "dst-mac", required_argument, NULL, O_DSTMAC },
		{ "complete", no_argument, NULL, O_COMPLETE },
		{ "wait", required_argument, NULL, O_WAIT },
		{ "first-seq", required_argument, NULL, O_FIRST },
		{ "fleet", required_argument, NULL, O_FLEET },
		{ "server", required_argument, NULL, O_SERVER },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "schedule", required_argument, NULL, O_SCHEDULE },
		{ "static", no_argument, NULL, O_STATIC },
		{ "no-precompute", no_argument, NULL, O_NOPRE },
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "max-memory", required_argument, NULL, O_MAXMEM },
		{ "max-ratio", required_argument, NULL, O_MAXRATIO },
		{ "max-gap", required_argument, NULL, O_MAXGAP },
		{ "token-file", required_argument, NULL, O_TOKEN },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct engine_opts o = { .threads = 1, .batch = 64, .count = 0, .multiplier = 1 };
	const char *ifname = NULL, *engine = "auto", *json_path = NULL, *why;
	uint64_t loop = 1, count = 0, threads = 1, batch = 64;
	bool have_loop = false;
	double rate_bps = 0;
	bool have_count = false, quiet = false, use_xsk;
	int paced = 0, opt, err, ret = XR_EXIT_ENV;
	struct rewrite_spec specs[GEN_MAX_SPECS]; /* rewrite_plan takes XR_MAX_OPS ops (and csum=auto) */
	struct fs_load_opts lo = {};
	int nspecs = 0;
	struct engine_result res;
	struct fs_skips sk = {};
	struct frameset fs;
	struct iface ifc;
	struct gen_opts g = { .size = 64 };
	bool have_dst = false;
	uint64_t reply_wait = 1000000000ULL, size;
	FILE *jf = NULL;
	const char *fleet_dir = NULL, *schedule = NULL;
	struct lw_fleet fleet = {};
	uint64_t rounds = 1, t_begin = now_ns();
	bool have_rounds = false, no_precompute = false, write_failed = false;
	const char *listen_addr = NULL, *token_file = NULL;
	struct schedule_ctx sc = {};
	long ncpu;
	bool preload_auto = false;
	struct send_live sl = { .live.lock = PTHREAD_MUTEX_INITIALIZER };
	struct httpd *http = NULL;
	struct sockaddr_in sa;
	char token[260] = "";
	const char *lora_opt = NULL;

	xr_cmd = cmd;
	/* loading limits: half of this machine's memory, and gzip files that expand 200x at most */
	lo.max_memory = (uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 2;
	lo.max_ratio = 200;
	frameset_init(&fs);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:qvh", opts, NULL)) != -1) {
		switch (opt) {
		case 'i': ifname = optarg; break;
		case O_ENGINE: engine = optarg; break;
		case O_TOPSPEED: o.pace = XR_PACE_NONE; paced++; break;
		case O_PPS:
			if (cli_number(cmd, "pps", optarg, &o.pps))
				return XR_EXIT_USAGE;
			if (o.pps <= 0)
				return cli_usage_error(cmd, "--pps must be above 0");
			o.pace = XR_PACE_RATE;
			paced++;
			break;
		case O_RATE:
			if (cli_bitrate(cmd, "rate", optarg, &rate_bps))
				return XR_EXIT_USAGE;
			if (rate_bps <= 0)
				return cli_usage_error(cmd, "--rate must be above 0");
			o.pace = XR_PACE_RATE;
			paced++;
			break;
		case O_MULT:
			if (cli_number(cmd, "multiplier", optarg, &o.multiplier))
				return XR_EXIT_USAGE;
			if (o.multiplier < 0.001 || o.multiplier > 1e6)
				return cli_usage_error(cmd, "--multiplier must be between 0.001 and 1000000");
			o.pace = XR_PACE_PCAP;
			paced++;
			break;
		case O_LOOP:
			if (cli_count(cmd, "loop", optarg, &loop))
				return XR_EXIT_USAGE;
			have_loop = true;
			break;
		case O_COUNT:
			if (cli_count(cmd, "count", optarg, &count))
				return XR_EXIT_USAGE;
			have_count = true;
			break;
		case O_DURATION:
			if (cli_duration(cmd, "duration", optarg, &o.duration_ns))
				return XR_EXIT_USAGE;
			if (!o.duration_ns)
				return cli_usage_error(cmd, "--duration must be above 0");
			break;
		case O_THREADS:
			if (cli_count(cmd, "threads", optarg, &threads))
				return XR_EXIT_USAGE;
			break;
		case O_BATCH:
			if (cli_count(cmd, "batch", optarg, &batch))
				return XR_EXIT_USAGE;
			if (batch < 1 || batch > 256)
				return cli_usage_error(cmd, "--batch must be between 1 and 256");
			break;
		case O_TRUNC: lo.allow_truncated = true; break;
		case O_PRELOAD:
			if (cli_count(cmd, "preload", optarg, &lo.max_frames))
				return XR_EXIT_USAGE;
			if (!lo.max_frames)
				return cli_usage_error(cmd, "--preload must be above 0");
			break;
		case O_JSON: json_path = optarg; break;
		case O_REWRITE:
			if (nspecs >= XR_MAX_OPS + 1)
				return cli_usage_error(cmd, "at most %d --rewrite ops (and csum=auto)", XR_MAX_OPS);
			if (rewrite_parse(optarg, &specs[nspecs++]))
				return XR_EXIT_USAGE;
			break;
		case 'q': quiet = true; xr_verbosity = XR_LOG_WARN; break;
		case 'v': xr_verbosity++; break;
		case O_DST:
		case O_SERVER:
			if ((opt == O_DST) == lora_mode)
				return cli_usage_error(cmd, "unknown option '--%s'", opt == O_DST ? "dst" : "server");
			if (gen_parse_dst(optarg, opt == O_DST ? "--dst" : "--server", &g))
				return XR_EXIT_USAGE;
			have_dst = true;
			break;
		/* lorawan send's own options; refused elsewhere after the loop */
		case O_FLEET: fleet_dir = optarg; lora_opt = "fleet"; break;
		case O_NOPRE: no_precompute = true; lora_opt = "no-precompute"; break;
		case O_STATIC: o.lora_static = true; lora_opt = "static"; break;
		case O_SCHEDULE: schedule = optarg; lora_opt = "schedule"; break;
		case O_ROUNDS:
			if (cli_count(cmd, "rounds", optarg, &rounds))
				return XR_EXIT_USAGE;
			have_rounds = true;
			lora_opt = "rounds";
			break;
		case O_LISTEN: listen_addr = optarg; break;
		case O_MAXMEM:
			if (cli_count(cmd, "max-memory", optarg, &lo.max_memory))
				return XR_EXIT_USAGE;
			break;
		case O_MAXRATIO:
			if (cli_number(cmd, "max-ratio", optarg, &lo.max_ratio))
				return XR_EXIT_USAGE;
			break;
		case O_MAXGAP:
			if (cli_duration(cmd, "max-gap", optarg, &lo.max_gap_ns))
				return XR_EXIT_USAGE;
			break;
		case O_TOKEN: token_file = optarg; break;
		case O_SRC: g.src = optarg; break;
		case O_SPORT: g.sport = optarg; break;
		case O_SIZE:
			if (cli_count(cmd, "size", optarg, &size))
				return XR_EXIT_USAGE;
			if (size < 64 || size > XR_MAX_FRAME)
				return cli_usage_error(cmd, "--size must be between 64 and %d", XR_MAX_FRAME);
			g.size = size;
			break;
		case O_DSTMAC:
			if (parse_mac(optarg, g.dst_mac))
				return cli_usage_error(cmd, "--dst-mac: '%s' is not a MAC address", optarg);
			g.have_mac = true;
			break;
		case O_COMPLETE: g.complete = true; break;
		case O_FIRST:
			if (cli_count(cmd, "first-seq", optarg, &o.first_n))
				return XR_EXIT_USAGE;
			break;
		case O_WAIT:
			if (cli_duration(cmd, "wait", optarg, &reply_wait))
				return XR_EXIT_USAGE;
			break;
		case 'h':
			gen_mode ? gen_usage(stdout) : lora_mode ? lorawan_send_usage(stdout) : usage(stdout);
			return XR_EXIT_OK;
		default: return cli_bad_option(cmd, argv, opt);
		}
	}
	if (lora_opt && !lora_mode)
		return cli_usage_error(cmd, "unknown option '--%s'", lora_opt);
	if (!ifname)
		return cli_usage_error(cmd, "missing -i IFACE");
	if (gen_mode) {
		if (optind >= argc || (strcmp(argv[optind], "udp") && strcmp(argv[optind], "syn")))
			return cli_usage_error(cmd, "say what to generate: udp or syn");
		if (optind + 1 < argc)
			return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
		if (!have_dst)
			return cli_usage_error(cmd, "missing --dst ADDR[:PORT]");
		g.syn = !strcmp(argv[optind], "syn");
		if (!g.dport)
			g.dport = g.syn ? 80 : 9;
		if (g.complete && !g.syn)
			return cli_usage_error(cmd, "--complete goes with gen syn");
	} else if (lora_mode) {
		if (optind < argc)
			return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		if (!fleet_dir)
			return cli_usage_error(cmd, "missing --fleet DIR (made by xdpreplay lorawan fleet)");
		if (!have_dst)
			return cli_usage_error(cmd, "missing --server ADDR[:PORT]");
		if (g.ipv6)
			return cli_usage_error(cmd, "--server: IPv4 only");
		if (!g.dport)
			g.dport = LW_DEFAULT_PORT;
		if (g.src || g.complete || have_loop || nspecs)
			return cli_usage_error(cmd, "--src, --complete, --loop and --rewrite do not apply here");
		if (!strcmp(engine, "xsk"))
			return cli_usage_error(cmd, "LoRaWAN uplinks are rewritten by the kernel engine; "
					       "--engine xsk cannot send them");
		if (have_rounds && !rounds)
			return cli_usage_error(cmd, "--rounds must be above 0");
	} else {
		if (optind >= argc)
			return cli_usage_error(cmd, "missing capture FILE");
		if (have_dst || g.src || g.sport || g.have_mac || g.complete)
			return cli_usage_error(cmd, "--dst, --src, --sport, --size, --dst-mac and --complete belong to "
					       "xdpreplay gen");
	}
	if (paced > 1)
		return cli_usage_error(cmd, "give one of --topspeed, --pps, --rate, --multiplier");
	if (strcmp(engine, "auto") && strcmp(engine, "kernel") && strcmp(engine, "xsk"))
		return cli_usage_error(cmd, "--engine: '%s' is not auto, kernel or xsk", engine);
	if (threads < 1 || threads > (uint64_t)sysconf(_SC_NPROCESSORS_ONLN) || threads > XR_MAX_CPUS)
		return cli_usage_error(cmd, "--threads must be between 1 and the number of CPUs (%ld)",
				       sysconf(_SC_NPROCESSORS_ONLN));
	if (have_count && !count)
		return cli_usage_error(cmd, "--count must be above 0");
	if (listen_addr && httpd_parse_addr(listen_addr, &sa))
		return cli_usage_error(cmd, "--listen: '%s' is not ADDR:PORT or :PORT (IPv4, port 1-65535)", listen_addr);
	if (token_file && !listen_addr)
		return cli_usage_error(cmd, "--token-file goes with --listen");
	if (token_file && httpd_read_token(token_file, token, sizeof(token)))
		return XR_EXIT_USAGE;
	if (cli_need_root(cmd))
		return XR_EXIT_ENV;
	if (iface_get(ifname, &ifc))
		return XR_EXIT_ENV;
	if (json_path) {
		jf = json_fopen(json_path);
		if (!jf) {
			pr_warn("cannot write %s: %s\n", json_path, strerror(errno));
			return XR_EXIT_ENV;
		}
	}

	/* an 802.1Q tag may ride on top of the MTU; live frames cap the rest */
	lo.max_len = ifc.mtu + 14 + 4;
	if (lo.max_len > XR_MAX_FRAME)
		lo.max_len = XR_MAX_FRAME;
	/* --count N below the capture's size plays its first N frames: no need to read the rest */
	if (have_count && (!lo.max_frames || count < lo.max_frames)) {
		lo.max_frames = count;
		preload_auto = true;
	}
	for (int i = optind; i < argc && !gen_mode; i++) {
		err = pcap_load(argv[i], &fs, &lo, &sk);
		if (err) {
			ret = err == -ENOMEM ? XR_EXIT_ENV : XR_EXIT_USAGE;
			goto out;
		}
	}
	if (lora_mode) {
		/* a fleet that cannot be read is bad input; a missing neighbour entry is the environment */
		err = lw_fleet_load(fleet_dir, &fleet);
		if (err) {
			ret = err == -ENOMEM ? XR_EXIT_ENV : XR_EXIT_USAGE;
			goto out;
		}
		if (rounds > (XR_FOREVER - 1) / ((uint64_t)fleet.ndev * fleet.heard_by)) {
			ret = cli_usage_error(cmd, "--rounds %llu: %llu PUSH_DATA a round is more than a run can count",
					      (unsigned long long)rounds, (unsigned long long)fleet.ndev * fleet.heard_by);
			goto out;
		}
		err = lorawan_frames(&fleet, &g, &ifc, &fs, &o.rpl);
		if (err) {
			ret = err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
			goto out;
		}
		o.lora = &fleet;
		o.lora_precompute = !no_precompute;
		o.replies = true;
		o.reply_wait_ns = reply_wait;
	}
	if (gen_mode) {
		err = gen_build(&g, &ifc, &fs, specs, &nspecs, &o.rpl);
		if (err) {
			ret = err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
			goto out;
		}
		o.replies = g.syn && !g.ipv6;
		o.reply_wait_ns = reply_wait;
	}
	frameset_finish(&fs);
	if (lo.max_frames && fs.n == lo.max_frames && !preload_auto)
		pr_warn("warning: --preload %llu: playing the first %zu frames only\n",
			(unsigned long long)lo.max_frames, fs.n);
	if (sk.gaps_cut)
		pr_warn("warning: %llu capture gaps longer than --max-gap shortened to it\n",
			(unsigned long long)sk.gaps_cut);
	else if (o.pace == XR_PACE_PCAP && sk.max_gap_ns > 10000000000ULL)
		pr_warn("warning: a capture gap of %s before frame %zu will be waited out (x%g): --max-gap T "
			"shortens such gaps\n", fmt_duration(sk.max_gap_ns, (char[16]){}, 16), sk.max_gap_frame,
			o.multiplier);
	if (sk.linktype)
		pr_warn("warning: skipped %llu frames of non-Ethernet link types\n", (unsigned long long)sk.linktype);
	if (sk.truncated)
		pr_warn("warning: skipped %llu frames captured shorter than they were (--allow-truncated sends them)\n",
			(unsigned long long)sk.truncated);
	if (sk.too_long)
		pr_warn("warning: skipped %llu frames longer than %s allows (%u bytes)\n",
			(unsigned long long)sk.too_long, ifname, lo.max_len);
	if (sk.too_short)
		pr_warn("warning: skipped %llu frames shorter than an Ethernet header\n",
			(unsigned long long)sk.too_short);
	if (!fs.n) {
		pr_warn("no frame to send in %s%s\n", argv[optind], argc - optind > 1 ? " and the other files" : "");
		ret = XR_EXIT_USAGE;
		goto out;
	}

	if (nspecs) {
		int nops = rewrite_plan(specs, nspecs, &fs, o.ops);

		if (nops < 0) {
			ret = XR_EXIT_USAGE;
			goto out;
		}
		o.nops = nops;
	}

	/*
	 * The kernel engine where live frames reach the wire; AF_XDP otherwise,
	 * but only for frames sent as captured: gen, lorawan send and --rewrite
	 * build their packets in the kernel engine.
	 */
	use_xsk = !strcmp(engine, "xsk");
	if (!use_xsk && probe_best_engine(&ifc, &why) != PROBE_ENGINE_KERNEL) {
		if (!strcmp(engine, "kernel") || gen_mode || lora_mode || o.nops) {
			pr_warn("the kernel engine cannot send on %s: %s%s\n", ifname, why,
				!strcmp(engine, "kernel") ? "" : gen_mode || lora_mode ?
				" (this command builds its packets there)" : " (--rewrite needs it)");
			goto out;
		}
		pr_info("engine: xsk (the kernel engine cannot send here: %s)\n", why);
		use_xsk = true;
	} else if (use_xsk && o.nops) {
		pr_warn("%s needs the kernel engine; --engine xsk sends frames as captured\n",
			gen_mode ? "gen" : "--rewrite");
		goto out;
	} else if (!strcmp(engine, "auto")) {
		pr_info("engine: kernel (%s)\n", why);
	}
	/* AF_XDP lays every frame out in a chunk of its own */
	if (use_xsk && lo.max_memory && (uint64_t)fs.n * (fs.max_len <= 2048 ? 2048 : 4096) > lo.max_memory) {
		pr_warn("the xsk engine would take %llu MiB of UMEM for %zu frames, more than --max-memory %llu MiB\n",
			(unsigned long long)((uint64_t)fs.n * (fs.max_len <= 2048 ? 2048 : 4096) >> 20), fs.n,
			(unsigned long long)(lo.max_memory >> 20));
		ret = XR_EXIT_USAGE;
		goto out;
	}

	if (lora_mode && !have_count)
		o.count = o.duration_ns && !have_rounds ? XR_FOREVER : (uint64_t)fleet.ndev * fleet.heard_by * rounds;
	else if (have_count)
		o.count = count;
	else if (loop == 0 || (o.duration_ns && !have_loop))
		o.count = XR_FOREVER;
	else if (fs.n > UINT64_MAX / loop)
		o.count = XR_FOREVER;
	else
		o.count = fs.n * loop;
	if (rate_bps > 0) {
		double mean = (double)fs.bytes_len / fs.n;

		o.pps = rate_bps / ((mean + WIRE_OVERHEAD) * 8);
	}
	if (gen_mode && g.syn && g.tuples) {
		double planned = o.count != XR_FOREVER ? (double)o.count :
				 o.pace == XR_PACE_RATE && o.duration_ns ? o.pps * o.duration_ns / 1e9 : 0;

		if (planned > g.tuples)
			pr_warn("warning: gen syn: %.0f SYNs from a pool of %llu (source, port) pairs: pairs repeat, "
				"and a server still holding one in TIME_WAIT may refuse it; widen --src or --sport\n",
				planned, (unsigned long long)g.tuples);
	}
	if (o.pace == XR_PACE_PCAP && fs.span_ns == 0 && fs.n > 1)
		pr_warn("warning: all frames have the same timestamp: --multiplier sends them back to back\n");
	o.ifc = &ifc;
	o.fs = &fs;
	o.threads = threads;
	o.batch = batch;
	o.progress = !quiet && isatty(STDERR_FILENO);
	/*
	 * Spread threads from the last CPU down (CPU 0 usually takes most
	 * interrupts), among the first XR_MAX_CPUS: the engine keeps a slot per CPU.
	 */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN) < XR_MAX_CPUS ? sysconf(_SC_NPROCESSORS_ONLN) : XR_MAX_CPUS;
	for (unsigned int i = 0; i < o.threads; i++)
		o.cpus[i] = (int)(ncpu - 1 - i);

	if (listen_addr) {
		struct httpd_opts ho = { .option = "--listen", .token = token_file ? token : NULL };

		sl.cmd = cmd;
		sl.ifname = ifc.name;
		sl.target_pps = o.pace == XR_PACE_RATE ? o.pps : 0;
		o.live = &sl.live;
		if (httpd_start(&http, listen_addr, &ho, send_live_serve, &sl))
			goto out;
	}
	if (schedule) {
		sc = (struct schedule_ctx){ .path = schedule, .pps = o.pace == XR_PACE_RATE ? o.pps : 0,
					    .first_n = o.first_n };
		o.on_start = write_schedule;
		o.on_start_ctx = &sc;
	}
	cli_catch_signals();
	err = use_xsk ? xengine_run(&o, &res) : kengine_run(&o, &res);
	/* the figures stay readable until the report is written: a scraper sees the end too */
	if (err && !res.start_ns)
		goto out;
	if (!quiet) {
		print_summary(cmd, &res, &o, &fs, &sk);
		gen_report(&res, stderr, NULL);
		if (lora_mode)
			lorawan_report(&res, &fleet, res.start_ns - t_begin, stderr, NULL);
	}
	if (res.unsent.behind)
		pr_warn("warning: fell behind the schedule: %llu frames due before the end were not sent "
			"(%s pps is more than this sender keeps here)\n", (unsigned long long)res.unsent.behind,
			fmt_si(o.pps, (char[16]){}, 16));
	if (res.interrupted)
		pr_warn("interrupted; the figures cover what was done\n");
	if (jf) {
		struct timespec rt;
		struct run_info ri = { .cmd = cmd, .argc = argc, .argv = argv, .specs = specs, .nspecs = nspecs };

		clock_gettime(CLOCK_REALTIME, &rt);
		ri.start_unix = rt.tv_sec + rt.tv_nsec / 1e9 - (now_ns() - res.start_ns) / 1e9;
		write_json(jf, &res, &o, &fs, &sk, lora_mode ? &fleet : NULL, res.start_ns - t_begin, &ri);
		err = json_fclose(jf);
		jf = NULL;
		if (err) {
			pr_warn("cannot write %s: %s\n", json_path, strerror(-err));
			write_failed = true;
		}
	}
	if (sc.failed)
		write_failed = true;
	free(res.replies.hist);
	free(res.replies.gw_acks);
	free(res.per_sec);
	ret = err || write_failed ? XR_EXIT_ENV : res.interrupted ? XR_EXIT_INTERRUPTED :
	      engine_unsent_total(&res.unsent) ? XR_EXIT_FAIL : XR_EXIT_OK;
out:
	httpd_stop(http);
	if (jf)
		json_fclose(jf);
	frameset_free(&fs);
	lw_fleet_free(&fleet);
	return ret;
}

int cmd_replay(int argc, char **argv)
{
	return replay_run(argc, argv, RUN_REPLAY);
}

int cmd_gen(int argc, char **argv)
{
	return replay_run(argc, argv, RUN_GEN);
}
