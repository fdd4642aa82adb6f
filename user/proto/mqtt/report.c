// SPDX-License-Identifier: GPL-2.0
/*
 * gen mqtt's books (every message asked: taken, refused, unanswered, not
 * sent; every delivery a subscriber waited for) and its report, by pattern.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "proto/mqtt/mqtt.h"
#include "report/headline.h"
#include "send/opts.h"
#include "engine/replies.h"
#include "util/json.h"
#include "util/log.h"
#include "util/units.h"
#include "util/prom.h"

/* Every message asked, by what became of it. */
struct mqtt_books {
	uint64_t asked, sent, acked, nacked, unanswered, not_sent;
};

static void mqtt_books(const struct mqtt *m, const struct engine_result *res, struct mqtt_books *b)
{
	const __u64 *c = res->replies.st.ctr;
	/* a burst partly on the wire when the run ended was sent too (the broker may have it) */
	uint64_t bursts = c[XR_TCP_REQUESTS] - c[XR_MQTT_CONNECTS] + m->t.stalled.request_partial;

	*b = (struct mqtt_books){ .asked = res->asked * m->messages,
				  .sent = bursts * m->so.burst,
				  .acked = c[XR_MQTT_ACKED],
				  .nacked = c[XR_MQTT_NACKED] };
	b->unanswered = b->sent - b->acked - b->nacked;
	b->not_sent = b->asked - b->sent;
}

/* A reason code's name (MQTT 5.0 2.4, and 3.1.1's CONNACK return codes), or NULL. */
static const char *mqtt_reason_name(uint32_t cell)
{
	static const struct {
		uint16_t cell;
		const char *name;
	} names[] = {
		{ XR_MQTT_WHY_CONNACK + 1, "unacceptable protocol version" },
		{ XR_MQTT_WHY_CONNACK + 2, "identifier rejected" },
		{ XR_MQTT_WHY_CONNACK + 3, "server unavailable" },
		{ XR_MQTT_WHY_CONNACK + 4, "bad user name or password" },
		{ XR_MQTT_WHY_CONNACK + 5, "not authorised" },
		{ XR_MQTT_WHY_CONNACK + 0x84, "unsupported protocol version" },
		{ XR_MQTT_WHY_CONNACK + 0x85, "client identifier not valid" },
		{ XR_MQTT_WHY_CONNACK + 0x86, "bad user name or password" },
		{ XR_MQTT_WHY_CONNACK + 0x87, "not authorized" },
		{ XR_MQTT_WHY_CONNACK + 0x88, "server unavailable" },
		{ XR_MQTT_WHY_CONNACK + 0x89, "server busy" },
		{ XR_MQTT_WHY_CONNACK + 0x8a, "banned" },
		{ XR_MQTT_WHY_CONNACK + 0x95, "packet too large" },
		{ XR_MQTT_WHY_CONNACK + 0x97, "quota exceeded" },
		{ XR_MQTT_WHY_CONNACK + 0x9f, "connection rate exceeded" },
		{ XR_MQTT_WHY_PUBACK + 0x10, "no matching subscribers" },
		{ XR_MQTT_WHY_PUBACK + 0x80, "unspecified error" },
		{ XR_MQTT_WHY_PUBACK + 0x83, "implementation specific error" },
		{ XR_MQTT_WHY_PUBACK + 0x87, "not authorized" },
		{ XR_MQTT_WHY_PUBACK + 0x90, "topic name invalid" },
		{ XR_MQTT_WHY_PUBACK + 0x91, "packet identifier in use" },
		/* not one of 5.0's PUBACK codes, but Mosquitto's past message_size_limit */
		{ XR_MQTT_WHY_PUBACK + 0x95, "packet too large" },
		{ XR_MQTT_WHY_PUBACK + 0x97, "quota exceeded" },
		{ XR_MQTT_WHY_PUBACK + 0x99, "payload format invalid" },
		{ XR_MQTT_WHY_DISCONNECT + 0x81, "malformed packet" },
		{ XR_MQTT_WHY_DISCONNECT + 0x82, "protocol error" },
		{ XR_MQTT_WHY_DISCONNECT + 0x87, "not authorized" },
		{ XR_MQTT_WHY_DISCONNECT + 0x89, "server busy" },
		{ XR_MQTT_WHY_DISCONNECT + 0x8b, "server shutting down" },
		{ XR_MQTT_WHY_DISCONNECT + 0x8d, "keep alive timeout" },
		{ XR_MQTT_WHY_DISCONNECT + 0x8e, "session taken over" },
		{ XR_MQTT_WHY_DISCONNECT + 0x90, "topic name invalid" },
		{ XR_MQTT_WHY_DISCONNECT + 0x93, "receive maximum exceeded" },
		{ XR_MQTT_WHY_DISCONNECT + 0x95, "packet too large" },
		{ XR_MQTT_WHY_DISCONNECT + 0x97, "quota exceeded" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].cell == cell)
			return names[i].name;
	return NULL;
}

