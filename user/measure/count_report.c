// SPDX-License-Identifier: GPL-2.0
/* count's report: the text on stderr, the JSON, what --fail-if reads (measure/count_report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "measure/count_maps.h"
#include "measure/count_report.h"
#include "measure/count_verdict.h"
#include "report/headline.h"
#include "measure/sysinfo.h"
#include "util/units.h"

double matched_rate(const struct count_totals *t)
{
	return t->matched > 1 && t->last_ns > t->first_ns ?
		       (t->matched - 1) / ((t->last_ns - t->first_ns) / 1e9) :
		       0;
}

void report_text(const char *ifname, const struct count_totals *t, const struct kstats *d,
		 const struct attribution *a, double dur, bool drop, const struct nft_counters *nft)
{
	char x[16], y[16];
	double span = t->last_ns > t->first_ns ? (t->last_ns - t->first_ns) / 1e9 : 0;

	/* the rate of the stream itself: from its first frame to its last, not the idle time around it */
	fprintf(stderr,
		"count: %llu frames matched (%sB) on %s in %.3f s; first to last %.3f s: %s pps; "
		"%llu frames seen by XDP\n",
		(unsigned long long)t->matched, fmt_si(t->bytes, x, sizeof(x)), ifname, dur, span,
		fmt_si(matched_rate(t), y, sizeof(y)), (unsigned long long)t->seen);
	fprintf(stderr, "  before XDP: interface rx_dropped %llu, softnet dropped %llu\n",
		(unsigned long long)a->if_rx_dropped, (unsigned long long)a->softnet_dropped);
	if (t->respond) {
		fprintf(stderr,
			"  answered in XDP (--respond): %llu SYN-ACKs, %llu responses, %llu FIN-ACKs, "
			"%llu data ACKs; %llu ACKs and RSTs absorbed; dropped: %llu not TCP, %llu "
			"no room for the answer\n",
			(unsigned long long)t->rsp.syn_acks, (unsigned long long)t->rsp.responses,
			(unsigned long long)t->rsp.fin_acks, (unsigned long long)t->rsp.data_acks,
			(unsigned long long)t->rsp.absorbed, (unsigned long long)t->rsp.not_tcp,
			(unsigned long long)t->rsp.no_room);
		return;
	}
	if (drop) {
		fprintf(stderr, "  dropped in XDP (--drop): %llu\n",
			(unsigned long long)t->dropped);
		return;
	}
	fprintf(stderr, "  passed to the stack: %llu; there (whole namespace, all traffic):\n",
		(unsigned long long)t->passed);
	if (nft) {
		fprintf(stderr, "    firewall (nftables) dropped %llu\n",
			(unsigned long long)a->firewall_dropped);
		for (int i = 0; i < nft->n; i++)
			if (nft->r[i].packets)
				fprintf(stderr, "      %llu packets: %s [%s]\n",
					(unsigned long long)nft->r[i].packets, nft->r[i].text,
					nft->r[i].id);
	}
	fprintf(stderr, "    IP received %llu, discarded %llu\n",
		(unsigned long long)d->v[KS_IP_IN_RECEIVES], (unsigned long long)a->ip_discarded);
	fprintf(stderr,
		"    UDP delivered to sockets %llu, socket buffer full %llu, to a port without a socket %llu, "
		"other errors %llu\n",
		(unsigned long long)a->udp_delivered, (unsigned long long)a->udp_rcvbuf,
		(unsigned long long)a->udp_noport, (unsigned long long)a->udp_other);
	fprintf(stderr,
		"    TCP passive opens %llu, listen drops %llu, listen overflows %llu, "
		"SYN cookies %llu, request queue full %llu\n",
		(unsigned long long)d->v[KS_TCP_PASSIVE_OPENS],
		(unsigned long long)a->tcp_listen_drops,
		(unsigned long long)a->tcp_listen_overflows, (unsigned long long)a->tcp_syncookies,
		(unsigned long long)a->tcp_reqq_full);
	/* the answers' side: a SYN-ACK without a route is never built, so no drop reason tells */
	if (d->v[KS_IP_OUT_NO_ROUTES])
		fprintf(stderr,
			"    IP answers without a route %llu (OutNoRoutes): the server has no route back "
			"to some of the sources\n",
			(unsigned long long)d->v[KS_IP_OUT_NO_ROUTES]);
}

static void drops_part_json(struct drops *drops, uint64_t passed, uint64_t listen_drops,
			    struct json *j)
{
	struct drops_totals dt;

