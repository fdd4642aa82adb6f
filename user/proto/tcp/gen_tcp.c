// SPDX-License-Identifier: GPL-2.0
/*
 * gen tcp: whole TCP client sessions with no socket (run.c), each sending
 * HTTP/1.1 requests or the bytes of a --request file, K of them one after
 * the other, answered by HTTP responses or N bytes each: its options, its
 * request, its report.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "proto/tcp/session.h"
#include "send/opts.h"
#include "engine/pacer.h"
#include "engine/replies.h"
#include "frames/csum.h"
#include "util/prom.h"
#include "util/bytes.h"
#include "util/log.h"
#include "util/units.h"
#include "gen.skel.h"

enum { O_HTTP = PROTO_OPT_BASE, O_REQUEST, O_BODY, O_RPS, O_CLOSE, O_RESPONSE, O_REQUEST_RATE };

/* gen tcp: its sessions, and its own options */
struct gen_tcp {
	struct tcp t;
	const char *http, *request_file, *body_file;
	double request_rate; /* --request-rate: requests 1.. per second in all, paced (0: not) */
	bool rate_searched; /* --request-rate search: each search trial's load sets the rate */
	bool requests_set; /* --requests-per-session given */
};

static const struct option tcp_opts[] = {
	{ "http", required_argument, NULL, O_HTTP },
	{ "request", required_argument, NULL, O_REQUEST },
	{ "body", required_argument, NULL, O_BODY },
	{ "requests-per-session", required_argument, NULL, O_RPS },
	{ "close", required_argument, NULL, O_CLOSE },
	{ "response", required_argument, NULL, O_RESPONSE },
	{ "request-rate", required_argument, NULL, O_REQUEST_RATE },
	{},
};

int tcp_close_opt(struct tcp *t, const char *arg, const struct send_opts *so)
{
	if (!strcmp(arg, "fin"))
		t->close = XR_TCP_CLOSE_FIN;
	else if (!strcmp(arg, "rst"))
		t->close = XR_TCP_CLOSE_RST;
	else
		return cli_usage_error(so->cmd, "--close: fin or rst, not '%s'", arg);
	return -1;
}

static int tcp_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct gen_tcp *g = st;
	struct tcp *t = &g->t;

	switch (id) {
	case O_HTTP: g->http = arg; break;
	case O_REQUEST: g->request_file = arg; break;
	case O_BODY: g->body_file = arg; break;
	case O_RPS:
		if (cli_count(so->cmd, "requests-per-session", arg, &t->requests))
			return XR_EXIT_USAGE;
		if (t->requests < 1 || t->requests > 65535)
			return cli_usage_error(
				so->cmd, "--requests-per-session must be between 1 and 65535");
		g->requests_set = true;
		break;
	case O_CLOSE: return tcp_close_opt(t, arg, so);
	case O_RESPONSE:
		if (!strcmp(arg, "http")) {
			t->response = XR_TCP_RESP_HTTP;
			break;
		}
		if (cli_count(so->cmd, "response", arg, &t->resp_size))
			return XR_EXIT_USAGE;
		if (!t->resp_size || t->resp_size > UINT32_MAX)
			return cli_usage_error(so->cmd, "--response: http, or a size in bytes");
		t->response = XR_TCP_RESP_SIZE;
		break;
	case O_REQUEST_RATE:
		if (!strcmp(arg, "search")) {
			g->rate_searched = true;
			break;
		}
		if (parse_number(arg, &g->request_rate) || !(g->request_rate > 0) ||
		    g->request_rate > 1e9)
			return cli_usage_error(
				so->cmd,
				"--request-rate: requests per second, above 0 (e.g. 500, 10k, 1.5M), "
				"not '%s'",
				arg);
		break;
	}
	return -1;
}

static int tcp_check(void *st, const struct send_opts *so)
{
	struct gen_tcp *g = st;
	struct tcp *t = &g->t;

	if (!g->http == !g->request_file)
		return cli_usage_error(so->cmd,
				       "say what to send: --http 'GET /path' or --request FILE");
	if (g->body_file && !g->http)
		return cli_usage_error(
			so->cmd, "--body goes with --http (a --request file is sent as it is)");
	if (!t->requests)
		t->requests = 1;
	if (g->rate_searched) {
		if (!so->search)
			return cli_usage_error(
				so->cmd,
				"--request-rate search is for search's trials (xdpreplay "
				"search ... -- gen tcp --request-rate search): give a rate");
		if (g->requests_set)
			return cli_usage_error(
				so->cmd,
				"--request-rate search: each trial's --requests-per-session "
				"is 1 + its rate x time over --count sessions: give none");
		return tcp_pace_check("--request-rate", so, true);
	}
	if (g->request_rate) {
		if (t->requests < 2)
			return cli_usage_error(
				so->cmd, "--request-rate paces each session's requests after its "
					 "first: give --requests-per-session 2 or more");
		if (tcp_pace_check("--request-rate", so, false))
			return XR_EXIT_USAGE;
	}
	return 0;
}