/* What the broker said, by reason, from cell base: "code (name) count, ..." or JSON */
static void mqtt_reasons(const struct mqtt_app *a, uint32_t base, FILE *human, struct json *j,
			 const char *key)
{
	const char *sep = "";

	if (j)
		json_open(j, key, '{');
	for (uint32_t rc = 0; rc < 256 && base + rc < XR_MQTT_WHY_CELLS; rc++) {
		char k[8];

		if (!a->why[base + rc])
			continue;
		snprintf(k, sizeof(k), "0x%02x", rc);
		if (human) {
			const char *name = mqtt_reason_name(base + rc);

			fprintf(human, "%s%s%s%s%s %llu", sep, k, name ? " (" : "",
				name ? name : "", name ? ")" : "",
				(unsigned long long)a->why[base + rc]);
		}
		if (j)
			json_u64(j, k, a->why[base + rc]);
		sep = ", ";
	}
	if (j)
		json_close(j, '}');
}

/*
 * "N PACKET VERB, M refused (codes: ...)": the broker's CONNACKs (whose
 * 3.1.1 codes are return codes) or SUBACKs, the refused by code
 */
static void mqtt_acks_line(const struct mqtt_app *a, FILE *human, const char *packet,
			   const char *verb, uint64_t ok, uint64_t refused, uint32_t base)
{
	fprintf(human, "%llu %s %s, %llu refused", (unsigned long long)ok, packet, verb,
		(unsigned long long)refused);
	if (refused) {
		fprintf(human, " (%s: ", base == XR_MQTT_WHY_CONNACK ? "return codes" : "codes");
		mqtt_reasons(a, base, human, NULL, NULL);
		fputc(')', human);
	}
}

/* Deliveries to the subscribers, by what became of each one they waited for. */
struct mqtt_deliveries {
	uint64_t expected, received, lost, duplicated, reordered;
	uint64_t pubs_complete; /* publishers whose every message reached every subscriber */
	uint64_t worst_pub, worst_got; /* the publisher the fewest reached */
};

/* Publisher p's deliveries, summed over the subscribers. */
static void mqtt_publisher_sum(const struct mqtt_app *a, uint64_t p, struct xr_mqtt_recv *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint64_t i = 0; i < a->cfg.subs && a->nrecv; i++) {
		const struct xr_mqtt_recv *v = &a->recv[i * a->cfg.pubs + p];

		sum->got += v->got;
		sum->dup += v->dup;
		sum->late += v->late;
	}
}

static void mqtt_deliveries(const struct mqtt *m, struct mqtt_deliveries *d)
{
	const struct mqtt_app *a = &m->app;
	uint64_t per_pub = m->messages * a->cfg.subs;

	*d = (struct mqtt_deliveries){ .expected = per_pub * a->cfg.pubs, .worst_got = UINT64_MAX };
	for (uint64_t p = 0; p < a->cfg.pubs; p++) {
		struct xr_mqtt_recv sum;

		mqtt_publisher_sum(a, p, &sum);
		d->received += sum.got;
		d->duplicated += sum.dup;
		d->reordered += sum.late;
		d->pubs_complete += sum.got == per_pub;
		if (sum.got < d->worst_got) {
			d->worst_got = sum.got;
			d->worst_pub = p;
		}
	}
	/* a sequence number past --messages is booked as received: lost never goes below 0 */
	d->lost = d->expected > d->received ? d->expected - d->received : 0;
}

