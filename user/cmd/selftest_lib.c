// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay selftest's checks of bpf/lib/ (bpf/selftest.bpf.c): the TCP reply
 * builder, with and without a payload, against a segment built here; gen
 * mqtt's per-session bytes against user/proto/mqtt/stream.c's; gen tcp's HTTP
 * reader against user/proto/http/http.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/bytes.h"
#include "cmd/selftest.h"
#include "frames/csum.h"
#include "proto/mqtt/stream.h"
#include "proto/http/http.h"
#include "proto/tcp/session.h"
#include "xdpreplay.h"
#include "selftest.skel.h"

#define SERVER_MAC "\x02\x00\xc6\x12\x00\x02"
#define CLIENT_MAC "\x02\x00\xc6\x12\x00\x01"
/* RFC 5180's benchmarking prefix 2001:2::/48: the server ::2, the client ::1 */
#define SERVER_IP6 "\x20\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02"
#define CLIENT_IP6 "\x20\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"

/*
 * An IPv4 or IPv6 header from src to dst over l4len bytes of TCP, at ip:
 * the bytes before the TCP header, written from the RFCs' layouts.
 */
static uint32_t ip_header(uint8_t *ip, bool v6, bool from_server, uint32_t l4len, uint8_t ttl)
{
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, l4len);
		ip[6] = IPPROTO_TCP;
		ip[7] = ttl;
		memcpy(ip + 8, from_server ? SERVER_IP6 : CLIENT_IP6, 16);
		memcpy(ip + 24, from_server ? CLIENT_IP6 : SERVER_IP6, 16);
		return 40;
	}
	ip[0] = 0x45;
	put16(ip + 2, 20 + l4len);
	ip[8] = ttl;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12,
	       from_server ? "\xc6\x12\x00\x02\xc6\x12\x00\x01" :
			     "\xc6\x12\x00\x01\xc6\x12\x00\x02",
	       8);
	put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
	return 20;
}

/*
 * A server's segment: 198.18.0.2:80 -> 198.18.0.1:port (v6: 2001:2::2 ->
 * 2001:2::1), filling len bytes (what follows the TCP header is its data).
 */
static void server_segment(uint8_t *f, uint32_t len, uint16_t port, bool v6)
{
	uint8_t *th;

	memset(f, 0, len);
	memcpy(f, CLIENT_MAC SERVER_MAC, 12);
	put16(f + 12, v6 ? 0x86dd : 0x0800);
	th = f + 14 + (v6 ? 40 : 20);
	ip_header(f + 14, v6, true, len - (th - f), 63);
	put16(th, 80);
	put16(th + 2, port);
	th[12] = 5 << 4;
	th[13] = 0x12; /* SYN-ACK */
}

/* What the reply must be: every field and both checksums, from scratch. */
static void expected_reply(uint8_t *w, const struct xr_tcp_reply_test *t, uint16_t port)
{
	uint32_t hdrs = t->ipv6 ? 74 : 54, len = hdrs + t->plen, sum;
	uint8_t *ip = w + 14, *th = w + hdrs - 20;

	memset(w, 0, len);
	memcpy(w, SERVER_MAC CLIENT_MAC, 12);
	put16(w + 12, t->ipv6 ? 0x86dd : 0x0800);
	ip_header(ip, t->ipv6, false, 20 + t->plen, 64);
	put16(th, port);
	put16(th + 2, 80);
	put32(th + 4, t->seq);
	put32(th + 8, t->ack);
	th[12] = 5 << 4;
	th[13] = t->flags;
	put16(th + 14, t->flags & 0x04 ? 0 : 64240);
	memcpy(w + hdrs, t->payload, t->plen);
	/* the pseudo-header: the addresses, the protocol and the length (RFC 793, RFC 8200 §8.1) */
	sum = t->ipv6 ? csum_add(ip + 8, 32, 0) : csum_add(ip + 12, 8, 0);
	sum += IPPROTO_TCP + 20 + t->plen;
	put16(th + 16, csum_fold(csum_add(th, 20 + t->plen, sum)));
}

/*
 * One run of a test program on its map's single value: v in, the program run
 * with o's packet, v back out. 0 or -errno.
 */
