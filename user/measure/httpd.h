/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HTTP endpoints (count --listen, count --webhook, a sender's --listen),
 * on libmicrohttpd: its own thread, so a command's loop never waits on a
 * client; a connection limit (in all and per client address), timeouts,
 * bounded headers and bodies, an optional bearer token. Handlers run one at
 * a time under the server's lock; the command takes the same lock
 * (httpd_lock) around what it shares with them.
 */
#ifndef __XR_HTTPD_H
#define __XR_HTTPD_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

struct httpd;
struct sockaddr_in;

/* A request: method "GET" or "POST", path without the query, a POST's body, the Accept header. */
struct httpd_request {
	const char *method, *path, *body;
	size_t len;
	const char *accept; /* NULL when the client sent none */
};

/* Writes the answer's body into f. Returns the content type, or NULL for 404. */
typedef const char *(*httpd_handler)(const struct httpd_request *rq, FILE *f, void *ctx);

struct httpd_opts {
	const char *option; /* the option that asked for it ("--listen"), for messages */
	const char *token; /* NULL, or the bearer token every request must carry */
	size_t max_body; /* larger POST bodies are refused (413); 0 = 64 KiB */
	unsigned int max_conns; /* 0 = 256 (64 from one address) */
	unsigned int timeout_s; /* idle connections are closed after this; 0 = 5 s */
	pthread_mutex_t *lock; /* a lock shared with other servers of the command; NULL = its own */
	int listen_fd; /* > 0: a socket from httpd_listen_socket to serve on (taken over) */
};

/*
 * A listening TCP socket on addr (so that it can be opened before the command
 * moves to another network namespace): the fd, or -errno after a message.
 */
int httpd_listen_socket(const struct sockaddr_in *addr, const char *option);

/*
 * Serves on addr (parsed once by httpd_parse_addr). 0, or -errno after a
 * one-line message naming the option.
 */
int httpd_start(struct httpd **out, const struct sockaddr_in *addr, const struct httpd_opts *o,
		httpd_handler h, void *ctx);
void httpd_stop(struct httpd *s);
void httpd_lock(struct httpd *s);
void httpd_unlock(struct httpd *s);

/*
 * "ADDR:PORT" (0.0.0.0 for every address) or ":PORT" (loopback only) into an
 * IPv4 socket address: 0 or -EINVAL.
 */
int httpd_parse_addr(const char *addr_port, struct sockaddr_in *sa);

/* Reads a bearer token from a file (one line; at most 256 bytes): 0 or -errno after a message. */
int httpd_read_token(const char *path, char *buf, size_t len);

#endif
