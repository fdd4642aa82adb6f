// SPDX-License-Identifier: GPL-2.0
/*
 * XDP answers only when the server sends something, so a segment of ours
 * that is lost (the server then has nothing to say) is sent again from here:
 * a thread scans the session table and rebuilds what is due, from the
 * session's state alone, through a packet socket on the interface. The same
 * socket resets what is still open when the run ends.
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "proto/tcp/session.h"
#include "engine/replies.h"
#include "frames/csum.h"
#include "util/bytes.h"
#include "util/log.h"
#include "util/time.h"

/* One pass over the table: what waited longer than its timeout goes again. */
static void tcp_resend_pass(struct tcp *t)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = t->rs.ifindex,
				  .sll_halen = 6 };
	uint8_t f[TCP_FRAME_MAX];
	uint64_t now = now_ns();

	memcpy(to.sll_addr, t->rs.eth, 6);
	for (uint32_t i = 0; i < t->table && !atomic_load(&t->rs.stop); i++) {
		struct xr_tcp_session *live = &t->sessions[i], s;
		size_t len;

		if (live->state != XR_TCP_REQUEST && live->state != XR_TCP_FIN_SENT &&
		    !(live->state == XR_TCP_RESPONSE && tcp_reply_len(t)))
			continue;
		/* a copy: XDP may change it meanwhile; at worst a segment goes once too often */
		memcpy(&s, live, sizeof(s));
		if ((s.state == XR_TCP_REQUEST && !s.in_flight) ||
		    (s.state == XR_TCP_RESPONSE && s.pa_sent == s.pa_acked) ||
		    (s.state == XR_TCP_FIN_SENT && (s.flags & XR_TCPF_FIN_ACKED)) ||
		    s.retries > XR_TCP_MAX_RETRIES || !s.t_sent || s.t_sent > now ||
		    now - s.t_sent < (XR_TCP_RTO_NS << s.retries))
			continue;
		if (s.retries == XR_TCP_MAX_RETRIES) {
			/* the last retransmission's timeout passed too: given up (a closed loop's to know) */
			live->retries = s.retries + 1;
			atomic_fetch_add(&t->rs.sessions_given_up, 1);
			continue;
		}
		len = tcp_rebuild(t, &s, f);
		if (!len)
			continue;
		live->retries = s.retries + 1;
		live->t_sent = now;
		if (sendto(t->rs.fd, f, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
			atomic_fetch_add(&t->rs.resent, 1);
		else
			atomic_fetch_add(&t->rs.failed, 1);
	}
}

/* Sessions sent so far: one past the highest sequence number any thread has used. */
static uint64_t tcp_syns_sent(const struct tcp *t)
{
	uint64_t hi = t->rs.o->first_n;

	for (unsigned int i = 0; i < t->rs.o->threads; i++) {
		uint64_t k = t->rs.slots[t->rs.o->cpus[i]].k_next;

		if (k && engine_seq(t->rs.o, i, k - 1) + 1 > hi)
			hi = engine_seq(t->rs.o, i, k - 1) + 1;
	}
	return hi;
}

/* Session c's SYN again: the template with c's source, port and ISN, checksums anew. */
static size_t tcp_rebuild_syn(const struct tcp *t, uint64_t c, uint8_t *f)
{
	uint32_t pairs = t->rs.m.src_count, l3 = t->rs.m.ipv6 ? 40 : 20, sum;
	uint8_t *ip = f + 14, *th = ip + l3;
	size_t l4 = t->rs.syn_len - 14 - l3;

	memcpy(f, t->rs.syn, t->rs.syn_len);
	put16(th, t->rs.m.sport_base + (c / pairs) % t->rs.m.sport_count);
	put32(th + 4, t->cfg.isn_base + (uint32_t)c * t->rs.isn_step);
	put16(th + 16, 0);
	if (t->rs.m.ipv6) {
		put64(ip + 16, t->rs.m.src_base6 + c % pairs);
		sum = csum_add(ip + 8, 32, IPPROTO_TCP + l4);
	} else {
		put32(ip + 12, t->rs.m.src_base + c % pairs);
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
		sum = csum_add(ip + 12, 8, IPPROTO_TCP + l4);
	}
	put16(th + 16, csum_fold(csum_add(th, l4, sum)));
	return t->rs.syn_len;
}

/* The SYNs of the last XR_TS_RING sessions that got no answer in time go again. */
static void tcp_resend_syns(struct tcp *t, const struct sockaddr_ll *to)
{
	uint64_t hi = tcp_syns_sent(t), now = now_ns();
	uint8_t f[sizeof(t->rs.syn)];

	if (!t->rs.ts)
		return;
	if (hi > XR_TS_RING && t->rs.syn_lo < hi - XR_TS_RING)
		t->rs.syn_lo = hi - XR_TS_RING;
	for (uint64_t c = t->rs.syn_lo; c < hi && !atomic_load(&t->rs.stop); c++) {
		struct xr_send_ts *e = &t->rs.ts[c & (XR_TS_RING - 1)];
		uint64_t ts = e->ts_ns;

		/* answered, given up, or another's: the oldest still waiting moves on */
		if (e->n32 != (uint32_t)c || (e->answered & XR_ANSWERED_FIRST) ||
		    e->tag > XR_TCP_SYN_RETRIES) {
			if (c == t->rs.syn_lo)
				t->rs.syn_lo++;
			continue;
		}
		/*
		 * tag counts the SYN's timeouts (gen tcp's frames have no tag of
		 * their own): again at 1 s and 3 s, given up at 7 s, as Linux does
		 */
		if (!ts || ts > now ||
		    now - ts < (XR_TCP_SYN_RTO_NS << (e->tag + 1)) - XR_TCP_SYN_RTO_NS)
			continue;
		if (++e->tag > XR_TCP_SYN_RETRIES) {
			atomic_fetch_add(&t->rs.syns_given_up, 1);
			continue;
		}
		if (sendto(t->rs.fd, f, tcp_rebuild_syn(t, c, f), 0, (const struct sockaddr *)to,
			   sizeof(*to)) > 0)
			atomic_fetch_add(&t->rs.syns_resent, 1);
		else
			atomic_fetch_add(&t->rs.failed, 1);
	}
}

/*
 * The other end of a run (send/peer.c) is ready once each of its sessions
 * is (the application says when: subscribed), or ended (refused, reset,
 * given up): the run may start.
 */
static void tcp_ready_check(struct tcp *t)
{
	struct xr_replies_stats r;

	if (!t->rs.ready_fd || engine_replies_sum(bpf_map__fd(t->skel->maps.replies_stats), &r) ||
	    (t->app && t->app->ready ? t->app->ready(r.ctr) : 0) + tcp_ended(t, &r) +
			    atomic_load(&t->rs.syns_given_up) <
		    t->rs.o->count)
		return;
	if (write(t->rs.ready_fd, "", 1) != 1)
		pr_debug("the run that waits for this one is gone: %s\n", strerror(errno));
	close(t->rs.ready_fd);
	t->rs.ready_fd = 0;
}

static void *tcp_resend_main(void *arg)
{
	struct tcp *t = arg;
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = t->rs.ifindex,
				  .sll_halen = 6 };

	memcpy(to.sll_addr, t->rs.eth, 6);
	while (!atomic_load(&t->rs.stop)) {
		tcp_resend_syns(t, &to);
		tcp_resend_pass(t);
		tcp_ready_check(t);
		/* a pass reads every slot once: RTO / 2 apart is soon enough, and cheap */
		usleep(XR_TCP_RTO_NS / 2000 / 2);
	}
	return NULL;
}