static int test_prog_run(struct bpf_map *map, struct bpf_program *prog, void *v,
			 struct bpf_test_run_opts *o)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(map), &zero, v, 0) ||
	    bpf_prog_test_run_opts(bpf_program__fd(prog), o) ||
	    bpf_map_lookup_elem(bpf_map__fd(map), &zero, v))
		return -errno;
	return 0;
}

int selftest_lib(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches)
{
	static struct xr_tcp_reply_test t;
	static uint8_t in[1600], out[1600], want[1600];
	struct selftest_bpf *skel = selftest_bpf__open_and_load();
	int err = 0;

	if (!skel)
		return -errno;
	for (uint64_t c = 0; c < cases && !err; c++) {
		/* the server's segment may be shorter or longer than the reply; every other one IPv6 */
		bool v6 = c % 2;
		uint32_t hdrs = v6 ? 74 : 54, in_len = hdrs + (rnd() % 2 ? 0 : rnd() % 1400);
		uint16_t port = 1024 + rnd() % 60000;
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = in, .data_size_in = in_len,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
		char why[80] = "";

		memset(&t, 0, sizeof(t));
		t.seq = rnd();
		t.ack = rnd();
		t.flags = (uint8_t[]){ 0x10, 0x18, 0x04, 0x11 }[rnd() % 4];
		t.ipv6 = v6;
		/* IPv6's largest on a 1500-byte MTU is 1440 */
		t.plen = c < 8	   ? (uint32_t[]){ 0, 0, 1, 1, 1459, 1440, 1460, 1439 }[c] :
			 rnd() % 3 ? rnd() % (v6 ? 1441 : 1461) :
				     0;
		for (uint32_t i = 0; i < t.plen; i++)
			t.payload[i] = rnd();
		server_segment(in, in_len, port, v6);
		expected_reply(want, &t, port);
		err = test_prog_run(skel->maps.tcp_reply_test, skel->progs.xr_tcp_reply_test, &t,
				    &topts);
		if (err)
			break;
		(*checked)++;
		if (topts.retval != XDP_TX)
			snprintf(why, sizeof(why), "the builder refused it (%u)", topts.retval);
		else if (topts.data_size_out != hdrs + t.plen)
			snprintf(why, sizeof(why), "%u bytes, expected %u", topts.data_size_out,
				 hdrs + t.plen);
		else if (memcmp(out, want, hdrs + t.plen))
			snprintf(why, sizeof(why), "bytes differ from the reference");
		if (why[0] && ++*mismatches <= 5)
			fprintf(stderr,
				"selftest tcp reply: case %llu (IPv%d, payload %u, from a %u-byte "
				"segment): %s\n",
				(unsigned long long)c, v6 ? 6 : 4, t.plen, in_len, why);
	}
	for (uint64_t c = 0; c < cases && !err; c++) {
		/* gen tcp's {c} and {k}: random places, sessions, requests and segments */
		static struct xr_tcp_fields_test ft;
		static uint8_t fwant[sizeof(ft.seg)];
		LIBBPF_OPTS(bpf_test_run_opts, fopts, .data_in = fwant, .data_size_in = 64,
			    .repeat = 1);
		uint32_t rlen = 20 + rnd() % 16000, nf = rnd() % (XR_TCP_FIELDS + 1);

		memset(&ft, 0, sizeof(ft));
		for (uint32_t i = 0; i < nf; i++) {
			ft.f.kind[i] = 1 + rnd() % 2;
			ft.f.off[i] = rnd() % (rlen - XR_TCP_DIGITS);
		}
		ft.s.c32 = rnd();
		ft.s.k = rnd();
		ft.off = rnd() % rlen;
		ft.len = 1 +
			 rnd() % (rlen - ft.off < sizeof(ft.seg) ? rlen - ft.off : sizeof(ft.seg));
		for (uint32_t i = 0; i < ft.len; i++)
			ft.seg[i] = rnd();
		memcpy(fwant, ft.seg, ft.len);
		tcp_fields_write(&ft.f, &ft.s, fwant, ft.off, ft.len);
		err = test_prog_run(skel->maps.tcp_fields_test, skel->progs.xr_tcp_fields_test, &ft,
				    &fopts);
		if (err)
			break;
		(*checked)++;
		if (memcmp(ft.seg, fwant, ft.len) && ++*mismatches <= 5)
			fprintf(stderr,
				"selftest tcp fields: case %llu (%u fields, bytes %u..%u): differ from "
				"user/proto/tcp/segment.c's\n",
				(unsigned long long)c, nf, ft.off, ft.off + ft.len);
	}
	selftest_bpf__destroy(skel);
	return err;
}

