/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen tcp's sessions as other protocols build on them (gen mqtt): a client
 * byte stream of a first request, K - 1 equal ones and a goodbye on the FIN
 * (bpf/shared/tcp.h), carried in XDP; the retransmission thread; the books of
 * every session asked. The protocol fills the stream, then calls
 * tcp_sessions_build from its build and tcp_sessions_report from its report.
 */
#ifndef __XR_PROTO_TCP_SESSION_H
#define __XR_PROTO_TCP_SESSION_H

#include <linux/if_packet.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <stdatomic.h>
#include "proto/proto.h"
#include "proto/tcp/app.h"
#include "gen.skel.h"

/* sessions still open at the end, by what they waited for (timeout: retransmitted in vain) */
struct tcp_stalled {
	uint64_t request, response, close, timeout;
	/*
	 * not a session's end (apart from the above): requests after the first
	 * with bytes on the wire but not all acknowledged (XR_TCP_REQUESTS
	 * counts those sent whole), left on their way by a run cut short (a
	 * paced search trial's end) or a session given up
	 */
	uint64_t request_partial;
	/* sessions still open when the run ended, reset then (tcp_reset_open); RSTs the socket refused */
	uint64_t reset_at_end, reset_send_errors;
};

/* The retransmission thread's: the frame's constant parts, its socket, what it sent. */
struct tcp_resender {
	uint8_t eth[14]; /* the SYN template's Ethernet header */
	uint8_t syn[96]; /* the SYN template (IPv6: 78 bytes) */
	uint32_t syn_len, isn_step;
	struct xr_reply_match m;
	/* the SYNs: sent so far (from the engine's slots), the oldest that may still want one again */
	const struct xr_gen_slot *slots;
	const struct engine_opts *o; /* the run's: threads, their CPUs, sequence numbers */
	uint64_t syn_lo;
	struct xr_send_ts *ts; /* send_ts, mapped */
	size_t ts_sz;
	atomic_uint_fast64_t syns_resent;
	/* SYNs unanswered 7 s, sessions whose last retransmission went unanswered: given up */
	atomic_uint_fast64_t syns_given_up, sessions_given_up;
	int fd;
	int ifindex;
	pthread_t tid;
	bool running;
	atomic_bool stop;
	atomic_uint_fast64_t resent, failed;
	int ready_fd; /* engine_opts.ready_fd: a byte once every session was answered (0: none) */
};

/*
 * What changes per session in its bytes: bytes [off, off + len) of request
 * s->k as session s sends them, written over the template's in buf (the
 * kernel's own copy of the same: bpf/proto/X.bpf.h).
 */
/* Frames the pump and the pacer send with one sendmmsg. */
#define TCP_PUMP_BATCH 64
/* The most bytes of a segment of ours: Ethernet, IPv6 (or IPv4), TCP, a full payload. */
#define TCP_FRAME_MAX (14 + 60 + XR_TCP_PAYLOAD_MAX)

/* Segments built in place and sent through the retransmission thread's packet socket, a batch at a time. */
struct tcp_batch {
	struct sockaddr_ll to;
	unsigned int n; /* frames in the batch */
	struct mmsghdr *msg;
	struct iovec *iov;
	uint8_t *frames;
	uint64_t sent, send_errors; /* a frame not sent is still in flight: its timeout sends it */
};

/*
 * The pump: segments too large for XDP_TX in place (bpf/shared/tcp.h), asked
 * for by XDP in a ring buffer, built here from the request and sent through the
 * retransmission thread's packet socket.
 */
struct tcp_pump {
	struct ring_buffer *rb;
	pthread_t tid;
	bool running;
	atomic_bool stop;
	/* the pump thread's alone until it is joined */
	struct tcp_batch out;
	uint64_t stale, left_at_end;
	/*
	 * delayed ACKs (bpf/proto/tcp.bpf.h: tcp_ack_later), in a batch of their
	 * own so that each book adds up: asked = sent + not needed (a segment
	 * of XDP's carried it, or the session moved on) + send errors + left
	 */
	struct tcp_batch acks;
	uint64_t acks_not_needed, acks_left_at_end;
	bool draining; /* the run is over: what the ring still holds is counted, not sent */
	uint64_t cpu_ns; /* the thread's user and system time, once it ended */
};

/*
 * Paced requests (pace.c): departure d is request 1 + d / sessions of
 * session base + d mod sessions, ps picoseconds after the one before, from
 * t0 on (once every session connected). The thread's counters are its own
 * until it is joined.
 */
