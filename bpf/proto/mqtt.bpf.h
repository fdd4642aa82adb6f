/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt's part of gen tcp's sessions (bpf/proto/tcp.bpf.h calls it when
 * tcp_cfg.response is XR_TCP_RESP_MQTT): what changes per session and per
 * burst in the client's bytes (the client id's and topic's {c}, the stamps),
 * and the reading of the broker's packets (CONNACK, PUBACK, PINGRESP, a
 * DISCONNECT) across segments, from a few bytes of state in the session.
 * Layout: bpf/shared/mqtt.h; userspace's own copy of the patching, for
 * retransmissions: user/proto/mqtt/stream.c.
 */
#ifndef __XR_PROTO_MQTT_BPF_H
#define __XR_PROTO_MQTT_BPF_H

const volatile struct xr_mqtt_cfg mqtt_cfg = {};

/* What the broker said, by packet and reason (XR_MQTT_WHY_*). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_MQTT_WHY_CELLS);
	__type(key, __u32);
	__type(value, __u64);
} mqtt_reasons SEC(".maps");

/* Subscribers' deliveries per (subscriber, publisher) pair; sized by userspace before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_mqtt_recv);
} mqtt_recv SEC(".maps");

/* A QoS-1 subscriber's PUBACKs' packet ids, by table slot (bpf/shared/mqtt.h); sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_mqtt_pubacks);
} mqtt_pubacks SEC(".maps");

/* A responder's answers' stamps, by table slot (bpf/shared/mqtt.h); sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_mqtt_answers);
} mqtt_answers SEC(".maps");

/* A subscriber that replies to its deliveries: PUBACKs (QoS 1) or answers (a responder) */
#define MQTT_REPLIES (mqtt_cfg.subscriber && (mqtt_cfg.sub_qos || mqtt_cfg.responder))
/* sessions that publish and read no deliveries (so no stamps: struct xr_tcp_session's union) */
#define MQTT_PUBLISHER (!mqtt_cfg.subscriber && !mqtt_cfg.caller)
/* The bytes of one reply */
#define MQTT_REPLY_LEN (mqtt_cfg.responder ? (__u32)mqtt_cfg.ans_len : 4U)

/* Publish (the stamp's send time) to delivery, per second, as rtt_hist. */
XR_HIST_MAP(mqtt_deliver_hist);

/* The bytes of one field of a message: {c}'s digits or a stamp. */
struct mqtt_field {
	__u8 b[XR_MQTT_STAMP];
};

struct mqtt_patch {
	__u8 *seg; /* request bytes [off, off + len) */
	__u32 off, len;
	__u32 first; /* the first message the segment touches */
	__u32 seq0; /* the publisher's sequence number of the burst's first message */
	struct mqtt_field digits, stamp;
};

/* Copies the part of field f (n bytes at request offset at) that falls in the segment. */
static __always_inline void mqtt_put(struct mqtt_patch *p, __u32 at, const struct mqtt_field *f,
				     int n)
{
	for (int j = 0; j < n; j++) {
		__u32 ro = at + j;

		if (ro >= p->off && ro - p->off < p->len)
			p->seg[(ro - p->off) & 2047] = f->b[j];
	}
}

/*
 * bpf_loop's body: digit i of request 0's: the client id's (i < 10), then a
 * SUBSCRIBE's (a caller's answers); unrolled in line, the two cost the
 * verifier ~240k instructions more
 */
static long mqtt_put_digit(__u32 i, void *data)
{
	struct mqtt_patch *p = data;
	/* not i % 10: the verifier does not bound a remainder */
	__u32 j = i < XR_MQTT_DIGITS ? i : i - XR_MQTT_DIGITS,
	      at = i < XR_MQTT_DIGITS ? mqtt_cfg.cid_off : mqtt_cfg.sub_off, ro = at + j;

	if (j >= XR_MQTT_DIGITS)
		return 1;
	if (at != XR_MQTT_NONE && ro >= p->off && ro - p->off < p->len)
		p->seg[(ro - p->off) & 2047] = p->digits.b[j];
	return 0;
}