/* Per-publisher rows in the JSON up to this many publishers */
#define MQTT_JSON_PUBLISHERS 10000

/* --broker-stats: the broker's count after the run, read once (the report may be written twice) */
static void mqtt_broker_read(struct mqtt *m)
{
	if (!m->broker_stats || m->broker_read)
		return;
	m->broker_err = mqtt_broker_dropped(&m->broker, MQTT_BROKER_WAIT_NS, &m->broker_dropped);
	m->broker_read = true;
}

/* lost deliveries against the broker's count of drops: a line (human) or JSON members (j) */
static void mqtt_lost_attributed(const struct mqtt *m, uint64_t lost, FILE *human, struct json *j)
{
	uint64_t unattributed = lost > m->broker_dropped ? lost - m->broker_dropped : 0;

	if (human)
		fprintf(human,
			"  lost: %llu; the broker dropped %llu (its inflight and queue limits, for "
			"all its clients: $SYS/broker/publish/messages/dropped over the run), %llu "
			"not attributed\n",
			(unsigned long long)lost, (unsigned long long)m->broker_dropped,
			(unsigned long long)unattributed);
	if (j) {
		json_u64(j, "broker_dropped", m->broker_dropped);
		json_u64(j, "lost_unattributed", unattributed);
	}
}

static void mqtt_report_subscribers(struct mqtt *m, const struct engine_result *res, FILE *human,
				    struct json *j)
{
	const struct mqtt_app *a = &m->app;
	const __u64 *c = res->replies.st.ctr;
	struct mqtt_deliveries d;

