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
 * timeout: nothing is lost track of.
 */
#include <errno.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "proto/tcp/session.h"
#include "util/log.h"

#define TCP_FRAME_MAX (14 + 40 + XR_TCP_PAYLOAD_MAX)

static void pump_flush(struct tcp *t)
{
	struct tcp_pump *p = &t->pump;
	unsigned int done = 0;

	while (done < p->n) {
		int r = sendmmsg(t->rs.fd, p->msg + done, p->n - done, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			/* the first frame not sent is dropped; its session's timeout sends it */
			p->send_errors++;
			done++;
			continue;
		}
		p->sent += r;
		done += r;
	}
	p->n = 0;
}

static int pump_one(void *ctx, void *data, size_t size)
{
	struct tcp *t = ctx;
	struct tcp_pump *p = &t->pump;
	const struct xr_tcp_pump_seg *g = data;
	const struct xr_tcp_session *live;
	struct xr_tcp_session s;
	size_t len;

	if (size < sizeof(*g))
		return 0;
	if (p->draining) {
		/* asked for as the run ended: not sent, and no session waits for it any more */
		p->left_at_end++;
		return 0;
	}
	live = &t->sessions[g->tkey & (t->table - 1)];
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
	if (t->cap) {
		/* request k's place in its flow, as the session has it (k checked above) */
		s.step_len = live->step_len;
		s.step_off = live->step_off;
		s.step_key = live->step_key;
	}
	len = tcp_request_segment(t, &s, g->off, g->len, p->frames + p->n * TCP_FRAME_MAX);
	if (!len) {
		p->stale++;
		return 0;
	}
	p->iov[p->n].iov_len = len;
	if (++p->n == TCP_PUMP_BATCH)
		pump_flush(t);
	return 0;
}

static void *pump_main(void *arg)
{
	struct tcp *t = arg;
	struct rusage ru;

	while (!atomic_load(&t->pump.stop)) {
		int r = ring_buffer__poll(t->pump.rb, 100);

		if (t->pump.n)
			pump_flush(t);
		if (r < 0 && r != -EINTR) {
			pr_warn("the pump's ring buffer: %s\n", strerror(-r));
			break;
		}
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

	p->msg = calloc(TCP_PUMP_BATCH, sizeof(*p->msg));
	p->iov = calloc(TCP_PUMP_BATCH, sizeof(*p->iov));
	p->frames = malloc(TCP_PUMP_BATCH * TCP_FRAME_MAX);
	if (!p->msg || !p->iov || !p->frames) {
		err = -ENOMEM;
		goto err;
	}
	p->to = (struct sockaddr_ll){ .sll_family = AF_PACKET,
				      .sll_ifindex = t->rs.ifindex,
				      .sll_halen = 6 };
	memcpy(p->to.sll_addr, t->rs.eth, 6);
	for (unsigned int i = 0; i < TCP_PUMP_BATCH; i++) {
		p->iov[i].iov_base = p->frames + i * TCP_FRAME_MAX;
		p->msg[i].msg_hdr = (struct msghdr){ .msg_name = &p->to,
						     .msg_namelen = sizeof(p->to),
						     .msg_iov = &p->iov[i],
						     .msg_iovlen = 1 };
	}
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
	free(p->msg);
	free(p->iov);
	free(p->frames);
	p->msg = NULL;
	p->iov = NULL;
	p->frames = NULL;
}