static int tcp_verdict(void *st)
{
	return tcp_none_completed_verdict(&((struct gen_tcp *)st)->t);
}

/* search -- gen tcp --request-rate search: the paced requests, from their departures */
static void tcp_trial_paths(void *st, struct trial_paths *p)
{
	if (!((struct gen_tcp *)st)->rate_searched)
		return;
	p->witness = "requests.pace.answered";
	p->asked = "requests.pace.departures";
	p->sent = "requests.pace.sent";
	p->behind = "requests.pace.after_schedule_end";
	p->seconds = "requests.pace.seconds";
}

/* The trial's rate over --count sessions for its time, after each one's first request */
static int tcp_paced_trial(void *st, struct send_opts *so, double rate, uint64_t trial_ns)
{
	struct gen_tcp *g = st;
	struct tcp *t = &g->t;
	uint64_t paced;

	if (tcp_pace_trial_bursts("--request-rate", so, rate, trial_ns, 1, 65534, &paced))
		return XR_EXIT_USAGE;
	t->requests = 1 + paced;
	g->request_rate = rate;
	return 0;
}

/* At most max bytes of path into *buf (malloc'ed). 0, or -errno after a one-line message. */
static int read_whole(const char *what, const char *path, size_t max, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	int err = 0;

	*buf = NULL;
	*len = 0;
	if (!f) {
		/* the user's file: bad input, whatever the reason */
		pr_warn("%s %s: %s\n", what, path, strerror(errno));
		return -EINVAL;
	}
	*buf = malloc(max + 1);
	if (!*buf) {
		err = -ENOMEM;
		goto out;
	}
	*len = fread(*buf, 1, max + 1, f);
	if (ferror(f)) {
		err = -EIO;
		pr_warn("%s %s: read error\n", what, path);
	} else if (*len > max) {
		err = -EINVAL;
		pr_warn("%s %s: more than the %zu bytes a session carries\n", what, path, max);
	}
out:
	fclose(f);
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/*
 * {c} and {k} in buf[0..*len) become XR_TCP_DIGITS zeros whose places go to
 * f (the bytes move up; cap is the buffer's size). 0, or -EINVAL after a
 * one-line message (more than XR_TCP_FIELDS of them, or no room).
 */
static int tcp_fields_expand(const char *what, uint8_t *buf, size_t *len, size_t cap,
			     struct xr_tcp_fields *f)
{
	unsigned int n = 0;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i + 3 <= *len; i++) {
		if (buf[i] != '{' || buf[i + 2] != '}' || (buf[i + 1] != 'c' && buf[i + 1] != 'k'))
			continue;
		if (n == XR_TCP_FIELDS) {
			pr_warn("%s: at most %u {c} and {k} fields\n", what, XR_TCP_FIELDS);
			return -EINVAL;
		}
		if (*len + XR_TCP_DIGITS - 3 > cap) {
			pr_warn("%s: with its fields of %u digits, more than the %zu bytes a session "
				"carries\n",
				what, XR_TCP_DIGITS, cap);
			return -EINVAL;
		}
		if (i + XR_TCP_DIGITS > UINT16_MAX) {
			pr_warn("%s: a field at byte %zu: fields go in the first %u bytes\n", what,
				i, UINT16_MAX - XR_TCP_DIGITS);
			return -EINVAL;
		}
		f->kind[n] = buf[i + 1] == 'c' ? XR_TCP_FIELD_C : XR_TCP_FIELD_K;
		f->off[n++] = i;
		memmove(buf + i + XR_TCP_DIGITS, buf + i + 3, *len - i - 3);
		memset(buf + i, '0', XR_TCP_DIGITS);
		*len += XR_TCP_DIGITS - 3;
		i += XR_TCP_DIGITS - 1;
	}
	return 0;
}

/*
 * The request: a --request file as it is, or an HTTP/1.1 request line, Host
 * and the --body; {c} and {k} in the file or the request line become fields.
 */
