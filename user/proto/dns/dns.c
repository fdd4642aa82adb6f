// SPDX-License-Identifier: GPL-2.0
/*
 * gen dns: DNS queries from a name list or a capture, one frame per query;
 * query id n mod 2^16 and source port base + (n / 2^16) mod P are pure
 * functions of n (plan ops), so an answer's id and port give n back: answers
 * are matched, timed and counted by RCODE in XDP (bpf/proto/dns.bpf.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include "cmd/cli.h"
#include "proto/dns/query.h"
#include "proto/proto.h"
#include "report/headline.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/log.h"
#include "util/units.h"

enum { O_NAMES = PROTO_OPT_BASE, O_QUERY, O_QUERIES, O_QTYPE, O_NORD, O_EDNS };

#define MAX_QUERY_OPTS 64

struct dns {
	const char *names, *capture;
	const char *query[MAX_QUERY_OPTS];
	int nquery;
	uint16_t qtype;
	struct dns_query_opts qo;
	uint64_t ports;
	struct dns_query_set set;
};

static const struct option dns_opts[] = {
	{ "names", required_argument, NULL, O_NAMES },
	{ "query", required_argument, NULL, O_QUERY },
	{ "queries", required_argument, NULL, O_QUERIES },
	{ "qtype", required_argument, NULL, O_QTYPE },
	{ "no-rd", no_argument, NULL, O_NORD },
	{ "edns", required_argument, NULL, O_EDNS },
	{},
};

/* what the parser starts from: A queries with RD, no EDNS */
static void dns_defaults(struct dns *d)
{
	if (!d->qtype) {
		d->qtype = 1;
		d->qo.rd = true;
	}
}

static int dns_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct dns *d = st;
	uint64_t v;
	int t;

	dns_defaults(d);
	switch (id) {
	case O_NAMES: d->names = arg; break;
	case O_QUERIES: d->capture = arg; break;
	case O_QUERY:
		if (d->nquery >= MAX_QUERY_OPTS)
			return cli_usage_error(so->cmd, "at most %d --query (give a --names file)",
					       MAX_QUERY_OPTS);
		d->query[d->nquery++] = arg;
		break;
	case O_QTYPE:
		t = dns_qtype(arg);
		if (t < 0)
			return cli_usage_error(
				so->cmd,
				"--qtype: '%s' is not a query type (A, AAAA, MX, ..., TYPEnnn)",
				arg);
		d->qtype = t;
		break;
	case O_NORD: d->qo.rd = false; break;
	case O_EDNS:
		if (cli_count(so->cmd, "edns", arg, &v))
			return XR_EXIT_USAGE;
		if (v < 512 || v > 65535)
			return cli_usage_error(so->cmd, "--edns must be between 512 and 65535");
		d->qo.edns = v;
		break;
	}
	return -1;
}

static int dns_check(void *st, const struct send_opts *so)
{
	struct dns *d = st;
	uint64_t ports = so->net.have_sport ? (uint64_t)so->net.sport.hi - so->net.sport.lo + 1 :
					      XR_DNS_MAX_PORTS;

	dns_defaults(d);
	if (!d->names && !d->capture && !d->nquery)
		return cli_usage_error(
			so->cmd,
			"say what to ask: --names FILE, --queries CAPTURE or --query NAME");
	if (ports > XR_DNS_MAX_PORTS || (ports & (ports - 1)))
		return cli_usage_error(
			so->cmd,
			"--sport: 1, 2, 4, 8 or 16 ports (answers are matched by query id and "
			"port: 2^16 ids per port)");
	d->ports = ports;
	return 0;
}

/* The DNS payload of a captured frame: Ethernet (one VLAN tag at most), IPv4 or IPv6, UDP to port 53. */
static const uint8_t *captured_dns(const uint8_t *f, uint32_t len, size_t *dlen)
{
	uint32_t at = 14, l4;
	uint16_t et;

	if (len < 14)
		return NULL;
	et = f[12] << 8 | f[13];
	if (et == 0x8100 && len >= 18) {
		et = f[16] << 8 | f[17];
		at = 18;
	}
	if (et == 0x0800 && len >= at + 20 && (f[at] >> 4) == 4 && f[at + 9] == IPPROTO_UDP) {
		l4 = at + (f[at] & 15) * 4;
	} else if (et == 0x86dd && len >= at + 40 && f[at + 6] == IPPROTO_UDP) {
		l4 = at + 40;
	} else {
		return NULL;
	}
	if (len < l4 + 8 || (f[l4 + 2] << 8 | f[l4 + 3]) != 53)
		return NULL;
	*dlen = len - l4 - 8;
	return f + l4 + 8;
}

static int capture_queries(struct dns *d, const struct send_opts *so)
{
	struct fs_load_opts lo = { .max_len = XR_MAX_FRAME,
				   .max_ratio = 200,
				   .max_memory = (uint64_t)sysconf(_SC_PHYS_PAGES) *
						 sysconf(_SC_PAGESIZE) / 2 };
	struct fs_skips sk = {};
	struct frameset fs;
	uint64_t other = 0;
	int err;

	frameset_init(&fs);
	err = pcap_load(d->capture, &fs, &lo, &sk);
	for (size_t i = 0; i < fs.n && !err; i++) {
		size_t dlen;
		const uint8_t *m =
			captured_dns(fs.bytes + fs.frames[i].off, fs.frames[i].len, &dlen);
		struct dns_query q;

		if (!m || dns_query_from_wire(m, dlen, &d->qo, &q)) {
			other++;
			continue;
		}
		err = dns_set_add(&d->set, &q);
	}
	frameset_free(&fs);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -EINVAL;
	if (other)
		pr_warn("warning: %s: %llu frames are not DNS queries to port 53 (skipped)\n",
			d->capture, (unsigned long long)other);
	return 0;
}

