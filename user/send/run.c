// SPDX-License-Identifier: GPL-2.0
/*
 * One sender run, whatever the protocol: its frames into a frame set, the
 * engine chosen by what the interface can do, the count and rate the options
 * ask for, the run, the summary and the JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "util/time.h"
#include "engine/probe.h"
#include "measure/httpd.h"
#include "measure/proc.h"
#include "send/live.h"
#include "send/stream.h"
#include "engine/hlog.h"
#include "engine/replies.h"
#include "send/peer.h"
#include "send/run.h"
#include "send/verdict.h"
#include "util/json.h"
#include "util/log.h"
#include "util/netns.h"
#include "util/units.h"

/*
 * --engine auto: the kernel engine where a live-frames run works on this
 * interface, the xsk engine otherwise, in one line that says why.
 * XDPREPLAY_ENGINE=kernel|xsk makes auto that choice (the tests' xsk pass).
 */
static int choose_engine(const struct send_opts *so, const struct iface *ifc, bool *use_xsk)
{
	enum send_engine e = so->engine;
	const char *env = getenv("XDPREPLAY_ENGINE"), *why;

	if (e == SEND_ENGINE_AUTO && env && (!strcmp(env, "xsk") || !strcmp(env, "kernel"))) {
		e = !strcmp(env, "xsk") ? SEND_ENGINE_XSK : SEND_ENGINE_KERNEL;
		pr_info("engine: %s (XDPREPLAY_ENGINE)\n", env);
	}
	*use_xsk = e == SEND_ENGINE_XSK;
	if (*use_xsk)
		return 0;
	if (probe_best_engine(ifc, &why) == PROBE_ENGINE_KERNEL) {
		if (e == SEND_ENGINE_AUTO)
			pr_info("engine: kernel (%s)\n", why);
		return 0;
	}
	if (e == SEND_ENGINE_KERNEL) {
		pr_warn("the kernel engine cannot send on %s: %s\n", ifc->name, why);
		return -EOPNOTSUPP;
	}
	pr_info("engine: xsk (the kernel engine cannot send on %s: %s)\n", ifc->name, why);
	*use_xsk = true;
	return 0;
}

/* Frames to send: --count, or until --duration, or what the protocol says a whole run is. */
static uint64_t run_count(const struct send_opts *so, const struct xr_proto *p, void *st,
			  const struct frameset *fs)
{
	uint64_t n;

	if (so->count)
		return so->count;
	n = p->default_count ? p->default_count(st, so, fs) : 0;
	if (n)
		return n;
	return so->duration_ns ? XR_FOREVER : fs->n;
}

/*
 * --shard I/N: this shard's part of the whole run's count and rate, after
 * the frames are built (a protocol's units and sources are known then). The
 * N shards' sources must be apart, or a reply would reach another shard's
 * host: N must divide --src's addresses (shard I takes those of index I mod
 * N). 0, or -EINVAL after a one-line message.
 */
static int shard_run(const struct send_opts *so, struct engine_opts *o, const struct frameset *fs)
{
	uint64_t unit = o->frame_div > 1 ? o->frame_div : 1;

	/*
	 * Shard I owns the units u = n / unit with u mod N = I, whatever the run's
	 * first n, so that it keeps its sources from run to run (a search's trials):
	 * its place in this run's rotation is counted from the first unit.
	 */
	if (so->first_n % unit) {
		pr_warn("--shard: --first-seq %llu splits an uplink's %llu copies between shards; "
			"give a multiple of %llu\n",
			(unsigned long long)so->first_n, (unsigned long long)unit,
			(unsigned long long)unit);
		return -EINVAL;
	}
	o->shards = so->shards;
	o->shard = engine_shard_place(so->shard, so->shards, so->first_n, unit);
	if (o->reply_kind != XR_REPLY_NONE && so->net.have_src && o->rpl.src_count % so->shards) {
		pr_warn("--shard %u/%u: --src's %u addresses do not split into %u equal parts, so "
			"the shards' replies would cross; give a multiple of %u (or leave --src out: "
			"each shard then sends from its own interface's address)\n",
			so->shard, so->shards, o->rpl.src_count, so->shards, so->shards);
		return -EINVAL;
	}
	if (o->frames_are_devices && fs->n % so->shards) {
		pr_warn("--shard %u/%u: the %zu devices do not split into %u equal parts, so a "
			"device's uplinks would come from several shards; give a multiple of %u\n",
			so->shard, so->shards, fs->n, so->shards, so->shards);
		return -EINVAL;
	}
	o->count = engine_shard_count(o->count, o->shard, so->shards, o->frame_div);
	if (o->pace == XR_PACE_RATE)
		o->pps /= so->shards;
	if (!o->count)
		pr_warn("warning: --shard %u/%u: nothing to send (the whole run is shorter)\n",
			so->shard, so->shards);
	return 0;
}

