// SPDX-License-Identifier: GPL-2.0
/*
 * gen tcp's pump. XDP_TX turns the server's own frame into our answer, and on
 * veth that frame has no room after it: an answer larger than ~192 bytes
 * cannot be built there. So for a request longer than that, the session's XDP
 * handler (bpf/proto/tcp.bpf.h) asks for its segments in a ring buffer, up to
 * a window of full-size segments at a time, and this thread builds each one
 * from the request's bytes and the fields of the ask alone, and sends it
 * through the retransmission thread's packet socket, a batch per sendmmsg.
 * A segment that is not sent (no room in the ring, the socket refused it) is
 * still in flight for XDP, so the retransmission thread sends it after its
 * timeout: nothing is lost track of. A publisher's delayed ACKs come the same
 * way (bpf/proto/tcp.bpf.h: tcp_ack_later).
 *
 * While asks come, the thread looks at the ring every TCP_PUMP_POLL_NS and
 * XDP wakes nobody (tcp_pump_polling); after TCP_PUMP_IDLE_NS without one it
 * sleeps until the next ask wakes it.
 */
#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "util/time.h"
#include "proto/tcp/session.h"
#include "util/log.h"

/*
 * A delayed ACK's delay at most, about (a socket client's reader wakes in tens
 * of microseconds). Measured against 20 us (one publisher's bursts of 20 into
 * Mosquitto): the same rate, the pump's CPU 6.7-7.9 us a message instead of
 * 9-12, and more PUBACKs gathered in a segment (0.29-0.34 a message, 0.51-0.53)
 */
#define TCP_PUMP_POLL_NS 50000
/*
 * Four empty looks: the asks have stopped for now. Each look costs the pump
 * a wake-up of its own, and asks that come apart (a burst of small messages
 * every ~0.6 ms) cost less woken one by one: 2 ms kept the pump looking 26,000
 * times a second for 1,600 asks, 127 us of its CPU per segment. Asks that
 * come closer than this (a publisher's QoS-1 bursts) keep it looking.
 */
#define TCP_PUMP_IDLE_NS 200000ULL
/*
 * Asleep, the ring's wake-up ends the wait; this bounds the one race left (an
 * ask that read tcp_pump_polling just before it was cleared wakes nobody)
 */
#define TCP_PUMP_IDLE_POLL_MS 5

void tcp_batch_flush(struct tcp_batch *b, const struct tcp *t)
{
	unsigned int done = 0;

	while (done < b->n) {
		int r = sendmmsg(t->rs.fd, b->msg + done, b->n - done, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			/* the first frame not sent is dropped; its session's timeout sends it */
			b->send_errors++;
			done++;
			continue;
		}
		b->sent += r;
		done += r;
	}
	b->n = 0;
}

uint8_t *tcp_batch_slot(struct tcp_batch *b)
{
	return b->frames + b->n * TCP_FRAME_MAX;
}

bool tcp_batch_take(struct tcp_batch *b, const struct tcp *t, size_t flen)
{
	if (!flen)
		return false;
	b->iov[b->n].iov_len = flen;
	if (++b->n == TCP_PUMP_BATCH)
		tcp_batch_flush(b, t);
	return true;
}

bool tcp_batch_add(struct tcp_batch *b, const struct tcp *t, const struct xr_tcp_session *s,
		   uint32_t off, uint32_t len)
{
	return tcp_batch_take(b, t, tcp_request_segment(t, s, off, len, tcp_batch_slot(b)));
}

bool tcp_batch_add_ack(struct tcp_batch *b, const struct tcp *t, const struct xr_tcp_session *s)
{
	return tcp_batch_take(b, t, tcp_ack_segment(t, s, tcp_batch_slot(b)));
}

int tcp_batch_init(struct tcp_batch *b, const struct tcp *t)
{
	*b = (struct tcp_batch){
		.to = { .sll_family = AF_PACKET, .sll_ifindex = t->rs.ifindex, .sll_halen = 6 }
	};
	memcpy(b->to.sll_addr, t->rs.eth, 6);
	b->msg = calloc(TCP_PUMP_BATCH, sizeof(*b->msg));
	b->iov = calloc(TCP_PUMP_BATCH, sizeof(*b->iov));
	b->frames = malloc(TCP_PUMP_BATCH * TCP_FRAME_MAX);
	if (!b->msg || !b->iov || !b->frames) {
		tcp_batch_free(b);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < TCP_PUMP_BATCH; i++) {
		b->iov[i].iov_base = b->frames + i * TCP_FRAME_MAX;
		b->msg[i].msg_hdr = (struct msghdr){ .msg_name = &b->to,
						     .msg_namelen = sizeof(b->to),
						     .msg_iov = &b->iov[i],
						     .msg_iovlen = 1 };
	}
	return 0;
}

void tcp_batch_free(struct tcp_batch *b)
{
	free(b->msg);
	free(b->iov);
	free(b->frames);
	b->msg = NULL;
	b->iov = NULL;
	b->frames = NULL;
}

/*
 * A delayed ACK: the session's ACK as it is now, if one is still owed (no
 * segment of XDP's carried it meanwhile) and the session still reads the
 * answer to the request it was asked for in (or a later one).
 */
