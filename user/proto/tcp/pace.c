// SPDX-License-Identifier: GPL-2.0
/*
 * Paced requests (gen mqtt --msg-rate, gen tcp --request-rate): a precise
 * total rate of requests over the open sessions, not each as soon as the
 * one before is answered. Departure d is request k = 1 + d / S of session
 * base + d mod S, at t0 + d * ps / 1000 ns, once every session's request 0
 * was answered (or the session ended). At
 * its departure this thread grants the request (tcp_pace[i] = k) and, if
 * the session waits for it (XR_TCP_PACED, bpf/proto/tcp.bpf.h), takes the
 * session's gate and sends the request: its segments built as the pump's,
 * its stamps and latency from its departure time. A session still busy with
 * request k - 1 then finds the grant when that is answered and sends k at
 * once from XDP, late (XR_TCP_LATE), stamped with the departure it missed:
 * a slow broker shows in the latency, not in a slower schedule.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "cmd/cli.h"
#include "proto/tcp/session.h"
#include "send/opts.h"
#include "engine/pacer.h"
#include "engine/replies.h"
#include "util/json.h"
#include "util/log.h"
#include "util/units.h"

/* a departure sent more than this after its time counts as behind */
#define PACE_BEHIND_NS 1000000ULL
/*
 * sleep when the next departure is further away than this, spin when
 * nearer. Spinning through 100 us gaps took the CPU the answers' softirq
 * needed: 2 QoS-1 publishers asked for 10k/s got 8.4k/s answered, every
 * burst late, where the same two went at 34k/s once the schedule was over.
 */
#define PACE_SPIN_NS 20000ULL

/* Departure d's time from t0: d * ps / 1000 without the product, which wraps past 2^64 */
static uint64_t pace_offset(const struct tcp_pacer *p, uint64_t d)
{
	return d * (p->ps / 1000) + d * (p->ps % 1000) / 1000;
}

static uint64_t pace_due(const struct tcp_pacer *p, uint64_t d)
{
	return p->t0 + pace_offset(p, d);
}

uint64_t tcp_pace_span(const struct tcp_pacer *p)
{
	return pace_offset(p, p->departures);
}

/*
 * Request k of the live session whose gate we took: its fields as XDP's
 * tcp_send_request would leave them (tcp_pump_fill's share of the window
 * when it takes more than a segment), then its segments queued.
 */
static void pace_send(struct tcp *t, struct xr_tcp_session *live, uint64_t due, uint64_t now)
{
	uint32_t rlen = t->req_len, mss = live->mss, wnd = live->wnd, sent = 0;
	struct xr_tcp_session s;

	if (mss > XR_TCP_PAYLOAD_MAX)
		mss = XR_TCP_PAYLOAD_MAX;
	live->t_req = due;
	live->acked = 0;
	live->retries = 0;
	live->dupacks = 0;
	live->flags &= ~XR_TCPF_PUMPED;
	memcpy(&s, live, sizeof(s));
	if (rlen <= mss && rlen <= wnd) {
		sent = rlen;
		tcp_batch_add(&t->pace.out, t, &s, 0, rlen);
	} else if (mss) {
		/* as tcp_pump_fill: full segments within the window, the rest on the server's ACKs */
		live->flags |= XR_TCPF_PUMPED;
		for (int i = 0; i < XR_TCP_FLIGHT_SEGS && sent < rlen; i++) {
			uint32_t len = rlen - sent < mss ? rlen - sent : mss;

			if (sent + len > wnd) {
				if (wnd <= sent || sent)
					break;
				len = wnd;
			}
			tcp_batch_add(&t->pace.out, t, &s, sent, len);
			sent += len;
		}
	}
	live->in_flight = sent;
	live->t_sent = now;
	/* last: from here on the session is XDP's again (its ACK handling reads the above) */
	__atomic_store_n(&live->state, XR_TCP_REQUEST, __ATOMIC_RELEASE);
}

/*
 * Every session's request 0 answered (gen mqtt's CONNECT, gen tcp's first
 * request), or the session ended: the schedule may start. Until it does, no
 * session answers more than its request 0, so responses count sessions.
 */
static bool pace_connected(struct tcp *t)
{
	struct xr_replies_stats r;

	if (engine_replies_sum(bpf_map__fd(t->skel->maps.replies_stats), &r))
		return false;
	return r.ctr[XR_TCP_RESPONSES] + tcp_ended(t, &r) + atomic_load(&t->rs.syns_given_up) +
		       atomic_load(&t->rs.sessions_given_up) >=
	       t->pace.sessions;
}

