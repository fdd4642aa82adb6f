// SPDX-License-Identifier: GPL-2.0
/*
 * Where an HTTP/1.x response ends (http.h), from the whole of it: the header
 * found by its empty line, its fields split into lines and names, then the
 * body's framing. Deliberately not the XDP reader's byte-at-a-time state
 * machine, so that the selftest compares two readings.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "proto/http/http.h"
#include "xdpreplay.h"

/* The line at buf[from..len) up to its CRLF: its length, or -1 when the CRLF has not come. */
static long line_len(const uint8_t *buf, size_t len, size_t from)
{
	const uint8_t *p = from < len ? memmem(buf + from, len - from, "\r\n", 2) : NULL;

	return p ? p - (buf + from) : -1;
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The chunks from pos: the end of the trailer's empty line, or MORE / BAD. */
static enum http_end chunks_end(const uint8_t *buf, size_t len, size_t pos, size_t *end)
{
	for (;;) {
		long n = line_len(buf, len, pos);
		uint64_t size = 0;
		long i;

		if (n < 0)
			return HTTP_END_MORE;
		for (i = 0; i < n && hexval(buf[pos + i]) >= 0; i++) {
			size = size * 16 + hexval(buf[pos + i]);
			if (size >> 28)
				return HTTP_END_BAD;
		}
		pos += n + 2;
		if (!size)
			break;
		if (len < pos + size + 2)
			return HTTP_END_MORE;
		if (memcmp(buf + pos + size, "\r\n", 2))
			return HTTP_END_BAD;
		pos += size + 2;
	}
	/* the trailer: field lines up to an empty one */
	for (;;) {
		long n = line_len(buf, len, pos);

		if (n < 0)
			return HTTP_END_MORE;
		pos += n + 2;
		if (!n) {
			*end = pos;
			return HTTP_END_AT;
		}
	}
}

enum http_end http_response_end(const uint8_t *buf, size_t len, size_t *end, unsigned int *status)
{
	static const char proto[] = "HTTP/";
	size_t hdr_len, pos, scan = len < XR_HTTP_HEADER_MAX ? len : XR_HTTP_HEADER_MAX;
	const uint8_t *blank;
	uint64_t clen = 0;
	bool have_clen = false, chunked = false;

	*status = 0;
	for (size_t i = 0; i < 12 && i < len; i++)
		if ((i < 5 && buf[i] != proto[i]) || (i == 8 && buf[i] != ' ') ||
		    (i > 8 && (buf[i] < '0' || buf[i] > '9')))
			return HTTP_END_BAD;
	blank = memmem(buf, scan, "\r\n\r\n", 4);
	if (!blank)
		return len >= XR_HTTP_HEADER_MAX ? HTTP_END_BAD : HTTP_END_MORE;
	hdr_len = blank + 4 - buf;
	if (hdr_len < 16)
		return HTTP_END_BAD;
	*status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	/* the field lines after the status line */
	for (pos = line_len(buf, hdr_len, 0) + 2; pos < hdr_len - 2;) {
		long n = line_len(buf, hdr_len, pos);
		const uint8_t *colon = memchr(buf + pos, ':', n);

		if (colon) {
			size_t name = colon - (buf + pos), v = name + 1;

			while (v < (size_t)n && buf[pos + v] == ' ')
				v++;
			if (name == 14 &&
			    !strncasecmp((const char *)buf + pos, "content-length", 14)) {
				clen = 0;
				have_clen = false;
				for (; v < (size_t)n && buf[pos + v] >= '0' && buf[pos + v] <= '9';
				     v++) {
					/* a gigabyte or more: not read (as in XDP) */
					if (clen >= 100000000)
						return HTTP_END_BAD;
					clen = clen * 10 + (buf[pos + v] - '0');
					have_clen = true;
				}
			}
			if (name == 17 &&
			    !strncasecmp((const char *)buf + pos, "transfer-encoding", 17) &&
			    n - v == 7 && !strncasecmp((const char *)buf + pos + v, "chunked", 7))
				chunked = true;
		}
		pos += n + 2;
	}
	if (*status < 200 || *status == 204 || *status == 304) {
		*end = hdr_len;
		return HTTP_END_AT;
	}
	if (chunked)
		return chunks_end(buf, len, hdr_len, end);
	if (!have_clen)
		return HTTP_END_FIN;
	if (len < hdr_len + clen)
		return HTTP_END_MORE;
	*end = hdr_len + clen;
	return HTTP_END_AT;
}
