// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay selftest's checks of bpf/lib/tcp.bpf.h (bpf/selftest.bpf.c): the
 * TCP reply builder, with and without a payload, against a segment built here
 * from the RFCs' layouts; gen tcp's {c} and {k} fields against
 * user/proto/tcp/segment.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "selftest/selftest.h"
#include <netinet/in.h>
#include "util/bytes.h"
#include "frames/csum.h"
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

int selftest_tcp(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches)
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