static int tcp_make_request(struct gen_tcp *g, const struct send_opts *so)
{
	struct tcp *t = &g->t;
	char host[INET_ADDRSTRLEN + 8], method[16], path[2048];
	uint8_t *body = NULL;
	size_t blen = 0;
	int n, err;

	if (g->request_file) {
		err = read_whole("--request", g->request_file, XR_TCP_REQUEST_MAX, &t->req,
				 &t->req_len);
		if (!err && !t->req_len) {
			pr_warn("--request %s: empty: a session needs something to send\n",
				g->request_file);
			err = -EINVAL;
		}
		if (!err) {
			/* room for the fields' digits */
			uint8_t *r = realloc(t->req, XR_TCP_REQUEST_MAX + 1);

			if (!r)
				return -ENOMEM;
			t->req = r;
			err = tcp_fields_expand("--request", t->req, &t->req_len,
						XR_TCP_REQUEST_MAX, &t->fields);
		}
		return err;
	}
	if (sscanf(g->http, "%15s %2047s%n", method, path, &n) != 2 || g->http[n] ||
	    path[0] != '/') {
		pr_warn("--http: 'METHOD /path' (e.g. 'GET /index.html'), not '%s'\n", g->http);
		return -EINVAL;
	}
	if (g->body_file) {
		err = read_whole("--body", g->body_file, XR_TCP_REQUEST_MAX, &body, &blen);
		if (err)
			return err;
	}
	inet_ntop(AF_INET, so->net.dst.addr, host, sizeof(host));
	if (so->net.dst.port != 80)
		snprintf(host + strlen(host), sizeof(host) - strlen(host), ":%u", so->net.dst.port);
	t->req = malloc(XR_TCP_REQUEST_MAX + 1);
	if (!t->req) {
		free(body);
		return -ENOMEM;
	}
	n = snprintf((char *)t->req, XR_TCP_REQUEST_MAX + 1,
		     "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: xdpreplay\r\nAccept: */*\r\n",
		     method, path, host);
	if (body)
		n += snprintf((char *)t->req + n, XR_TCP_REQUEST_MAX + 1 - n,
			      "Content-Type: application/octet-stream\r\nContent-Length: %zu\r\n",
			      blen);
	n += snprintf((char *)t->req + n, XR_TCP_REQUEST_MAX + 1 - n, "\r\n");
	{
		size_t hlen = n;

		/* the request line's fields (the body is sent as it is) */
		err = tcp_fields_expand("--http", t->req, &hlen, XR_TCP_REQUEST_MAX, &t->fields);
		if (err) {
			free(body);
			return err;
		}
		n = hlen;
	}
	if ((size_t)n + blen > XR_TCP_REQUEST_MAX) {
		pr_warn("--body %s: the request would be %zu bytes, more than the %u a session carries\n",
			g->body_file, n + blen, XR_TCP_REQUEST_MAX);
		free(body);
		return -EINVAL;
	}
	if (blen)
		memcpy(t->req + n, body, blen);
	t->req_len = n + blen;
	free(body);
	return 0;
}

static int tcp_build(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct gen_tcp *g = st;
	struct tcp *t = &g->t;
	int err = tcp_make_request(g, so);

	/* --request-rate: a request departs every 1 / rate seconds */
	if (g->request_rate)
		t->pace.ps = 1e12 / g->request_rate;
	return err ? err : tcp_sessions_build(t, so, ifc, fs, plan, o);
}

void tcp_requests_report(struct tcp *t, const struct engine_result *res, FILE *human,
			 struct json *j)
{
	const __u64 *c = res->replies.st.ctr;
	static const char *const cls[] = { "2xx", "3xx", "4xx", "5xx" };
	char y[16];

