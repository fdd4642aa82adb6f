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

int send_run(const struct send_opts *so, const struct xr_proto *p, void *st,
	     const struct send_env *env)
{
	struct engine_opts o = { .threads = so->threads,
				 .batch = so->batch,
				 .pace = so->pace,
				 .pps = so->pps,
				 .multiplier = so->multiplier,
				 .duration_ns = so->duration_ns,
				 .first_n = so->first_n,
				 .start_unix_ns = so->start_unix_ns,
				 .reply_wait_ns = so->reply_wait_ns,
				 .concurrency = so->concurrency,
				 .ready_fd = env ? env->ready_fd : 0 };
	struct send_live sl = { .live.lock = PTHREAD_MUTEX_INITIALIZER, .live.rtt_fd = -1 };
	struct send_stream stream = {};
	uint64_t t_begin = now_ns();
	struct httpd *http = NULL;
	int ret = XR_EXIT_ENV, err;
	bool use_xsk, write_failed = false;
	int verdict = 0;
	bool thresholds_failed = false;
	struct engine_result res = {};
	struct napi_thread napi[XR_MAX_CPUS];
	struct veth_peer vp;
	int nnapi;
	struct send_plan plan;
	struct frameset fs;
	struct iface ifc;
	uint64_t whole_count;
	double whole_pps;
	int listen_fd = -1;
	FILE *jf = NULL;
	long ncpu;

	frameset_init(&fs);
	if (cli_need_root(so->cmd))
		return XR_EXIT_ENV;
	if (so->netns) {
		/* --listen serves where the command started: its socket is opened first */
		if (so->have_listen) {
			listen_fd = httpd_listen_socket(&so->listen, "--listen");
			if (listen_fd < 0)
				return XR_EXIT_ENV;
		}
		if (netns_enter(so->netns))
			goto out;
	}
	if (iface_get(so->ifname, &ifc))
		goto out;
	if (so->json_path) {
		jf = json_fopen(so->json_path);
		if (!jf) {
			pr_warn("cannot write %s: %s\n", so->json_path, strerror(errno));
			goto out;
		}
	}
	plan = so->plan;
	err = p->build(st, so, &ifc, &fs, &plan, &o);
	if (err) {
		ret = err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
		goto out;
	}
	frameset_finish(&fs);
	if (!fs.n) {
		ret = XR_EXIT_USAGE;
		goto out;
	}
	if (plan.nspecs) {
		int nops = rewrite_constants(plan.specs, plan.nspecs, &fs);

		if (nops >= 0)
			nops = rewrite_plan(plan.specs, plan.nspecs, &fs, o.ops);
		if (nops < 0) {
			ret = XR_EXIT_USAGE;
			goto out;
		}
		o.nops = nops;
	}
	o.count = run_count(so, p, st, &fs);
	if (send_thresholds_check(&so->fail_if, &o)) {
		ret = XR_EXIT_USAGE;
		goto out;
	}
	if ((so->spectrum_path || so->hlog_path) && o.reply_kind == XR_REPLY_NONE) {
		pr_warn("%s: this run counts no answers (gen syn, dns, tcp, mqtt and lorawan send do)\n",
			so->spectrum_path ? "--latency-spectrum" : "--latency-log");
		ret = XR_EXIT_USAGE;
		goto out;
	}
	if (so->rate_bps > 0) {
		double mean = (double)fs.bytes_len / fs.n;

		o.pps = so->rate_bps / ((mean + WIRE_OVERHEAD) * 8);
	}
	whole_count = o.count;
	whole_pps = o.pps;
	if (so->shards > 1) {
		err = shard_run(so, &o, &fs);
		if (err) {
			ret = XR_EXIT_USAGE;
			goto out;
		}
	}
	if (so->pcap_out) {
		err = send_pcap_out(so, &o, &fs);
		ret = !err ? XR_EXIT_OK : err == -EOPNOTSUPP ? XR_EXIT_USAGE : XR_EXIT_ENV;
		goto out;
	}
	if (choose_engine(so, &ifc, &use_xsk))
		goto out;
	/* AF_XDP lays every frame sent as it is out in a chunk of its own */
	if (use_xsk && !engine_builds_frames(&o) && o.umem_limit &&
	    (uint64_t)fs.n * (fs.max_len <= 2048 ? 2048 : 4096) > o.umem_limit) {
		pr_warn("the xsk engine would take %llu MiB of UMEM for %zu frames, more than --max-memory %llu MiB\n",
			(unsigned long long)((uint64_t)fs.n * (fs.max_len <= 2048 ? 2048 : 4096) >>
					     20),
			fs.n, (unsigned long long)(o.umem_limit >> 20));
		ret = XR_EXIT_USAGE;
		goto out;
	}
	if (o.pace == XR_PACE_PCAP && fs.span_ns == 0 && fs.n > 1)
		pr_warn("warning: all frames have the same timestamp: --multiplier sends them back to back\n");
	o.ifc = &ifc;
	o.fs = &fs;
	o.progress = !so->quiet && isatty(STDERR_FILENO);
	/*
	 * Spread threads from the last CPU down (CPU 0 usually takes most
	 * interrupts), among the first XR_MAX_CPUS: the engine keeps a slot per CPU.
	 */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN) < XR_MAX_CPUS ? sysconf(_SC_NPROCESSORS_ONLN) :
							     XR_MAX_CPUS;
	for (unsigned int i = 0; i < o.threads; i++)
		o.cpus[i] = (int)(ncpu - 1 - i);
	if (use_xsk)
		xsk_threads(&o, &ifc);
	else if (!strcmp(ifc.driver, "veth") && !iface_veth_peer(ifc.ifindex, &vp)) {
		nnapi = iface_veth_peer_napi_threads(&vp, napi, XR_MAX_CPUS);
		if (nnapi > XR_MAX_CPUS)
			nnapi = -E2BIG;
		place_veth_threads(&o, &ifc, ncpu, &vp, napi, nnapi);
		choose_backoff(&o, &ifc, so->backoff, &vp, napi, nnapi);
	} else {
		choose_backoff(&o, &ifc, so->backoff, NULL, NULL, 0);
	}

	/* the command as the JSON names it: "gen", the protocol apart */
	sl.cmd = strncmp(so->cmd, "gen ", 4) ? so->cmd : "gen";
	sl.ifname = ifc.name;
	sl.target_pps = o.pace == XR_PACE_RATE ? o.pps : 0;
	sl.proto = o.proto;
	sl.shard = so->shard;
	sl.shards = so->shards;
	sl.trial = so->trial;
	if (so->have_listen || so->stream_path)
		o.live = &sl.live;
	if (so->have_listen) {
		struct httpd_opts ho = { .option = "--listen",
					 .token = so->have_token ? so->token : NULL,
					 .listen_fd = listen_fd };

		listen_fd = -1; /* httpd_start takes it over, or closes it */
		if (httpd_start(&http, &so->listen, &ho, send_live_serve, &sl))
			goto out;
	}
	if (so->stream_path &&
	    send_stream_start(&stream, so->stream_path, &sl, &ifc, sl.target_pps, o.count))
		goto out;
	cli_catch_signals();
	err = use_xsk ? xengine_run(&o, &res) : kengine_run(&o, &res);
	/* the other end's figures go into this run's report */
	if (env && env->peer)
		send_peer_end(env->peer, p, st);
	/* the figures stay readable until the report is written: a scraper sees the end too */
	if (err && !res.start_ns)
		goto out;
	{
		struct timespec rt;
		struct send_report r = { .so = so,
					 .p = p,
					 .st = st,
					 .o = &o,
					 .res = &res,
					 .frames = fs.n,
					 .plan = &plan,
					 .ready_ns = res.start_ns - t_begin,
					 .whole_count = whole_count,
					 .whole_pps = whole_pps };

		clock_gettime(CLOCK_REALTIME, &rt);
		r.start_unix = rt.tv_sec + rt.tv_nsec / 1e9 - (now_ns() - res.start_ns) / 1e9;
		if (!so->quiet)
			send_summary(&r, stderr);
		/* the verdict reads what the report found: a quiet run without JSON has it found too */
		else if (!so->json_path && !so->stream_path && p->verdict && !res.replies_uncounted)
			p->report(st, &res, r.ready_ns, NULL, NULL);
		if (res.unsent.behind)
			pr_warn("warning: fell behind the schedule: %llu frames due before the end were not sent "
				"(%s pps is more than this sender keeps here)\n",
				(unsigned long long)res.unsent.behind,
				fmt_si(o.pps, (char[16]){}, 16));
		if (res.interrupted)
			pr_warn("interrupted; the figures cover what was done\n");
		if (so->spectrum_path &&
		    write_latency(so->spectrum_path, &res, r.start_unix, false))
			write_failed = true;
		if (so->hlog_path && write_latency(so->hlog_path, &res, r.start_unix, true))
			write_failed = true;
		if (jf) {
			send_json(&r, jf);
			err = json_fclose(jf);
			jf = NULL;
			if (err) {
				pr_warn("cannot write %s: %s\n", so->json_path, strerror(-err));
				write_failed = true;
			}
		}
		if (so->stream_path && send_stream_end(&stream, write_result, &r)) {
			pr_warn("--json-stream: cannot write %s\n", so->stream_path);
			write_failed = true;
		}
	}
	if (p->failed && p->failed(st))
		write_failed = true;
	verdict = p->verdict && !res.replies_uncounted ? p->verdict(st) : 0;
	thresholds_failed = send_thresholds_judge(&so->fail_if, &o, &res, NULL, NULL);
	free(res.replies.hist);
	free(res.per_sec);
	ret = err || write_failed			  ? XR_EXIT_ENV :
	      res.interrupted				  ? XR_EXIT_INTERRUPTED :
	      thresholds_failed				  ? XR_EXIT_THRESHOLD :
	      engine_unsent_total(&res.unsent) || verdict ? XR_EXIT_FAIL :
							    XR_EXIT_OK;
out:
	if (listen_fd >= 0)
		close(listen_fd);
	send_stream_end(&stream, NULL, NULL);
	httpd_stop(http);
	if (sl.live.rtt_fd >= 0)
		close(sl.live.rtt_fd);
	if (jf)
		json_fclose(jf);
	frameset_free(&fs);
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
