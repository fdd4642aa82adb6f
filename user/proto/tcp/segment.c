// SPDX-License-Identifier: GPL-2.0
/*
 * The segments of ours that userspace builds (the retransmission thread, the
 * pump, the pacer), byte for byte as XDP builds them from the session's
 * state: the headers, a request's bytes, a bare ACK, a keep-alive, the
 * application's replies, the goodbye and FIN.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include "proto/tcp/session.h"
#include "frames/csum.h"
#include "util/bytes.h"

size_t tcp_segment_headers(const struct tcp *t, uint32_t tkey, uint32_t seq, uint32_t ack,
			   uint8_t flags, uint32_t plen, uint8_t *f)
{
	uint8_t *ip = f + 14, *th = f + tcp_hdrs(t) - 20;
	uint32_t idx = tkey - 1, sum;

	memcpy(f, t->rs.eth, 14);
	if (t->rs.m.ipv6) {
		memset(ip, 0, 60);
		ip[0] = 0x60;
		put16(ip + 4, 20 + plen);
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, t->rs.m.src_hi6, 8);
		put64(ip + 16, t->rs.m.src_base6 + idx % t->rs.m.src_count);
		memcpy(ip + 24, t->rs.m.server_addr6, 16);
		sum = csum_add(ip + 8, 32, IPPROTO_TCP + 20 + plen);
		goto tcp;
	}
	memset(ip, 0, 40);
	ip[0] = 0x45;
	put16(ip + 2, 40 + plen);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	put32(ip + 12, t->rs.m.src_base + idx % t->rs.m.src_count);
	memcpy(ip + 16, &t->rs.m.server_addr, 4);
	put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
	sum = csum_add(ip + 12, 8, IPPROTO_TCP + 20 + plen);
tcp:
	put16(th, t->rs.m.sport_base + idx / t->rs.m.src_count);
	memcpy(th + 2, &t->rs.m.server_port, 2);
	put32(th + 4, seq);
	put32(th + 8, ack);
	th[12] = 5 << 4;
	th[13] = flags;
	put16(th + 14, 64240);
	put16(th + 16, csum_fold(csum_add(th, 20 + plen, sum)));
	return tcp_hdrs(t) + plen;
}

uint32_t tcp_request_seq(const struct tcp *t, const struct xr_tcp_session *s, uint32_t off)
{
	uint32_t seq = s->isn + 1 + off;

	if (t->cap)
		return seq + s->step_off;
	seq += tcp_reply_len(t) * s->pa_sent;
	if (tcp_pings(t))
		seq += t->app->ping_len * (uint32_t)s->pings;
	if (s->k)
		seq += t->first_len + (uint32_t)(s->k - 1) * t->req_len;
	return seq;
}

const uint8_t *tcp_request_bytes(const struct tcp *t, const struct xr_tcp_session *s,
				 uint32_t *rlen)
{
	if (t->cap) {
		*rlen = s->step_len;
		return s->step_key < t->cap->nkeys && s->step_len <= t->cap->req_len[s->step_key] ?
			       t->cap->req[s->step_key] :
			       NULL;
	}
	*rlen = s->k ? t->req_len : t->first_len;
	return s->k ? t->req : t->first;
}

size_t tcp_request_segment(const struct tcp *t, const struct xr_tcp_session *s, uint32_t off,
			   uint32_t len, uint8_t *f)
{
	uint32_t rlen;
	const uint8_t *req = tcp_request_bytes(t, s, &rlen);
	uint8_t flags = 0x10; /* ACK */

	if (!req || !len || len > XR_TCP_PAYLOAD_MAX || off > rlen || len > rlen - off)
		return 0;
	if (off + len == rlen)
		flags |= 0x08; /* PSH */
	memcpy(f + tcp_hdrs(t), req + off, len);
	if (t->patch)
		t->patch(t->patch_ctx, s, f + tcp_hdrs(t), off, len);
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, off), s->rcv_nxt, flags, len,
				   f);
}

size_t tcp_ack_segment(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint32_t rlen;

	if (!tcp_request_bytes(t, s, &rlen))
		return 0;
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, rlen), s->rcv_nxt, 0x10, 0, f);
}

size_t tcp_ping_segment(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint8_t len = t->app ? t->app->ping_len : 0;

	if (!s->pings || !len)
		return 0;
	memcpy(f + tcp_hdrs(t), t->app->ping, len);
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, 0) - len, s->rcv_nxt,
				   0x10 | 0x08, len, f);
}

/*
 * The application's replies from the first the server did not acknowledge
 * (as many as a segment, the window and its ring take): the segment into f,
 * its length, or 0.
 */
static size_t tcp_rebuild_replies(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint32_t slot = s->tkey & (t->table - 1), len = tcp_reply_len(t),
		 n = s->pa_sent - s->pa_acked,
		 mss = s->mss < XR_TCP_PAYLOAD_MAX ? s->mss : XR_TCP_PAYLOAD_MAX;

	if (!len || n > t->app->reply_ring)
		return 0;
	if (n > mss / len)
		n = mss / len;
	if (n > s->wnd / len)
		n = s->wnd / len;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t at = (s->pa_acked + j) % t->app->reply_ring;

		t->app->reply_write(t->app->ctx, slot, at, f + tcp_hdrs(t) + len * j);
	}
	if (!n)
		return 0;
	return tcp_segment_headers(t, s->tkey, s->isn + 1 + t->first_len + len * s->pa_acked,
				   s->rcv_nxt, 0x10 | 0x08, len * n, f);
}

size_t tcp_rebuild(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint32_t plen, rlen;

	tcp_request_bytes(t, s, &rlen);
	if (s->state == XR_TCP_RESPONSE)
		return tcp_reply_len(t) ? tcp_rebuild_replies(t, s, f) : 0;

	if (s->state == XR_TCP_REQUEST) {
		plen = rlen - s->acked;
		if (plen > s->mss)
			plen = s->mss;
		if (plen > s->wnd)
			plen = s->wnd;
		if (plen > XR_TCP_PAYLOAD_MAX)
			plen = XR_TCP_PAYLOAD_MAX;
		return tcp_request_segment(t, s, s->acked, plen, f);
	}
	if (s->state != XR_TCP_FIN_SENT)
		return 0;
	memcpy(f + tcp_hdrs(t), t->bye, t->bye_len);
	/* FIN, with PSH when the goodbye rides on it */
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, 0), s->rcv_nxt,
				   0x10 | 0x01 | (t->bye_len ? 0x08 : 0), t->bye_len, f);
}

void tcp_fields_write(const void *ctx, const struct xr_tcp_session *s, uint8_t *buf, uint32_t off,
		      uint32_t len)
{
	const struct xr_tcp_fields *f = ctx;

	for (int i = 0; i < XR_TCP_FIELDS && f->kind[i]; i++) {
		char digits[XR_TCP_DIGITS + 1];

		snprintf(digits, sizeof(digits), "%0*u", XR_TCP_DIGITS,
			 f->kind[i] == XR_TCP_FIELD_C ? s->c32 : (uint32_t)s->k);
		for (uint32_t j = 0; j < XR_TCP_DIGITS; j++)
			if (f->off[i] + j >= off && f->off[i] + j < off + len)
				buf[f->off[i] + j - off] = digits[j];
	}
}