	json_flag(j, "drop_reasons", drops != NULL);
	if (!drops || drops_read(drops, listen_drops, &dt))
		return;
	drops_json(drops, &dt, j);
	drops_books_json(&dt, passed, j);
}

/* A document's parts: the report, and the matched frames per second (none in a live read) */
struct count_doc {
	const struct count_report *r;
	const uint64_t *series;
	int nseries;
};

/* The JSON document's members, its object left open (report/headline.h) */
/* "filter": what count matched (the members it leaves out match anything) */
static void filter_json(struct json *j, const struct xr_count_cfg *c)
{
	char a[INET_ADDRSTRLEN];

	json_open(j, "filter", '{');
	json_str(j, "protocol",
		 c->proto == IPPROTO_UDP	? "udp" :
		 c->proto == IPPROTO_TCP	? "tcp" :
		 c->proto == IPPROTO_ICMP	? "icmp" :
		 c->proto == 0			? "ip" :
		 c->proto == XR_PROTO_ANY_FRAME ? "any frame" :
						  "other");
	if (c->daddr)
		json_str(j, "dst", inet_ntop(AF_INET, &c->daddr, a, sizeof(a)));
	if (c->dport)
		json_u64(j, "dst_port", ntohs(c->dport));
	if (c->saddr)
		json_str(j, "src", inet_ntop(AF_INET, &c->saddr, a, sizeof(a)));
	if (c->sport)
		json_u64(j, "src_port", ntohs(c->sport));
	json_close(j, '}');
}

static void report_json_members(struct json *jp, const void *ctx)
{
	const struct count_doc *doc = ctx;
	const struct count_report *r = doc->r;
	const uint64_t *series = doc->series;
	int nseries = doc->nseries;
	const struct count_totals *t = r->t;
	const struct attribution *a = r->a;
	const struct nft_counters *nft = r->nft;
	struct json j = *jp;
	double dur = r->dur;
	char key[64];

	json_open(&j, NULL, '{');
	json_str(&j, "iface", r->ifc->name);
	sysinfo_json(&j, r->ifc, NULL);
	if (r->cfg)
		filter_json(&j, r->cfg);
	json_u64(&j, "matched", t->matched);
	json_u64(&j, "matched_bytes", t->bytes);
	json_u64(&j, "seen", t->seen);
	json_u64(&j, "passed", t->passed);
	json_u64(&j, "xdp_dropped", t->dropped);
	json_double(&j, "duration_s", dur);
	if (r->start_unix)
		json_double(&j, "start_unix", r->start_unix);
	json_double(&j, "pps", matched_rate(t));
	json_double(&j, "pps_whole_run", dur > 0 ? t->matched / dur : 0);
	json_double(&j, "first_to_last_s",
		    t->last_ns > t->first_ns ? (t->last_ns - t->first_ns) / 1e9 : 0);
	json_open(&j, "per_second", '[');
	for (int i = 0; i < nseries; i++)
		json_u64(&j, NULL, series[i]);
	json_close(&j, ']');
	if (r->seq_skel) {
		struct seq_totals st;

		json_open(&j, "sequence", '{');
		read_seq(r->seq_skel, &st, &j, 1000);
		json_u64(&j, "flow_count", st.flows);
		json_u64(&j, "received", st.received);
		json_u64(&j, "lost", st.lost);
		json_u64(&j, "duplicated", st.dup);
		json_u64(&j, "reordered", st.reordered);
		json_u64(&j, "untracked", st.untracked);
		if (r->drops)
			drops_seq_json(r->drops, &j);
		json_close(&j, '}');
	}
	if (t->respond) {
		json_open(&j, "respond", '{');
		json_u64(&j, "syn_acks", t->rsp.syn_acks);
		json_u64(&j, "responses", t->rsp.responses);
		json_u64(&j, "fin_acks", t->rsp.fin_acks);
		json_u64(&j, "data_acks", t->rsp.data_acks);
		json_u64(&j, "absorbed", t->rsp.absorbed);
		json_u64(&j, "not_tcp", t->rsp.not_tcp);
		json_u64(&j, "no_room", t->rsp.no_room);
		json_close(&j, '}');
	}
	json_open(&j, "attribution", '{');
	json_u64(&j, "iface_rx_dropped", a->if_rx_dropped);
	json_u64(&j, "softnet_dropped", a->softnet_dropped);
	json_u64(&j, "xdp_dropped", t->dropped);
	json_u64(&j, "firewall_dropped", a->firewall_dropped);
	json_u64(&j, "ip_discarded", a->ip_discarded);
	json_u64(&j, "udp_delivered", a->udp_delivered);
	json_u64(&j, "udp_rcvbuf_errors", a->udp_rcvbuf);
	json_u64(&j, "udp_no_ports", a->udp_noport);
	json_u64(&j, "udp_other_errors", a->udp_other);
	json_u64(&j, "tcp_listen_drops", a->tcp_listen_drops);
	json_u64(&j, "tcp_listen_overflows", a->tcp_listen_overflows);
	json_u64(&j, "tcp_syncookies_sent", a->tcp_syncookies);
	json_u64(&j, "tcp_reqq_full_drops", a->tcp_reqq_full);
	json_close(&j, '}');
	if (nft) {
		json_open(&j, "nft", '[');
		for (int i = 0; i < nft->n; i++) {
			json_open(&j, NULL, '{');
			json_str(&j, "rule", nft->r[i].id);
			json_str(&j, "text", nft->r[i].text);
			json_u64(&j, "packets", nft->r[i].packets);
			json_u64(&j, "bytes", nft->r[i].bytes);
			json_flag(&j, "drops", nft->r[i].drops);
			json_close(&j, '}');
		}
		json_close(&j, ']');
	}
	json_open(&j, "kernel", '{');
	for (int i = 0; i < KS_NUM; i++) {
		if (!r->d->have[i])
			continue;
		snprintf(key, sizeof(key), "%s.%s", kstat_defs[i].group, kstat_defs[i].name);
		json_u64(&j, key, r->d->v[i]);
	}
	json_close(&j, '}');
	if (r->wit)
		r->wit->ops->json(r->wit->ctx, &j);
	if (r->pw)
		proc_watch_json(r->pw, &j);
	drops_part_json(r->drops, t->passed, a->tcp_listen_drops, &j);
	if (r->tl)
		timeline_json(r->tl, r->drops, &j);
	if (r->fail_if)
		count_thresholds_judge(r->fail_if, r->verdict, NULL, &j);
	*jp = j;
}

