// SPDX-License-Identifier: GPL-2.0
/*
 * The sessions' books (every session asked: completed, or failed with its
 * reason), their report, and the run's verdict when none completed.
 */
#include <string.h>
#include "cmd/cli.h"
#include "proto/tcp/session.h"
#include "engine/replies.h"
#include "report/headline.h"
#include "util/json.h"
#include "util/log.h"
#include "util/units.h"

uint64_t tcp_ended(const struct tcp *t, const struct xr_replies_stats *r)
{
	return r->ctr[XR_TCP_REFUSED] + r->ctr[XR_TCP_COMPLETED] + r->ctr[XR_TCP_RESET] +
	       r->ctr[XR_TCP_TABLE_FULL] + r->ctr[XR_TCP_MALFORMED] + r->ctr[XR_TCP_CLOSED_EARLY] +
	       (t->app && t->app->ended ? t->app->ended(r->ctr) : 0);
}

void tcp_books(const struct tcp *t, const struct engine_result *res, struct tcp_books *b)
{
	const __u64 *c = res->replies.st.ctr;
	uint64_t answered = res->replies.st.answered, ended;

	*b = (struct tcp_books){ .asked = res->asked,
				 .completed = c[XR_TCP_COMPLETED],
				 .not_sent = engine_unsent_total(&res->unsent),
				 .refused = c[XR_TCP_REFUSED],
				 .reset = c[XR_TCP_RESET],
				 .table_full = c[XR_TCP_TABLE_FULL],
				 .malformed = c[XR_TCP_MALFORMED],
				 .closed_early = c[XR_TCP_CLOSED_EARLY],
				 .stalled = t->stalled };
	if (t->app && t->app->failed)
		t->app->failed(c, &b->app_refused, &b->app_protocol);
	b->no_answer = res->sent > answered + b->refused ? res->sent - answered - b->refused : 0;
	/*
	 * A SYN the driver refused has its send time recorded all the same,
	 * so the retransmission thread sends it again after 1 s: answered
	 * then, its session is not "not sent" (more handshakes answered than
	 * SYNs the driver took says how many)
	 */
	if (answered + b->refused > res->sent) {
		uint64_t again = answered + b->refused - res->sent,
			 refused = res->unsent.ring_full + res->unsent.redirect;

		b->syn_recovered = again < refused ? again : refused;
		b->not_sent -= b->syn_recovered;
	}
	b->failed = b->not_sent + b->no_answer + b->refused + b->reset + b->table_full +
		    b->malformed + b->closed_early + b->app_refused + b->app_protocol +
		    b->stalled.request + b->stalled.response + b->stalled.close +
		    b->stalled.timeout;
	ended = b->completed + b->failed;
	b->unaccounted = b->asked > ended ? b->asked - ended : ended - b->asked;
}

#define TCP_REASONS 13

struct tcp_reason {
	const char *what;
	uint64_t v;
};

/* Why sessions failed, by reason, in the report's order */
static void tcp_reasons(const struct tcp_books *b, struct tcp_reason why[TCP_REASONS])
{
	const struct tcp_reason now[TCP_REASONS] = {
		{ "not sent", b->not_sent },
		{ "no SYN-ACK", b->no_answer },
		{ "refused (RST to the SYN)", b->refused },
		{ "reset by the server", b->reset },
		{ "session table full", b->table_full },
		{ "response not readable", b->malformed },
		{ "closed by the server early", b->closed_early },
		{ "refused by the server after the handshake", b->app_refused },
		{ "a packet the session did not ask for", b->app_protocol },
		{ "request never acknowledged", b->stalled.request },
		{ "response never complete", b->stalled.response },
		{ "close never acknowledged", b->stalled.close },
		{ "no answer to 6 retransmissions", b->stalled.timeout },
	};

	memcpy(why, now, sizeof(now));
}

int tcp_none_completed_verdict(const struct tcp *t)
{
	if (!t->none_completed)
		return 0;
	pr_warn("no session of %llu completed: %llu failed as %s (the most; the report has the "
		"rest)\n",
		(unsigned long long)t->none_asked, (unsigned long long)t->none_completed_n,
		t->none_completed);
	return XR_EXIT_FAIL;
}

/* A run where no session completed: its commonest reason, for the verdict */
static void tcp_none_completed_note(struct tcp *t, const struct tcp_books *b)
{
	t->none_completed = NULL;
	t->none_completed_n = 0;
	if (b->asked && !b->completed && b->failed) {
		struct tcp_reason why[TCP_REASONS];

		tcp_reasons(b, why);
		for (size_t i = 0; i < TCP_REASONS; i++)
			if (why[i].v > t->none_completed_n) {
				t->none_completed = why[i].what;
				t->none_completed_n = why[i].v;
			}
		t->none_asked = b->asked;
	}
}

