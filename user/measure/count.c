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

int count_run(const struct count_opts *co)
{
	const char *ifname = co->ifname, *json_path = co->json_path, *ready = co->ready,
		   *seq_spec = co->seq_spec;
	bool listen_addr = co->have_listen, webhook_addr = co->have_webhook,
	     token_file = co->token[0];
	const struct app_witness *wit = co->witness.ctx ? &co->witness : NULL;
	const char *token = co->token;
	const struct sockaddr_in listen_sa = co->listen, webhook_sa = co->webhook;
	bool use_nft = co->use_nft, quiet = co->quiet;
	struct xr_count_cfg cfg = co->cfg;
	uint64_t duration = co->duration_ns, idle = co->idle_ns;
	struct httpd *http = NULL, *hook = NULL;
	pthread_mutex_t http_lock = PTHREAD_MUTEX_INITIALIZER;
	uint64_t next_check = 0;
	bool gone = false, failed = false;
	struct count_verdict_in vin;
	struct jstream stream = {};
	struct count_totals streamed = {};
	unsigned int stream_k = 0;
	struct nft_counters *nft_before = NULL, *nft_after = NULL, *nft_d = NULL;
	struct proc_watch pw = {};
	struct live live;
	uint64_t start, now, last_change, next_progress, last_matched = 0;
	struct count_totals t = {};
	struct kstats before, after, d;
	struct bpf_link *link = NULL;
	struct count_bpf *skel = NULL;
	struct attribution a;
	struct drops *drops = NULL;
	struct iface ifc;
	int err, stream_err, ret = XR_EXIT_ENV;
	FILE *jf = NULL;

	if (webhook_addr) {
		struct httpd_opts ho = { .option = "--webhook",
					 .token = token_file ? token : NULL,
					 .max_body = 1 << 20,
					 .lock = &http_lock };

		err = httpd_start(&hook, &webhook_sa, &ho, serve_hook, (void *)wit);
		if (err) {
			wit->ops->free(wit->ctx);
			return err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
		}
		if (!ifname) {
			if (json_path && !(jf = json_fopen(json_path))) {
				pr_warn("cannot write %s: %s\n", json_path, strerror(errno));
				ret = XR_EXIT_ENV;
			} else {
				ret = webhook_only(wit, &hook, duration, idle, ready, jf, quiet);
			}
			goto out;
		}
	}
	/* from here on the webhook may be running: every way out goes through out */
	if (cli_need_root("count"))
		goto out;
	if (use_nft) {
		nft_before = calloc(3, sizeof(*nft_before));
		if (!nft_before)
			goto out;
		nft_after = nft_before + 1;
		nft_d = nft_before + 2;
	}
	if (iface_get(ifname, &ifc))
		goto out;
	if (json_path && !(jf = json_fopen(json_path))) {
		pr_warn("cannot write %s: %s\n", json_path, strerror(errno));
		goto out;
	}

	skel = count_bpf__open();
	if (!skel) {
		pr_warn("cannot open the counter's BPF object: %s\n", strerror(errno));
		goto out;
	}
	if (cfg.respond) {
		int n = respond_http(respond_buf.body, co->respond_body);

		if (n < 0) {
			pr_warn("--respond-body: at most %u bytes with the header\n",
				XR_RESPOND_MAX);
			goto out;
		}
		cfg.resp_len = n;
	}
	skel->rodata->cfg = cfg;
	err = count_bpf__load(skel);
	if (err) {
		pr_warn("cannot load the counter's BPF program: %s (-vv shows why)\n",
			strerror(-err));
		goto out;
	}
	if (cfg.respond) {
		__u32 key = 0;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.respond_body), &key, &respond_buf,
					0)) {
			err = -errno;
			pr_warn("cannot set --respond's answer: %s\n", strerror(-err));
			goto out;
		}
	}
	link = bpf_program__attach_xdp(skel->progs.xr_count, ifc.ifindex);
	if (!link) {
		err = -errno;
		pr_warn("cannot attach the counter to %s: %s%s\n", ifname, strerror(-err),
			err == -EBUSY || err == -EEXIST ? " (another XDP program is attached)" :
							  "");
		goto out;
	}
	/* with --drop or --respond nothing matched reaches the stack: no drops to explain */
	if (!cfg.drop && !cfg.respond && !co->no_drop_reasons) {
		uint32_t local = cfg.daddr;

		if (!local)
			addr_iface(ifname, false, (uint8_t *)&local);
		drops = drops_open(ifc.netns_ino, local, &cfg, co->seq_bucket);
	}
	kstats_read(ifname, &before);
	if (use_nft && nft_read(nft_before)) {
		pr_warn("--nft: cannot read the nftables ruleset (is nft installed?)\n");
		goto out;
	}
	start = last_change = now_ns();
	if (co->server_pid) {
		err = proc_watch_start(&pw, co->server_pid, start);
		if (err) {
			/* gone since the options were read is the user's; unreadable, the host's */
			ret = err == -ESRCH ? XR_EXIT_USAGE : XR_EXIT_ENV;
			goto out;
		}
	}
	live = (struct live){ .skel = skel,
			      .ifname = ifname,
			      .ifc = &ifc,
			      .before = &before,
			      .start = start,
			      .seq = cfg.seq_kind,
			      .nft_before = use_nft ? nft_before : NULL,
			      .nft_now = nft_after,
			      .nft_d = nft_d,
			      .wit = wit,
			      .pw = co->server_pid ? &pw : NULL,
			      .drops = drops };
	if (listen_addr) {
		struct httpd_opts ho = { .option = "--listen",
					 .token = token_file ? token : NULL,
					 .lock = &http_lock };

		if (httpd_start(&http, &listen_sa, &ho, serve_live, &live))
			goto out;
	}
	cli_catch_signals();
	if (ready && create_ready_file(ready))
		goto out;
	pr_debug("count: attached to %s\n", ifname);
	if (co->stream_path && count_stream_start(&stream, co->stream_path, &ifc))
		goto out;
	next_progress = start + 1000000000ULL;
	while (!xr_stop) {
		/* the HTTP servers answer in their own thread: this loop only watches */
		usleep(20000);
		now = now_ns();
		if (read_totals(skel, &t))
			break;
		if (t.matched != last_matched) {
			last_matched = t.matched;
			last_change = now;
		}
		if (stream.f && now >= start + (stream_k + 1) * 1000000000ULL) {
			count_stream_interval(&stream, stream_k++, &t, &streamed);
			streamed = t;
		}
		if (co->server_pid) {
			/* the live report reads the watch in the HTTP thread */
			httpd_lock(http);
			proc_watch_tick(&pw, now, false);
			httpd_unlock(http);
		}
		if (duration && now - start >= duration)
			break;
		if (idle && t.matched && now - last_change >= idle)
			break;
		/* an interface that went away takes the XDP program with it: nothing more can arrive */
		if (now >= next_check) {
			next_check = now + 100000000ULL;
			if (if_nametoindex(ifname) != (unsigned int)ifc.ifindex) {
				pr_warn("%s went away (deleted or moved): the count stops here\n",
					ifname);
				gone = true;
				break;
			}
		}
		if (!quiet && isatty(STDERR_FILENO) && now >= next_progress) {
			char x[16];

			if (!t.matched && idle)
				fprintf(stderr,
					"\r  matched 0: waiting for the first frame (--idle counts from it)   ");
			else
				fprintf(stderr, "\r  matched %s   ",
					fmt_si(t.matched, x, sizeof(x)));
			next_progress += 1000000000ULL;
		}
	}
	now = now_ns();
	/* no request may touch the figures while the report is made */
	httpd_stop(http);
	httpd_stop(hook);
	http = hook = NULL;
	/* the stack may still be working on the last frames XDP passed up */
	usleep(50000);
	read_totals(skel, &t);
	if (co->server_pid)
		proc_watch_tick(&pw, now, true);
	kstats_read(ifname, &after);
	kstats_delta(&before, &after, &d);
	attribute(&d, &a);
	if (use_nft) {
		nft_read(nft_after);
		nft_delta(nft_before, nft_after, nft_d);
		for (int i = 0; i < nft_d->n; i++)
			if (nft_d->r[i].drops)
				a.firewall_dropped += nft_d->r[i].packets;
	}
	if (!quiet) {
		if (isatty(STDERR_FILENO) && now - start >= 1000000000ULL)
			fputc('\n', stderr);
		if (idle && !t.matched)
			fprintf(stderr,
				"count: no frame matched, so --idle never started (it counts from the first "
				"frame)\n");
		report_text(ifname, &t, &d, &a, (now - start) / 1e9, cfg.drop || cfg.respond,
			    use_nft ? nft_d : NULL);
		if (drops) {
			struct drops_totals dt;

			if (!drops_read(drops, a.tcp_listen_drops, &dt)) {
				drops_report(drops, &dt, stderr);
				drops_books(&dt, t.passed, stderr);
			}
		} else if (!cfg.drop && !cfg.respond && !co->no_drop_reasons) {
			fprintf(stderr, "  kernel drop reasons: unavailable on this kernel\n");
		}
		if (wit)
			wit->ops->text(wit->ctx, stderr);
		if (co->server_pid)
			proc_watch_text(&pw, stderr);
		if (cfg.seq_kind) {
			struct seq_totals st;

			read_seq(skel, &st, NULL, 0);
			fprintf(stderr,
				"  sequence (%s): %llu flows, received %llu, lost %llu, duplicated %llu, "
				"reordered %llu; %llu frames without one\n",
				seq_spec, (unsigned long long)st.flows,
				(unsigned long long)st.received, (unsigned long long)st.lost,
				(unsigned long long)st.dup, (unsigned long long)st.reordered,
				(unsigned long long)st.untracked);
			if (drops)
				drops_seq_report(drops, stderr);
		}
	}
	verdict_figures(skel, drops, &t, &a, cfg.seq_kind, &vin);
	failed = count_thresholds_judge(&co->fail_if, &vin, quiet ? NULL : stderr, NULL);
	if (jf || stream.f) {
		uint64_t *series = calloc(XR_SERIES_MAX, sizeof(*series));
		int nseries = series ? read_series(skel, series, XR_SERIES_MAX) : 0;
		struct count_report r = { .ifc = &ifc,
					  .t = &t,
					  .d = &d,
					  .a = &a,
					  .dur = (now - start) / 1e9,
					  .seq_skel = cfg.seq_kind ? skel : NULL,
					  .nft = use_nft ? nft_d : NULL,
					  .wit = wit,
					  .drops = drops,
					  .pw = co->server_pid ? &pw : NULL,
					  .fail_if = &co->fail_if,
					  .verdict = &vin };

		if (jf)
			report_json(jf, &r, series, nseries);
		stream_err = count_stream_end(&stream, &r, series, nseries);
		if (stream_err)
			pr_warn("--json-stream: cannot write %s: %s\n", co->stream_path,
				strerror(-stream_err));
		free(series);
		err = jf ? json_fclose(jf) : 0;
		if (err)
			pr_warn("cannot write %s: %s\n", json_path, strerror(-err));
		jf = NULL;
		/* either lost: the environment's failure, as a file that could not be written */
		if (err || stream_err)
			goto out;
	}
	ret = gone ? XR_EXIT_ENV : failed ? XR_EXIT_THRESHOLD : XR_EXIT_OK;
out:
	jstream_close(&stream);
	free(nft_before);
	httpd_stop(http);
	httpd_stop(hook);
	if (wit)
		wit->ops->free(wit->ctx);
	drops_close(drops);
	bpf_link__destroy(link);
	count_bpf__destroy(skel);
	if (jf && json_fclose(jf) && ret == XR_EXIT_OK) {
		pr_warn("cannot write %s: %s\n", json_path, strerror(errno));
		ret = XR_EXIT_ENV;
	}
	return ret;
}