/* bpf_loop's body: message p->first + i of the burst (verified once, not per message) */
static long mqtt_patch_msg(__u32 i, void *data)
{
	struct mqtt_patch *p = data;
	__u32 m = p->first + i, base = m * mqtt_cfg.msg_len, seq = p->seq0 + m;

	if (m >= mqtt_cfg.batch || base >= p->off + p->len)
		return 1;
	if (mqtt_cfg.topic_off != XR_MQTT_NONE)
		mqtt_put(p, base + mqtt_cfg.topic_off, &p->digits, XR_MQTT_DIGITS);
	if (mqtt_cfg.stamp_off != XR_MQTT_NONE) {
		p->stamp.b[4] = seq >> 24;
		p->stamp.b[5] = seq >> 16;
		p->stamp.b[6] = seq >> 8;
		p->stamp.b[7] = seq;
		mqtt_put(p, base + mqtt_cfg.stamp_off, &p->stamp, XR_MQTT_STAMP);
	}
	return 0;
}

/* Request k's bytes [off, off + len) in seg, as session s sends them. */
static __always_inline void mqtt_patch(const struct xr_tcp_session *s, __u8 *seg, __u32 off,
				       __u32 len)
{
	struct mqtt_patch p = { .seg = seg, .off = off, .len = len };
	__u32 c = s->c32;
	__u64 t = s->t_req;

	for (int j = XR_MQTT_DIGITS - 1; j >= 0; j--) {
		p.digits.b[j] = '0' + c % 10;
		c /= 10;
	}
	if (!s->k) {
		bpf_loop(2 * XR_MQTT_DIGITS, mqtt_put_digit, &p, 0);
		return;
	}
	if (!mqtt_cfg.msg_len)
		return;
	for (int j = 0; j < 4; j++)
		p.stamp.b[j] = s->c32 >> (24 - 8 * j);
	for (int j = 0; j < 8; j++)
		p.stamp.b[8 + j] = t >> (56 - 8 * j);
	p.first = off / mqtt_cfg.msg_len;
	p.seq0 = (__u32)(s->k - 1) * mqtt_cfg.batch;
	bpf_loop(XR_MQTT_BATCH_MAX, mqtt_patch_msg, &p, 0);
}

/* The broker's packets that answer request k. */
static __always_inline __u32 mqtt_wanted(const struct xr_tcp_session *s)
{
	if (mqtt_cfg.subscriber)
		return 2 + mqtt_cfg.sub_expect; /* CONNACK, SUBACK, the deliveries */
	if (!s->k)
		return mqtt_cfg.caller ? 2 : 1; /* CONNACK (and a caller's SUBACK) */
	/* a caller's answers, PUBACKs, or the PINGRESP */
	return mqtt_cfg.caller || mqtt_cfg.qos ? mqtt_cfg.batch : 1;
}

static __always_inline void mqtt_why(__u32 cell)
{
	__u64 *v = bpf_map_lookup_elem(&mqtt_reasons, &cell);

	if (v)
		(*v)++;
}

struct mqtt_read {
	struct xr_tcp_session *s;
	struct xr_replies_stats *st;
	const __u8 *buf;
	__u32 i, n; /* the next byte of buf to read, and how many it holds */
	int fail; /* the counter the session fails with, or 0 */
	/*
	 * A replying subscriber's: the ring its replies' ids or stamps go to
	 * (the other NULL), and s->pa_sent before the segment. The count is kept
	 * in s->pa_sent (map memory), not here: a count on the stack starts as
	 * the constant 0 and the verifier walked bpf_loop's body once per value
	 * of it.
	 */
	struct xr_mqtt_pubacks *ring;
	struct xr_mqtt_answers *answers;
	__u32 pa_first;
};

#define MQTT_PAYLOAD_FAR 0xffff /* a delivery whose payload starts too far in to read its stamp */

static __always_inline __u32 mqtt_be32(const __u8 *b)
{
	return (__u32)b[0] << 24 | (__u32)b[1] << 16 | (__u32)b[2] << 8 | b[3];
}

/* A whole delivery whose payload began with a stamp (in s->mq_stamp) */
static __always_inline bool mqtt_stamped(const struct xr_tcp_session *s)
{
	return s->mq_payload_at != MQTT_PAYLOAD_FAR && s->mq_props == 5 &&
	       s->mq_at >= (__u32)s->mq_payload_at + XR_MQTT_STAMP;
}

/*
 * A whole delivery: its stamp booked in its (subscriber, publisher) pair,
 * its latency from the stamp's send time timed. True when it was a sequence
 * number not seen before (a caller's: of its own).
 */
