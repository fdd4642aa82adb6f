/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session reader: what the server sent to one of gen tcp's sessions
 * (bpf/proto/tcp.bpf.h), handled by the session's state: the SYN-ACK, a RST,
 * what it acknowledged of ours (the request's bytes, a subscriber's replies,
 * our FIN), then its bytes in order (the response, read by its kind: HTTP,
 * a fixed size, MQTT's packets) and its FIN.
 */
#ifndef __XR_PROTO_TCP_REPLY_BPF_H
#define __XR_PROTO_TCP_REPLY_BPF_H

#include "proto/tcp.bpf.h"
#include "proto/mqtt_session.bpf.h"

/* A RST from the server: to a SYN, a refusal; to a session, its end */
static __always_inline void tcp_on_rst(struct xr_tcp_session *s, __u32 tkey, __u32 ack,
				       struct xr_replies_stats *st)
{
	if (s->tkey != tkey || s->state == XR_TCP_FREE) {
		/* a RST to a SYN: the server refused the session (its ACK names our ISN + 1) */
		__u32 c32;
		struct xr_send_ts *t = tcp_syn_sent(ack, &c32);

		if (t && !(t->answered & XR_ANSWERED_FIRST)) {
			t->answered |= XR_ANSWERED_FIRST;
			st->ctr[XR_TCP_REFUSED]++;
		} else {
			st->ctr[XR_TCP_STRAY]++;
		}
	} else if (s->state != XR_TCP_DONE) {
		tcp_done(s, st, XR_TCP_RESET);
	}
}

/*
 * What the server acknowledged of a request being sent: the rest of it goes,
 * a duplicate ACK counted, or the request is whole and its response awaited.
 * TCP_GO_ON, or the verdict.
 */
static __always_inline int tcp_ack_request(struct xdp_md *ctx, struct xr_tcp_session *s,
					   struct xr_replies_stats *st, struct tcp_scratch *sc,
					   __u32 ack, bool opened, bool same_wnd, __u32 plen,
					   bool fin)
{
	__u32 got = ack - tcp_our_seq(s, 0);
	bool more = opened && !s->in_flight;

	if (got > s->acked && got <= s->acked + s->in_flight) {
		s->in_flight -= got - s->acked;
		s->acked = got;
		s->retries = 0;
		s->dupacks = 0;
		/* one segment in place at a time; the pump's fill the window */
		more = !s->in_flight || (s->flags & XR_TCPF_PUMPED);
		if (got == tcp_req_len(s)) {
			st->ctr[XR_TCP_REQUESTS]++;
			if (TCP_MQTT && !s->k)
				st->ctr[XR_MQTT_CONNECTS]++;
			s->state = XR_TCP_RESPONSE;
			more = false;
		}
	} else if (got == s->acked && s->in_flight && (s->flags & XR_TCPF_PUMPED) && !plen &&
		   !fin && same_wnd) {
		/* a duplicate ACK (RFC 5681: no data, the same window) */
		tcp_pump_dupack(s, st);
	}
	/* more of the request to send, and nothing of the server's to answer first */
	if (more && !plen && !fin) {
		return tcp_send_request(ctx, s, st, sc, XR_TCP_SEGMENTS) ? XDP_DROP : XDP_TX;
	}
	return TCP_GO_ON;
}

/*
 * What the server acknowledged of ours and its window, by the session's
 * state: the request's bytes, a subscriber's replies (mqtt_ack_replies),
 * our FIN. TCP_GO_ON, TCP_GO_REPLIES, or the verdict.
 */
static __always_inline int tcp_on_ack(struct xdp_md *ctx, struct xr_tcp_session *s,
				      struct xr_replies_stats *st, struct tcp_scratch *sc,
				      __u32 ack, __u16 wnd, __u32 plen, bool fin, __u32 *pa_from,
				      __u32 *pa_want)
{
	bool opened = !s->wnd && wnd, same_wnd = s->wnd == wnd;

	s->wnd = wnd;
	if (s->state == XR_TCP_REQUEST)
		return tcp_ack_request(ctx, s, st, sc, ack, opened, same_wnd, plen, fin);
	if (s->state == XR_TCP_RESPONSE && TCP_MQTT && MQTT_REPLIES)
		return mqtt_ack_replies(s, ack, plen, fin, same_wnd, pa_from, pa_want);
	if (s->state == XR_TCP_FIN_SENT && ack == tcp_snd_nxt(s))
		s->flags |= XR_TCPF_FIN_ACKED;
	return TCP_GO_ON;
}

/* A segment with neither bytes nor a FIN (its ACK handled): the session's end, or a response of none */
static __always_inline int tcp_on_empty(struct xdp_md *ctx, struct xr_tcp_session *s,
					struct xr_replies_stats *st, struct tcp_scratch *sc)
{
	if (s->state == XR_TCP_FIN_SENT && (s->flags & XR_TCPF_FIN_ACKED) &&
	    (s->flags & XR_TCPF_FIN_RCVD))
		tcp_done(s, st, XR_TCP_COMPLETED);
	/* a captured request the server answered with nothing (replay --sessions) */
	if (TCP_FLOWS && tcp_cfg.response == XR_TCP_RESP_SIZE && s->state == XR_TCP_RESPONSE &&
	    !s->step_resp) {
		s->status = 200;
		st->ctr[XR_TCP_2XX]++;
		return tcp_answered(ctx, s, st, sc);
	}
	/* the broker's packets came before the ACK of the request's last byte */
	if (TCP_MQTT && mqtt_answered(s))
		return tcp_answered(ctx, s, st, sc);
	return XDP_DROP;
}

/*
 * The server's bytes in order (at off, plen of them) and its FIN, read as
 * the response's kind says (HTTP, a fixed size): the response complete, the
 * session closed early, or more awaited. The verdict.
 */
static __always_inline int tcp_read_response(struct xdp_md *ctx, struct xr_tcp_session *s,
					     struct xr_replies_stats *st, struct tcp_scratch *sc,
					     __u32 ack, __u32 off, __u32 plen, bool fin)
{
	if (plen && s->state == XR_TCP_REQUEST) {
		/*
		 * an answer before the whole request: not a server this client can
		 * read. The RST at what the server acknowledged, its rcv_nxt (once
		 * DONE, snd_nxt would say the request's end, past what it has)
		 */
		tcp_done(s, st, XR_TCP_MALFORMED);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, ack, s->rcv_nxt) ? XDP_DROP :
										      XDP_TX;
	}
	if (plen) {
		if (!s->resp_got)
			record_hist(&tcp_first_hist, s->t_req);
		if (!s->resp_got && tcp_cfg.resp_first)
			s->status = tcp_payload_first(ctx, off) == tcp_cfg.resp_first ? 200 : 0;
		if (tcp_cfg.response == XR_TCP_RESP_HTTP) {
			http_read(ctx, s, off, plen, sc->head);
			if (s->http_phase == XR_HTTP_BAD) {
				tcp_done(s, st, XR_TCP_MALFORMED);
				return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK,
						 tcp_our_seq(s, tcp_req_len(s)), s->rcv_nxt) ?
					       XDP_DROP :
					       XDP_TX;
			}
		}
		s->resp_got += plen;
	}
	if (tcp_cfg.response == XR_TCP_RESP_SIZE ?
		    s->resp_got >= (TCP_FLOWS ? s->step_resp : tcp_cfg.resp_size) :
		    s->http_phase == XR_HTTP_DONE || (s->http_phase == XR_HTTP_TO_FIN && fin)) {
		if (tcp_cfg.response == XR_TCP_RESP_SIZE && !tcp_cfg.resp_first)
			s->status = 200;
		/* constant indices: clang turns a computed one into a division the verifier cannot bound */
		switch (s->status / 100) {
		case 2: st->ctr[XR_TCP_2XX]++; break;
		case 3: st->ctr[XR_TCP_2XX + 1]++; break;
		case 4: st->ctr[XR_TCP_2XX + 2]++; break;
		case 5: st->ctr[XR_TCP_2XX + 3]++; break;
		default: st->ctr[XR_TCP_OTHER_STATUS]++;
		}
		return tcp_answered(ctx, s, st, sc);
	}
	if (fin) {
		/* the server closed mid-response */
		tcp_done(s, st, XR_TCP_CLOSED_EARLY);
		return tcp_reply(ctx, REPLY_V6, TCP_RST | TCP_ACK, tcp_our_seq(s, tcp_req_len(s)),
				 s->rcv_nxt) ?
			       XDP_DROP :
			       XDP_TX;
	}
	return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_our_seq(s, tcp_req_len(s)), s->rcv_nxt) ?
		       XDP_DROP :
		       XDP_TX;
}