struct tcp_pacer {
	uint64_t ps; /* picoseconds between departures (0: not paced) */
	uint64_t sessions, base, departures;
	uint64_t *grant; /* tcp_pace, mapped */
	size_t grant_sz;
	uint64_t t0, connect_ns; /* the schedule's start; how long the sessions took to connect */
	uint64_t granted; /* departures whose time came before the run ended */
	uint64_t sent; /* requests this thread sent at their departure */
	uint64_t behind, behind_max_ns; /* of those, sent over 1 ms after it; the most after */
	/*
	 * departures this thread reached over 1 ms after the schedule's end: a
	 * schedule it did not keep (a search trial's sender short), where a
	 * departure a moment late here and there is not
	 */
	uint64_t overran;
	uint64_t wait_ns; /* --wait, after the schedule's end */
	uint64_t busy; /* departures whose session was still busy (XDP sends them late) or ended */
	uint64_t caught_up; /* requests of sessions behind, sent late (as XDP's XR_TCP_LATE) */
	uint64_t mismatched; /* gates taken for a request not granted yet (none) */
	uint64_t cpu_ns;
	uint64_t answered; /* paced requests answered (the table's, at the end) */
	/*
	 * gen mqtt --keepalive: a publisher waiting for its departure sends a
	 * PINGREQ once idle for half of it (0: none); when each went (again
	 * after XR_TCP_RTO_NS without its PINGRESP), per paced session
	 */
	uint64_t keepalive_ns;
	uint64_t *ping_at;
	uint8_t *ping_tries;
	uint64_t pings, pings_again, next_sweep;
	struct tcp_batch out; /* out.sent: the segments it sent */
	pthread_t tid;
	bool running;
	atomic_bool stop;
};

/*
 * replay --sessions: the capture's flows as sessions play them (flows.c):
 * session c plays flow c mod nflows, whose requests are steps (bpf/shared/tcp.h).
 */
struct tcp_capture {
	struct xr_tcp_flow *flows;
	uint64_t *start_ns; /* each flow's SYN's capture time, in the order of flows */
	uint32_t nflows;
	struct xr_tcp_step *steps;
	uint32_t nsteps;
	uint8_t **req; /* the distinct requests' bytes, by struct xr_tcp_step.key */
	uint32_t *req_len;
	uint32_t nkeys;
};

/* The capture's flows and steps into skel's maps (after load). 0 or -errno after a one-line message. */
int tcp_flows_load(const struct tcp_capture *cap, struct gen_bpf *skel);

typedef void (*tcp_patch_fn)(const void *ctx, const struct xr_tcp_session *s, uint8_t *buf,
			     uint32_t off, uint32_t len);

struct tcp {
	/*
	 * no session of the run completed: the commonest reason and how many
	 * failed by it (the report's, for the verdict; NULL: some completed)
	 */
	const char *none_completed;
	uint64_t none_completed_n, none_asked;
	/* the stream: requests 1.. (req), request 0 (first; NULL: req too), the goodbye */
	uint8_t *req, *first;
	size_t req_len, first_len;
	uint8_t bye[4];
	uint8_t bye_len;
	tcp_patch_fn patch;
	const void *patch_ctx;
	struct xr_tcp_fields fields; /* gen tcp's {c} and {k} in its request */
	const struct tcp_capture
		*cap; /* replay --sessions: each session its flow's stream; NULL: gen's */
	uint64_t requests; /* requests per session, request 0 included */
	uint64_t concurrency; /* --concurrency: sessions open at once (0: an open loop) */
	uint8_t close, response;
	bool veth; /* the sender's interface is a veth (its XDP_TX needs a program on the peer) */
	bool veth_peer_xdp; /* ... and its peer had one when the run started */
	char veth_peer[16]; /* the peer's name */
	uint64_t resp_size;
	uint8_t resp_first; /* XR_TCP_RESP_SIZE: a successful response's first byte (0: any) */
	const struct tcp_app *app; /* the application on the sessions (NULL: none) */

	uint32_t table; /* session table slots */
	struct xr_tcp_cfg cfg;
	struct engine_proto ops;
	struct gen_bpf *skel;
	struct xr_tcp_session *sessions;
	size_t sessions_sz;
	struct tcp_stalled stalled;
	struct engine_replies resp; /* request to last byte */
	struct engine_replies first_byte; /* request to first byte */
	uint64_t last_answer_ns; /* when the last response completed (CLOCK_MONOTONIC) */
	struct tcp_resender rs;
	struct tcp_pump pump;
	struct tcp_pacer pace;
};