static __always_inline bool mqtt_book(struct xr_tcp_session *s, struct xr_replies_stats *st)
{
	__u32 pub, seq, key, d;
	struct xr_mqtt_recv *v;
	__u64 t;

	if (!mqtt_stamped(s)) {
		st->ctr[XR_MQTT_UNSTAMPED]++;
		return false;
	}
	pub = mqtt_be32(s->mq_stamp);
	seq = mqtt_be32(s->mq_stamp + 4);
	t = (__u64)mqtt_be32(s->mq_stamp + 8) << 32 | mqtt_be32(s->mq_stamp + 12);
	if (mqtt_cfg.caller) {
		/* its answers are its own: another's is the broker's or the responder's error */
		if (pub != s->c32 || !mqtt_cfg.pubs) {
			st->ctr[XR_MQTT_FOREIGN]++;
			return false;
		}
		/* a caller's row: any --first-seq's callers are 0..pubs - 1 apart */
		key = pub % mqtt_cfg.pubs;
	} else {
		/* below pub_base it wraps to a number past pubs: foreign */
		pub -= mqtt_cfg.pub_base;
		if (pub >= mqtt_cfg.pubs || !mqtt_cfg.subs) {
			st->ctr[XR_MQTT_FOREIGN]++;
			return false;
		}
		key = (s->c32 % mqtt_cfg.subs) * mqtt_cfg.pubs + pub;
	}
	v = bpf_map_lookup_elem(&mqtt_recv, &key);
	if (!v) {
		st->ctr[XR_MQTT_FOREIGN]++;
		return false;
	}
	/* one session's segments are read on one CPU at a time: the pair is this session's alone */
	if (seq >= v->next) {
		d = seq - v->next + 1;
		v->window = d >= 64 ? 1 : v->window << d | 1;
		v->next = seq + 1;
		v->got++;
	} else {
		d = v->next - 1 - seq;
		if (d < 64 && (v->window & (1ULL << d))) {
			v->dup++;
			return false;
		}
		/* older than the window: taken as late, not as a duplicate */
		if (d < 64)
			v->window |= 1ULL << d;
		v->late++;
		v->got++;
	}
	if (t && t <= bpf_ktime_get_ns())
		record_hist(&mqtt_deliver_hist, t);
	return true;
}

/* A delivery's topic length (its body's first two bytes, once read). */
static __always_inline __u32 mqtt_topic_len(const struct xr_tcp_session *s)
{
	return (__u32)s->mq_body[0] << 8 | s->mq_body[1];
}

/*
 * Byte at of a delivery's body (a PUBLISH to a subscriber): the topic's
 * length, the packet id (QoS > 0, into mq_body[2..3]), 5.0's properties'
 * length, then the stamp at the payload's start.
 */
static __always_inline void mqtt_delivery_byte(struct xr_tcp_session *s, __u8 b)
{
	__u32 at = s->mq_at, pa, pid_at;

	if (at < 2) {
		s->mq_body[at & 1] = b;
		if (!at)
			return;
		pa = 2 + ((__u32)s->mq_body[0] << 8 | b) + ((s->mq_flags & 6) ? 2 : 0);
		s->mq_payload_at = pa > MQTT_PAYLOAD_FAR ? MQTT_PAYLOAD_FAR : pa;
		s->mq_props = mqtt_cfg.version == 5 ? 0 : 5;
		return;
	}
	pid_at = 2 + mqtt_topic_len(s);
	if ((s->mq_flags & 6) && at - pid_at < 2) {
		s->mq_body[2 + ((at - pid_at) & 1)] = b;
		return;
	}
	if (s->mq_payload_at == MQTT_PAYLOAD_FAR)
		return;
	if (s->mq_props < 5) {
		if (!s->mq_props && at != s->mq_payload_at)
			return;
		/* the properties' length, 7 bits a byte: the payload starts after them */
		pa = s->mq_payload_at + 1 + ((__u32)(b & 0x7f) << (7 * (s->mq_props & 3)));
		s->mq_payload_at = pa > MQTT_PAYLOAD_FAR ? MQTT_PAYLOAD_FAR : pa;
		s->mq_props = (b & 0x80) && s->mq_props < 3 ? s->mq_props + 1 : 5;
		return;
	}
	if (at >= s->mq_payload_at && at - s->mq_payload_at < XR_MQTT_STAMP)
		s->mq_stamp[(at - s->mq_payload_at) & (XR_MQTT_STAMP - 1)] = b;
}