	mqtt_deliveries(m, &d);
	mqtt_broker_read(m);
	if (human) {
		fprintf(human, "  subscribers: ");
		mqtt_acks_line(a, human, "CONNACK", "accepted", c[XR_MQTT_CONNACKED],
			       c[XR_MQTT_REFUSED], XR_MQTT_WHY_CONNACK);
		fprintf(human, "; ");
		mqtt_acks_line(a, human, "SUBACK", "granted", c[XR_MQTT_SUBACKED],
			       c[XR_MQTT_SUB_REFUSED], XR_MQTT_WHY_SUBACK);
		fputc('\n', human);
		fprintf(human,
			"  deliveries: %llu expected (%llu publishers x %llu messages x %u "
			"subscribers), %llu received, %llu lost, %llu duplicated, %llu reordered\n",
			(unsigned long long)d.expected, (unsigned long long)a->cfg.pubs,
			(unsigned long long)m->messages, a->cfg.subs,
			(unsigned long long)d.received, (unsigned long long)d.lost,
			(unsigned long long)d.duplicated, (unsigned long long)d.reordered);
		if (m->broker_stats && !m->broker_err)
			mqtt_lost_attributed(m, d.lost, human, NULL);
		fprintf(human, "  publishers: %llu of %llu reached every subscriber whole",
			(unsigned long long)d.pubs_complete, (unsigned long long)a->cfg.pubs);
		if (d.pubs_complete < a->cfg.pubs)
			fprintf(human, "; the fewest: publisher %llu, %llu of %llu",
				(unsigned long long)d.worst_pub, (unsigned long long)d.worst_got,
				(unsigned long long)(m->messages * a->cfg.subs));
		fputc('\n', human);
		if (c[XR_MQTT_UNSTAMPED] || c[XR_MQTT_FOREIGN])
			fprintf(human,
				"  deliveries not booked: %llu without a stamp (payload under %u B), "
				"%llu from publishers past --publishers\n",
				(unsigned long long)c[XR_MQTT_UNSTAMPED], XR_MQTT_STAMP,
				(unsigned long long)c[XR_MQTT_FOREIGN]);
		if (a->cfg.sub_qos)
			fprintf(human,
				"  QoS-1 subscription: %llu PUBACKs sent; %llu segments of "
				"deliveries held back until the broker took earlier PUBACKs; "
				"their ids kept in %.1f MiB\n",
				(unsigned long long)c[XR_MQTT_REPLIES],
				(unsigned long long)c[XR_MQTT_HELD], a->pubacks_sz / 1048576.0);
		if (a->cfg.responder)
			fprintf(human,
				"  responder: %llu answers sent to %s (%u B each, the request's "
				"stamp); %llu segments of requests held back until the broker "
				"took earlier answers; their stamps kept in %.1f MiB\n",
				(unsigned long long)c[XR_MQTT_REPLIES], m->so.answer,
				a->cfg.ans_len, (unsigned long long)c[XR_MQTT_HELD],
				a->answers_sz / 1048576.0);
		if (a->deliver.hist)
			replies_hist_line(human, "publish to delivery", &a->deliver);
	}
	if (!j)
		return;
	json_open(j, "subscribers", '{');
	json_u64(j, "connacked", c[XR_MQTT_CONNACKED]);
	json_u64(j, "refused", c[XR_MQTT_REFUSED]);
	mqtt_reasons(a, XR_MQTT_WHY_CONNACK, NULL, j, "refused_by_code");
	json_u64(j, "subacked", c[XR_MQTT_SUBACKED]);
	json_u64(j, "sub_refused", c[XR_MQTT_SUB_REFUSED]);
	mqtt_reasons(a, XR_MQTT_WHY_SUBACK, NULL, j, "sub_refused_by_code");
	json_str(j, "filter", m->so.subscribe);
	json_u64(j, "qos", a->cfg.sub_qos);
	if (m->so.answer)
		json_str(j, "answer_topic", m->so.answer);
	json_close(j, '}');
	json_open(j, "deliveries", '{');
	json_u64(j, "expected", d.expected);
	json_u64(j, "delivered", c[XR_MQTT_DELIVERED]);
	json_u64(j, "received", d.received);
	json_u64(j, "lost", d.lost);
	if (m->broker_stats && !m->broker_err)
		mqtt_lost_attributed(m, d.lost, NULL, j);
	json_u64(j, "duplicated", d.duplicated);
	json_u64(j, "reordered", d.reordered);
	json_u64(j, "unstamped", c[XR_MQTT_UNSTAMPED]);
	json_u64(j, "foreign", c[XR_MQTT_FOREIGN]);
	json_u64(j, "pubacks_sent", a->cfg.responder ? 0 : c[XR_MQTT_REPLIES]);
	json_u64(j, "answers_sent", a->cfg.responder ? c[XR_MQTT_REPLIES] : 0);
	json_u64(j, "held", c[XR_MQTT_HELD]);
	json_u64(j, "puback_ids_bytes", a->pubacks_sz);
	json_u64(j, "answer_stamps_bytes", a->answers_sz);
	json_u64(j, "publishers", a->cfg.pubs);
	json_u64(j, "per_publisher_messages", m->messages);
	json_u64(j, "publishers_complete", d.pubs_complete);
	if (a->deliver.hist)
		replies_hist_json(j, "latency_us", &a->deliver);
	if (a->cfg.pubs <= MQTT_JSON_PUBLISHERS) {
		json_open(j, "per_publisher", '[');
		for (uint64_t p = 0; p < a->cfg.pubs; p++) {
			struct xr_mqtt_recv sum;
			uint64_t want = m->messages * a->cfg.subs;

			mqtt_publisher_sum(a, p, &sum);
			json_open(j, NULL, '{');
			json_u64(j, "publisher", p);
			json_u64(j, "received", sum.got);
			json_u64(j, "lost", want > sum.got ? want - sum.got : 0);
			json_u64(j, "duplicated", sum.dup);
			json_u64(j, "reordered", sum.late);
			json_close(j, '}');
		}
		json_close(j, ']');
	}
	json_close(j, '}');
}