/* One stream's shape per load: its CONNECT and burst, and random segments of both. */
static int mqtt_patch_cases(const struct mqtt_stream_opts *o, uint64_t cases, uint64_t (*rnd)(void),
			    uint64_t *checked, uint64_t *mismatches)
{
	static struct xr_mqtt_patch_test t;
	static uint8_t want[sizeof(t.seg)];
	uint8_t *connect = NULL, *burst = NULL;
	size_t connect_len, burst_len;
	struct selftest_bpf *skel = NULL;
	struct xr_mqtt_cfg cfg;
	int err;

	err = mqtt_stream_build(o, &connect, &connect_len, &burst, &burst_len, &cfg);
	if (err)
		return err;
	skel = selftest_bpf__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	skel->rodata->mqtt_cfg = cfg;
	err = selftest_bpf__load(skel);
	if (err)
		goto out;
	for (uint64_t c = 0; c < cases; c++) {
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = want, .data_size_in = 64,
			    .repeat = 1);
		const uint8_t *req;
		size_t rlen;

		memset(&t, 0, sizeof(t));
		t.s.c32 = c < 2 ? (uint32_t[]){ 0, UINT32_MAX }[c] : rnd();
		t.s.k = c % 3 == 0 ? 0 : 1 + rnd() % 4000;
		t.s.t_req = rnd();
		req = t.s.k ? burst : connect;
		rlen = t.s.k ? burst_len : connect_len;
		t.off = rnd() % rlen;
		t.len = 1 + rnd() % (rlen - t.off < sizeof(t.seg) ? rlen - t.off : sizeof(t.seg));
		memcpy(t.seg, req + t.off, t.len);
		memcpy(want, t.seg, t.len);
		mqtt_stream_patch(&cfg, &t.s, want, t.off, t.len);
		err = test_prog_run(skel->maps.mqtt_patch_test, skel->progs.xr_mqtt_patch_test, &t,
				    &topts);
		if (err)
			break;
		(*checked)++;
		if (memcmp(t.seg, want, t.len) && ++*mismatches <= 5)
			fprintf(stderr,
				"selftest mqtt: QoS %u, %u B payload, bursts of %u, request %u, bytes "
				"%u..%u: differ from user/proto/mqtt/stream.c's\n",
				o->qos, o->payload, o->burst, t.s.k, t.off, t.off + t.len);
	}
out:
	selftest_bpf__destroy(skel);
	free(connect);
	free(burst);
	return err;
}

int selftest_mqtt(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches,
		  unsigned int *nshapes)
{
	static const struct mqtt_stream_opts shapes[] = {
		{ .client_id = "xr-{c}",
		  .topic = "msg/{c}",
		  .version = 4,
		  .qos = 1,
		  .payload = 64,
		  .burst = 1,
		  .keepalive_s = 60,
		  .username = "u",
		  .password = "p" },
		{ .client_id = "{c}",
		  .topic = "t",
		  .version = 5,
		  .qos = 0,
		  .payload = 16,
		  .burst = 40,
		  .keepalive_s = 60 },
		{ .client_id = "a{c}b",
		  .topic = "req/{c}/x",
		  .version = 5,
		  .qos = 1,
		  .payload = 15,
		  .burst = 64,
		  .keepalive_s = 1 },
		{ .client_id = "xr-{c}",
		  .topic = "msg/{c}",
		  .version = 4,
		  .qos = 0,
		  .payload = 10240,
		  .burst = 1,
		  .keepalive_s = 60 },
		/* the largest: a Remaining Length of three bytes */
		{ .client_id = "xr-{c}",
		  .topic = "msg/{c}",
		  .version = 5,
		  .qos = 1,
		  .payload = XR_MQTT_PAYLOAD_MAX,
		  .burst = 1,
		  .keepalive_s = 60 },
		{ .client_id = "xr-{c}",
		  .topic = "res/{c}",
		  .version = 4,
		  .qos = 1,
		  .payload = 200,
		  .burst = 64,
		  .keepalive_s = 60 },
		/* callers: request 0's SUBSCRIBE holds {c} too */
		{ .client_id = "caller-{c}",
		  .topic = "req/{c}",
		  .await = "res/{c}/answers",
		  .version = 5,
		  .payload = 16,
		  .burst = 10,
		  .keepalive_s = 60,
		  .username = "bench" },
		{ .client_id = "{c}",
		  .topic = "req/x",
		  .await = "{c}",
		  .version = 4,
		  .payload = 40,
		  .burst = 1 },
	};
	int err = 0;

	*nshapes = sizeof(shapes) / sizeof(shapes[0]);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]) && !err; i++)
		err = mqtt_patch_cases(&shapes[i], cases / (sizeof(shapes) / sizeof(shapes[0])) + 1,
				       rnd, checked, mismatches);
	return err;
}

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