static int pump_ack(struct tcp *t, const struct xr_tcp_pump_seg *g, struct xr_tcp_session *live)
{
	struct tcp_pump *p = &t->pump;
	struct xr_tcp_session s;

	if (p->draining) {
		p->acks_left_at_end++;
		return 0;
	}
	if (live->tkey != g->tkey || live->c32 != g->c32 ||
	    !__atomic_exchange_n(&live->ack_owed, 0, __ATOMIC_SEQ_CST)) {
		p->acks_not_needed++;
		return 0;
	}
	/*
	 * read after the exchange, so rcv_nxt is at least what XDP had when it
	 * last found the ACK owed; a copy, as XDP may change it meanwhile
	 */
	s = *live;
	if (s.state != XR_TCP_RESPONSE || !tcp_batch_add_ack(&p->acks, t, &s))
		p->acks_not_needed++;
	return 0;
}

static int pump_one(void *ctx, void *data, size_t size)
{
	struct tcp *t = ctx;
	struct tcp_pump *p = &t->pump;
	const struct xr_tcp_pump_seg *g = data;
	const struct xr_tcp_session *live;
	struct xr_tcp_session s;

	if (size < sizeof(*g))
		return 0;
	if (!g->len)
		return pump_ack(t, g, &t->sessions[g->tkey & (t->table - 1)]);
	live = &t->sessions[g->tkey & (t->table - 1)];
	if (p->draining) {
		/* asked for as the run ended: not sent, and no session waits for it any more */
		p->left_at_end++;
		return 0;
	}
	/* asked for by a request that has moved on meanwhile (acknowledged, or the session ended) */
	if (live->tkey != g->tkey || live->c32 != g->c32 || live->k != g->k ||
	    live->state != XR_TCP_REQUEST) {
		p->stale++;
		return 0;
	}
	s = (struct xr_tcp_session){ .tkey = g->tkey,
				     .c32 = g->c32,
				     .isn = g->isn,
				     .rcv_nxt = g->ack,
				     .k = g->k,
				     .t_req = g->t_req };
	/* the keep-alives before request k (they go only while it waits for its departure) */
	if (tcp_pings(t))
		s.pings = live->pings;
	if (t->cap) {
		/* request k's place in its flow, as the session has it (k checked above) */
		s.step_len = live->step_len;
		s.step_off = live->step_off;
		s.step_key = live->step_key;
	}
	if (!tcp_batch_add(&p->out, t, &s, g->off, g->len))
		p->stale++;
	return 0;
}

static void *pump_main(void *arg)
{
	struct tcp *t = arg;
	struct tcp_pump *p = &t->pump;
	__u32 *polling = &t->skel->bss->tcp_pump_polling;
	const struct timespec poll = { .tv_nsec = TCP_PUMP_POLL_NS };
	uint64_t last_ask = 0;
	struct rusage ru;

	/* the poll's sleep as asked: the default slack (50 us) would double it */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	while (!atomic_load(&p->stop)) {
		int r = ring_buffer__consume(p->rb);

		if (!r && now_ns() - last_ask >= TCP_PUMP_IDLE_NS) {
			/* idle: asleep until an ask wakes it (cleared, then one more look) */
			__atomic_store_n(polling, 0, __ATOMIC_SEQ_CST);
			r = ring_buffer__consume(p->rb) ?:
				    ring_buffer__poll(p->rb, TCP_PUMP_IDLE_POLL_MS);
			if (r > 0)
				__atomic_store_n(polling, 1, __ATOMIC_SEQ_CST);
		}
		if (r < 0 && r != -EINTR) {
			pr_warn("the pump's ring buffer: %s\n", strerror(-r));
			break;
		}
		if (r > 0)
			last_ask = now_ns();
		if (p->out.n)
			tcp_batch_flush(&p->out, t);
		if (p->acks.n)
			tcp_batch_flush(&p->acks, t);
		if (__atomic_load_n(polling, __ATOMIC_RELAXED))
			clock_nanosleep(CLOCK_MONOTONIC, 0, &poll, NULL);
	}
	/* what the pump cost, apart from the sender's spinning thread */
	if (!getrusage(RUSAGE_THREAD, &ru))
		t->pump.cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
				 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	return NULL;
}

int tcp_pump_start(struct tcp *t, struct gen_bpf *skel)
{
	struct tcp_pump *p = &t->pump;
	int err;

	err = tcp_batch_init(&p->out, t) ?: tcp_batch_init(&p->acks, t);
	if (err)
		goto err;
	p->rb = ring_buffer__new(bpf_map__fd(skel->maps.tcp_pump), pump_one, t, NULL);
	if (!p->rb) {
		err = -errno;
		pr_warn("cannot read the pump's ring buffer: %s\n", strerror(errno));
		goto err;
	}
	atomic_store(&p->stop, false);
	err = -pthread_create(&p->tid, NULL, pump_main, t);
	if (err) {
		pr_warn("cannot start the pump's thread: %s\n", strerror(-err));
		goto err;
	}
	p->running = true;
	return 0;
err:
	tcp_pump_stop(t);
	return err;
}

void tcp_pump_stop(struct tcp *t)
{
	struct tcp_pump *p = &t->pump;

	if (p->running) {
		atomic_store(&p->stop, true);
		pthread_join(p->tid, NULL);
		p->running = false;
		/* what is still in the ring is counted, so that every ask is accounted for */
		p->draining = true;
		ring_buffer__consume(p->rb);
	}
	ring_buffer__free(p->rb);
	p->rb = NULL;
	tcp_batch_free(&p->out);
	tcp_batch_free(&p->acks);
}
