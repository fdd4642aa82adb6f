// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay selftest: gen mqtt's subscribers' and callers' reader in XDP
 * (bpf/proto/mqtt.bpf.h) against a whole-packet reading of random streams
 * written here: deliveries booked, replies filled, answers timed.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "selftest/selftest.h"
#include "util/bytes.h"
#include "proto/mqtt/stream.h"
#include "proto/tcp/session.h"
#include "xdpreplay.h"
#include "selftest.skel.h"

/* A random subscriber stream and what a whole-packet reading of it books. */
#define MQ_SEQ_MAX 4096
#define MQ_DELIVERIES 60 /* per stream: what the loaded reader waits for */
struct mq_case {
	uint8_t version;
	uint32_t pubs, subs, c32, deliveries;
	uint32_t pub_base; /* the stamps' first publisher */
	size_t len;
	/* the reference's books: per pair, the sequence numbers seen */
	struct mq_pair {
		uint32_t next, got, dup, late;
		uint8_t seen[MQ_SEQ_MAX / 8];
	} *pair;
	uint64_t unstamped, foreign;
	bool responder; /* QoS-0 deliveries, the stamped ones answered */
	/* the QoS-1 deliveries' packet ids, in order: what the PUBACKs must say */
	uint16_t pid[MQ_DELIVERIES];
	uint32_t npid;
	/* a responder's: the stamped deliveries' stamps, in order: what the answers echo */
	uint8_t stamp[MQ_DELIVERIES][XR_MQTT_STAMP];
	uint32_t nstamp;
};

/* stream.c's encoder writes what the broker would send: the reader under test is XDP's */
static void mq_varint(uint8_t *b, size_t *len, uint32_t v)
{
	*len += mqtt_varint_write(b + *len, v);
}

static void mq_packet(uint8_t *b, size_t *len, uint8_t t, const uint8_t *body, uint32_t n)
{
	*len += mqtt_packet_write(b + *len, 5 + (size_t)n, t, body, n);
}

/* The sequence number publisher p's next delivery carries: mostly the next, else a gap, a repeat or a late one. */
static uint32_t mq_next_seq(struct mq_pair *q, uint64_t (*rnd)(void))
{
	uint32_t r = rnd() % 20, s;

	if (r == 0 && q->next > 0) {
		/* a repeat within the window (older ones are booked as late: not asked here) */
		for (int tries = 0; tries < 8; tries++) {
			s = q->next - 1 - rnd() % (q->next < 64 ? q->next : 64);
			if (q->seen[s / 8] & (1 << s % 8))
				return s;
		}
	}
	if (r <= 2) {
		/* a late one: a gap below next, any distance */
		for (int tries = 0; tries < 8 && q->next; tries++) {
			s = rnd() % q->next;
			if (!(q->seen[s / 8] & (1 << s % 8)))
				return s;
		}
	}
	return q->next + (r == 3 ? 1 + rnd() % 80 : 0);
}

static void mq_reference_book(struct mq_case *k, uint32_t pub, uint32_t seq)
{
	struct mq_pair *q = &k->pair[(k->c32 % k->subs) * k->pubs + pub];

	if (q->seen[seq / 8] & (1 << seq % 8)) {
		q->dup++;
		return;
	}
	q->seen[seq / 8] |= 1 << seq % 8;
	q->got++;
	if (seq < q->next)
		q->late++;
	else
		q->next = seq + 1;
}

