/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen tcp's reading of an HTTP/1.x response, a segment at a time, from where
 * the last one left it (the session's http_* fields, bpf/shared/tcp.h): the
 * status line, a header of any length up to XR_HTTP_HEADER_MAX, then a body
 * of Content-Length bytes (skipped, never loaded), chunks up to the last one
 * and its trailer, nothing (1xx, 204, 304), or all up to the server's FIN.
 * xdpreplay selftest holds it against user/proto/tcp/http.c, a line-based
 * reading of whole responses, over random responses cut at random places.
 */
#ifndef __XR_PROTO_HTTP_BPF_H
#define __XR_PROTO_HTTP_BPF_H

/* "-length:" and " chunked" as the last 8 bytes read, first byte in the high bits */
#define HTTP_LENGTH_TAIL 0x2d6c656e6774683aULL
#define HTTP_CHUNKED_TAIL 0x206368756e6b6564ULL

/* One byte of response k's header, at index idx of the response. */
static __always_inline void http_header_byte(struct xr_tcp_session *s, __u8 b, __u32 idx)
{
	__u8 lc = b >= 'A' && b <= 'Z' ? b + 32 : b;

	s->http_last8 = s->http_last8 << 8 | lc;
	/* "HTTP/x.y NNN" */
	if (idx < 12) {
		static const char proto[] = "HTTP/";

		if ((idx < 5 && b != proto[idx]) || (idx == 8 && b != ' ') ||
		    (idx > 8 && (b < '0' || b > '9')))
			s->http_phase = XR_HTTP_BAD;
		else if (idx > 8)
			s->status = s->status * 10 + (b - '0');
		return;
	}
	if (idx >= XR_HTTP_HEADER_MAX) {
		s->http_phase = XR_HTTP_BAD;
		return;
	}
	if (s->http_flags & XR_HTTPF_CLEN) {
		if (b >= '0' && b <= '9') {
			/* a body of a gigabyte or more: not a response a benchmark reads */
			if (s->http_num >= 100000000) {
				s->http_phase = XR_HTTP_BAD;
				return;
			}
			s->http_num = s->http_num * 10 + (b - '0');
			s->http_flags |= XR_HTTPF_CLEN_READ;
		} else if (b != ' ' || (s->http_flags & XR_HTTPF_CLEN_READ)) {
			s->http_flags &= ~XR_HTTPF_CLEN;
		}
	}
	if (s->http_last8 == HTTP_LENGTH_TAIL) {
		s->http_flags = (s->http_flags & ~XR_HTTPF_CLEN_READ) | XR_HTTPF_CLEN;
		s->http_num = 0;
	}
	if (s->http_last8 == HTTP_CHUNKED_TAIL)
		s->http_flags |= XR_HTTPF_CHUNKED;
	if ((__u32)s->http_last8 != 0x0d0a0d0a)
		return;
	/* the header's end: what the body is */
	if (s->status < 200 || s->status == 204 || s->status == 304)
		s->http_phase = XR_HTTP_DONE;
	else if (s->http_flags & XR_HTTPF_CHUNKED)
		s->http_phase = XR_HTTP_CHUNK_SIZE;
	else if (s->http_flags & XR_HTTPF_CLEN_READ)
		s->http_phase = s->http_num ? XR_HTTP_BODY : XR_HTTP_DONE;
	else
		s->http_phase = XR_HTTP_TO_FIN;
	if (s->http_phase == XR_HTTP_CHUNK_SIZE)
		s->http_num = 0;
}

/* The end of a chunk-size line: the chunk's data, or the trailer after the last chunk. */
static __always_inline void http_chunk_line(struct xr_tcp_session *s)
{
	s->http_phase = s->http_num ? XR_HTTP_CHUNK_DATA : XR_HTTP_TRAILER;
	s->http_line = 0;
}

/* One byte of a chunked body's framing (not of a chunk's data). */
static __always_inline void http_chunk_byte(struct xr_tcp_session *s, __u8 b)
{
	switch (s->http_phase) {
	case XR_HTTP_CHUNK_SIZE:
		if ((b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'f')) {
			/* more than 2^28 bytes in one chunk: not a response a benchmark reads */
			if (s->http_num >> 28) {
				s->http_phase = XR_HTTP_BAD;
				return;
			}
			s->http_num = s->http_num << 4 |
				      (b <= '9' ? b - '0' : (b | 0x20) - 'a' + 10);
		} else if (b == '\n') {
			http_chunk_line(s);
		} else {
			/* an extension (";name=value"), white space or the CR */
			s->http_phase = XR_HTTP_CHUNK_EXT;
		}
		return;
	case XR_HTTP_CHUNK_EXT:
		if (b == '\n')
			http_chunk_line(s);
		return;
	case XR_HTTP_CHUNK_CR:
		if (b == '\r')
			s->http_phase = XR_HTTP_CHUNK_LF;
		else if (b == '\n')
			s->http_phase = XR_HTTP_CHUNK_SIZE;
		else
			s->http_phase = XR_HTTP_BAD;
		return;
	case XR_HTTP_CHUNK_LF: s->http_phase = b == '\n' ? XR_HTTP_CHUNK_SIZE : XR_HTTP_BAD; return;
	case XR_HTTP_TRAILER:
		if (b == '\n') {
			if (!s->http_line)
				s->http_phase = XR_HTTP_DONE;
			s->http_line = 0;
		} else if (b != '\r') {
			s->http_line = 1;
		}
		return;
	}
}

struct http_read {
	struct xr_tcp_session *s;
	const __u8 *buf; /* the segment's bytes */
	__u32 pos, n;
	__u32 base; /* index in the response of buf[0] */
};

/*
 * bpf_loop's body: from r->pos, a run of body or chunk data at once (it is
 * not read), or one byte of the header or of the chunks' framing. 1 when the
 * segment is done or the response has ended. (A callback is verified once,
 * not per iteration; the loop runs at most once per byte.)
 */
static long http_step(__u32 i, void *data)
{
	struct http_read *r = data;
	struct xr_tcp_session *s = r->s;
	__u32 take;
	__u8 b;

	if (r->pos >= r->n)
		return 1;
	switch (s->http_phase) {
	case XR_HTTP_BODY:
	case XR_HTTP_CHUNK_DATA:
		take = r->n - r->pos;
		if (take > s->http_num)
			take = s->http_num;
		r->pos += take;
		s->http_num -= take;
		if (!s->http_num)
			s->http_phase = s->http_phase == XR_HTTP_BODY ? XR_HTTP_DONE :
									XR_HTTP_CHUNK_CR;
		return 0;
	case XR_HTTP_HEADER:
	case XR_HTTP_CHUNK_SIZE:
	case XR_HTTP_CHUNK_EXT:
	case XR_HTTP_CHUNK_CR:
	case XR_HTTP_CHUNK_LF:
	case XR_HTTP_TRAILER: break;
	default:
		/* the FIN ends it, it ended, or it cannot be read: the rest is not looked at */
		return 1;
	}
	b = r->buf[r->pos & (XR_TCP_READ_MAX - 1)];
	if (s->http_phase == XR_HTTP_HEADER)
		http_header_byte(s, b, r->base + r->pos);
	else
		http_chunk_byte(s, b);
	r->pos++;
	return 0;
}

/*
 * plen bytes of response k at off of the server's segment, read on from where
 * the last segment left it: s->http_phase says where it is now (XR_HTTP_BAD:
 * a response this client cannot read). A body counted by Content-Length is
 * not loaded at all.
 */
static __always_inline void http_read(struct xdp_md *ctx, struct xr_tcp_session *s, __u32 off,
				      __u32 plen, __u8 *buf)
{
	struct http_read r = { .s = s, .buf = buf, .n = plen, .base = s->resp_got };

	if (s->http_phase == XR_HTTP_TO_FIN ||
	    (s->http_phase == XR_HTTP_BODY && plen <= s->http_num)) {
		if (s->http_phase == XR_HTTP_BODY && !(s->http_num -= plen))
			s->http_phase = XR_HTTP_DONE;
		return;
	}
	if (s->http_phase >= XR_HTTP_DONE)
		return;
	if (!plen || plen > XR_TCP_READ_MAX ||
	    bpf_xdp_load_bytes(ctx, off, buf, ((plen - 1) & (XR_TCP_READ_MAX - 1)) + 1)) {
		s->http_phase = XR_HTTP_BAD;
		return;
	}
	bpf_loop(plen + 1, http_step, &r, 0);
}

#endif /* __XR_PROTO_HTTP_BPF_H */