/* A subscriber's delivery, or a caller's answer (the body's stamp is all it reads of it) */
static __always_inline bool mqtt_is_delivery(const struct xr_tcp_session *s)
{
	return (mqtt_cfg.subscriber || mqtt_cfg.caller) && (s->mq_type & 15) == 3;
}

/* Body bytes from here on that nobody reads: all but the last (a SUBACK's code) skipped whole. */
static __always_inline bool mqtt_skippable(const struct xr_tcp_session *s)
{
	if (s->mq_state != 5 || s->mq_left < 2)
		return false;
	if (!mqtt_is_delivery(s))
		return s->mq_pos >= 4;
	/* a QoS-1 delivery's packet id is read, however far in it is */
	if ((s->mq_flags & 6) && (s->mq_at < 2 || s->mq_at < 2 + mqtt_topic_len(s) + 2))
		return false;
	return s->mq_at >= 2 && s->mq_props == 5 &&
	       (s->mq_payload_at == MQTT_PAYLOAD_FAR ||
		s->mq_at >= (__u32)s->mq_payload_at + XR_MQTT_STAMP);
}

/* A whole packet of the broker's: 0 to read on, 1 to stop (r->fail says why). */
static __always_inline long mqtt_packet(struct mqtt_read *r)
{
	struct xr_tcp_session *s = r->s;
	__u8 type = s->mq_type & 15, rc;
	__u16 pid;
	__u64 bit;

	if (type == 14) {
		/* the broker's DISCONNECT (5.0): it closes next */
		mqtt_why(XR_MQTT_WHY_DISCONNECT + (s->mq_pos ? s->mq_body[0] : 0));
		r->fail = XR_TCP_CLOSED_EARLY;
		return 1;
	}
	/*
	 * a keep-alive PINGREQ's (pace.c): its PINGRESP comes before the answers
	 * to anything sent after it, a QoS-0 burst's PINGRESP among them
	 */
	if (type == 13 && MQTT_PUBLISHER && s->ping_owed) {
		s->ping_owed = 0;
		r->st->ctr[XR_MQTT_PINGS_ANSWERED]++;
		return 0;
	}
	/* a delivery past those waited for (another run's publisher) is booked, not a fault */
	if (s->resp_got >= mqtt_wanted(s) && !mqtt_is_delivery(s))
		goto unexpected;
	switch (type) {
	case 3: /* PUBLISH: a delivery to a subscriber or a caller (after its CONNACK) */
		if (!(mqtt_cfg.subscriber || mqtt_cfg.caller) || (!s->k && !s->resp_got))
			goto unexpected;
		if (s->mq_flags & 6) {
			/* QoS 1, to a QoS-1 subscription, whole up to its packet id: PUBACKed */
			if ((s->mq_flags & 6) != 2 || !mqtt_cfg.sub_qos || !r->ring ||
			    s->mq_at < 2 + mqtt_topic_len(s) + 2)
				goto unexpected;
			r->ring->pid[s->pa_sent & (XR_MQTT_REPLY_RING - 1)] =
				(__u16)s->mq_body[2] << 8 | s->mq_body[3];
			s->pa_sent++;
		} else if (mqtt_cfg.responder && r->answers && mqtt_stamped(s)) {
			/* a request: answered with its stamp (an unstamped one names no caller) */
			__u8 *a = r->answers->stamp[s->pa_sent & (XR_MQTT_REPLY_RING - 1)];

			for (int i = 0; i < XR_MQTT_STAMP; i++)
				a[i] = s->mq_stamp[i];
			s->pa_sent++;
		}
		r->st->ctr[XR_MQTT_DELIVERED]++;
		/* a caller's before its first request (a retained message): not an answer */
		if (mqtt_cfg.caller && !s->k)
			goto unexpected;
		if (!mqtt_book(s, r->st) && mqtt_cfg.caller)
			return 0; /* not one of this caller's answers it waits for */
		if (mqtt_cfg.caller)
			r->st->ctr[XR_MQTT_ACKED]++;
		break;
	case 9: /* SUBACK: packet id, (5.0) properties, one return or reason code: the last byte */
		if (!(mqtt_cfg.subscriber || (mqtt_cfg.caller && !s->k)) || s->mq_pos < 3)
			goto unexpected;
		rc = s->mq_last;
		if (rc >= 0x80) {
			mqtt_why(XR_MQTT_WHY_SUBACK + rc);
			r->fail = XR_MQTT_SUB_REFUSED;
			return 1;
		}
		r->st->ctr[XR_MQTT_SUBACKED]++;
		break;
	case 2: /* CONNACK: flags, return or reason code */
		if (s->k || s->mq_pos < 2)
			goto unexpected;
		rc = s->mq_body[1];
		if (rc) {
			mqtt_why(XR_MQTT_WHY_CONNACK + rc);
			r->fail = XR_MQTT_REFUSED;
			return 1;
		}
		r->st->ctr[XR_MQTT_CONNACKED]++;
		break;
	case 4: /* PUBACK: packet id, 5.0's reason code when not 0 */
		if (!s->k || mqtt_cfg.qos != 1 || s->mq_pos < 2)
			goto unexpected;
		pid = (__u16)s->mq_body[0] << 8 | s->mq_body[1];
		bit = 1ULL << ((pid - 1) & 63);
		if (!pid || pid > mqtt_cfg.batch || (s->mq_acked & bit))
			goto unexpected;
		s->mq_acked |= bit;
		rc = s->mq_pos >= 3 ? s->mq_body[2] : 0;
		if (rc >= 0x80) {
			mqtt_why(XR_MQTT_WHY_PUBACK + rc);
			r->st->ctr[XR_MQTT_NACKED]++;
		} else {
			r->st->ctr[XR_MQTT_ACKED]++;
		}
		break;
	case 13: /* PINGRESP: the broker read the burst before it */
		if (!s->k || mqtt_cfg.qos || mqtt_cfg.caller)
			goto unexpected;
		r->st->ctr[XR_MQTT_ACKED] += mqtt_cfg.batch;
		break;
	default: goto unexpected;
	}
	s->resp_got++;
	return 0;
unexpected:
	mqtt_why(XR_MQTT_WHY_TYPE + type);
	r->fail = XR_MQTT_PROTOCOL;
	return 1;
}

