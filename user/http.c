// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
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

static void answer(int c, http_handler h, void *ctx)
{
	char req[1024], path[256] = "/", *body = NULL;
	struct pollfd p = { .fd = c, .events = POLLIN };
	const char *type = NULL;
	size_t len = 0, got = 0;
	ssize_t n;
	FILE *f;

	/* the request line is all we need; give a slow client 200 ms */
	while (got < sizeof(req) - 1 && poll(&p, 1, 200) > 0) {
		n = read(c, req + got, sizeof(req) - 1 - got);
		if (n <= 0)
			break;
		got += n;
		req[got] = 0;
		if (strstr(req, "\r\n") || strchr(req, '\n'))
			break;
	}
	req[got] = 0;
	if (sscanf(req, "GET %255s", path) != 1) {
		dprintf(c, "HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
		return;
	}
	f = open_memstream(&body, &len);
	if (!f)
		return;
	type = h(path, f, ctx);
	fclose(f);
	if (!type)
		dprintf(c, "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n");
	else
		dprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			type, len, body);
	free(body);
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