/* A call's median round trip in ms (its request to its answer), 0 before any */
static double mqtt_call_ms(const struct mqtt_app *a)
{
	return a->deliver.hist ? replies_hist_quantile_us(&a->deliver, 0.5) / 1e3 : 0;
}

/*
 * Callers' calls in the published flood benchmark's shape: count, size,
 * seconds, per second, ms each; and their answers' books.
 */
static void mqtt_report_calls(struct mqtt *m, const struct engine_result *res,
			      const struct mqtt_books *b, FILE *human, struct json *j)
{
	const struct tcp *t = &m->t;
	const struct mqtt_app *a = &m->app;
	const __u64 *c = res->replies.st.ctr;
	double secs = tcp_answers_seconds(t, res), ms_each = mqtt_call_ms(a);
	struct mqtt_deliveries d;
	char x[16];

	mqtt_deliveries(m, &d);
	if (human) {
		fprintf(human,
			"  calls: %llu asked (%llu callers x %llu, %u at a time: %s, %u B requests), "
			"%llu sent, %llu answered in %.3f s (%s/s), %.3f ms each (median round "
			"trip); %llu sent but not answered, %llu not sent\n",
			(unsigned long long)b->asked, (unsigned long long)a->cfg.pubs,
			(unsigned long long)m->messages, m->so.burst,
			m->so.burst == 1 ? "sync" : "async", m->so.payload,
			(unsigned long long)b->sent, (unsigned long long)b->acked, secs,
			fmt_si(tcp_answers_per_s(t, res, b->acked), x, sizeof(x)), ms_each,
			(unsigned long long)b->unanswered, (unsigned long long)b->not_sent);
		fprintf(human,
			"  answers: %llu read, %llu lost, %llu duplicated, %llu reordered, %llu "
			"another caller's, %llu without a stamp\n",
			(unsigned long long)c[XR_MQTT_DELIVERED], (unsigned long long)d.lost,
			(unsigned long long)d.duplicated, (unsigned long long)d.reordered,
			(unsigned long long)c[XR_MQTT_FOREIGN],
			(unsigned long long)c[XR_MQTT_UNSTAMPED]);
		if (a->deliver.hist)
			replies_hist_line(human, "call (request to its answer)", &a->deliver);
	}
	if (!j)
		return;
	json_open(j, "calls", '{');
	json_str(j, "pattern", m->so.burst == 1 ? "sync" : "async");
	json_u64(j, "asked", b->asked);
	json_u64(j, "sent", b->sent);
	json_u64(j, "answered", b->acked);
	json_u64(j, "unanswered", b->unanswered);
	json_u64(j, "not_sent", b->not_sent);
	json_u64(j, "window", m->so.burst);
	json_u64(j, "payload_bytes", m->so.payload);
	json_double(j, "seconds", secs);
	json_double(j, "per_s", tcp_answers_per_s(t, res, b->acked));
	json_double(j, "ms_each", ms_each);
	json_u64(j, "answers_read", c[XR_MQTT_DELIVERED]);
	json_u64(j, "lost", d.lost);
	json_u64(j, "duplicated", d.duplicated);
	json_u64(j, "reordered", d.reordered);
	json_u64(j, "foreign", c[XR_MQTT_FOREIGN]);
	json_u64(j, "unstamped", c[XR_MQTT_UNSTAMPED]);
	json_u64(j, "callers_complete", d.pubs_complete);
	if (a->deliver.hist)
		replies_hist_json(j, "latency_us", &a->deliver);
	json_close(j, '}');
}

/*
 * --pattern's figures in the published benchmark's shape (count, size,
 * seconds, per second, ms each) with what its other end saw: the messages
 * the broker took over the publishers' time (first SYN to last answer), or
 * the calls answered and their median round trip.
 */
