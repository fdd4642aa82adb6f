/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal HTTP/1.0 endpoint: one request per connection, served from the
 * caller's loop (no threads). GET for live figures (a search on another host
 * reads a counter between trials); POST with a body for webhooks (a network
 * server's integration posting one event per uplink).
 */
#ifndef __XR_HTTP_H
#define __XR_HTTP_H

#include <stddef.h>
#include <stdio.h>

struct http_server {
	int fd;
};

/*
 * Writes the answer's body for method ("GET" or "POST") and path into f;
 * body/len is the request's body (POST). Returns the content type, or NULL
 * for 404.
 */
typedef const char *(*http_handler)(const char *method, const char *path, const char *body, size_t len, FILE *f,
				    void *ctx);

/* "ADDR:PORT" or ":PORT"; 0 or -errno after a one-line message. */
int http_listen(struct http_server *s, const char *addr_port);
/* Waits up to timeout_ms for requests and answers each one. */
void http_serve(struct http_server *s, int timeout_ms, http_handler h, void *ctx);
void http_close(struct http_server *s);

#endif