static int dns_build(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	static const struct port_range dns_ports = { 40000, 40000 + XR_DNS_MAX_PORTS - 1 };
	struct dns *d = st;
	struct template_addr ta;
	int err;

	for (int i = 0; i < d->nquery; i++) {
		struct dns_query q;
		char name[300];
		const char *slash = strchr(d->query[i], '/');
		int t = d->qtype;

		snprintf(name, sizeof(name), "%.*s", slash ? (int)(slash - d->query[i]) : 299,
			 d->query[i]);
		if ((slash && (t = dns_qtype(slash + 1)) < 0) ||
		    dns_build_query(name, t, &d->qo, &q)) {
			pr_warn("--query: '%s' is not NAME[/TYPE]\n", d->query[i]);
			return -EINVAL;
		}
		if (dns_set_add(&d->set, &q))
			return -ENOMEM;
	}
	if (d->names && (err = dns_names_load(d->names, d->qtype, &d->qo, &d->set)))
		return err == -ENOMEM ? -ENOMEM : -EINVAL;
	if (d->capture && (err = capture_queries(d, so)))
		return err;
	if (!d->set.n) {
		pr_warn("no query to send\n");
		return -EINVAL;
	}
	err = template_addressing(&so->net, ifc, IPPROTO_UDP, &dns_ports, 65536, plan->specs,
				  &plan->nspecs, &ta);
	if (err)
		return err;
	for (size_t i = 0; i < d->set.n; i++) {
		const struct dns_query *q = &d->set.q[i];
		struct template_frame t = { .net = &so->net,
					    .ta = &ta,
					    .ifc = ifc,
					    .l4 = IPPROTO_UDP,
					    .payload = q->msg,
					    .payload_len = q->len,
					    .len = 14 + (so->net.dst.ipv6 ? 40 : 20) + 8 + q->len };

		err = template_build(&t, fs);
		if (err)
			return err;
	}
	/* the query id: n mod 2^16 (the port carries n / 2^16) */
	if (rewrite_parse("payload@0:2=seq", &plan->specs[plan->nspecs++]))
		return -EINVAL;
	o->reply_kind = XR_REPLY_DNS;
	o->rpl = ta.match;
	o->ts_mask = 65536 * d->ports - 1;
	return 0;
}

static const char *const rcode_names[16] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP",	 "REFUSED", "YXDOMAIN", "YXRRSET",
	"NXRRSET", "NOTAUTH", "NOTZONE",  "RCODE11",  "RCODE12", "RCODE13", "RCODE14",	"RCODE15",
};

static void dns_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		       struct json *j)
{
	const struct xr_replies_stats *r = &res->replies.st;
	uint64_t unanswered = res->sent > r->answered ? res->sent - r->answered : 0;
	char x[16];

	if (!res->replies.hist)
		return;
	if (human) {
		fprintf(human,
			"  replies: %llu answers (%s/s), %llu queries unanswered, %llu repeated, %llu unmatched\n",
			(unsigned long long)r->answered,
			fmt_si(replies_per_s(res, r->answered), x, sizeof(x)),
			(unsigned long long)unanswered, (unsigned long long)r->repeated,
			(unsigned long long)r->unmatched);
		fprintf(human, "  by RCODE:");
		for (int i = 0; i < 16; i++)
			if (r->ctr[i])
				fprintf(human, " %s %llu", rcode_names[i],
					(unsigned long long)r->ctr[i]);
		fputc('\n', human);
		replies_rtt_line(res, human);
	}
	if (!j)
		return;
	json_open(j, "replies", '{');
	json_u64(j, "answers", r->answered);
	json_u64(j, "unanswered", unanswered);
	json_u64(j, "repeated", r->repeated);
	json_u64(j, "unmatched", r->unmatched);
	json_double(j, "answers_per_s", replies_per_s(res, r->answered));
	json_open(j, "rcodes", '{');
	for (int i = 0; i < 16; i++)
		if (r->ctr[i] || i == 0)
			json_u64(j, rcode_names[i], r->ctr[i]);
	json_close(j, '}');
	replies_rtt_json(res, j);
	json_close(j, '}');
}

static void dns_free(void *st)
{
	dns_set_free(&((struct dns *)st)->set);
}

static void dns_headline(struct json_object *j, struct words *w)
{
	headline_answered(w, j, "replies.answers", "answered");
	headline_p99(w, j, "replies.rtt_us", "round trip");
}

const struct xr_proto proto_dns = {
	.name = "dns",
	.gen = true,
	.summary =
		"DNS queries from a name list or a capture; answers matched by id and port in XDP",
	.usage =
		"      --names FILE      one query per line, NAME [TYPE] (dnsperf's data format)\n"
		"      --query NAME[/T]  a query (repeatable, up to 64)\n"
		"      --queries PCAP    the DNS queries (UDP to port 53) of a capture\n"
		"      --qtype T         the type of names without one (default A)\n"
		"      --no-rd           clear RD (recursion desired; set by default)\n"
		"      --edns SIZE       add an EDNS(0) OPT record offering SIZE bytes\n"
		"      --sport LO-HI     1, 2, 4, 8 or 16 source ports (default 40000-40015): the\n"
		"                        query id is n mod 65536, the port n / 65536 mod the ports\n",
	.opts = dns_opts,
	.accepts = SO_REWRITE | SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT,
	.default_port = 53,
	.state_size = sizeof(struct dns),
	.parse_opt = dns_opt,
	.check = dns_check,
	.build = dns_build,
	.report = dns_report,
	.frames_are = "queries",
	.headline = dns_headline,
	.witness = "replies.answers",
	.free = dns_free,
};