static void mqtt_report_pattern(struct mqtt *m, const struct engine_result *res,
				const struct mqtt_books *b, FILE *human, struct json *j)
{
	const struct tcp *t = &m->t;
	const struct mqtt_app *a = &m->app;
	const struct mqtt_peer_figures *f = &m->peer;
	bool calls = m->pattern >= MQTT_PATTERN_SYNC;
	double secs = tcp_answers_seconds(t, res), ms_each = calls    ? mqtt_call_ms(a) :
							     b->acked ? secs * 1e3 / b->acked :
									0;
	uint64_t n = b->acked;
	bool attributed = m->broker_stats && f->ran && !calls;
	char x[16];

	if (attributed)
		mqtt_broker_read(m);
	attributed = attributed && !m->broker_err;
	if (human) {
		fprintf(human, "  pattern: %s, %llu %s of %u B in %.3f s: %s/s, %.3f ms each",
			mqtt_pattern_titles[m->pattern], (unsigned long long)n,
			calls ? "calls" : "messages", m->so.payload, secs,
			fmt_si(tcp_answers_per_s(t, res, n), x, sizeof(x)), ms_each);
		if (calls)
			fprintf(human, " (median round trip, %u at a time)", m->so.burst);
		fputc('\n', human);
		if (m->pattern == MQTT_PATTERN_FIRE) {
		} else if (!f->ran) {
			fprintf(human,
				"  the other end on %s: its figures could not be read (exit %d)\n",
				m->peer_ifname, f->exit);
		} else if (calls) {
			fprintf(human,
				"  responder on %s: subscribed %llu of %llu; %llu requests read, %llu "
				"answered\n",
				m->peer_ifname, (unsigned long long)f->subacked,
				(unsigned long long)f->sessions, (unsigned long long)f->received,
				(unsigned long long)f->answers);
		} else {
			fprintf(human,
				"  subscribers on %s: subscribed %llu of %llu; %llu of %llu "
				"deliveries, %llu lost, %llu duplicated, %llu reordered; publish to "
				"delivery p50 %.3f ms, p99 %.3f ms\n",
				m->peer_ifname, (unsigned long long)f->subacked,
				(unsigned long long)f->sessions, (unsigned long long)f->received,
				(unsigned long long)f->expected, (unsigned long long)f->lost,
				(unsigned long long)f->duplicated, (unsigned long long)f->reordered,
				f->p50_us / 1e3, f->p99_us / 1e3);
			if (attributed)
				mqtt_lost_attributed(m, f->lost, human, NULL);
		}
	}
	if (!j)
		return;
	json_open(j, "pattern", '{');
	json_str(j, "name", mqtt_pattern_names[m->pattern]);
	json_u64(j, "count", n);
	json_u64(j, "payload_bytes", m->so.payload);
	json_double(j, "seconds", secs);
	json_double(j, "per_s", tcp_answers_per_s(t, res, n));
	json_double(j, "ms_each", ms_each);
	if (calls)
		json_u64(j, "window", m->so.burst);
	if (m->pattern != MQTT_PATTERN_FIRE) {
		json_open(j, "peer", '{');
		json_str(j, "iface", m->peer_ifname);
		json_u64(j, "read", f->ran);
		json_u64(j, "exit", f->exit);
		json_u64(j, "sessions", f->sessions);
		json_u64(j, "subacked", f->subacked);
		json_u64(j, "refused", f->refused);
		json_u64(j, "expected", f->expected);
		json_u64(j, "received", f->received);
		/* a paced search's witness, in messages: each is a delivery to every subscriber */
		json_u64(j, "received_per_subscriber", f->sessions ? f->received / f->sessions : 0);
		json_u64(j, "lost", f->lost);
		if (attributed)
			mqtt_lost_attributed(m, f->lost, NULL, j);
		json_u64(j, "duplicated", f->duplicated);
		json_u64(j, "reordered", f->reordered);
		json_u64(j, "answers", f->answers);
		json_u64(j, "publishers_complete", f->pubs_complete);
		json_double(j, "latency_p50_us", f->p50_us);
		json_double(j, "latency_p99_us", f->p99_us);
		json_close(j, '}');
	}
	json_close(j, '}');
}