void report_json(FILE *f, const struct count_report *r, const uint64_t *series, int nseries)
{
	struct count_doc doc = { r, series, nseries };

	headline_json(f, report_json_members, &doc, NULL, 0);
}

void count_headline(const struct count_report *r, char *buf, size_t len)
{
	struct count_doc doc = { r, NULL, 0 };

	headline_json(NULL, report_json_members, &doc, buf, len);
}

/* What --fail-if reads, from the figures at the end */
void verdict_figures(struct count_bpf *skel, struct drops *drops, const struct count_totals *t,
		     const struct attribution *a, bool seq, struct count_verdict_in *in)
{
	struct drops_totals dt;

	*in = (struct count_verdict_in){ .matched = t->matched, .rate = matched_rate(t) };
	if (drops && !drops_read(drops, a->tcp_listen_drops, &dt)) {
		in->have_drops = true;
		in->dropped = dt.in_total;
		in->have_books = dt.books;
		in->unattributed = drops_unattributed(&dt, t->passed);
	}
	if (seq) {
		struct seq_totals st;

		read_seq(skel, &st, NULL, 0);
		in->have_seq = true;
		in->received = st.received;
		in->lost = st.lost;
	}
}

int count_stream_start(struct jstream *js, const char *path, const struct iface *ifc)
{
	struct json j;
	int err = jstream_open(js, path);

	if (err)
		return err;
	jstream_begin(js, &j, "start");
	json_str(&j, "iface", ifc->name);
	sysinfo_json(&j, ifc, NULL);
	jstream_emit(js, &j);
	return 0;
}

void count_stream_interval(struct jstream *js, unsigned int k, const struct count_totals *t,
			   const struct count_totals *prev)
{
	struct json j;

	jstream_begin(js, &j, "interval");
	json_u64(&j, "second", k);
	json_u64(&j, "matched", t->matched);
	json_u64(&j, "matched_in_interval", t->matched - prev->matched);
	json_u64(&j, "matched_bytes", t->bytes);
	json_u64(&j, "seen", t->seen);
	json_u64(&j, "passed", t->passed);
	json_u64(&j, "xdp_dropped", t->dropped);
	jstream_emit(js, &j);
}

struct stream_doc {
	const struct count_report *r;
	const uint64_t *series;
	int nseries;
};

static void write_doc(void *ctx, FILE *f)
{
	const struct stream_doc *d = ctx;

	report_json(f, d->r, d->series, d->nseries);
}

int count_stream_end(struct jstream *js, const struct count_report *r, const uint64_t *series,
		     int nseries)
{
	struct stream_doc d = { r, series, nseries };

	if (!js->f)
		return 0;
	jstream_document(js, "end", write_doc, &d);
	return jstream_close(js);
}