int tcp_pace_check(const char *opt, const struct send_opts *so, bool searched)
{
	if (so->search && !searched)
		return cli_usage_error(so->cmd,
				       "%s R under search: give '%s search' (each trial's load is "
				       "then that rate, over the trial's --count sessions)",
				       opt, opt);
	if (!so->count || so->duration_ns || so->concurrency)
		return cli_usage_error(so->cmd,
				       "%s paces the requests of --count sessions: give "
				       "--count, and no --duration or --concurrency",
				       opt);
	if (so->shards > 1)
		return cli_usage_error(so->cmd, "%s: not with --shard for now", opt);
	if (so->count > UINT32_MAX)
		return cli_usage_error(so->cmd, "%s: at most %u sessions", opt, UINT32_MAX);
	return 0;
}

int tcp_pace_trial_bursts(const char *opt, const struct send_opts *so, double rate,
			  uint64_t trial_ns, uint32_t burst, uint64_t max, uint64_t *bursts)
{
	double n = ceil(rate * (trial_ns / 1e9) / ((double)so->count * burst));

	*bursts = n < 1 ? 1 : (uint64_t)n;
	if (n > max)
		return cli_usage_error(so->cmd,
				       "%s search: a trial at %g/s for %.3g s is %.0f bursts per "
				       "session, over %llu: raise --count",
				       opt, rate, trial_ns / 1e9, n, (unsigned long long)max);
	return 0;
}

/* Paced session i's slot, or NULL while another session holds it (or none does) */
static struct xr_tcp_session *pace_session(struct tcp *t, uint64_t i)
{
	uint64_t c = t->pace.base + i;
	uint32_t tkey =
		(uint32_t)(c % t->rs.m.src_count +
			   (c / t->rs.m.src_count) % t->rs.m.sport_count * t->rs.m.src_count) +
		1;
	struct xr_tcp_session *live = &t->sessions[tkey & (t->table - 1)];

	return live->tkey == tkey && live->c32 == (uint32_t)c ? live : NULL;
}

/*
 * gen mqtt --keepalive K: a publisher that waits longer than K between its
 * bursts sends the broker a PINGREQ once idle for K / 2, as a socket client
 * does (MQTT-3.1.2-23: the broker closes a client silent for 1.5 K). It
 * goes under the session's gate (2 while held), so no request goes meanwhile;
 * a late request whose gate XDP found held goes from here. A PINGREQ whose
 * PINGRESP did not come goes again (its 2 bytes hold up what follows).
 * Every K / 8, a pass over the paced sessions.
 */