/*
 * A veth hands what CPU c sends to its peer's receive queue c % rx_queues.
 * Threads whose CPUs share a queue contend for its one ring and NAPI
 * instance: two threads into one queue receive less than one. A queue whose
 * NAPI thread is pinned to a CPU drains only there, and a sender on that CPU
 * feeding another queue keeps it from its core: with each queue's receiver
 * pinned to the CPU after its sender's, two threads received less than one
 * did (docs/benchmarks.md, "Where threads go"). So the kernel engine picks CPUs,
 * from the last down, that each feed a queue of their own and host no other
 * queue's pinned receiver, and says so when that leaves fewer than asked.
 */
static void place_veth_threads(struct engine_opts *o, const struct iface *ifc, int ncpu,
			       const struct veth_peer *vp, const struct napi_thread *napi,
			       int nnapi)
{
	unsigned int kept = 0, asked = o->threads;
	bool pinned = nnapi == (int)vp->rx_queues, crossed = false;
	int cpus[XR_MAX_CPUS];

	if (asked < 2)
		return;
	for (int c = ncpu - 1; c >= 0 && kept < asked; c--) {
		uint32_t q = (uint32_t)c % vp->rx_queues;
		bool ok = true;

		for (unsigned int j = 0; j < kept && ok; j++) {
			uint32_t qj = (uint32_t)cpus[j] % vp->rx_queues;

			if (qj == q) {
				ok = false;
			} else if (pinned && (napi[qj].cpu == c || napi[q].cpu == cpus[j])) {
				ok = false;
				crossed = true;
			}
		}
		if (ok)
			cpus[kept++] = c;
	}
	memcpy(o->cpus, cpus, kept * sizeof(cpus[0]));
	o->threads = kept;
	if (kept == asked)
		return;
	if (!crossed)
		pr_warn("warning: --threads %u: %s's veth peer %s receives on %u queue%s, and "
			"threads sharing a queue send less together than one alone: sending with %u "
			"thread%s (a veth created with numrxqueues %u takes %u)\n",
			asked, ifc->name, vp->name, vp->rx_queues, vp->rx_queues == 1 ? "" : "s",
			kept, kept == 1 ? "" : "s", asked, asked);
	else
		pr_warn("warning: --threads %u: %s's veth peer %s has its NAPI threads pinned, and "
			"a sender on the CPU of another queue's NAPI thread keeps that receiver from its "
			"core (two threads sent 0.8x one): sending with %u thread%s, on CPUs without one\n",
			asked, ifc->name, vp->name, kept, kept == 1 ? "" : "s");
}

/* The xsk engine binds a socket per queue: at most as many threads as the interface has queues. */
static void xsk_threads(struct engine_opts *o, const struct iface *ifc)
{
	unsigned int queues = ifc->ntxq < ifc->nrxq ? ifc->ntxq : ifc->nrxq, asked = o->threads;

	if (!queues || asked <= queues)
		return;
	o->threads = queues;
	pr_warn("warning: --threads %u: the xsk engine binds a socket to each of %s's queues, and it "
		"has %u: sending with %u thread%s\n",
		asked, ifc->name, queues, queues, queues == 1 ? "" : "s");
}

/*
 * --backoff auto spins first only where the receiver drains on another CPU
 * while the sender waits: a veth peer whose NAPI runs in kernel threads.
 * There, with the receiver on a core of its own, one thread received 1.83x
 * as much as by skipping iterations (gen.bpf.c: ring_full_backoff). Where
 * the receiver needs the sender's CPU (softirq NAPI, a NIC's completions),
 * each spin up to the longest lets one more flush be refused.
 */