/* The sessions' lines: the books, why they failed, what was still open */
static void sessions_text(const struct tcp *t, const struct engine_result *res,
			  const struct tcp_books *b, FILE *human)
{
	char x[16];

	fprintf(human, "  sessions: %llu asked, %llu completed (%s/s), %llu failed",
		(unsigned long long)b->asked, (unsigned long long)b->completed,
		fmt_si(tcp_answers_per_s(t, res, b->completed), x, sizeof(x)),
		(unsigned long long)b->failed);
	if (b->unaccounted)
		fprintf(human, ", %llu UNACCOUNTED", (unsigned long long)b->unaccounted);
	fputc('\n', human);
	if (b->failed) {
		struct tcp_reason why[TCP_REASONS];
		const char *sep = "";

		tcp_reasons(b, why);
		fprintf(human, "  failed:");
		for (size_t i = 0; i < TCP_REASONS; i++)
			if (why[i].v) {
				fprintf(human, "%s %s %llu", sep, why[i].what,
					(unsigned long long)why[i].v);
				sep = ",";
			}
		fputc('\n', human);
	}
	if (b->stalled.reset_at_end || b->stalled.reset_send_errors)
		fprintf(human,
			"  still open when the run ended: %llu reset (RST), so that the server "
			"lets go of them now%s\n",
			(unsigned long long)b->stalled.reset_at_end,
			b->stalled.reset_send_errors ? "; some RSTs refused by the socket" : "");
}

/* The segments' lines: sent, again, the pump's, the delayed ACKs, a veth peer without XDP */
static void segments_text(const struct tcp *t, const struct engine_result *res, FILE *human)
{
	const __u64 *c = res->replies.st.ctr;

	fprintf(human,
		"  segments: %llu sent, %llu again (%llu after a timeout, %llu on duplicate "
		"ACKs), %llu out of order "
		"answered, %llu stray; %llu SYNs again, %llu SYN-ACKs repeated; session table %u "
		"slots (%.1f MiB)\n",
		(unsigned long long)(c[XR_TCP_SEGMENTS] + t->pace.out.sent),
		(unsigned long long)(c[XR_TCP_RESENT] + t->rs.resent),
		(unsigned long long)t->rs.resent, (unsigned long long)c[XR_TCP_FAST_RESENT],
		(unsigned long long)c[XR_TCP_OUT_OF_ORDER], (unsigned long long)c[XR_TCP_STRAY],
		(unsigned long long)t->rs.syns_resent, (unsigned long long)res->replies.st.repeated,
		t->table, t->table * sizeof(struct xr_tcp_session) / 1048576.0);
	if (c[XR_TCP_PUMPED])
		fprintf(human,
			"  segments larger than XDP_TX builds in place: %llu asked of the pump, "
			"%llu sent, %llu no longer wanted, %llu left when the run ended, %llu not "
			"sent (%llu no room in its ring, %llu refused by the socket: sent again "
			"after a timeout)\n",
			(unsigned long long)c[XR_TCP_PUMPED], (unsigned long long)t->pump.out.sent,
			(unsigned long long)t->pump.stale, (unsigned long long)t->pump.left_at_end,
			(unsigned long long)(c[XR_TCP_PUMP_FULL] + t->pump.out.send_errors),
			(unsigned long long)c[XR_TCP_PUMP_FULL],
			(unsigned long long)t->pump.out.send_errors);
	if (c[XR_TCP_ACKS_DELAYED] || c[XR_TCP_ACKS_RING_FULL])
		fprintf(human,
			"  delayed ACKs (a publisher's, as its PUBACKs come): %llu asked of "
			"the pump, %llu sent, %llu carried by a segment of ours meanwhile, "
			"%llu left when the run ended, %llu refused by the socket; %llu "
			"sent at once, its ring full\n",
			(unsigned long long)c[XR_TCP_ACKS_DELAYED],
			(unsigned long long)t->pump.acks.sent,
			(unsigned long long)t->pump.acks_not_needed,
			(unsigned long long)t->pump.acks_left_at_end,
			(unsigned long long)t->pump.acks.send_errors,
			(unsigned long long)c[XR_TCP_ACKS_RING_FULL]);
	/*
	 * measured on 6.18: a veth hands the frames its end sends by XDP_TX to the
	 * peer at once only when the peer has an XDP program (veth_xdp_flush); with
	 * GRO alone they wait for the peer's next ordinary packet, here the
	 * retransmission 200 ms later, and every segment looks lost once
	 */
	if (t->veth && t->rs.resent * 4 > c[XR_TCP_SEGMENTS] && c[XR_TCP_SEGMENTS] >= 8)
		fprintf(human,
			"  most segments went again after a timeout: on veth, the peer needs an "
			"XDP program (xdpreplay count on it) for the XDP_TX frames to arrive at "
			"once; GRO is not enough\n");
}

