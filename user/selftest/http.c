// SPDX-License-Identifier: GPL-2.0
/* xdpreplay selftest: gen tcp's HTTP reader in XDP against user/proto/http/http.c's, over random responses. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "selftest/selftest.h"
#include "proto/http/http.h"
#include "proto/tcp/session.h"
#include "xdpreplay.h"
#include "selftest.skel.h"

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