static void choose_backoff(struct engine_opts *o, const struct iface *ifc, enum send_backoff asked,
			   const struct veth_peer *vp, const struct napi_thread *napi, int nnapi)
{
	char cpus[128] = "";
	size_t len = 0;

	o->backoff = asked == SEND_BACKOFF_SPIN ? XR_BACKOFF_SPIN : XR_BACKOFF_SKIP;
	if (asked != SEND_BACKOFF_AUTO || !vp)
		return;
	if (nnapi < 0) {
		pr_debug("%s: whether veth peer %s's NAPI runs in threads is not known (%s): "
			 "refusals are met by skipping iterations (--backoff spin to spin)\n",
			 ifc->name, vp->name, strerror(-nnapi));
		return;
	}
	if (!nnapi)
		return;
	o->backoff = XR_BACKOFF_SPIN;
	for (int i = 0; i < nnapi && i < XR_MAX_CPUS && len < sizeof(cpus) - 16; i++)
		len += snprintf(cpus + len, sizeof(cpus) - len, "%s%d", i ? "," : "",
				proc_last_cpu(napi[i].pid));
	pr_debug("%s: veth peer %s's NAPI runs in %d thread%s (last on CPU %s): refusals are "
		 "met by spinning first\n",
		 ifc->name, vp->name, nnapi, nnapi == 1 ? "" : "s", cpus);
}

/* the run's JSON result, for --json-stream's "end" */
static void write_result(void *ctx, FILE *f)
{
	send_json(ctx, f);
}

/* --latency-spectrum (log false) or --latency-log: 0, or -errno after a message */
static int write_latency(const char *path, const struct engine_result *res, double start_unix,
			 bool log)
{
	FILE *f = json_fopen(path);
	int err;

	if (!f) {
		err = -errno;
		pr_warn("cannot write %s: %s\n", path, strerror(errno));
		return err;
	}
	/* answers went uncounted (no BPF here): an empty one, as the JSON's replies say */
	if (log)
		hlog_write(f, res, start_unix);
	else
		replies_spectrum_write(res, f);
	err = json_fclose(f);
	if (err)
		pr_warn("cannot write %s: %s\n", path, strerror(-err));
	return err;
}

/* One run's working state: its options, frames, plan, engine, live figures and results */
struct send_ctx {
	const struct send_opts *so;
	const struct xr_proto *p;
	void *st;
	struct engine_opts o;
	struct engine_result res;
	struct send_plan plan;
	struct frameset fs;
	struct iface ifc;
	struct send_live sl;
	struct send_stream stream;
	struct httpd *http;
	uint64_t whole_count; /* --shard: the whole run's (o has this shard's) */
	double whole_pps;
	bool use_xsk;
	FILE *jf;
};

/*
 * The protocol's frames and plan, the run's count and rate, this shard's
 * part of them. 0, or the exit status after a line.
 */
static int send_frames(struct send_ctx *c)
{
	const struct send_opts *so = c->so;
	int err;

	c->plan = so->plan;
	err = c->p->build(c->st, so, &c->ifc, &c->fs, &c->plan, &c->o);
	if (err)
		return err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
	frameset_finish(&c->fs);
	if (!c->fs.n)
		return XR_EXIT_USAGE;
	if (c->plan.nspecs) {
		int nops = rewrite_constants(c->plan.specs, c->plan.nspecs, &c->fs);

		if (nops >= 0)
			nops = rewrite_plan(c->plan.specs, c->plan.nspecs, &c->fs, c->o.ops);
		if (nops < 0)
			return XR_EXIT_USAGE;
		c->o.nops = nops;
	}
	c->o.count = run_count(so, c->p, c->st, &c->fs);
	if (send_thresholds_check(&so->fail_if, &c->o))
		return XR_EXIT_USAGE;
	if ((so->spectrum_path || so->hlog_path) && c->o.reply_kind == XR_REPLY_NONE) {
		pr_warn("%s: this run counts no answers (gen syn, dns, tcp, mqtt and lorawan send do)\n",
			so->spectrum_path ? "--latency-spectrum" : "--latency-log");
		return XR_EXIT_USAGE;
	}
	if (so->rate_bps > 0) {
		double mean = (double)c->fs.bytes_len / c->fs.n;

		c->o.pps = so->rate_bps / ((mean + WIRE_OVERHEAD) * 8);
	}
	c->whole_count = c->o.count;
	c->whole_pps = c->o.pps;
	if (so->shards > 1 && shard_run(so, &c->o, &c->fs))
		return XR_EXIT_USAGE;
	return 0;
}