	if (!res->replies.hist)
		return;
	tcp_sessions_report(t, res, human, j);
	if (human) {
		fprintf(human, "  requests: %llu sent whole, %llu responses (%s/s):",
			(unsigned long long)c[XR_TCP_REQUESTS],
			(unsigned long long)c[XR_TCP_RESPONSES],
			fmt_si(tcp_answers_per_s(t, res, c[XR_TCP_RESPONSES]), y, sizeof(y)));
		for (int i = 0; i < 4; i++)
			if (c[XR_TCP_2XX + i])
				fprintf(human, " %s %llu", cls[i],
					(unsigned long long)c[XR_TCP_2XX + i]);
		if (c[XR_TCP_OTHER_STATUS])
			fprintf(human, " other %llu", (unsigned long long)c[XR_TCP_OTHER_STATUS]);
		fputc('\n', human);
		tcp_pace_report(t, res, "request", t->pace.answered, human, NULL);
		if (c[XR_TCP_RESPONSES] && t->first_byte.hist) {
			replies_hist_line(human, "first byte (request to first response byte)",
					  &t->first_byte);
			tcp_answers_report(t, "response (request to last byte)", human, NULL, NULL);
		}
	}
	if (!j)
		return;
	json_open(j, "requests", '{');
	json_u64(j, "sent", c[XR_TCP_REQUESTS]);
	json_u64(j, "responses", c[XR_TCP_RESPONSES]);
	json_double(j, "responses_per_s", tcp_answers_per_s(t, res, c[XR_TCP_RESPONSES]));
	json_open(j, "status", '{');
	for (int i = 0; i < 4; i++)
		json_u64(j, cls[i], c[XR_TCP_2XX + i]);
	json_u64(j, "other", c[XR_TCP_OTHER_STATUS]);
	json_close(j, '}');
	tcp_answers_report(t, NULL, NULL, j, "response_us");
	if (t->first_byte.hist)
		replies_hist_json(j, "first_byte_us", &t->first_byte);
	json_u64(j, "bytes", t->req_len);
	tcp_pace_report(t, res, "request", t->pace.answered, NULL, j);
	json_close(j, '}');
}

static void tcp_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		       struct json *j)
{
	tcp_requests_report(&((struct gen_tcp *)st)->t, res, human, j);
}

static void tcp_free(void *st)
{
	tcp_sessions_free(&((struct gen_tcp *)st)->t);
}

const struct xr_proto proto_tcp = {
	.name = "tcp",
	.gen = true,
	.summary = "whole TCP client sessions (HTTP requests) without sockets, carried in XDP",
	.usage =
		"      --http 'METHOD /path'  an HTTP/1.1 request (Host: the --dst), or\n"
		"      --request FILE    the bytes of one request, sent as they are (at most 16 KiB).\n"
		"                        In either, {c} becomes the session's number and {k} the\n"
		"                        request's (from 0), 10 digits each, at most 4 of them:\n"
		"                        --http 'GET /item/{c}?r={k}' (not in a --body)\n"
		"      --body FILE       with --http: the request's body (Content-Length set)\n"
		"      --requests-per-session K  K requests one after the other on each session\n"
		"                        (keep-alive; default 1)\n"
		"      --close fin|rst   how a session ends after its last response (default fin)\n"
		"      --response http|N  where a response ends: HTTP/1.x status line and\n"
		"                        Content-Length or the server's FIN (default), or N bytes\n"
		"      --request-rate R  requests after each session's first at R per second in\n"
		"                        all (e.g. 20k; as wrk2 -R), not each as soon as the one\n"
		"                        before is answered: every one of --count sessions has\n"
		"                        its first answered, then request k of session i departs\n"
		"                        at ((k - 1) x count + i) / R s; one whose departure comes\n"
		"                        before the one before it was answered goes late, as that\n"
		"                        answer comes, timed from its departure. Under search,\n"
		"                        '--request-rate search' makes each trial's load these\n"
		"                        requests/s over --count sessions (1 + rate x time over\n"
		"                        them each), answered by the schedule's end and search's\n"
		"                        --settle\n"
		"  --count is sessions, --pps new sessions per second, --wait how long sessions\n"
		"  may go on after the last SYN (it ends as soon as all have ended); every session\n"
		"  asked is completed or failed with its reason (no SYN-ACK, refused, reset, table\n"
		"  full, response not readable, closed early, stalled, no answer to 6\n"
		"  retransmissions). On veth, the server's side needs an XDP program (xdpreplay\n"
		"  count) for our segments to reach it at once.\n",
	.opts = tcp_opts,
	.accepts = SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT | SO_SEED | SO_CONCURRENCY,
	.default_port = 80,
	.state_size = sizeof(struct gen_tcp),
	.parse_opt = tcp_opt,
	.check = tcp_check,
	.build = tcp_build,
	.report = tcp_report,
	.frames_are = "sessions",
	.headline = tcp_headline,
	.witness = "sessions.completed",
	/* what a user waits for: the response, not the handshake */
	.latency = "requests.response_us.p99",
	.load_unit = "sessions",
	.trial_paths = tcp_trial_paths,
	.verdict = tcp_verdict,
	.paced_opt = "request-rate",
	.paced_unit = "requests",
	.paced_trial = tcp_paced_trial,
	.free = tcp_free,
};