/*
 * Session s's segment with request k's bytes [off, off + len) into f (room
 * for TCP_FRAME_MAX bytes), as XDP would send it: the
 * template's bytes made s's own, acknowledging s->rcv_nxt. Its length.
 */
size_t tcp_request_segment(const struct tcp *t, const struct xr_tcp_session *s, uint32_t off,
			   uint32_t len, uint8_t *f);

/* Our sequence number at offset off of request k of session s */
uint32_t tcp_request_seq(const struct tcp *t, const struct xr_tcp_session *s, uint32_t off);

/* Request k of session s: its bytes (NULL: none), their number into *rlen */
const uint8_t *tcp_request_bytes(const struct tcp *t, const struct xr_tcp_session *s,
				 uint32_t *rlen);

/*
 * Session s's segment that is due again into f: request k's bytes from
 * acked (as much as MSS and window take), the application's replies, or
 * our goodbye and FIN. Its length, or 0.
 */
size_t tcp_rebuild(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f);

/* Session s's bare ACK of rcv_nxt at the end of its request k into f. Its length, or 0. */
size_t tcp_ack_segment(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f);

/* A paced session's keep-alive, the last it sent (before request k), into f: its length */
size_t tcp_ping_segment(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f);

/* The application's keep-alives: the stream holds s->pings of them before request k */
static inline bool tcp_pings(const struct tcp *t)
{
	return t->app && t->app->ping_len;
}

/* The application's replies to the server's pushes: bytes each (0: none) */
static inline uint32_t tcp_reply_len(const struct tcp *t)
{
	return t->app ? t->app->reply_len : 0;
}

/* The bytes before a segment's payload: Ethernet, IPv4 or IPv6, and a 20-byte TCP header. */
static inline uint32_t tcp_hdrs(const struct tcp *t)
{
	return t->rs.m.ipv6 ? 74 : 54;
}

/* Our address and port of slot key tkey, seq, ack, flags and plen bytes already at f + tcp_hdrs(t): the headers around them. */
size_t tcp_segment_headers(const struct tcp *t, uint32_t tkey, uint32_t seq, uint32_t ack,
			   uint8_t flags, uint32_t plen, uint8_t *f);

/* A batch for t's packet socket's frames. 0 or -ENOMEM. */
int tcp_batch_init(struct tcp_batch *b, const struct tcp *t);
/* Where the batch's next frame is built (TCP_FRAME_MAX bytes of room). */
uint8_t *tcp_batch_slot(struct tcp_batch *b);
/* The frame of flen bytes built at the slot taken (0: none, false), the batch sent once it is full. */
bool tcp_batch_take(struct tcp_batch *b, const struct tcp *t, size_t flen);
/* Session s's request k bytes [off, off + len) as a segment into the batch, sent once it is full; false: none to build. */
bool tcp_batch_add(struct tcp_batch *b, const struct tcp *t, const struct xr_tcp_session *s,
		   uint32_t off, uint32_t len);
/* Session s's bare ACK at the end of its request k into the batch (tcp_ack_segment). */
bool tcp_batch_add_ack(struct tcp_batch *b, const struct tcp *t, const struct xr_tcp_session *s);
/* Sends what the batch holds. */
void tcp_batch_flush(struct tcp_batch *b, const struct tcp *t);
void tcp_batch_free(struct tcp_batch *b);

/* The retransmission thread and its packet socket on o's interface. 0 or -errno after a line. */
int tcp_resend_start(struct tcp *t, const struct xr_gen_slot *slots, const struct engine_opts *o);
/* Ends the retransmission thread; its socket stays open (for tcp_reset_open). */
void tcp_resend_stop(struct tcp *t);
/* Ends the thread and closes its socket. */
void tcp_resend_close(struct tcp *t);
/* Every session still open reset through the thread's socket (after it stopped). */
void tcp_reset_open(struct tcp *t);

/* The pump's thread on the ring buffer of skel (after load, with t->rs.fd open). 0 or -errno. */
int tcp_pump_start(struct tcp *t, struct gen_bpf *skel);

/* Ends the pump's thread; what it counted stays. */
void tcp_pump_stop(struct tcp *t);

