/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal HTTP/1.0 endpoint for live figures: one request per connection,
 * GET only, served from the caller's loop (no threads). Enough for a search
 * on another host to read a counter between trials with curl or a script.
 */
#ifndef __XR_HTTP_H
#define __XR_HTTP_H

#include <stdio.h>

struct http_server {
	int fd;
};

/* Writes the body for path into f; returns the content type, or NULL for 404. */
typedef const char *(*http_handler)(const char *path, FILE *f, void *ctx);

/* "ADDR:PORT" or ":PORT"; 0 or -errno after a one-line message. */
int http_listen(struct http_server *s, const char *addr_port);
/* Waits up to timeout_ms for requests and answers each one. */
void http_serve(struct http_server *s, int timeout_ms, http_handler h, void *ctx);
void http_close(struct http_server *s);

#endif