/* The stream: CONNACK, SUBACK, then deliveries; the reference's books of it in k. */
static void mq_random_stream(struct mq_case *k, uint8_t *b, uint64_t (*rnd)(void))
{
	static uint8_t body[140000];
	bool v5 = k->version == 5;
	size_t n;

	k->len = 0;
	mq_packet(b, &k->len, 0x20, (const uint8_t *)"\0\0\0", v5 ? 3 : 2);
	n = 0;
	body[n++] = 0;
	body[n++] = 1;
	if (v5) {
		uint32_t props = rnd() % 3 ? 0 : rnd() % 300;

		mq_varint(body, &n, props);
		memset(body + n, 0x1f, props);
		n += props;
	}
	body[n++] = rnd() % 3; /* granted QoS 0..2 */
	mq_packet(b, &k->len, 0x90, body, n);
	for (uint32_t d = 0; d < k->deliveries; d++) {
		/* now and then past the publishers, or (as a stamp) just below the first */
		uint32_t pub = rnd() % 20 ? rnd() % (k->pubs + (rnd() % 10 ? 0 : 3)) :
					    UINT32_MAX - rnd() % 3,
			 seq = 0, topic, props = 0, payload, at;
		bool far = rnd() % 60 == 0, qos1 = !k->responder && rnd() % 2;

		topic = far ? 65530 : rnd() % 4 ? 1 + rnd() % 40 : rnd() % 700;
		if (v5) {
			uint32_t r = rnd() % 4;

			props = r < 2 ? 0 : r == 2 ? rnd() % 128 : 128 + rnd() % 20000;
		}
		payload = rnd() % 5 == 0 ? rnd() % 16 :
					   16 + (rnd() % 4 ? rnd() % 200 : rnd() % 6000);
		n = 0;
		body[n++] = topic >> 8;
		body[n++] = topic;
		for (uint32_t i = 0; i < topic; i++)
			body[n++] = 'a' + i % 26;
		if (qos1) {
			uint16_t pid = 1 + rnd() % 65535;

			body[n++] = pid >> 8;
			body[n++] = pid;
			k->pid[k->npid++] = pid;
		}
		if (v5) {
			mq_varint(body, &n, props);
			memset(body + n, 0x23, props);
			n += props;
		}
		at = n;
		for (uint32_t i = 0; i < payload; i++)
			body[n++] = rnd();
		if (payload >= XR_MQTT_STAMP && at <= 0xffff - 1) {
			uint64_t t = rnd() % 1000;

			if (pub < k->pubs)
				seq = mq_next_seq(&k->pair[(k->c32 % k->subs) * k->pubs + pub],
						  rnd);
			put32(body + at, pub + k->pub_base);
			put32(body + at + 4, seq);
			put32(body + at + 8, t >> 32);
			put32(body + at + 12, t);
			if (pub >= k->pubs)
				k->foreign++;
			else
				mq_reference_book(k, pub, seq);
			if (k->responder)
				memcpy(k->stamp[k->nstamp++], body + at, XR_MQTT_STAMP);
		} else {
			k->unstamped++;
		}
		/* QoS 0 or 1 (a QoS-1 subscription gets each at its publisher's), retain or not */
		mq_packet(b, &k->len, 0x30 | qos1 << 1 | (rnd() % 2), body, n);
	}
}

/* A responder's answer template (res/{c}/x, as gen mqtt --answer builds it) into cfg; 0 or -errno */
static int mq_responder_cfg(struct xr_mqtt_cfg *cfg)
{
	struct mqtt_stream_opts o = { .client_id = "r{c}",
				      .subscribe = "req/+",
				      .answer = "res/{c}/x",
				      .version = cfg->version };
	struct xr_mqtt_cfg built;
	uint8_t *connect, *burst;
	size_t clen, blen;
	int err = mqtt_stream_build(&o, &connect, &clen, &burst, &blen, &built);

	if (err)
		return err;
	free(connect);
	free(burst);
	cfg->responder = 1;
	cfg->ans_len = built.ans_len;
	cfg->ans_digits_off = built.ans_digits_off;
	memcpy(cfg->ans, built.ans, sizeof(cfg->ans));
	return 0;
}

/*
 * The replies [from, from + n) of a segment (PUBACKs from their ids, answers
 * from their stamps in the ring) written by XDP's fill (xr_mqtt_fill_test)
 * against userspace's mqtt_reply_write: NULL, or what differs.
 */
static const char *mq_check_fill(struct selftest_bpf *skel, const struct xr_mqtt_cfg *cfg,
				 struct xr_mqtt_read_test *t, uint32_t from, uint32_t n,
				 uint8_t *frame, int *err)
{
	uint32_t len = cfg->responder ? cfg->ans_len : 4;
	uint8_t want[XR_MQTT_ANSWER_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame, .data_size_in = 64, .repeat = 1);

	if (n > XR_TCP_PAYLOAD_MAX / len)
		n = XR_TCP_PAYLOAD_MAX / len;
	t->fill_from = from;
	t->fill_n = n;
	memset(t->seg, 0xa5, sizeof(t->seg));
	*err = test_prog_run(skel->maps.mqtt_read_test, skel->progs.xr_mqtt_fill_test, t, &topts);
	for (uint32_t j = 0; !*err && j < n; j++) {
		uint32_t at = (from + j) % XR_MQTT_REPLY_RING;

		mqtt_reply_write(cfg, t->answers.stamp[at], t->ring.pid[at], want);
		if (memcmp(t->seg + len * j, want, len))
			return cfg->responder ? "an answer's bytes" : "a PUBACK's bytes";
	}
	return NULL;
}