/* The pacer's thread, when t->pace.ps asks for one (after load, with t->rs.fd open). 0 or -errno. */
int tcp_pace_start(struct tcp *t, struct gen_bpf *skel);

/* The schedule's length: all its departures, ps apart */
uint64_t tcp_pace_span(const struct tcp_pacer *p);

/* engine_proto's wait_until: the schedule's end and --wait (0: not paced) */
uint64_t tcp_pace_wait_until(void *ctx);

/* Ends the pacer's thread; what it counted stays. */
void tcp_pace_stop(struct tcp *t);

/* What paced requests need of the run's options (opt: the option that asks for them). 0, or XR_EXIT_USAGE after a line. */
int tcp_pace_check(const char *opt, const struct send_opts *so, bool searched);

/*
 * A paced search trial's requests per session after the first: rate x
 * trial time over so->count sessions, in whole bursts of burst, at least
 * one. 0, or XR_EXIT_USAGE after a line when that is over max bursts.
 */
int tcp_pace_trial_bursts(const char *opt, const struct send_opts *so, double rate,
			  uint64_t trial_ns, uint32_t burst, uint64_t max, uint64_t *bursts);

/* Sessions that ended, one way or the other, among those that got an answer. */
uint64_t tcp_ended(const struct tcp *t, const struct xr_replies_stats *r);

/*
 * The paced requests' line (what: what a request is, "burst") and JSON
 * member "pace": the schedule, who sent each request and how late, and
 * answers per second over the schedule (acked: answered requests' worth).
 */
void tcp_pace_report(const struct tcp *t, const struct engine_result *res, const char *what,
		     uint64_t acked, FILE *human, struct json *j);

/* tcp_patch_fn of gen tcp's fields (ctx: the struct xr_tcp_fields), as bpf/proto/fields.bpf.h writes them. */
void tcp_fields_write(const void *ctx, const struct xr_tcp_session *s, uint8_t *buf, uint32_t off,
		      uint32_t len);

/* --close fin|rst into t: -1 (parsed), or XR_EXIT_USAGE after a one-line message (parse_opt's) */
int tcp_close_opt(struct tcp *t, const char *arg, const struct send_opts *so);

/* The sessions of a run whose stream t holds: SYN template, table, engine hooks. 0 or -errno. */
int tcp_sessions_build(struct tcp *t, const struct send_opts *so, const struct iface *ifc,
		       struct frameset *fs, struct send_plan *plan, struct engine_opts *o);

/* Every session asked, by how it ended. */
struct tcp_books {
	uint64_t asked, completed, not_sent, no_answer, refused, reset, table_full, malformed,
		closed_early, app_refused, app_protocol;
	uint64_t syn_recovered; /* SYNs the driver refused, sent again and answered */
	struct tcp_stalled stalled;
	uint64_t failed, unaccounted;
};

/* The books of t's run res: every session asked, completed or failed with its reason. */
void tcp_books(const struct tcp *t, const struct engine_result *res, struct tcp_books *b);

/* The sessions' books, segments and handshake times (lines and JSON members). */
void tcp_sessions_report(struct tcp *t, const struct engine_result *res, FILE *human,
			 struct json *j);

/*
 * A run where no session completed is a failure (exit 1) with one line
 * naming the commonest reason (a server that is down, a closed port, a
 * route missing), not a success with every session failed: XR_EXIT_FAIL
 * after that line, or 0.
 */
int tcp_none_completed_verdict(const struct tcp *t);

/* gen tcp's and replay --sessions' report: the sessions', then the requests' and responses' */
void tcp_requests_report(struct tcp *t, const struct engine_result *res, FILE *human,
			 struct json *j);

/* The request-to-answer times' line and JSON (what) */
void tcp_answers_report(const struct tcp *t, const char *line, FILE *human, struct json *j,
			const char *what);

/* v a second from the run's start to its last response (what open-ended sessions achieved). */
double tcp_answers_per_s(const struct tcp *t, const struct engine_result *res, uint64_t v);
/* Seconds from the run's first SYN to its last answer (0: none). */
double tcp_answers_seconds(const struct tcp *t, const struct engine_result *res);

void tcp_sessions_free(struct tcp *t);
/* The headline's clause of a run of sessions (report/headline.h): completed of asked, the most failed as */
void tcp_headline(struct json_object *result, struct words *w);

#endif /* __XR_PROTO_TCP_SESSION_H */
