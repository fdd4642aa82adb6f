// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay count: the server-side witness. An XDP program counts what
 * arrives (and passes it on, or drops it as a sink); the kernel's own
 * counters, read at start and end, say where the frames passed up went.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd/cli.h"
#include "engine/engine.h"
#include "util/json.h"
#include "measure/sysinfo.h"
#include "measure/kstats.h"
#include "util/log.h"
#include "util/time.h"
#include "util/units.h"
#include "measure/attrib.h"
#include "frames/addr.h"
#include "measure/count.h"
#include "measure/count_maps.h"
#include "measure/count_metrics.h"
#include "measure/count_report.h"
#include "measure/count_verdict.h"
#include "util/prom.h"
#include "measure/drops.h"
#include "measure/httpd.h"
#include "measure/proc.h"
#include "measure/appwitness.h"
#include "count.skel.h"

/* --respond's answer to a request, filled into the respond_body map after load. */
static struct {
	uint8_t body[2048];
	uint8_t tail[64];
} respond_buf;

int respond_http(uint8_t *buf, uint32_t body)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %u\r\n\r\n", body);

	if (n < 0 || (uint64_t)n + body > XR_RESPOND_MAX)
		return -1;
	memcpy(buf, head, n);
	memset(buf + n, 'x', body);
	return n + body;
}

struct live {
	struct count_bpf *skel;
	const char *ifname;
	const struct iface *ifc;
	const struct kstats *before;
	uint64_t start;
	bool seq;
	const struct nft_counters *nft_before; /* --nft; NULL otherwise */
	struct drops *drops; /* kernel drop reasons; NULL when unavailable */
	struct nft_counters *nft_now, *nft_d; /* scratch */
	const struct app_witness *wit; /* --webhook; NULL otherwise */
	const struct proc_watch *pw; /* --server-pid; NULL otherwise */
	uint64_t nft_next; /* when to read the rules again */
};

/* --listen: the figures so far, as JSON (/ or /json) or Prometheus text (/metrics) */
static const char *serve_live(const struct httpd_request *rq, FILE *f, void *ctx)
{
	const char *method = rq->method, *path = rq->path;
	struct live *l = ctx;
	struct prom p;
	struct kstats now_ks, d;
	struct count_totals t;
	struct attribution a;
	double dur = (now_ns() - l->start) / 1e9;

	if (strcmp(method, "GET") ||
	    (strcmp(path, "/") && strcmp(path, "/json") && strcmp(path, "/metrics")))
		return NULL;
	read_totals(l->skel, &t);
	kstats_read(l->ifname, &now_ks);
	kstats_delta(l->before, &now_ks, &d);
	attribute(&d, &a);
	/* nft is a process to start: a scraper that asks often gets the rules' figures of the last second */
	if (l->nft_before && now_ns() >= l->nft_next && !nft_read(l->nft_now)) {
		l->nft_next = now_ns() + 1000000000ULL;
		nft_delta(l->nft_before, l->nft_now, l->nft_d);
	}
	if (l->nft_before) {
		for (int i = 0; i < l->nft_d->n; i++)
			if (l->nft_d->r[i].drops)
				a.firewall_dropped += l->nft_d->r[i].packets;
	}
	if (strcmp(path, "/metrics")) {
		struct count_report r = { .ifc = l->ifc,
					  .t = &t,
					  .d = &d,
					  .a = &a,
					  .dur = dur,
					  .seq_skel = l->seq ? l->skel : NULL,
					  .nft = l->nft_before ? l->nft_d : NULL,
					  .wit = l->wit,
					  .drops = l->drops,
					  .pw = l->pw };

		report_json(f, &r, NULL, 0);
		return "application/json";
	}
	prom_begin(&p, f, rq->accept);
	prom_common(&p, "run", prom_run_id());
	prom_common(&p, "iface", l->ifname);
	count_metrics(&p, &t, &a, &d, l->nft_before ? l->nft_d : NULL);
	if (l->seq) {
		struct seq_totals st;

		read_seq(l->skel, &st, NULL, 0);
		count_seq_metrics(&p, &st);
	}
	if (l->drops) {
		struct drops_totals dt;

		if (!drops_read(l->drops, a.tcp_listen_drops, &dt))
			drops_metrics(l->drops, &dt, t.passed, &p);
	}
	if (l->pw)
		proc_watch_metrics(l->pw, &p);
	return prom_end(&p);
}

