/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an HTTP/1.x response ends, read whole and line by line: the reference
 * that xdpreplay selftest holds gen tcp's streaming reader in XDP
 * (bpf/proto/http.bpf.h) against, written apart from it.
 */
#ifndef __XR_PROTO_HTTP_H
#define __XR_PROTO_HTTP_H

#include <stddef.h>
#include <stdint.h>

enum http_end {
	HTTP_END_AT, /* the response is the first *end bytes */
	HTTP_END_FIN, /* it ends with the server's FIN (no length) */
	HTTP_END_MORE, /* more bytes are needed to tell */
	HTTP_END_BAD, /* not a response gen tcp reads */
};

/* The end of the response at the start of buf (len bytes), its status into *status once read. */
enum http_end http_response_end(const uint8_t *buf, size_t len, size_t *end, unsigned int *status);

#endif
