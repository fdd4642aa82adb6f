// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "measure/httpd.h"
#include "util/log.h"
#include "util/units.h"

struct httpd {
	struct MHD_Daemon *d;
	pthread_mutex_t own_lock, *lock;
	httpd_handler h;
	void *ctx;
	char token[260];
	size_t max_body;
};

/* One request's upload, collected across the calls libmicrohttpd makes for it. */
struct request {
	char *body;
	size_t len;
	bool too_large;
};

int httpd_parse_addr(const char *addr_port, struct sockaddr_in *sa)
{
	const char *colon = strrchr(addr_port, ':');
	char host[INET_ADDRSTRLEN];
	unsigned int port;
	const char *end;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (!colon || colon - addr_port >= (long)sizeof(host) || !colon[1])
		return -EINVAL;
	if (parse_uint(colon + 1, 65535, &port, &end) || *end || !port)
		return -EINVAL;
	sa->sin_port = htons(port);
	if (colon == addr_port) {
		/* ":PORT": loopback; exposing the endpoint to the network takes an explicit address */
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr_port), addr_port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

int httpd_read_token(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		pr_warn("cannot read the token file %s: %s\n", path, strerror(errno));
		return -errno;
	}
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	if (!buf[0] || n == len - 1) {
		pr_warn("%s: a token is one line of 1 to %zu characters\n", path, len - 2);
		return -EINVAL;
	}
	return 0;
}

/* Compares the whole token whatever differs first: no timing tells where. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return !diff;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, char *body, size_t len,
			     const char *ctype)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	char *b = strdup(text);

	return b ? reply(c, status, b, strlen(b), "text/plain") : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **con_cls)
{
	struct httpd *s = cls;
	struct request *rq = *con_cls;
	struct httpd_request req;
	const char *ctype, *auth;
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;

	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_len) {
		/* the body arrives in pieces; beyond the limit it is counted, not kept */
		if (rq->too_large || rq->len + *upload_len > s->max_body) {
			rq->too_large = true;
		} else {
			char *b = realloc(rq->body, rq->len + *upload_len + 1);

			if (!b)
				return MHD_NO;
			memcpy(b + rq->len, upload, *upload_len);
			rq->body = b;
			rq->len += *upload_len;
			b[rq->len] = 0;
		}
		*upload_len = 0;
		return MHD_YES;
	}
	if (s->token[0]) {
		auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						   MHD_HTTP_HEADER_AUTHORIZATION);
		if (!auth || strncmp(auth, "Bearer ", 7) || !same_secret(auth + 7, s->token))
			return reply_text(c, MHD_HTTP_UNAUTHORIZED, "a bearer token is needed\n");
	}
	if (rq->too_large)
		return reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "body too large\n");
	if (strcmp(method, "GET") && strcmp(method, "POST"))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST\n");
	f = open_memstream(&out, &out_len);
	if (!f)
		return MHD_NO;
	req = (struct httpd_request){
		.method = method,
		.path = url,
		.body = rq->body ? rq->body : "",
		.len = rq->len,
		.accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
	};
	pthread_mutex_lock(s->lock);
	ctype = s->h(&req, f, s->ctx);
	pthread_mutex_unlock(s->lock);
	if (fclose(f)) {
		free(out);
		return MHD_NO;
	}
	if (!ctype) {
		free(out);
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	}
	return reply(c, MHD_HTTP_OK, out, out_len, ctype);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct request *rq = *con_cls;

	if (rq) {
		free(rq->body);
		free(rq);
	}
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	if (xr_verbosity >= XR_LOG_DEBUG)
		vfprintf(stderr, fmt, ap);
}

int httpd_listen_socket(const struct sockaddr_in *addr, const char *option)
{
	int fd, one = 1, err;

	/* our own socket: a bind error is then reported as it is */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) || listen(fd, 64)) {
		char a[INET_ADDRSTRLEN];

		err = -errno;
		inet_ntop(AF_INET, &addr->sin_addr, a, sizeof(a));
		pr_warn("%s %s:%u: %s\n", option, a, ntohs(addr->sin_port), strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

int httpd_start(struct httpd **out, const struct sockaddr_in *addr, const struct httpd_opts *o,
		httpd_handler h, void *ctx)
{
	struct sockaddr_in sa = *addr;
	struct httpd *s;
	int fd, err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->own_lock, NULL);
	s->lock = o->lock ? o->lock : &s->own_lock;
	s->h = h;
	s->ctx = ctx;
	s->max_body = o->max_body ? o->max_body : 65536;
	if (o->token)
		snprintf(s->token, sizeof(s->token), "%s", o->token);
	fd = o->listen_fd > 0 ? o->listen_fd : httpd_listen_socket(&sa, o->option);
	if (fd < 0) {
		err = fd;
		goto err;
	}
	s->d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, s, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
		o->max_conns ? o->max_conns : 256,
		/* one address cannot take every place (a scraper and a search share one host) */
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, 64, MHD_OPTION_CONNECTION_TIMEOUT,
		o->timeout_s ? o->timeout_s : 5,
		/* bounds the request line and headers too */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!s->d) {
		err = -EIO;
		pr_warn("%s: cannot start the HTTP server\n", o->option);
		goto err;
	}
	*out = s;
	return 0;
err:
	if (fd >= 0)
		close(fd);
	pthread_mutex_destroy(&s->own_lock);
	free(s);
	return err;
}

void httpd_stop(struct httpd *s)
{
	if (!s)
		return;
	/* ends its thread and every connection, and closes the listening socket */
	MHD_stop_daemon(s->d);
	pthread_mutex_destroy(&s->own_lock);
	free(s);
}

void httpd_lock(struct httpd *s)
{
	if (s)
		pthread_mutex_lock(s->lock);
}

void httpd_unlock(struct httpd *s)
{
	if (s)
		pthread_mutex_unlock(s->lock);
}