/* The engine, and whether the frames fit its memory. 0, or the exit status after a line. */
static int send_engine(struct send_ctx *c)
{
	const struct frameset *fs = &c->fs;
	uint64_t umem;

	if (choose_engine(c->so, &c->ifc, &c->use_xsk))
		return XR_EXIT_ENV;
	/* AF_XDP lays every frame sent as it is out in a chunk of its own */
	umem = (uint64_t)fs->n * (fs->max_len <= 2048 ? 2048 : 4096);
	if (c->use_xsk && !engine_builds_frames(&c->o) && c->o.umem_limit &&
	    umem > c->o.umem_limit) {
		pr_warn("the xsk engine would take %llu MiB of UMEM for %zu frames, more than --max-memory %llu MiB\n",
			(unsigned long long)(umem >> 20), fs->n,
			(unsigned long long)(c->o.umem_limit >> 20));
		return XR_EXIT_USAGE;
	}
	if (c->o.pace == XR_PACE_PCAP && fs->span_ns == 0 && fs->n > 1)
		pr_warn("warning: all frames have the same timestamp: --multiplier sends them back to back\n");
	return 0;
}

/*
 * The sending threads' CPUs, spread from the last CPU down (CPU 0 usually
 * takes most interrupts) among the first XR_MAX_CPUS (the engine keeps a
 * slot per CPU), away from a veth peer's NAPI threads; their back-off.
 */
static void send_place_threads(struct send_ctx *c)
{
	struct engine_opts *o = &c->o;
	struct napi_thread napi[XR_MAX_CPUS];
	struct veth_peer vp;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN) < XR_MAX_CPUS ? sysconf(_SC_NPROCESSORS_ONLN) :
								  XR_MAX_CPUS;
	int nnapi;

	for (unsigned int i = 0; i < o->threads; i++)
		o->cpus[i] = (int)(ncpu - 1 - i);
	if (c->use_xsk) {
		xsk_threads(o, &c->ifc);
	} else if (!strcmp(c->ifc.driver, "veth") && !iface_veth_peer(c->ifc.ifindex, &vp)) {
		nnapi = iface_veth_peer_napi_threads(&vp, napi, XR_MAX_CPUS);
		if (nnapi > XR_MAX_CPUS)
			nnapi = -E2BIG;
		place_veth_threads(o, &c->ifc, ncpu, &vp, napi, nnapi);
		choose_backoff(o, &c->ifc, c->so->backoff, &vp, napi, nnapi);
	} else {
		choose_backoff(o, &c->ifc, c->so->backoff, NULL, NULL, 0);
	}
}

/* --listen and --json-stream started (listen_fd: --listen's socket, taken over). 0 or -1 after a line. */
static int send_live_start(struct send_ctx *c, int *listen_fd)
{
	const struct send_opts *so = c->so;
	struct send_live *sl = &c->sl;

	/* the command as the JSON names it: "gen", the protocol apart */
	sl->cmd = strncmp(so->cmd, "gen ", 4) ? so->cmd : "gen";
	sl->ifname = c->ifc.name;
	sl->target_pps = c->o.pace == XR_PACE_RATE ? c->o.pps : 0;
	sl->proto = c->o.proto;
	sl->shard = so->shard;
	sl->shards = so->shards;
	sl->trial = so->trial;
	if (so->have_listen || so->stream_path)
		c->o.live = &sl->live;
	if (so->have_listen) {
		struct httpd_opts ho = { .option = "--listen",
					 .token = so->have_token ? so->token : NULL,
					 .listen_fd = *listen_fd };

		*listen_fd = -1; /* httpd_start takes it over, or closes it */
		if (httpd_start(&c->http, &so->listen, &ho, send_live_serve, sl))
			return -1;
	}
	if (so->stream_path &&
	    send_stream_start(&c->stream, so->stream_path, sl, &c->ifc, sl->target_pps, c->o.count))
		return -1;
	return 0;
}

