// SPDX-License-Identifier: GPL-2.0
/*
 * gen syn: TCP SYNs for a connection-rate test, from the source range and
 * ports, each with an ISN that is a keyed function of n; the server's
 * SYN-ACKs, RSTs and FINs are counted (and with --complete answered) by
 * bpf/proto/syn.bpf.h on the sender's interface.
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "report/headline.h"
#include "proto/syn/handshake.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/log.h"
#include "util/units.h"
#include "gen.skel.h"

enum { O_COMPLETE = PROTO_OPT_BASE, O_FLAGS };

struct syn {
	bool complete;
	bool have_flags;
	uint8_t flags; /* --flags: the segments' TCP flags (default a SYN) */
	struct xr_syn_cfg cfg;
	struct engine_proto ops;
};

static const struct option syn_opts[] = {
	{ "complete", no_argument, NULL, O_COMPLETE },
	{ "flags", required_argument, NULL, O_FLAGS },
	{},
};

/* hping3's and tcpdump's letters: FIN SYN RST PSH ACK URG ECE CWR */
static int parse_tcp_flags(const char *s, uint8_t *flags)
{
	static const char letters[] = "FSRPAUEC";
	const char *at;

	*flags = 0;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		at = strchr(letters, *s);
		if (!at || *flags & 1U << (at - letters))
			return -EINVAL;
		*flags |= 1U << (at - letters);
	}
	return 0;
}

static int syn_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct syn *s = st;

	if (id == O_COMPLETE) {
		s->complete = true;
		return -1;
	}
	if (parse_tcp_flags(arg, &s->flags))
		return cli_usage_error(
			so->cmd,
			"--flags: '%s' is not TCP flags as letters (F S R P A U E C, "
			"each once)",
			arg);
	s->have_flags = true;
	return -1;
}

static int syn_before_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	skel->rodata->syn_cfg = ((struct syn *)ctx)->cfg;
	return 0;
}

static int syn_build(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct syn *s = st;
	struct template_addr ta;
	struct syn_isn isn;
	double planned;
	int err;

	if (!s->have_flags)
		s->flags = 0x02;
	if (s->complete && (s->flags & 0x12) != 0x02) {
		pr_warn("--complete answers SYN-ACKs: --flags must hold S and not A\n");
		return -EINVAL;
	}
	err = syn_template(so, ifc, fs, plan, &ta, &isn, s->flags & 0x02 ? "SYNs" : "segments",
			   &planned, s->flags);
	if (err)
		return err;
	s->cfg = (struct xr_syn_cfg){ .isn_base = isn.base,
				      .isn_inv = isn.inv,
				      .complete = s->complete };
	s->ops = (struct engine_proto){ .ctx = s,
					.before_load = syn_before_load,
					.program_optional = !s->complete };
	o->proto = &s->ops;
	o->reply_kind = XR_REPLY_SYN;
	if (s->complete)
		o->xdp_tx_answers = "--complete's ACKs";
	o->rpl = ta.match;
	return 0;
}

static void syn_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		       struct json *j)
{
	const struct xr_replies_stats *r = &res->replies.st;
	uint64_t unanswered = res->sent > r->answered ? res->sent - r->answered : 0;
	char x[16], y[16];

	if (!res->replies.hist)
		return;
	if (human) {
		fprintf(human,
			"  replies: %llu SYN-ACKs (%s/s), %llu SYNs unanswered, %llu RSTs, %llu retransmitted, "
			"%llu unmatched",
			(unsigned long long)r->answered,
			fmt_si(replies_per_s(res, r->answered), x, sizeof(x)),
			(unsigned long long)unanswered, (unsigned long long)r->ctr[XR_SYN_RSTS],
			(unsigned long long)r->repeated, (unsigned long long)r->unmatched);
		if (r->ctr[XR_SYN_COMPLETED])
			fprintf(human, "; completed %llu (%s/s), closed %llu",
				(unsigned long long)r->ctr[XR_SYN_COMPLETED],
				fmt_si(replies_per_s(res, r->ctr[XR_SYN_COMPLETED]), y, sizeof(y)),
				(unsigned long long)r->ctr[XR_SYN_CLOSED]);
		fputc('\n', human);
		replies_rtt_line(res, human);
	}
	if (!j)
		return;
	json_open(j, "replies", '{');
	json_u64(j, "syn_acks", r->answered);
	json_u64(j, "unanswered", unanswered);
	json_u64(j, "rsts", r->ctr[XR_SYN_RSTS]);
	json_u64(j, "retransmits", r->repeated);
	json_u64(j, "unmatched", r->unmatched);
	json_u64(j, "completed", r->ctr[XR_SYN_COMPLETED]);
	json_u64(j, "closed", r->ctr[XR_SYN_CLOSED]);
	json_double(j, "syn_acks_per_s", replies_per_s(res, r->answered));
	json_double(j, "completed_per_s", replies_per_s(res, r->ctr[XR_SYN_COMPLETED]));
	replies_rtt_json(res, j);
	json_close(j, '}');
}

/* "the server answered 3,000 (100%); 3,000 handshakes completed; round trip p99 156 us" */
static void syn_headline(struct json_object *j, struct words *w)
{
	double completed = headline_num(j, "replies.completed");
	char c[16];

	headline_answered(w, j, "replies.syn_acks", "answered");
	if (completed > 0)
		words_clause(w, "%s handshakes completed", words_count(completed, c, sizeof(c)));
	headline_p99(w, j, "replies.rtt_us", "round trip");
}

const struct xr_proto proto_syn = {
	.name = "syn",
	.gen = true,
	.summary = "TCP SYNs; SYN-ACKs counted (and with --complete answered) in XDP",
	.usage =
		"      --complete        complete each handshake and close it (see above)\n"
		"      --flags LETTERS   other TCP flags than a SYN's: F S R P A U E C (hping3's\n"
		"                        letters; e.g. SA, FPU, A): the server's RSTs are counted\n",
	.opts = syn_opts,
	.accepts = SO_REWRITE | SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT | SO_SEED,
	.default_port = 80,
	.state_size = sizeof(struct syn),
	.parse_opt = syn_opt,
	.build = syn_build,
	.report = syn_report,
	.frames_are = "SYNs",
	.headline = syn_headline,
	.witness = "replies.syn_acks",
};