/*
 * bpf_loop's body: the broker's stream from byte r->i, one byte, or a run of
 * a body's bytes nobody reads (each call takes at least one: n calls read n)
 */
static long mqtt_byte(__u32 unused, void *data)
{
	struct mqtt_read *r = data;
	struct xr_tcp_session *s = r->s;
	__u32 i = r->i, skip;
	__u8 b;

	if (i >= r->n)
		return 1;
	if (mqtt_skippable(s)) {
		skip = s->mq_left - 1;
		if (skip > r->n - i)
			skip = r->n - i;
		s->mq_left -= skip;
		s->mq_at += skip;
		s->mq_pos = s->mq_pos + skip > 255 ? 255 : s->mq_pos + skip;
		r->i = i + skip;
		return 0;
	}
	b = r->buf[i & (XR_TCP_READ_MAX - 1)];
	r->i = i + 1;
	switch (s->mq_state) {
	case 0:
		s->mq_type = b >> 4;
		s->mq_flags = b & 15;
		s->mq_left = 0;
		s->mq_pos = 0;
		s->mq_at = 0;
		s->mq_payload_at = 0;
		s->mq_props = 0;
		s->mq_state = 1;
		return 0;
	case 1:
	case 2:
	case 3:
	case 4:
		/* Remaining Length: 7 bits a byte, least significant first, at most 4 bytes */
		s->mq_left |= (__u32)(b & 0x7f) << (7 * ((s->mq_state - 1) & 3));
		if (b & 0x80) {
			if (s->mq_state == 4) {
				mqtt_why(XR_MQTT_WHY_TYPE + (s->mq_type & 15));
				r->fail = XR_MQTT_PROTOCOL;
				return 1;
			}
			s->mq_state++;
			return 0;
		}
		s->mq_state = 5;
		if (s->mq_left)
			return 0;
		break;
	default:
		if (mqtt_is_delivery(s))
			mqtt_delivery_byte(s, b);
		else if (s->mq_pos < 4)
			s->mq_body[s->mq_pos & 3] = b;
		if (s->mq_pos < 255)
			s->mq_pos++;
		s->mq_at++;
		s->mq_last = b;
		if (--s->mq_left)
			return 0;
	}
	s->mq_state = 0;
	return mqtt_packet(r);
}

/*
 * plen bytes of the broker's at off: 1 when request k's answer is complete, 0
 * when more is to come, -1 when the session fails (*why: its counter). A
 * replying subscriber's replies to them: *nacks, their PUBACKs' ids in ring
 * or their answers' stamps in answers from s->pa_sent on, counted into
 * s->pa_sent (not when the session fails).
 */