static void pace_keepalive(struct tcp *t, uint64_t now)
{
	struct tcp_pacer *p = &t->pace;

	if (!p->keepalive_ns || !tcp_pings(t) || now < p->next_sweep)
		return;
	p->next_sweep = now + p->keepalive_ns / 8;
	for (uint64_t i = 0; i < p->sessions && !atomic_load(&p->stop); i++) {
		struct xr_tcp_session *live = pace_session(t, i), s;
		uint32_t gate = 1;

		if (!live || live->state == XR_TCP_DONE || live->state == XR_TCP_FIN_SENT)
			continue;
		if (__atomic_load_n(&live->ping_owed, __ATOMIC_ACQUIRE)) {
			if (p->ping_tries[i] >= XR_TCP_MAX_RETRIES ||
			    now - p->ping_at[i] < (XR_TCP_RTO_NS << p->ping_tries[i]))
				continue;
			s = *live;
			if (tcp_batch_take(&p->out, t,
					   tcp_ping_segment(t, &s, tcp_batch_slot(&p->out))))
				p->pings_again++;
			p->ping_tries[i]++;
			p->ping_at[i] = now;
			continue;
		}
		if (live->state != XR_TCP_PACED || now - live->t_sent < p->keepalive_ns / 2 ||
		    !__atomic_compare_exchange_n(&live->pace_gate, &gate, 2, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		/* the gate is 1 only while the session waits: it is still ours to ping */
		live->pings++;
		__atomic_store_n(&live->ping_owed, 1, __ATOMIC_SEQ_CST);
		live->t_sent = now;
		p->ping_at[i] = now;
		p->ping_tries[i] = 0;
		s = *live;
		if (tcp_batch_take(&p->out, t, tcp_ping_segment(t, &s, tcp_batch_slot(&p->out))))
			p->pings++;
		__atomic_store_n(&live->pace_gate, 1, __ATOMIC_SEQ_CST);
		gate = 1;
		if (__atomic_load_n(&p->grant[i], __ATOMIC_SEQ_CST) >= live->k &&
		    __atomic_compare_exchange_n(&live->pace_gate, &gate, 0, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			pace_send(t, live, pace_due(p, (uint64_t)(live->k - 1) * p->sessions + i),
				  now);
			p->caught_up++;
		}
	}
	if (p->out.n)
		tcp_batch_flush(&p->out, t);
}

static void *pace_main(void *arg)
{
	struct tcp *t = arg;
	struct tcp_pacer *p = &t->pace;
	uint64_t start = now_ns(), d, end;
	struct rusage ru;

	while (!atomic_load(&p->stop) && !pace_connected(t)) {
		pace_keepalive(t, now_ns());
		usleep(1000);
	}
	p->connect_ns = now_ns() - start;
	__atomic_store_n(&p->t0, now_ns() + PACE_SPIN_NS, __ATOMIC_RELEASE);
	/* XDP stamps a late request with its departure: the schedule's start first */
	__atomic_store_n(&t->skel->bss->tcp_pace_t0_ns, p->t0, __ATOMIC_SEQ_CST);
	end = pace_due(p, p->departures ? p->departures - 1 : 0) + PACE_BEHIND_NS;
	for (d = 0; d < p->departures && !atomic_load(&p->stop); d++) {
		uint64_t due = pace_due(p, d), now = now_ns();
		uint32_t i = d % p->sessions, gate = 1;
		uint64_t k = 1 + d / p->sessions;
		struct xr_tcp_session *live;

		/*
		 * what is queued goes before any wait: frames are batched only when
		 * their departures fell due together (a pacer behind its schedule)
		 */
		if (due > now && p->out.n)
			tcp_batch_flush(&p->out, t);
		for (;;) {
			uint64_t until = due - PACE_SPIN_NS / 2;

			pace_keepalive(t, now);
			if (due <= now + PACE_SPIN_NS)
				break;
			if (p->keepalive_ns && p->next_sweep < until)
				until = p->next_sweep;
			sleep_until(until);
			now = now_ns();
		}
		while ((now = now_ns()) < due)
			;
		p->overran += now > end;
		live = pace_session(t, i);
		/* the grant before the gate: XDP sets the gate before it reads the grant */
		__atomic_store_n(&p->grant[i], k, __ATOMIC_SEQ_CST);
		if (!live || !__atomic_compare_exchange_n(&live->pace_gate, &gate, 0, false,
							  __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			/* still on request k - 1 (XDP sends k when that is answered), or ended */
			p->busy++;
			continue;
		}
		if (live->k > k || live->state != XR_TCP_PACED) {
			/* a wait for a request not granted yet: cannot happen, grants come first */
			__atomic_store_n(&live->pace_gate, 1, __ATOMIC_SEQ_CST);
			p->mismatched++;
			continue;
		}
		if (live->k < k) {
			/*
			 * a session behind its schedule, caught between setting its gate
			 * and taking it for its late request k: that request goes now,
			 * late, timed from its own departure
			 */
			pace_send(t, live, pace_due(p, (uint64_t)(live->k - 1) * p->sessions + i),
				  now);
			p->caught_up++;
			continue;
		}
		pace_send(t, live, due, now);
		p->sent++;
		if (now - due > PACE_BEHIND_NS)
			p->behind++;
		if (now - due > p->behind_max_ns)
			p->behind_max_ns = now - due;
	}
	if (p->out.n)
		tcp_batch_flush(&p->out, t);
	p->granted = d;
	if (!getrusage(RUSAGE_THREAD, &ru))
		p->cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
			    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	return NULL;
}

uint64_t tcp_pace_wait_until(void *ctx)
{
	const struct tcp_pacer *p = &((struct tcp *)ctx)->pace;
	uint64_t t0 = __atomic_load_n(&p->t0, __ATOMIC_ACQUIRE);

	if (!p->ps || !p->running)
		return 0;
	/*
	 * not started: every session is still connecting or ending (a SYN
	 * retransmitted, given up at last), and the whole schedule is still to run
	 */
	if (!t0)
		return now_ns() + tcp_pace_span(p) + p->wait_ns;
	return pace_due(p, p->departures ? p->departures - 1 : 0) + p->wait_ns;
}

int tcp_pace_start(struct tcp *t, struct gen_bpf *skel)
{
	struct tcp_pacer *p = &t->pace;
	size_t sz;
	int err;

	if (!p->ps)
		return 0;
	p->grant = engine_map_mmap(skel->maps.tcp_pace, &sz);
	p->grant_sz = sz;
	if (p->keepalive_ns) {
		p->ping_at = calloc(p->sessions, sizeof(*p->ping_at));
		p->ping_tries = calloc(p->sessions, sizeof(*p->ping_tries));
	}
	err = p->grant && (!p->keepalive_ns || (p->ping_at && p->ping_tries)) ?
		      tcp_batch_init(&p->out, t) :
		      -ENOMEM;
	if (err)
		goto err;
	atomic_store(&p->stop, false);
	err = -pthread_create(&p->tid, NULL, pace_main, t);
	if (err) {
		pr_warn("cannot start the pacer's thread: %s\n", strerror(-err));
		goto err;
	}
	p->running = true;
	return 0;
err:
	tcp_pace_stop(t);
	return err;
}

void tcp_pace_stop(struct tcp *t)
{
	struct tcp_pacer *p = &t->pace;

	if (p->running) {
		atomic_store(&p->stop, true);
		pthread_join(p->tid, NULL);
		p->running = false;
	}
	if (p->grant)
		munmap(p->grant, p->grant_sz);
	p->grant = NULL;
	free(p->ping_at);
	free(p->ping_tries);
	p->ping_at = NULL;
	p->ping_tries = NULL;
	tcp_batch_free(&p->out);
}

void tcp_pace_report(const struct tcp *t, const struct engine_result *res, const char *what,
		     uint64_t acked, FILE *human, struct json *j)
{
	const struct tcp_pacer *p = &t->pace;
	/* late: sent from XDP as the one before was answered, or by the pacer that took its gate first */
	uint64_t late = res->replies.st.ctr[XR_TCP_LATE] + p->caught_up;
	double rate = 1e12 / p->ps, schedule = p->departures * (p->ps / 1e12), seconds = 0;
	char x[16], y[16];

	if (!p->ps)
		return;
	/* from the schedule's start to the last answer */
	if (p->t0 && t->last_answer_ns > p->t0)
		seconds = (t->last_answer_ns - p->t0) / 1e9;
	if (human) {
		fprintf(human,
			"  paced: %llu %ss at %s/s over %.3f s, once each session had its first answer (%.3f s): "
			"%llu sent at their departure (%llu over 1 ms after it, at most %.3f ms), "
			"%llu late (the one before not answered by then)",
			(unsigned long long)p->departures, what, fmt_si(rate, x, sizeof(x)),
			schedule, p->connect_ns / 1e9, (unsigned long long)p->sent,
			(unsigned long long)p->behind, p->behind_max_ns / 1e6,
			(unsigned long long)late);
		if (p->granted < p->departures)
			fprintf(human, ", %llu whose departure never came (the run ended first)",
				(unsigned long long)(p->departures - p->granted));
		if (p->overran)
			fprintf(human,
				", %llu reached over 1 ms after the schedule's end (a pacer behind)",
				(unsigned long long)p->overran);
		fprintf(human, "; answered %s/s",
			fmt_si(seconds > 0 ? acked / seconds : 0, y, sizeof(y)));
		if (p->keepalive_ns && tcp_pings(t))
			fprintf(human,
				"; keep-alive: %llu PINGREQs while waiting (%llu again), %llu "
				"PINGRESPs",
				(unsigned long long)p->pings, (unsigned long long)p->pings_again,
				(unsigned long long)res->replies.st.ctr[t->app->pings_answered]);
		fputc('\n', human);
	}
	if (!j)
		return;
	json_open(j, "pace", '{');
	json_double(j, "per_s", rate);
	json_u64(j, "departures", p->departures);
	json_u64(j, "reached", p->granted);
	json_u64(j, "at_departure", p->sent);
	json_u64(j, "behind_1ms", p->behind);
	json_u64(j, "after_schedule_end", p->overran);
	json_double(j, "behind_max_ms", p->behind_max_ns / 1e6);
	json_u64(j, "late", late);
	/* once each, at its departure or late; answered: what the report counts (messages, requests) */
	json_u64(j, "sent", p->sent + late);
	json_u64(j, "answered", acked);
	json_u64(j, "busy_at_departure", p->busy);
	json_u64(j, "gate_mismatched", p->mismatched);
	json_double(j, "connect_s", p->connect_ns / 1e9);
	json_double(j, "schedule_s", schedule);
	json_double(j, "seconds", seconds);
	json_double(j, "answered_per_s", seconds > 0 ? acked / seconds : 0);
	json_u64(j, "cpu_ns", p->cpu_ns);
	if (p->keepalive_ns && tcp_pings(t)) {
		json_open(j, "keepalive", '{');
		json_double(j, "seconds", p->keepalive_ns / 1e9);
		json_u64(j, "pings", p->pings);
		json_u64(j, "again", p->pings_again);
		json_u64(j, "answered", res->replies.st.ctr[t->app->pings_answered]);
		json_close(j, '}');
	}
	json_close(j, '}');
}