/*
 * Cases of random subscriber streams (3.1.1 and 5.0: properties of 0 to 20,000
 * bytes, topics of up to 700 bytes and some whose payload starts past 65,535,
 * payloads with and without stamps, repeats, gaps and late deliveries) read by
 * the XDP reader in random segments: its counters and per-pair books against
 * the reference's; a QoS-1 subscriber's PUBACKs (the deliveries' ids in its
 * ring) and a responder's answers (the stamps in its ring), and the segment
 * XDP writes of them, against userspace's.
 */
int selftest_mqtt_deliveries(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked,
			     uint64_t *mismatches)
{
	static struct xr_mqtt_read_test t;
	/* 60 deliveries of at most 91.5 KB each */
	static uint8_t stream[6 << 20], frame[14 + XR_TCP_PAYLOAD_MAX];
	const uint32_t pubs = 8, subs = 3;
	struct xr_mqtt_recv zero_recv = {};
	int err = 0;

	/*
	 * one load per kind: QoS-1 subscribers and responders of 3.1.1 and 5.0
	 * (a load maps the reply handlers' maps: tens of MiB)
	 */
	for (uint32_t kind = 0; kind < 4 && !err; kind++) {
		uint8_t version = 4 + kind % 2;
		bool responder = kind >= 2;
		/* publishers numbered from 0, or from anywhere (a search trial's) */
		struct xr_mqtt_cfg cfg = { .subscriber = 1,
					   .sub_qos = !responder,
					   .version = version,
					   .pubs = pubs,
					   .subs = subs,
					   .sub_expect = MQ_DELIVERIES,
					   .pub_base = kind % 2 ? rnd() : 0 };
		struct selftest_bpf *skel;

		if (responder && (err = mq_responder_cfg(&cfg)))
			break;
		skel = selftest_bpf__open();
		if (!skel)
			return -errno;
		skel->rodata->mqtt_cfg = cfg;
		err = bpf_map__set_max_entries(skel->maps.mqtt_recv, pubs * subs) ?:
			      selftest_bpf__load(skel);
		for (uint64_t c = kind; !err && c < cases; c += 4) {
			struct mq_case k = { .version = version,
					     .pubs = pubs,
					     .subs = subs,
					     .pub_base = cfg.pub_base,
					     .c32 = rnd(),
					     .deliveries = MQ_DELIVERIES,
					     .responder = responder };
			uint32_t mss = rnd() % 2 ? XR_TCP_PAYLOAD_MAX :
						   1 + rnd() % XR_TCP_PAYLOAD_MAX;
			const char *why = NULL;
			size_t pos = 0;
			uint32_t replied = 0, want_replies;

			k.pair = calloc(pubs * subs, sizeof(*k.pair));
			if (!k.pair) {
				err = -ENOMEM;
				break;
			}
			mq_random_stream(&k, stream, rnd);
			want_replies = responder ? k.nstamp : k.npid;
			for (uint32_t i = 0; i < pubs * subs && !err; i++)
				if (bpf_map_update_elem(bpf_map__fd(skel->maps.mqtt_recv), &i,
							&zero_recv, 0))
					err = -errno;
			memset(&t, 0, sizeof(t));
			t.s.c32 = k.c32;
			/* anywhere in the ring: its index wraps */
			t.s.pa_sent = t.s.pa_acked = rnd();
			while (!err && pos < k.len && !why) {
				uint32_t seg = 1 + rnd() % mss;
				LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame,
					    .repeat = 1);

				if (seg > k.len - pos)
					seg = k.len - pos;
				memset(frame, 0, 14);
				memcpy(frame + 14, stream + pos, seg);
				topts.data_size_in = 14 + seg;
				t.nacks = 0;
				err = test_prog_run(skel->maps.mqtt_read_test,
						    skel->progs.xr_mqtt_read_test, &t, &topts);
				pos += seg;
				(*checked)++;
				/* the segment's replies: their ids or stamps in the ring from pa_sent on */
				for (uint32_t i = 0; !err && !why && i < t.nacks; i++) {
					uint32_t r = replied + i, at = (t.s.pa_sent - t.nacks + i) %
								       XR_MQTT_REPLY_RING;

					if (r >= want_replies)
						why = "a reply too many";
					else if (responder ? memcmp(t.answers.stamp[at], k.stamp[r],
								    XR_MQTT_STAMP) :
							     t.ring.pid[at] != k.pid[r])
						why = responder ? "an answer's stamp in the ring" :
								  "a PUBACK's id in the ring";
				}
				if (!err && !why && t.nacks)
					why = mq_check_fill(skel, &cfg, &t, t.s.pa_sent - t.nacks,
							    t.nacks, frame, &err);
				replied += t.nacks;
				if (why)
					break;
				if (t.ret < 0)
					why = "failed the session";
				else if (t.ret != (pos == k.len))
					why = pos == k.len ? "not complete at the stream's end" :
							     "complete early";
			}
			if (!err && !why) {
				const __u64 *ct = t.st.ctr;

				if (ct[XR_MQTT_CONNACKED] != 1 || ct[XR_MQTT_SUBACKED] != 1)
					why = "CONNACK or SUBACK not read";
				else if (replied != want_replies)
					why = responder ? "answers for the stamped deliveries" :
							  "PUBACKs for the QoS-1 deliveries";
				else if (ct[XR_MQTT_DELIVERED] != k.deliveries)
					why = "deliveries counted";
				else if (ct[XR_MQTT_UNSTAMPED] != k.unstamped)
					why = "deliveries without a stamp";
				else if (ct[XR_MQTT_FOREIGN] != k.foreign)
					why = "deliveries of other publishers";
			}
			for (uint32_t i = 0; !err && !why && i < pubs * subs; i++) {
				struct xr_mqtt_recv v;
				const struct mq_pair *q = &k.pair[i];

				if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.mqtt_recv), &i,
							&v)) {
					err = -errno;
					break;
				}
				if (v.got != q->got || v.dup != q->dup || v.late != q->late ||
				    v.next != q->next)
					why = "a pair's books";
			}
			if (why && ++*mismatches <= 5)
				fprintf(stderr,
					"selftest mqtt deliveries: case %llu (MQTT %s%s, %zu bytes, "
					"segments up to %u): %s at byte %zu\n",
					(unsigned long long)c, version == 5 ? "5.0" : "3.1.1",
					responder ? ", a responder" : "", k.len, mss, why, pos);
			free(k.pair);
		}
		selftest_bpf__destroy(skel);
	}
	return err;
}