/* --webhook: a POST is an event; a GET answers with the witness's figures so far */
static const char *serve_hook(const struct httpd_request *rq, FILE *f, void *ctx)
{
	const struct app_witness *w = ctx;
	struct json j = { .f = f };

	if (!strcmp(rq->method, "POST")) {
		w->ops->event(w->ctx, rq->body, rq->len);
		return "text/plain";
	}
	json_open(&j, NULL, '{');
	w->ops->json(w->ctx, &j);
	json_close(&j, '}');
	return "application/json";
}

static int create_ready_file(const char *path)
{
	FILE *rf = fopen(path, "w");

	if (!rf) {
		pr_warn("cannot create %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fclose(rf);
	return 0;
}

/* Webhook events so far (the server's thread adds them). */
static uint64_t webhook_events(struct httpd *hook, const struct app_witness *w)
{
	uint64_t n;

	httpd_lock(hook);
	n = w->ops->events(w->ctx);
	httpd_unlock(hook);
	return n;
}

/* count --webhook without -i: the application's receipts only. */
static int webhook_only(const struct app_witness *w, struct httpd **hook, uint64_t duration,
			uint64_t idle, const char *ready, FILE *jf, bool quiet)
{
	uint64_t start = now_ns(), last_change = start, last = 0;
	struct json j = { .f = jf };

	if (ready && create_ready_file(ready))
		return XR_EXIT_ENV;
	cli_catch_signals();
	while (!xr_stop) {
		uint64_t now, ev = webhook_events(*hook, w);

		usleep(20000);
		now = now_ns();
		if (ev != last) {
			last = ev;
			last_change = now;
		}
		if ((duration && now - start >= duration) ||
		    (idle && ev && now - last_change >= idle))
			break;
	}
	/* no more events from here on: the report is the last word */
	httpd_stop(*hook);
	*hook = NULL;
	if (!quiet)
		w->ops->text(w->ctx, stderr);
	if (jf) {
		json_open(&j, NULL, '{');
		w->ops->json(w->ctx, &j);
		json_close(&j, '}');
	}
	return XR_EXIT_OK;
}

/* A count's run: what it attached, serves, watches and reports (count_run's alone) */
struct count_run {
	const struct count_opts *co;
	struct xr_count_cfg cfg;
	const struct app_witness *wit; /* --webhook's; NULL otherwise */
	struct count_bpf *skel;
	struct bpf_link *link;
	struct drops *drops; /* kernel drop reasons; NULL when unavailable or not wanted */
	struct iface ifc;
	struct httpd *http, *hook; /* --listen, --webhook */
	pthread_mutex_t http_lock;
	struct nft_counters *nft_before, *nft_after, *nft_d; /* --nft */
	struct proc_watch pw; /* --server-pid */
	struct live live;
	struct jstream stream;
	struct count_totals t, streamed;
	unsigned int stream_k;
	struct timeline tl; /* second by second, as read here */
	struct kstats before, after, d;
	struct attribution a;
	uint64_t start, now;
	bool gone; /* the interface went away during the count */
	FILE *jf;
};

/*
 * --webhook: its server started; without -i, the whole count (*done). 0, or
 * the exit status.
 */
static int count_webhook(struct count_run *r, bool *done)
{
	const struct count_opts *co = r->co;
	struct httpd_opts ho = { .option = "--webhook",
				 .token = co->token[0] ? co->token : NULL,
				 .max_body = 1 << 20,
				 .lock = &r->http_lock };
	int err;

	*done = false;
	if (!co->have_webhook)
		return 0;
	err = httpd_start(&r->hook, &co->webhook, &ho, serve_hook, (void *)r->wit);
	if (err) {
		*done = true;
		return err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
	}
	if (co->ifname)
		return 0;
	*done = true;
	if (co->json_path && !(r->jf = json_fopen(co->json_path))) {
		pr_warn("cannot write %s: %s\n", co->json_path, strerror(errno));
		return XR_EXIT_ENV;
	}
	return webhook_only(r->wit, &r->hook, co->duration_ns, co->idle_ns, co->ready, r->jf,
			    co->quiet);
}

/* The counter loaded (its --respond answer set) and attached to the interface. 0 or -errno after a line. */
static int count_load(struct count_run *r)
{
	const struct count_opts *co = r->co;
	__u32 key = 0;
	int err;

	r->skel = count_bpf__open();
	if (!r->skel) {
		pr_warn("cannot open the counter's BPF object: %s\n", strerror(errno));
		return -errno;
	}
	if (r->cfg.respond) {
		int n = respond_http(respond_buf.body, co->respond_body);

		if (n < 0) {
			pr_warn("--respond-body: at most %u bytes with the header\n",
				XR_RESPOND_MAX);
			return -EINVAL;
		}
		r->cfg.resp_len = n;
	}
	r->skel->rodata->cfg = r->cfg;
	err = count_bpf__load(r->skel);
	if (err) {
		pr_warn("cannot load the counter's BPF program: %s (-vv shows why)\n",
			strerror(-err));
		return err;
	}
	if (r->cfg.respond &&
	    bpf_map_update_elem(bpf_map__fd(r->skel->maps.respond_body), &key, &respond_buf, 0)) {
		err = -errno;
		pr_warn("cannot set --respond's answer: %s\n", strerror(-err));
		return err;
	}
	r->link = bpf_program__attach_xdp(r->skel->progs.xr_count, r->ifc.ifindex);
	if (!r->link) {
		err = -errno;
		pr_warn("cannot attach the counter to %s: %s%s\n", co->ifname, strerror(-err),
			err == -EBUSY || err == -EEXIST ? " (another XDP program is attached)" :
							  "");
		return err;
	}
	return 0;
}

/*
 * Everything the count needs before its first frame: the interface, the
 * counter, the drop tracer, the figures at the start, --server-pid's watch,
 * --listen, the ready file, --json-stream. 0, or the exit status.
 */
static int count_start(struct count_run *r)
{
	const struct count_opts *co = r->co;
	int err;

	if (cli_need_root("count"))
		return XR_EXIT_ENV;
	if (co->use_nft) {
		r->nft_before = calloc(3, sizeof(*r->nft_before));
		if (!r->nft_before)
			return XR_EXIT_ENV;
		r->nft_after = r->nft_before + 1;
		r->nft_d = r->nft_before + 2;
	}
	if (iface_get(co->ifname, &r->ifc))
		return XR_EXIT_ENV;
	if (co->json_path && !(r->jf = json_fopen(co->json_path))) {
		pr_warn("cannot write %s: %s\n", co->json_path, strerror(errno));
		return XR_EXIT_ENV;
	}
	if (count_load(r))
		return XR_EXIT_ENV;
	/* with --drop or --respond nothing matched reaches the stack: no drops to explain */
	if (!r->cfg.drop && !r->cfg.respond && !co->no_drop_reasons) {
		uint32_t local = r->cfg.daddr;

		if (!local)
			addr_iface(co->ifname, false, (uint8_t *)&local);
		r->drops = drops_open(r->ifc.netns_ino, local, &r->cfg, co->seq_bucket);
	}
	kstats_read(co->ifname, &r->before);
	if (co->use_nft && nft_read(r->nft_before)) {
		pr_warn("--nft: cannot read the nftables ruleset (is nft installed?)\n");
		return XR_EXIT_ENV;
	}
	r->start = now_ns();
	if (co->server_pid) {
		err = proc_watch_start(&r->pw, co->server_pid, r->start);
		/* gone since the options were read is the user's; unreadable, the host's */
		if (err)
			return err == -ESRCH ? XR_EXIT_USAGE : XR_EXIT_ENV;
	}
	r->live = (struct live){ .skel = r->skel,
				 .ifname = co->ifname,
				 .ifc = &r->ifc,
				 .before = &r->before,
				 .start = r->start,
				 .seq = r->cfg.seq_kind,
				 .nft_before = co->use_nft ? r->nft_before : NULL,
				 .nft_now = r->nft_after,
				 .nft_d = r->nft_d,
				 .wit = r->wit,
				 .pw = co->server_pid ? &r->pw : NULL,
				 .drops = r->drops };
	if (co->have_listen) {
		struct httpd_opts ho = { .option = "--listen",
					 .token = co->token[0] ? co->token : NULL,
					 .lock = &r->http_lock };

		if (httpd_start(&r->http, &co->listen, &ho, serve_live, &r->live))
			return XR_EXIT_ENV;
	}
	cli_catch_signals();
	if (co->ready && create_ready_file(co->ready))
		return XR_EXIT_ENV;
	pr_debug("count: attached to %s\n", co->ifname);
	if (co->stream_path && count_stream_start(&r->stream, co->stream_path, &r->ifc))
		return XR_EXIT_ENV;
	return 0;
}

/* The live line on a terminal, once a second */
static void count_progress(const struct count_run *r)
{
	char x[16];

	if (!r->t.matched && r->co->idle_ns)
		fprintf(stderr,
			"\r  matched 0: waiting for the first frame (--idle counts from it)   ");
	else
		fprintf(stderr, "\r  matched %s   ", fmt_si(r->t.matched, x, sizeof(x)));
}

/*
 * Until the count ends (--duration, --idle after the last frame, a signal,
 * the interface gone): the stream's intervals, --server-pid's ticks and the
 * progress line. The HTTP servers answer in their own threads.
 */
static void count_watch(struct count_run *r)
{
	const struct count_opts *co = r->co;
	uint64_t last_change = r->start, next_progress = r->start + 1000000000ULL, next_check = 0;
	uint64_t last_matched = 0, now;

	while (!xr_stop) {
		usleep(20000);
		now = now_ns();
		if (read_totals(r->skel, &r->t))
			break;
		if (r->t.matched != last_matched) {
			last_matched = r->t.matched;
			last_change = now;
		}
		if (!r->tl.full && now >= r->start + (r->tl.n + 1) * 1000000000ULL)
			timeline_tick(&r->tl, &r->t, r->drops, 1);
		if (r->stream.f && now >= r->start + (r->stream_k + 1) * 1000000000ULL) {
			count_stream_interval(&r->stream, r->stream_k++, &r->t, &r->streamed);
			r->streamed = r->t;
		}
		if (co->server_pid) {
			/* the live report reads the watch in the HTTP thread */
			httpd_lock(r->http);
			proc_watch_tick(&r->pw, now, false);
			httpd_unlock(r->http);
		}
		if (co->duration_ns && now - r->start >= co->duration_ns)
			break;
		if (co->idle_ns && r->t.matched && now - last_change >= co->idle_ns)
			break;
		/* an interface that went away takes the XDP program with it: nothing more can arrive */
		if (now >= next_check) {
			next_check = now + 100000000ULL;
			if (if_nametoindex(co->ifname) != (unsigned int)r->ifc.ifindex) {
				pr_warn("%s went away (deleted or moved): the count stops here\n",
					co->ifname);
				r->gone = true;
				break;
			}
		}
		if (!co->quiet && isatty(STDERR_FILENO) && now >= next_progress) {
			count_progress(r);
			next_progress += 1000000000ULL;
		}
	}
}

/* The figures at the end: the servers stopped, the last frames' fate, where they went */
static void count_settle(struct count_run *r)
{
	r->now = now_ns();
	/* no request may touch the figures while the report is made */
	httpd_stop(r->http);
	httpd_stop(r->hook);
	r->http = r->hook = NULL;
	/* the stack may still be working on the last frames XDP passed up */
	usleep(50000);
	read_totals(r->skel, &r->t);
	/* the last row ends where the report's totals were read: each column sums to its total */
	timeline_tick(&r->tl, &r->t, r->drops, (r->now - r->start) / 1e9 - r->tl.n);
	if (r->co->server_pid)
		proc_watch_tick(&r->pw, r->now, true);
	kstats_read(r->co->ifname, &r->after);
	kstats_delta(&r->before, &r->after, &r->d);
	attribute(&r->d, &r->a);
	if (!r->co->use_nft)
		return;
	nft_read(r->nft_after);
	nft_delta(r->nft_before, r->nft_after, r->nft_d);
	for (int i = 0; i < r->nft_d->n; i++)
		if (r->nft_d->r[i].drops)
			r->a.firewall_dropped += r->nft_d->r[i].packets;
}

/* The sequence numbers' line (--seq) */
static void count_seq_text(const struct count_run *r)
{
	struct seq_totals st;

	read_seq(r->skel, &st, NULL, 0);
	fprintf(stderr,
		"  sequence (%s): %llu flows, received %llu, lost %llu, duplicated %llu, "
		"reordered %llu; %llu frames without one\n",
		r->co->seq_spec, (unsigned long long)st.flows, (unsigned long long)st.received,
		(unsigned long long)st.lost, (unsigned long long)st.dup,
		(unsigned long long)st.reordered, (unsigned long long)st.untracked);
	if (r->drops)
		drops_seq_report(r->drops, stderr);
}

/* What the report at the end is made of, its thresholds judged on vin */
static struct count_report count_final(struct count_run *r, const struct count_verdict_in *vin)
{
	const struct count_opts *co = r->co;

	return (struct count_report){ .ifc = &r->ifc,
				      .cfg = &co->cfg,
				      .t = &r->t,
				      .d = &r->d,
				      .a = &r->a,
				      .dur = (r->now - r->start) / 1e9,
				      .start_unix = unix_of_ns(r->start),
				      .seq_skel = r->cfg.seq_kind ? r->skel : NULL,
				      .nft = co->use_nft ? r->nft_d : NULL,
				      .wit = r->wit,
				      .drops = r->drops,
				      .pw = co->server_pid ? &r->pw : NULL,
				      .fail_if = &co->fail_if,
				      .verdict = vin,
				      .tl = &r->tl };
}

/* The report on stderr: the headline (as the JSON's summary), then the figures */
static void count_text(struct count_run *r, const struct count_verdict_in *vin)
{
	const struct count_opts *co = r->co;
	struct count_report rep = count_final(r, vin);
	char headline[512];

	if (isatty(STDERR_FILENO) && r->now - r->start >= 1000000000ULL)
		fputc('\n', stderr);
	count_headline(&rep, headline, sizeof(headline));
	if (headline[0])
		fprintf(stderr, "count: %s\n", headline);
	if (co->idle_ns && !r->t.matched)
		fprintf(stderr,
			"count: no frame matched, so --idle never started (it counts from the "
			"first frame)\n");
	report_text(co->ifname, &r->t, &r->d, &r->a, (r->now - r->start) / 1e9,
		    r->cfg.drop || r->cfg.respond, co->use_nft ? r->nft_d : NULL);
	if (r->drops) {
		struct drops_totals dt;

		if (!drops_read(r->drops, r->a.tcp_listen_drops, &dt)) {
			drops_report(r->drops, &dt, stderr);
			drops_books(&dt, r->t.passed, stderr);
		}
	} else if (!r->cfg.drop && !r->cfg.respond && !co->no_drop_reasons) {
		fprintf(stderr, "  kernel drop reasons: unavailable on this kernel\n");
	}
	if (r->wit)
		r->wit->ops->text(r->wit->ctx, stderr);
	if (co->server_pid)
		proc_watch_text(&r->pw, stderr);
	if (r->cfg.seq_kind)
		count_seq_text(r);
}

/* --json and --json-stream's end. 0, or XR_EXIT_ENV when either could not be written. */
static int count_write(struct count_run *r, const struct count_verdict_in *vin)
{
	const struct count_opts *co = r->co;
	uint64_t *series;
	int nseries, err, stream_err;
	struct count_report rep = count_final(r, vin);

	if (!r->jf && !r->stream.f)
		return 0;
	series = calloc(XR_SERIES_MAX, sizeof(*series));
	nseries = series ? read_series(r->skel, series, XR_SERIES_MAX) : 0;
	if (r->jf)
		report_json(r->jf, &rep, series, nseries);
	stream_err = count_stream_end(&r->stream, &rep, series, nseries);
	if (stream_err)
		pr_warn("--json-stream: cannot write %s: %s\n", co->stream_path,
			strerror(-stream_err));
	free(series);
	err = r->jf ? json_fclose(r->jf) : 0;
	if (err)
		pr_warn("cannot write %s: %s\n", co->json_path, strerror(-err));
	r->jf = NULL;
	/* either lost: the environment's failure, as a file that could not be written */
	return err || stream_err ? XR_EXIT_ENV : 0;
}

/* What the run holds, let go; a JSON file still open closed (its failure: *ret XR_EXIT_ENV) */
static void count_free(struct count_run *r, int *ret)
{
	jstream_close(&r->stream);
	free(r->nft_before);
	httpd_stop(r->http);
	httpd_stop(r->hook);
	if (r->wit)
		r->wit->ops->free(r->wit->ctx);
	drops_close(r->drops);
	timeline_free(&r->tl);
	bpf_link__destroy(r->link);
	count_bpf__destroy(r->skel);
	if (r->jf && json_fclose(r->jf) && *ret == XR_EXIT_OK) {
		pr_warn("cannot write %s: %s\n", r->co->json_path, strerror(errno));
		*ret = XR_EXIT_ENV;
	}
	free(r);
}

int count_run(const struct count_opts *co)
{
	struct count_run *r = calloc(1, sizeof(*r));
	struct count_verdict_in vin;
	bool done, failed;
	int ret;

	if (!r) {
		if (co->witness.ctx)
			co->witness.ops->free(co->witness.ctx);
		return XR_EXIT_ENV;
	}
	r->co = co;
	r->cfg = co->cfg;
	r->wit = co->witness.ctx ? &co->witness : NULL;
	pthread_mutex_init(&r->http_lock, NULL);
	ret = count_webhook(r, &done);
	/* from here on the webhook may be running: every way out goes through count_free */
	if (!done && !ret)
		ret = count_start(r);
	if (!done && !ret) {
		count_watch(r);
		count_settle(r);
		verdict_figures(r->skel, r->drops, &r->t, &r->a, r->cfg.seq_kind, &vin);
		if (!co->quiet)
			count_text(r, &vin);
		failed =
			count_thresholds_judge(&co->fail_if, &vin, co->quiet ? NULL : stderr, NULL);
		ret = count_write(r, &vin) ?:
			      r->gone	   ? XR_EXIT_ENV :
		      failed		   ? XR_EXIT_THRESHOLD :
					     XR_EXIT_OK;
	}
	count_free(r, &ret);
	return ret;
}