static void mq_varint(uint8_t *b, size_t *len, uint32_t v)
{
	do {
		b[(*len)++] = (v & 0x7f) | (v >= 128 ? 0x80 : 0);
		v >>= 7;
	} while (v);
}

/* A packet of type byte t and body [body, body + n) at b + *len. */
static void mq_packet(uint8_t *b, size_t *len, uint8_t t, const uint8_t *body, uint32_t n)
{
	b[(*len)++] = t;
	mq_varint(b, len, n);
	memcpy(b + *len, body, n);
	*len += n;
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

/* Appends n bytes of p to the response being built (at most cap). */
static void append_bytes(uint8_t *r, size_t *len, size_t cap, const void *p, size_t n)
{
	if (*len + n > cap)
		n = cap - *len;
	memcpy(r + *len, p, n);
	*len += n;
}

static void putf(uint8_t *r, size_t *len, size_t cap, const char *fmt, unsigned long long v)
{
	char b[64];

	append_bytes(r, len, cap, b, snprintf(b, sizeof(b), fmt, v));
}

/*
 * A random response as servers write them: a status, fields of any length
 * (some longer than a segment), then a body by Content-Length, in chunks
 * (extensions, a trailer), none (204, 304, 1xx) or until the FIN; and bytes
 * after it. Its length.
 */
static size_t http_random_response(uint8_t *r, size_t cap, uint64_t (*rnd)(void))
{
	static const unsigned int statuses[] = { 200, 201, 204, 301, 304, 404, 500, 100, 299 };
	unsigned int status = statuses[rnd() % 9], kind = rnd() % 4, fields = rnd() % 12;
	/* now and then a header longer than the reader takes (XR_HTTP_HEADER_MAX) */
	bool huge = rnd() % 25 == 0;
	size_t len = 0;

	if (huge)
		fields = 14;

	putf(r, &len, cap, "HTTP/1.%llu ", rnd() % 2);
	putf(r, &len, cap, "%03llu OK\r\n", status);
	for (unsigned int i = 0; i < fields; i++) {
		size_t vlen = huge ? 5000 : rnd() % 4 ? rnd() % 40 : rnd() % 5000;

		putf(r, &len, cap, "X-Field-%llu:", i);
		if (rnd() % 2)
			append_bytes(r, &len, cap, " ", 1);
		for (size_t j = 0; j < vlen; j++)
			append_bytes(r, &len, cap, &"abcdefghij0123456789-_=ABC"[rnd() % 26], 1);
		append_bytes(r, &len, cap, "\r\n", 2);
	}
	if (kind == 0) {
		uint64_t body = rnd() % 3 ? rnd() % 3000 : rnd() % 70000;

		putf(r, &len, cap,
		     rnd() % 2 ? "Content-Length: %llu\r\n" : "content-length:%llu\r\n", body);
		append_bytes(r, &len, cap, "\r\n", 2);
		for (uint64_t j = 0; j < body; j++)
			append_bytes(r, &len, cap, &"0123456789\r\n"[rnd() % 12], 1);
	} else if (kind == 1) {
		unsigned int chunks = rnd() % 6;

		append_bytes(r, &len, cap, "Transfer-Encoding: chunked\r\n\r\n", 30);
		for (unsigned int c = 0; c <= chunks; c++) {
			uint64_t size = c == chunks ? 0 :
						      1 + (rnd() % 3 ? rnd() % 300 : rnd() % 9000);

			putf(r, &len, cap, rnd() % 2 ? "%llx" : "%llX", size);
			if (rnd() % 4 == 0)
				append_bytes(r, &len, cap, ";ext=1", 6);
			append_bytes(r, &len, cap, "\r\n", 2);
			for (uint64_t j = 0; j < size; j++)
				append_bytes(r, &len, cap, &"0123456789\r\n"[rnd() % 12], 1);
			if (size)
				append_bytes(r, &len, cap, "\r\n", 2);
		}
		if (rnd() % 3 == 0)
			append_bytes(r, &len, cap, "X-Trailer: 1\r\n", 14);
		append_bytes(r, &len, cap, "\r\n", 2);
	} else {
		/* no length: to the FIN (or nothing at all for 1xx, 204, 304) */
		append_bytes(r, &len, cap, "\r\n", 2);
		for (uint64_t j = rnd() % 2000; j; j--)
			append_bytes(r, &len, cap, "z", 1);
	}
	/* what may follow in the stream (the next response, say): never read as this one's */
	for (uint64_t j = rnd() % 3 ? 0 : rnd() % 100; j; j--)
		append_bytes(r, &len, cap, "H", 1);
	return len;
}

int selftest_http(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches)
{
	static struct xr_http_read_test t;
	static uint8_t resp[200000], frame[14 + XR_TCP_PAYLOAD_MAX];
	struct selftest_bpf *skel = selftest_bpf__open_and_load();
	int err = 0;

	if (!skel)
		return -errno;
	for (uint64_t c = 0; c < cases && !err; c++) {
		size_t len = http_random_response(resp, sizeof(resp), rnd), end = 0, pos = 0;
		unsigned int status;
		enum http_end want = http_response_end(resp, len, &end, &status);
		const char *why = NULL;
		uint32_t mss = rnd() % 2 ? XR_TCP_PAYLOAD_MAX : 1 + rnd() % XR_TCP_PAYLOAD_MAX;

		memset(&t, 0, sizeof(t));
		/* segments of random sizes up to the MSS, until the reader says the response ended */
		while (pos < len && !why) {
			uint32_t seg = 1 + rnd() % mss;
			LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame, .repeat = 1);

			if (seg > len - pos)
				seg = len - pos;
			memset(frame, 0, 14);
			memcpy(frame + 14, resp + pos, seg);
			topts.data_size_in = 14 + seg;
			err = test_prog_run(skel->maps.http_read_test,
					    skel->progs.xr_http_read_test, &t, &topts);
			if (err)
				break;
			pos += seg;
			(*checked)++;
			if (t.s.http_phase == XR_HTTP_DONE) {
				if (want != HTTP_END_AT)
					why = "ended where the reference does not";
				else if (end > pos || end <= pos - seg)
					why = "ended in another segment";
				else if (t.s.status != status)
					why = "another status";
				break;
			}
			if (t.s.http_phase == XR_HTTP_BAD) {
				if (want != HTTP_END_BAD)
					why = "refused what the reference reads";
				break;
			}
			if (want == HTTP_END_AT && end <= pos)
				why = "did not end where the reference does";
			if (want == HTTP_END_BAD && pos >= XR_HTTP_HEADER_MAX + XR_TCP_PAYLOAD_MAX)
				why = "read on what the reference refuses";
		}
		if (!err && !why && pos >= len) {
			/* everything read without an end: the FIN's, or more to come */
			if (want == HTTP_END_FIN && t.s.http_phase != XR_HTTP_TO_FIN)
				why = "not waiting for the FIN";
			else if (want == HTTP_END_MORE && t.s.http_phase >= XR_HTTP_DONE)
				why = "ended early";
		}
		if (why && ++*mismatches <= 5)
			fprintf(stderr,
				"selftest http: case %llu (%zu bytes, reference %d at %zu, status %u, "
				"segments up to %u): %s (phase %u at byte %zu)\n",
				(unsigned long long)c, len, want, end, status, mss, why,
				t.s.http_phase, pos);
	}
	selftest_bpf__destroy(skel);
	return err;
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