/*
 * What the run did: the summary (or, quiet, what the verdict reads), the
 * warnings, the latency files, --json and --json-stream's end. Whether
 * something could not be written.
 */
static bool send_results(struct send_ctx *c, uint64_t t_begin)
{
	const struct send_opts *so = c->so;
	const struct engine_result *res = &c->res;
	bool write_failed = false;
	int err;
	struct send_report r = { .so = so,
				 .p = c->p,
				 .st = c->st,
				 .o = &c->o,
				 .res = res,
				 .frames = c->fs.n,
				 .plan = &c->plan,
				 .ready_ns = res->start_ns - t_begin,
				 .whole_count = c->whole_count,
				 .whole_pps = c->whole_pps };

	r.start_unix = unix_of_ns(res->start_ns);
	/* from the JSON's figures, so that the summary, the JSON and a report say the same */
	send_headline(&r);
	if (!so->quiet)
		send_summary(&r, stderr);
	/* the verdict reads what the report found: a quiet run without JSON has it found too */
	else if (!so->json_path && !so->stream_path && c->p->verdict && !res->replies_uncounted)
		c->p->report(c->st, res, r.ready_ns, NULL, NULL);
	if (res->unsent.behind)
		pr_warn("warning: fell behind the schedule: %llu frames due before the end were not sent "
			"(%s pps is more than this sender keeps here)\n",
			(unsigned long long)res->unsent.behind, fmt_si(c->o.pps, (char[16]){}, 16));
	if (res->interrupted)
		pr_warn("interrupted; the figures cover what was done\n");
	if (so->spectrum_path && write_latency(so->spectrum_path, res, r.start_unix, false))
		write_failed = true;
	if (so->hlog_path && write_latency(so->hlog_path, res, r.start_unix, true))
		write_failed = true;
	if (c->jf) {
		send_json(&r, c->jf);
		err = json_fclose(c->jf);
		c->jf = NULL;
		if (err) {
			pr_warn("cannot write %s: %s\n", so->json_path, strerror(-err));
			write_failed = true;
		}
	}
	if (so->stream_path && send_stream_end(&c->stream, write_result, &r)) {
		pr_warn("--json-stream: cannot write %s\n", so->stream_path);
		write_failed = true;
	}
	return write_failed;
}

/* The run's exit status from what it did (err: the engine's) */
static int send_exit(struct send_ctx *c, int err, bool write_failed)
{
	const struct engine_result *res = &c->res;
	int verdict = c->p->verdict && !res->replies_uncounted ? c->p->verdict(c->st) : 0;
	bool thresholds_failed = send_thresholds_judge(&c->so->fail_if, &c->o, res, NULL, NULL);

	return err || write_failed			    ? XR_EXIT_ENV :
	       res->interrupted				    ? XR_EXIT_INTERRUPTED :
	       thresholds_failed			    ? XR_EXIT_THRESHOLD :
	       engine_unsent_total(&res->unsent) || verdict ? XR_EXIT_FAIL :
							      XR_EXIT_OK;
}

/* Where the run happens: --netns entered (--listen's socket opened before), the interface, --json's file. 0 or the exit status. */
static int send_open(struct send_ctx *c, int *listen_fd)
{
	const struct send_opts *so = c->so;

	if (so->netns) {
		/* --listen serves where the command started: its socket is opened first */
		if (so->have_listen) {
			*listen_fd = httpd_listen_socket(&so->listen, "--listen");
			if (*listen_fd < 0)
				return XR_EXIT_ENV;
		}
		if (netns_enter(so->netns))
			return XR_EXIT_ENV;
	}
	if (iface_get(so->ifname, &c->ifc))
		return XR_EXIT_ENV;
	if (so->json_path) {
		c->jf = json_fopen(so->json_path);
		if (!c->jf) {
			pr_warn("cannot write %s: %s\n", so->json_path, strerror(errno));
			return XR_EXIT_ENV;
		}
	}
	return 0;
}