/* The lines after: SYNs recovered, the closed loop, the handshake's times */
static void sessions_text_tail(const struct tcp *t, const struct engine_result *res,
			       const struct tcp_books *b, FILE *human)
{
	if (b->syn_recovered)
		fprintf(human,
			"  %llu SYNs the driver refused went again after 1 s and were answered "
			"(not counted as not sent)\n",
			(unsigned long long)b->syn_recovered);
	if (t->concurrency)
		fprintf(human,
			"  closed loop: at most %llu sessions open, %llu at the most seen, %llu "
			"waits for one to end\n",
			(unsigned long long)t->concurrency, (unsigned long long)res->open_peak,
			(unsigned long long)res->gate_waits);
	if (!res->replies.st.answered && !b->refused)
		replies_rtt_line(res, human);
	else
		replies_hist_line(human, "connect (SYN to SYN-ACK)", &res->replies);
}

/* A row of sessions.per_second: completed, failed as the server or the protocol said, the app's */
static void session_second(const void *ctx, const struct xr_replies_stats *now,
			   const struct xr_replies_stats *before, struct json *j)
{
	const struct tcp *t = ctx;
	uint64_t done = now->ctr[XR_TCP_COMPLETED] - before->ctr[XR_TCP_COMPLETED];

	json_u64(j, "completed", done);
	json_u64(j, "failed", tcp_ended(t, now) - tcp_ended(t, before) - done);
	if (t->app && t->app->second_json)
		t->app->second_json(t->app->ctx, now, before, j);
}

/* JSON "sessions": the books, why they failed, the closed loop, the table */
static void sessions_json(const struct tcp *t, const struct engine_result *res,
			  const struct tcp_books *b, struct json *j)
{
	json_open(j, "sessions", '{');
	json_u64(j, "asked", b->asked);
	json_u64(j, "completed", b->completed);
	json_u64(j, "failed", b->failed);
	json_u64(j, "unaccounted", b->unaccounted);
	json_double(j, "completed_per_s", tcp_answers_per_s(t, res, b->completed));
	json_open(j, "failed_by", '{');
	json_u64(j, "not_sent", b->not_sent);
	json_u64(j, "no_syn_ack", b->no_answer);
	json_u64(j, "refused", b->refused);
	json_u64(j, "reset", b->reset);
	json_u64(j, "table_full", b->table_full);
	json_u64(j, "malformed", b->malformed);
	json_u64(j, "closed_early", b->closed_early);
	json_u64(j, "refused_after_handshake", b->app_refused);
	json_u64(j, "unexpected_packet", b->app_protocol);
	json_u64(j, "stalled_request", b->stalled.request);
	json_u64(j, "stalled_response", b->stalled.response);
	json_u64(j, "stalled_close", b->stalled.close);
	json_u64(j, "timeout", b->stalled.timeout);
	json_close(j, '}');
	json_u64(j, "reset_at_end", b->stalled.reset_at_end);
	json_u64(j, "reset_at_end_send_errors", b->stalled.reset_send_errors);
	if (t->concurrency) {
		json_open(j, "concurrency", '{');
		json_u64(j, "limit", t->concurrency);
		json_u64(j, "open_peak", res->open_peak);
		json_u64(j, "waits", res->gate_waits);
		json_close(j, '}');
	}
	json_u64(j, "table_slots", t->table);
	json_u64(j, "table_bytes", (uint64_t)t->table * sizeof(struct xr_tcp_session));
	replies_seconds_json(j, res, session_second, t);
	json_close(j, '}');
}