/*
 * Sessions still open when the run ended (a paced search trial's publishers
 * whose messages the broker had not answered, responses that never ended),
 * each reset at our next sequence number, so that the server lets go of them
 * now and the next run (a search's next trial) does not meet a server still
 * busy with this one's. XDP is detached and the threads stopped, so the
 * table holds still. When a segment of ours never reached the server (lost,
 * or left in the pump's ring), the RST is past its rcv_nxt: Linux answers it
 * with a challenge ACK (RFC 5961), and that session ends at the server's own
 * timeout, as they all did before.
 */
void tcp_reset_open(struct tcp *t)
{
	struct tcp_batch b;

	if (t->rs.fd < 0 || !t->sessions || tcp_batch_init(&b, t))
		return;
	for (uint32_t i = 0; i < t->table; i++) {
		struct xr_tcp_session s = t->sessions[i];
		uint32_t off = 0, rlen;

		if (s.state != XR_TCP_REQUEST && s.state != XR_TCP_RESPONSE &&
		    s.state != XR_TCP_PACED && s.state != XR_TCP_FIN_SENT)
			continue;
		tcp_request_bytes(t, &s, &rlen);
		if (s.state == XR_TCP_REQUEST)
			off = s.acked + s.in_flight;
		else if (s.state == XR_TCP_FIN_SENT)
			off = t->bye_len + 1;
		else if (s.state == XR_TCP_RESPONSE)
			off = rlen;
		/* a replying subscriber's replies not sent yet (its in_flight) are not on the wire */
		if (s.state == XR_TCP_RESPONSE && tcp_reply_len(t))
			s.pa_sent -= s.in_flight;
		tcp_batch_take(&b, t,
			       tcp_segment_headers(t, s.tkey, tcp_request_seq(t, &s, off),
						   s.rcv_nxt, 0x10 | 0x04 /* ACK, RST */, 0,
						   tcp_batch_slot(&b)));
	}
	tcp_batch_flush(&b, t);
	t->stalled.reset_at_end = b.sent;
	t->stalled.reset_send_errors = b.send_errors;
	tcp_batch_free(&b);
}

int tcp_resend_start(struct tcp *t, const struct xr_gen_slot *slots, const struct engine_opts *o)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = o->ifc->ifindex };
	int err;

	t->rs.m = o->rpl;
	t->rs.ifindex = o->ifc->ifindex;
	t->rs.slots = slots;
	t->rs.o = o;
	t->rs.syn_lo = o->first_n;
	/* protocol 0: it only sends, and receives nothing */
	t->rs.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (t->rs.fd < 0 || bind(t->rs.fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		pr_warn("cannot open a packet socket on %s for retransmissions: %s\n", o->ifc->name,
			strerror(errno));
		tcp_resend_close(t);
		return err;
	}
	atomic_store(&t->rs.stop, false);
	err = -pthread_create(&t->rs.tid, NULL, tcp_resend_main, t);
	if (err) {
		tcp_resend_close(t);
		return err;
	}
	t->rs.running = true;
	return 0;
}

void tcp_resend_stop(struct tcp *t)
{
	if (!t->rs.running)
		return;
	atomic_store(&t->rs.stop, true);
	pthread_join(t->rs.tid, NULL);
	t->rs.running = false;
}

void tcp_resend_close(struct tcp *t)
{
	tcp_resend_stop(t);
	if (t->rs.fd >= 0)
		close(t->rs.fd);
	t->rs.fd = -1;
}