int send_run(const struct send_opts *so, const struct xr_proto *p, void *st,
	     const struct send_env *env)
{
	struct send_ctx c = { .so = so,
			      .p = p,
			      .st = st,
			      .o = { .threads = so->threads,
				     .batch = so->batch,
				     .pace = so->pace,
				     .pps = so->pps,
				     .multiplier = so->multiplier,
				     .duration_ns = so->duration_ns,
				     .first_n = so->first_n,
				     .start_unix_ns = so->start_unix_ns,
				     .reply_wait_ns = so->reply_wait_ns,
				     .concurrency = so->concurrency,
				     .ready_fd = env ? env->ready_fd : 0 },
			      .sl = { .live.lock = PTHREAD_MUTEX_INITIALIZER, .live.rtt_fd = -1 } };
	uint64_t t_begin = now_ns();
	int ret, err, listen_fd = -1;
	bool write_failed;

	frameset_init(&c.fs);
	if (cli_need_root(so->cmd))
		return XR_EXIT_ENV;
	ret = send_open(&c, &listen_fd) ?: send_frames(&c);
	if (ret)
		goto out;
	if (so->pcap_out) {
		err = send_pcap_out(so, &c.o, &c.fs);
		ret = !err ? XR_EXIT_OK : err == -EOPNOTSUPP ? XR_EXIT_USAGE : XR_EXIT_ENV;
		goto out;
	}
	ret = send_engine(&c);
	if (ret)
		goto out;
	c.o.ifc = &c.ifc;
	c.o.fs = &c.fs;
	c.o.progress = !so->quiet && isatty(STDERR_FILENO);
	send_place_threads(&c);
	ret = XR_EXIT_ENV;
	if (send_live_start(&c, &listen_fd))
		goto out;
	cli_catch_signals();
	err = c.use_xsk ? xengine_run(&c.o, &c.res) : kengine_run(&c.o, &c.res);
	/* the other end's figures go into this run's report */
	if (env && env->peer)
		send_peer_end(env->peer, p, st);
	/* the figures stay readable until the report is written: a scraper sees the end too */
	if (err && !c.res.start_ns)
		goto out;
	write_failed = send_results(&c, t_begin);
	if (p->failed && p->failed(st))
		write_failed = true;
	ret = send_exit(&c, err, write_failed);
	free(c.res.replies.hist);
	free(c.res.replies.at_sec);
	free(c.res.per_sec);
out:
	if (listen_fd >= 0)
		close(listen_fd);
	send_stream_end(&c.stream, NULL, NULL);
	httpd_stop(c.http);
	if (c.sl.live.rtt_fd >= 0)
		close(c.sl.live.rtt_fd);
	if (c.jf)
		json_fclose(c.jf);
	frameset_free(&c.fs);
	return ret;
}

int send_run_with_peer(const struct send_opts *so, const struct xr_proto *p, void *st)
{
	struct send_peer peer;
	struct send_env env = {};
	int ret;

	ret = send_peer_start(so, p, st, &peer);
	if (ret > 0)
		return ret;
	if (peer.pid > 0)
		env.peer = &peer;
	ret = send_run(so, p, st, &env);
	/* a run that failed before its end leaves the other end running: stopped here */
	if (peer.pid > 0) {
		peer.linger_ns = 0;
		send_peer_end(&peer, p, st);
	}
	return ret;
}

int send_command(const char *cmd, const struct xr_proto *p, int argc, char **argv,
		 void (*usage)(FILE *f, const struct xr_proto *p))
{
	struct send_opts so = { .cmd = cmd };
	void *st = p->state_size ? calloc(1, p->state_size) : NULL;
	int ret;

	if (p->state_size && !st)
		return XR_EXIT_ENV;
	xr_cmd = cmd;
	ret = send_opts_parse(&so, p, st, argc, argv, usage);
	if (ret < 0)
		ret = send_run_with_peer(&so, p, st);
	if (p->free)
		p->free(st);
	free(st);
	return ret;
}