/* A delivery on a caller's answers' topic at b + *len: a stamp of caller pub, sequence seq (payload 16 B), or none */
static void mq_answer(uint8_t *b, size_t *len, bool v5, uint32_t pub, uint32_t seq, bool stamped,
		      uint64_t (*rnd)(void))
{
	uint8_t body[64];
	uint32_t n = 0, topic = 1 + rnd() % 14;

	body[n++] = 0;
	body[n++] = topic;
	for (uint32_t i = 0; i < topic; i++)
		body[n++] = 'r';
	if (v5)
		body[n++] = 0;
	put32(body + n, pub);
	put32(body + n + 4, seq);
	put32(body + n + 8, 0);
	put32(body + n + 12, rnd() % 1000);
	n += stamped ? XR_MQTT_STAMP : rnd() % XR_MQTT_STAMP;
	mq_packet(b, len, 0x30, body, n);
}

/*
 * Cases of callers' answer streams (3.1.1 and 5.0): CONNACK and SUBACK, then
 * per burst its B answers (the caller's own stamps, in order) among another
 * caller's answers, repeats of its own and unstamped deliveries, read in
 * random segments that end at each burst's end: a burst completes exactly at
 * its last own answer, and the counters and the caller's books are the
 * reference's.
 */
int selftest_mqtt_calls(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked,
			uint64_t *mismatches)
{
	static struct xr_mqtt_read_test t;
	static uint8_t stream[1 << 16], frame[14 + XR_TCP_PAYLOAD_MAX];
	const uint32_t callers = 8;
	struct xr_mqtt_recv zero_recv = {};
	int err = 0;

	for (uint8_t version = 4; version <= 5 && !err; version++) {
		uint16_t batch = version == 4 ? 1 : 10;
		struct xr_mqtt_cfg cfg = { .caller = 1,
					   .version = version,
					   .batch = batch,
					   .pubs = callers,
					   .subs = 1,
					   .cid_off = XR_MQTT_NONE,
					   .topic_off = XR_MQTT_NONE,
					   .stamp_off = XR_MQTT_NONE,
					   .sub_off = XR_MQTT_NONE };
		struct selftest_bpf *skel = selftest_bpf__open();

		if (!skel)
			return -errno;
		skel->rodata->mqtt_cfg = cfg;
		err = bpf_map__set_max_entries(skel->maps.mqtt_recv, callers) ?:
			      selftest_bpf__load(skel);
		for (uint64_t c = version - 4; !err && c < cases; c += 2) {
			uint32_t me = rnd() % callers, bursts = 1 + rnd() % 6, own = 0, foreign = 0,
				 dups = 0, unstamped = 0, delivered = 0, done = 0;
			/* where each request's answers end: CONNACK and SUBACK, then each burst's */
			size_t ends[8], len = 0, pos = 0;
			const char *why = NULL;

			mq_packet(stream, &len, 0x20, (const uint8_t *)"\0\0\0",
				  version == 5 ? 3 : 2);
			mq_packet(stream, &len, 0x90,
				  (const uint8_t *)(version == 5 ? "\0\1\0\0" : "\0\1\0"),
				  version == 5 ? 4 : 3);
			ends[0] = len;
			for (uint32_t k = 1; k <= bursts; k++) {
				for (uint32_t i = 0; i < batch; i++) {
					while (rnd() % 3 == 0) {
						uint32_t r = rnd() % 3;

						if (r == 0) {
							mq_answer(stream, &len, version == 5,
								  (me + 1 + rnd() % (callers - 1)) %
									  callers,
								  rnd() % 100, true, rnd);
							foreign++;
						} else if (r == 1 && own) {
							mq_answer(stream, &len, version == 5, me,
								  own - 1 -
									  rnd() % (own < 8 ? own :
											     8),
								  true, rnd);
							dups++;
						} else {
							mq_answer(stream, &len, version == 5, me, 0,
								  false, rnd);
							unstamped++;
						}
						delivered++;
					}
					mq_answer(stream, &len, version == 5, me, own++, true, rnd);
					delivered++;
				}
				ends[k] = len;
			}
			if (bpf_map_update_elem(bpf_map__fd(skel->maps.mqtt_recv), &me, &zero_recv,
						0)) {
				err = -errno;
				break;
			}
			memset(&t, 0, sizeof(t));
			t.s.c32 = me;
			while (!err && pos < len && !why) {
				uint32_t seg = 1 + rnd() % XR_TCP_PAYLOAD_MAX;
				LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame,
					    .repeat = 1);

				/* a request's answers come before the next request goes */
				if (seg > ends[done] - pos)
					seg = ends[done] - pos;
				memset(frame, 0, 14);
				memcpy(frame + 14, stream + pos, seg);
				topts.data_size_in = 14 + seg;
				err = test_prog_run(skel->maps.mqtt_read_test,
						    skel->progs.xr_mqtt_read_test, &t, &topts);
				pos += seg;
				(*checked)++;
				if (t.ret < 0)
					why = "failed the session";
				else if (t.ret != (pos == ends[done]))
					why = t.ret ? "a burst complete early" :
						      "a burst not complete at its last answer";
				else if (t.ret) {
					/* tcp_next: the next request's answers */
					t.s.k++;
					t.s.resp_got = 0;
					done++;
				}
			}
			if (!err && !why) {
				const __u64 *ct = t.st.ctr;
				struct xr_mqtt_recv v;

				if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.mqtt_recv), &me, &v))
					err = -errno;
				else if (done != bursts + 1)
					why = "bursts completed";
				else if (ct[XR_MQTT_ACKED] != own)
					why = "answers counted";
				else if (ct[XR_MQTT_FOREIGN] != foreign)
					why = "another caller's answers";
				else if (ct[XR_MQTT_UNSTAMPED] != unstamped)
					why = "answers without a stamp";
				else if (ct[XR_MQTT_DELIVERED] != delivered)
					why = "deliveries";
				else if (v.got != own || v.dup != dups || v.late || v.next != own)
					why = "the caller's books";
			}
			if (why && ++*mismatches <= 5)
				fprintf(stderr,
					"selftest mqtt calls: case %llu (MQTT %s, %u bursts of %u, "
					"%zu bytes): %s at byte %zu\n",
					(unsigned long long)c, version == 5 ? "5.0" : "3.1.1",
					bursts, batch, len, why, pos);
		}
		selftest_bpf__destroy(skel);
	}
	return err;
}