static __always_inline int mqtt_read(struct xdp_md *ctx, struct xr_tcp_session *s,
				     struct xr_replies_stats *st, __u8 *buf, __u32 off, __u32 plen,
				     int *why, struct xr_mqtt_pubacks *ring,
				     struct xr_mqtt_answers *answers, __u32 *nacks)
{
	struct mqtt_read r = { .s = s,
			       .st = st,
			       .buf = buf,
			       .ring = ring,
			       .answers = answers,
			       .pa_first = s->pa_sent };
	__u32 n = plen;

	if (n > XR_TCP_READ_MAX)
		n = XR_TCP_READ_MAX;
	/*
	 * ((n - 1) & mask) + 1 is n, at least 1 for the verifier: with the
	 * caller's plen != 0 in hand, clang dropped the !n test, and the IPv6
	 * build's verifier (its registers spilled elsewhere) saw a read of 0
	 */
	if (n != plen || !n ||
	    bpf_xdp_load_bytes(ctx, off, buf, ((n - 1) & (XR_TCP_READ_MAX - 1)) + 1)) {
		/* more than a lock-step client can be owed at once */
		*why = XR_TCP_MALFORMED;
		return -1;
	}
	r.n = n;
	bpf_loop(n, mqtt_byte, &r, 0);
	/* pa_sent shares its bytes with a publisher's mq_acked (bpf/shared/tcp.h) */
	if (!MQTT_REPLIES) {
		*nacks = 0;
	} else if (r.fail) {
		/* the session ends with a RST at our sequence number without them */
		s->pa_sent = r.pa_first;
	} else {
		*nacks = s->pa_sent - r.pa_first;
	}
	if (r.fail) {
		*why = r.fail;
		return -1;
	}
	return !s->mq_state && s->resp_got >= mqtt_wanted(s);
}

/* Where replies are written from: a ring, its first index, the segment's bytes */
struct mqtt_reply_fill {
	const struct xr_mqtt_pubacks *ring;
	const struct xr_mqtt_answers *answers;
	__u8 *seg; /* 2048 bytes */
	__u32 from;
};

/* bpf_loop's body: PUBACK j of those from ring id `from` into seg (a loop the verifier would unroll) */
static long mqtt_puback_fill(__u32 j, void *data)
{
	struct mqtt_reply_fill *f = data;
	__u16 pid = f->ring->pid[(f->from + j) & (XR_MQTT_REPLY_RING - 1)];
	__u32 o = (j & (XR_MQTT_SEG_REPLIES - 1)) * 4;

	f->seg[o] = 0x40;
	f->seg[o + 1] = 2;
	f->seg[o + 2] = pid >> 8;
	f->seg[o + 3] = pid & 0xff;
	return 0;
}

/*
 * bpf_loop's body: answer j of those from ring index `from` into seg: the
 * template, the caller's digits (the stamp's publisher), the stamp last.
 * Its caller bounds j * ans_len + ans_len by a segment (1460 bytes).
 */
static long mqtt_answer_fill(__u32 j, void *data)
{
	struct mqtt_reply_fill *f = data;
	const __u8 *stamp = f->answers->stamp[(f->from + j) & (XR_MQTT_REPLY_RING - 1)];
	__u32 len = mqtt_cfg.ans_len, o = j * len, at = mqtt_cfg.ans_digits_off;
	__u32 c = mqtt_be32(stamp);

	if (len > XR_MQTT_ANSWER_MAX || len < XR_MQTT_STAMP || o >= 2048 - XR_MQTT_ANSWER_MAX)
		return 1;
	/* byte by byte from the volatile rodata (a copy through a plain pointer read zeros) */
	for (int i = 0; i < XR_MQTT_ANSWER_MAX; i++)
		if (i < len)
			f->seg[(o + i) & 2047] = mqtt_cfg.ans[i];
	if (at != XR_MQTT_NONE && at + XR_MQTT_DIGITS <= len)
		for (int i = XR_MQTT_DIGITS - 1; i >= 0; i--) {
			f->seg[(o + at + i) & 2047] = '0' + c % 10;
			c /= 10;
		}
	for (int i = 0; i < XR_MQTT_STAMP; i++)
		f->seg[(o + len - XR_MQTT_STAMP + i) & 2047] = stamp[i];
	return 0;
}

#endif /* __XR_PROTO_MQTT_BPF_H */