void mqtt_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		 struct json *j)
{
	struct mqtt *m = st;
	struct tcp *t = &m->t;
	struct mqtt_app *a = &m->app;
	const __u64 *c = res->replies.st.ctr;
	struct mqtt_books b;
	char x[16];

	if (!res->replies.hist)
		return;
	tcp_sessions_report(t, res, human, j);
	/* every CONNECT refused, publishers' or subscribers': the verdict's one line */
	m->refused_all = 0;
	for (uint32_t rc = 1; rc < 256 && c[XR_MQTT_REFUSED] && !c[XR_MQTT_CONNACKED]; rc++)
		if (a->why[XR_MQTT_WHY_CONNACK + rc]) {
			m->refused_all = rc + 1;
			break;
		}
	if (m->so.subscribe) {
		mqtt_report_subscribers(m, res, human, j);
		return;
	}
	mqtt_books(m, res, &b);
	m->nacked_all = 0;
	for (uint64_t rc = 0x80, most = 0; rc < 256 && b.nacked && !b.acked; rc++)
		if (a->why[XR_MQTT_WHY_PUBACK + rc] > most) {
			most = a->why[XR_MQTT_WHY_PUBACK + rc];
			m->nacked_all = rc + 1;
		}
	if (human) {
		fprintf(human, "  connects: ");
		mqtt_acks_line(a, human, "CONNACK", "accepted", c[XR_MQTT_CONNACKED],
			       c[XR_MQTT_REFUSED], XR_MQTT_WHY_CONNACK);
		if (m->so.await) {
			fprintf(human, "; ");
			mqtt_acks_line(a, human, "SUBACK", "granted", c[XR_MQTT_SUBACKED],
				       c[XR_MQTT_SUB_REFUSED], XR_MQTT_WHY_SUBACK);
		}
		fputc('\n', human);
	}
	if (m->so.await)
		mqtt_report_calls(m, res, &b, human, j);
	if (human && !m->so.await) {
		fprintf(human,
			"  messages: %llu asked (%llu per session, bursts of %u, QoS %u, %u B "
			"payload), %llu sent, %llu taken by the broker (%s/s)",
			(unsigned long long)b.asked, (unsigned long long)m->messages, m->so.burst,
			m->so.qos, m->so.payload, (unsigned long long)b.sent,
			(unsigned long long)b.acked,
			fmt_si(tcp_answers_per_s(t, res, b.acked), x, sizeof(x)));
		if (b.nacked) {
			fprintf(human,
				", %llu refused (reason codes: ", (unsigned long long)b.nacked);
			mqtt_reasons(a, XR_MQTT_WHY_PUBACK, human, NULL, NULL);
			fputc(')', human);
		}
		if (b.unanswered)
			fprintf(human, ", %llu sent but not answered",
				(unsigned long long)b.unanswered);
		if (b.not_sent)
			fprintf(human, ", %llu not sent (their session failed or ended first)",
				(unsigned long long)b.not_sent);
		fputc('\n', human);
		tcp_pace_report(t, res, "burst", b.acked, human, NULL);
	}
	if (human) {
		if (c[XR_MQTT_PROTOCOL] || c[XR_TCP_CLOSED_EARLY]) {
			fprintf(human, "  the broker's DISCONNECTs (reason codes): ");
			mqtt_reasons(a, XR_MQTT_WHY_DISCONNECT, human, NULL, NULL);
			fprintf(human, "; packets not asked for (by type): ");
			mqtt_reasons(a, XR_MQTT_WHY_TYPE, human, NULL, NULL);
			fputc('\n', human);
		}
		if (c[XR_TCP_RESPONSES])
			tcp_answers_report(t,
					   m->so.await ? "burst of calls to its last answer" :
					   m->so.qos   ? "burst to its last PUBACK" :
							 "burst to its PINGRESP",
					   human, NULL, NULL);
		if (m->pattern)
			mqtt_report_pattern(m, res, &b, human, NULL);
	}
	if (!j)
		return;
	json_open(j, "connects", '{');
	json_u64(j, "sent", c[XR_MQTT_CONNECTS]);
	json_u64(j, "accepted", c[XR_MQTT_CONNACKED]);
	json_u64(j, "refused", c[XR_MQTT_REFUSED]);
	mqtt_reasons(a, XR_MQTT_WHY_CONNACK, NULL, j, "refused_by_code");
	json_close(j, '}');
	json_open(j, "messages", '{');
	json_u64(j, "asked", b.asked);
	json_u64(j, "sent", b.sent);
	json_u64(j, "acked", b.acked);
	/* from the first SYN to the last answer */
	json_double(j, "acked_per_s", tcp_answers_per_s(t, res, b.acked));
	json_double(j, "seconds", tcp_answers_seconds(t, res));
	json_u64(j, "refused", b.nacked);
	mqtt_reasons(a, XR_MQTT_WHY_PUBACK, NULL, j, "refused_by_code");
	json_u64(j, "unanswered", b.unanswered);
	json_u64(j, "not_sent", b.not_sent);
	json_u64(j, "per_session", m->messages);
	json_u64(j, "burst", m->so.burst);
	json_u64(j, "qos", m->so.qos);
	json_u64(j, "payload_bytes", m->so.payload);
	json_u64(j, "message_bytes", a->cfg.msg_len);
	tcp_answers_report(t, NULL, NULL, j, "burst_us");
	tcp_pace_report(t, res, "burst", b.acked, NULL, j);
	json_close(j, '}');
	json_open(j, "broker", '{');
	mqtt_reasons(a, XR_MQTT_WHY_DISCONNECT, NULL, j, "disconnect_by_code");
	mqtt_reasons(a, XR_MQTT_WHY_TYPE, NULL, j, "unexpected_by_type");
	json_close(j, '}');
	if (m->pattern)
		mqtt_report_pattern(m, res, &b, NULL, j);
}