static __always_inline int tcp_session_reply(struct xdp_md *ctx)
{
	__u32 seq, ack, slot, tkey, plen, doff, zero = 0;
	struct xr_replies_stats *st;
	struct xr_tcp_session *s;
	struct tcp_scratch *sc;
	__u32 pa_from = 0, pa_want = 0;
	bool fin, pa_again;
	struct tcphdr *th;
	struct pkt p;
	__u8 flags;
	__u16 wnd;
	int v;

	if (parse_reply(ctx, &cfg.rpl, IPPROTO_TCP, sizeof(struct tcphdr), &p))
		return XDP_PASS;
	th = p.l4;
	st = reply_stats();
	sc = bpf_map_lookup_elem(&tcp_scratch, &zero);
	if (!st || !sc)
		return XDP_DROP;
	flags = ((__u8 *)th)[13];
	seq = bpf_ntohl(th->seq);
	ack = bpf_ntohl(th->ack_seq);
	wnd = bpf_ntohs(th->window);
	doff = th->doff * 4;
	plen = p.l4_bytes;
	if (doff < 20 || plen < doff)
		return XDP_DROP;
	plen -= doff;
	/* the slot of our (address, port) pair: the engine gave session c the pair c mod pairs */
	tkey = p.src_idx + (bpf_ntohs(th->dest) - cfg.rpl.sport_base) * cfg.rpl.src_count + 1;
	slot = tkey & tcp_cfg.table_mask;
	s = bpf_map_lookup_elem(&tcp_sessions, &slot);
	if (!s)
		return XDP_DROP;
	if ((flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK))
		return tcp_on_synack(ctx, s, tkey, seq, ack, wnd, tcp_synack_mss(th, p.data_end),
				     st, sc);
	if (flags & TCP_SYN)
		return XDP_DROP;
	if (flags & TCP_RST) {
		tcp_on_rst(s, tkey, ack, st);
		return XDP_DROP;
	}
	fin = flags & TCP_FIN;
	if (s->tkey != tkey || s->state == XR_TCP_FREE) {
		st->ctr[XR_TCP_STRAY]++;
		return tcp_reply(ctx, REPLY_V6, TCP_RST, ack, 0) ? XDP_DROP : XDP_TX;
	}
	if (s->state == XR_TCP_DONE) {
		/* a late FIN (our last ACK was lost): acknowledged again, statelessly */
		if (fin)
			return tcp_reply(ctx, REPLY_V6, TCP_ACK, ack, seq + plen + 1) ? XDP_DROP :
											XDP_TX;
		return XDP_DROP;
	}
	if (flags & TCP_ACK) {
		v = tcp_on_ack(ctx, s, st, sc, ack, wnd, plen, fin, &pa_from, &pa_want);
		if (v == TCP_GO_REPLIES)
			goto replies;
		if (v != TCP_GO_ON)
			return v;
	}
	if (!plen && !fin)
		return tcp_on_empty(ctx, s, st, sc);
	if (seq != s->rcv_nxt) {
		/* a repeat or a gap: say again what we have, so that the server resends from there */
		st->ctr[XR_TCP_OUT_OF_ORDER]++;
		return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP :
										       XDP_TX;
	}
	if (TCP_MQTT && MQTT_REPLIES && plen && mqtt_replies_held(s, st, plen))
		goto replies;
	s->rcv_nxt += plen + fin;
	if (fin)
		s->flags |= XR_TCPF_FIN_RCVD;

	if (s->state == XR_TCP_FIN_SENT) {
		/* past our FIN: taken before the session is DONE, whose snd_nxt is its last request's end */
		__u32 snd_nxt = tcp_snd_nxt(s);

		if (s->flags & XR_TCPF_FIN_ACKED)
			tcp_done(s, st, XR_TCP_COMPLETED);
		return tcp_reply(ctx, REPLY_V6, TCP_ACK, snd_nxt, s->rcv_nxt) ? XDP_DROP : XDP_TX;
	}
	if (TCP_MQTT) {
		v = mqtt_on_data(ctx, s, st, sc, slot, 14 + p.l3len + doff, plen, fin, &pa_from,
				 &pa_want);
		if (v != TCP_GO_REPLIES)
			return v;
		goto replies;
	}
	return tcp_read_response(ctx, s, st, sc, ack, 14 + p.l3len + doff, plen, fin);
replies:
	/* a subscriber's replies: a segment's new ones, or again from the first not taken */
	pa_again = s->dupacks == XR_TCP_REPLIES_DUE;
	if (pa_again) {
		s->dupacks = 0;
		pa_from = s->pa_acked;
		pa_want = s->pa_sent - s->pa_acked;
	}
	/* as much as the broker's frame can grow to */
	if (!mqtt_replies_send(ctx, s, st, sc, slot, pa_from, pa_want, pa_again,
			       plen + doff - 20 + XR_TCP_SMALL_SEGMENT))
		return XDP_TX;
	return tcp_reply(ctx, REPLY_V6, TCP_ACK, tcp_snd_nxt(s), s->rcv_nxt) ? XDP_DROP : XDP_TX;
}

#endif /* __XR_PROTO_TCP_REPLY_BPF_H */
