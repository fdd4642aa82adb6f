// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "http.h"
#include "log.h"

int http_listen(struct http_server *s, const char *addr_port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const char *colon = strrchr(addr_port, ':');
	char host[64] = "0.0.0.0";
	int one = 1, err;
	char *end;
	long port;

	s->fd = -1;
	if (!colon || colon - addr_port >= (long)sizeof(host)) {
		pr_warn("--listen: '%s' is not ADDR:PORT (e.g. 198.18.0.2:9100 or :9100)\n", addr_port);
		return -EINVAL;
	}
	if (colon > addr_port)
		snprintf(host, sizeof(host), "%.*s", (int)(colon - addr_port), addr_port);
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		pr_warn("--listen: '%s' is not ADDR:PORT (e.g. 198.18.0.2:9100 or :9100)\n", addr_port);
		return -EINVAL;
	}
	sa.sin_port = htons(port);
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(s->fd, 16)) {
		err = -errno;
		pr_warn("--listen %s: %s\n", addr_port, strerror(-err));
		close(s->fd);
		s->fd = -1;
		return err;
	}
	return 0;
}

#define HTTP_MAX_BODY (1 << 20)

/* Reads until the headers are complete (and the body, for a POST): 0, or -1 on timeout or garbage. */
static int read_request(int c, char **req, size_t *got, size_t *hdr_len, size_t *body_len)
{
	struct pollfd p = { .fd = c, .events = POLLIN };
	size_t cap = 4096, want = 0;
	char *end, *cl;
	ssize_t n;

	*req = malloc(cap + 1);
	*got = 0;
	*hdr_len = 0;
	*body_len = 0;
	if (!*req)
		return -1;
	/* give a slow client 1 s in all between reads */
	while (poll(&p, 1, 1000) > 0) {
		if (*got == cap) {
			char *r;

			if (cap >= HTTP_MAX_BODY + 8192)
				return -1;
			cap *= 2;
			r = realloc(*req, cap + 1);
			if (!r)
				return -1;
			*req = r;
		}
		n = read(c, *req + *got, cap - *got);
		if (n <= 0)
			break;
		*got += n;
		(*req)[*got] = 0;
		if (!*hdr_len && (end = strstr(*req, "\r\n\r\n"))) {
			*hdr_len = end + 4 - *req;
			cl = strcasestr(*req, "\r\ncontent-length:");
			want = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
			if (want > HTTP_MAX_BODY)
				return -1;
		}
		if (*hdr_len && *got >= *hdr_len + want)
			break;
	}
	if (!*hdr_len)
		return strchr(*req, '\n') ? 0 : -1;
	*body_len = *got - *hdr_len < want ? *got - *hdr_len : want;
	return 0;
}

static void answer(int c, http_handler h, void *ctx)
{
	char method[8] = "", path[256] = "/", *req = NULL, *body = NULL;
	size_t got, hdr, blen, len = 0;
	const char *type = NULL;
	FILE *f;

	if (read_request(c, &req, &got, &hdr, &blen) || sscanf(req, "%7s %255s", method, path) != 2 ||
	    (strcmp(method, "GET") && strcmp(method, "POST"))) {
		dprintf(c, "HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
		free(req);
		return;
	}
	f = open_memstream(&body, &len);
	if (!f) {
		free(req);
		return;
	}
	type = h(method, path, hdr ? req + hdr : "", blen, f, ctx);
	fclose(f);
	if (!type)
		dprintf(c, "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n");
	else
		dprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			type, len, body);
	free(body);
	free(req);
}

void http_serve(struct http_server *s, int timeout_ms, http_handler h, void *ctx)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	int c;

	if (s->fd < 0) {
		usleep(timeout_ms * 1000);
		return;
	}
	if (poll(&p, 1, timeout_ms) <= 0)
		return;
	while ((c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		answer(c, h, ctx);
		close(c);
	}
}

void http_close(struct http_server *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