int mqtt_verdict(void *st)
{
	const struct mqtt *m = st;
	const struct mqtt_peer_figures *f = &m->peer;
	const char *name;

	/* the other end ends by itself (0, 1: short) or when stopped (4); anything else failed it */
	if (m->pattern >= MQTT_PATTERN_NOTIFY &&
	    (!f->ran || (f->exit != 0 && f->exit != 1 && f->exit != XR_EXIT_INTERRUPTED))) {
		pr_warn("the other end on %s failed (exit %d): the pattern's figures are not whole\n",
			m->peer_ifname, f->exit);
		return XR_EXIT_FAIL;
	}
	if (m->pattern >= MQTT_PATTERN_NOTIFY && f->subacked < f->sessions) {
		pr_warn("the broker took %llu of the other end's %llu subscriptions on %s: the "
			"pattern's figures are not whole\n",
			(unsigned long long)f->subacked, (unsigned long long)f->sessions,
			m->peer_ifname);
		return XR_EXIT_FAIL;
	}
	if (m->nacked_all) {
		uint8_t rc = m->nacked_all - 1;

		name = mqtt_reason_name(XR_MQTT_WHY_PUBACK + rc);
		pr_warn("the broker refused every message (PUBACK reason code 0x%02x%s%s)%s\n", rc,
			name ? ", " : "", name ? name : "",
			rc == 0x87 ? ": does its ACL let --username publish to --topic?" :
			rc == 0x95 ? ": is --payload over its message_size_limit?" :
				     "");
		return XR_EXIT_FAIL;
	}
	if (!m->refused_all)
		return tcp_none_completed_verdict(&m->t);
	name = mqtt_reason_name(XR_MQTT_WHY_CONNACK + m->refused_all - 1);
	pr_warn("the broker refused every CONNECT (return code 0x%02x%s%s): check "
		"--username, --password, --client-id and --mqtt-version\n",
		m->refused_all - 1, name ? ", " : "", name ? name : "");
	return XR_EXIT_FAIL;
}

void mqtt_headline(struct json_object *j, struct words *w)
{
	tcp_headline(j, w);
	/* QoS 1: the broker's PUBACKs; QoS 0 has no answer to count */
	if (headline_num(j, "messages.qos") > 0)
		headline_done(w, headline_num(j, "messages.acked"),
			      headline_num(j, "messages.asked"), "messages",
			      "acknowledged by the broker");
}