/* JSON "segments" (the pump's and the delayed ACKs' among them) and "replies" (the SYN-ACKs) */
static void segments_json(const struct tcp *t, const struct engine_result *res,
			  const struct tcp_books *b, struct json *j)
{
	const __u64 *c = res->replies.st.ctr;

	json_open(j, "segments", '{');
	/* first transmissions: XDP's, and the pacer's at their departures */
	json_u64(j, "sent", c[XR_TCP_SEGMENTS] + t->pace.out.sent);
	json_u64(j, "again", c[XR_TCP_RESENT] + t->rs.resent);
	json_u64(j, "after_timeout", t->rs.resent);
	json_u64(j, "after_duplicate_acks", c[XR_TCP_FAST_RESENT]);
	json_u64(j, "syns_again", t->rs.syns_resent);
	json_u64(j, "syns_refused_then_answered", b->syn_recovered);
	json_u64(j, "timeout_send_errors", t->rs.failed);
	json_u64(j, "out_of_order", c[XR_TCP_OUT_OF_ORDER]);
	json_u64(j, "stray", c[XR_TCP_STRAY]);
	json_u64(j, "window_waits", c[XR_TCP_WINDOW_WAITS]);
	json_open(j, "pump", '{');
	json_u64(j, "asked", c[XR_TCP_PUMPED]);
	json_u64(j, "sent", t->pump.out.sent);
	json_u64(j, "stale", t->pump.stale);
	json_u64(j, "send_errors", t->pump.out.send_errors);
	json_u64(j, "left_at_end", t->pump.left_at_end);
	json_u64(j, "ring_full", c[XR_TCP_PUMP_FULL]);
	json_u64(j, "cpu_ns", t->pump.cpu_ns);
	json_open(j, "delayed_acks", '{');
	json_u64(j, "asked", c[XR_TCP_ACKS_DELAYED]);
	json_u64(j, "sent", t->pump.acks.sent);
	json_u64(j, "not_needed", t->pump.acks_not_needed);
	json_u64(j, "send_errors", t->pump.acks.send_errors);
	json_u64(j, "left_at_end", t->pump.acks_left_at_end);
	/* not asked: XDP acknowledged at once */
	json_u64(j, "ring_full", c[XR_TCP_ACKS_RING_FULL]);
	json_close(j, '}');
	json_close(j, '}');
	json_close(j, '}');
	json_open(j, "replies", '{');
	json_u64(j, "syn_acks", res->replies.st.answered);
	json_u64(j, "repeated", res->replies.st.repeated);
	json_u64(j, "unmatched", res->replies.st.unmatched);
	replies_rtt_json(res, j);
	json_close(j, '}');
}

void tcp_sessions_report(struct tcp *t, const struct engine_result *res, FILE *human,
			 struct json *j)
{
	struct tcp_books b;

	if (!res->replies.hist)
		return;
	tcp_books(t, res, &b);
	tcp_none_completed_note(t, &b);
	if (human) {
		sessions_text(t, res, &b, human);
		segments_text(t, res, human);
		sessions_text_tail(t, res, &b, human);
	}
	if (j) {
		sessions_json(t, res, &b, j);
		segments_json(t, res, &b, j);
	}
}

void tcp_answers_report(const struct tcp *t, const char *line, FILE *human, struct json *j,
			const char *what)
{
	if (!t->resp.hist)
		return;
	if (human)
		replies_hist_line(human, line, &t->resp);
	if (j)
		replies_hist_json(j, what, &t->resp);
}

double tcp_answers_seconds(const struct tcp *t, const struct engine_result *res)
{
	return t->last_answer_ns > res->start_ns ? (t->last_answer_ns - res->start_ns) / 1e9 : 0;
}

double tcp_answers_per_s(const struct tcp *t, const struct engine_result *res, uint64_t v)
{
	double secs = tcp_answers_seconds(t, res);

	return secs > 0 ? v / secs : 0;
}

/* sessions.failed_by's members, in words */
static const char *tcp_failed_words(const char *key)
{
	static const char *const w[][2] = {
		{ "not_sent", "not sent" },
		{ "no_syn_ack", "no SYN-ACK" },
		{ "refused", "refused (a RST to the SYN)" },
		{ "reset", "reset by the server" },
		{ "table_full", "the session table full" },
		{ "malformed", "an answer not read" },
		{ "closed_early", "closed by the server first" },
		{ "refused_after_handshake", "refused by the application" },
		{ "unexpected_packet", "an unexpected packet" },
		{ "stalled_request", "stalled in the request" },
		{ "stalled_response", "stalled awaiting the response" },
		{ "stalled_close", "stalled in the close" },
		{ "timeout", "timed out" },
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcmp(w[i][0], key))
			return w[i][1];
	return key;
}

void tcp_headline(struct json_object *j, struct words *w)
{
	headline_done(w, headline_num(j, "sessions.completed"), headline_num(j, "sessions.asked"),
		      "sessions", "completed");
	if (headline_num(j, "sessions.failed") > 0)
		headline_largest(w, j, "sessions.failed_by", tcp_failed_words);
}
