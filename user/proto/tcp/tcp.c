// SPDX-License-Identifier: GPL-2.0
/*
 * gen tcp: whole TCP client sessions with no socket. The kernel engine sends
 * session c's SYN (the source pair c mod pairs, ISN a keyed function of c, as
 * gen syn); bpf/proto/tcp.bpf.h on the sender's interface carries the rest of
 * the conversation (requests, acknowledgements, the close) from 64 bytes per
 * session, and this file sets it up and accounts for every session asked:
 * completed, or failed with its reason.
 *
 * XDP answers only when the server sends something, so a segment of ours
 * that is lost (the server then has nothing to say) is sent again from here:
 * a thread scans the session table and rebuilds what is due, from the
 * session's state alone, through a packet socket on the interface.
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
#include "proto/syn/handshake.h"
#include "proto/tcp/session.h"
#include "proto/mqtt/stream.h"
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
	struct tcp *t = st;

	switch (id) {
	case O_HTTP: t->http = arg; break;
	case O_REQUEST: t->request_file = arg; break;
	case O_BODY: t->body_file = arg; break;
	case O_RPS:
		if (cli_count(so->cmd, "requests-per-session", arg, &t->requests))
			return XR_EXIT_USAGE;
		if (t->requests < 1 || t->requests > 65535)
			return cli_usage_error(
				so->cmd, "--requests-per-session must be between 1 and 65535");
		t->requests_set = true;
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
			t->rate_searched = true;
			break;
		}
		if (parse_number(arg, &t->request_rate) || !(t->request_rate > 0) ||
		    t->request_rate > 1e9)
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
	struct tcp *t = st;

	if (!t->http == !t->request_file)
		return cli_usage_error(so->cmd,
				       "say what to send: --http 'GET /path' or --request FILE");
	if (t->body_file && !t->http)
		return cli_usage_error(
			so->cmd, "--body goes with --http (a --request file is sent as it is)");
	if (!t->requests)
		t->requests = 1;
	if (t->rate_searched) {
		if (!so->search)
			return cli_usage_error(
				so->cmd,
				"--request-rate search is for search's trials (xdpreplay "
				"search ... -- gen tcp --request-rate search): give a rate");
		if (t->requests_set)
			return cli_usage_error(
				so->cmd,
				"--request-rate search: each trial's --requests-per-session "
				"is 1 + its rate x time over --count sessions: give none");
		return tcp_pace_check("--request-rate", so, true);
	}
	if (t->request_rate) {
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
	return tcp_none_completed_verdict(st);
}

/* search -- gen tcp --request-rate search: the paced requests, from their departures */
static void tcp_trial_paths(void *st, struct trial_paths *p)
{
	if (!((struct tcp *)st)->rate_searched)
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
	struct tcp *t = st;
	uint64_t paced;

	if (tcp_pace_trial_bursts("--request-rate", so, rate, trial_ns, 1, 65534, &paced))
		return XR_EXIT_USAGE;
	t->requests = 1 + paced;
	t->request_rate = rate;
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

void tcp_fields_write(const void *ctx, const struct xr_tcp_session *s, uint8_t *buf, uint32_t off,
		      uint32_t len)
{
	const struct xr_tcp_fields *f = ctx;

	for (int i = 0; i < XR_TCP_FIELDS && f->kind[i]; i++) {
		char digits[XR_TCP_DIGITS + 1];

		snprintf(digits, sizeof(digits), "%0*u", XR_TCP_DIGITS,
			 f->kind[i] == XR_TCP_FIELD_C ? s->c32 : (uint32_t)s->k);
		for (uint32_t j = 0; j < XR_TCP_DIGITS; j++)
			if (f->off[i] + j >= off && f->off[i] + j < off + len)
				buf[f->off[i] + j - off] = digits[j];
	}
}

/*
 * The request: a --request file as it is, or an HTTP/1.1 request line, Host
 * and the --body; {c} and {k} in the file or the request line become fields.
 */
static int tcp_make_request(struct tcp *t, const struct send_opts *so)
{
	char host[INET_ADDRSTRLEN + 8], method[16], path[2048];
	uint8_t *body = NULL;
	size_t blen = 0;
	int n, err;

	if (t->request_file) {
		err = read_whole("--request", t->request_file, XR_TCP_REQUEST_MAX, &t->req,
				 &t->req_len);
		if (!err && !t->req_len) {
			pr_warn("--request %s: empty: a session needs something to send\n",
				t->request_file);
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
	if (sscanf(t->http, "%15s %2047s%n", method, path, &n) != 2 || t->http[n] ||
	    path[0] != '/') {
		pr_warn("--http: 'METHOD /path' (e.g. 'GET /index.html'), not '%s'\n", t->http);
		return -EINVAL;
	}
	if (t->body_file) {
		err = read_whole("--body", t->body_file, XR_TCP_REQUEST_MAX, &body, &blen);
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
			t->body_file, n + blen, XR_TCP_REQUEST_MAX);
		free(body);
		return -EINVAL;
	}
	if (blen)
		memcpy(t->req + n, body, blen);
	t->req_len = n + blen;
	free(body);
	return 0;
}

/*
 * gen mqtt's replying subscribers (QoS 1, or responders): their replies
 * follow request 0 (bpf/shared/mqtt.h)
 */
static bool subscribers_reply(const struct tcp *t)
{
	return t->response == XR_TCP_RESP_MQTT && t->mqtt.subscriber &&
	       (t->mqtt.sub_qos || t->mqtt.responder);
}

/* gen mqtt's sessions that book stamps in mqtt_recv: subscribers, and callers (their answers) */
static bool books_stamps(const struct tcp *t)
{
	return t->response == XR_TCP_RESP_MQTT && (t->mqtt.subscriber || t->mqtt.caller);
}

/* The bytes of one of their replies */
static uint32_t tcp_reply_len(const struct tcp *t)
{
	return t->mqtt.responder ? t->mqtt.ans_len : 4;
}

static int tcp_before_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	struct tcp *t = ctx;

	skel->rodata->tcp_cfg = t->cfg;
	skel->rodata->mqtt_cfg = t->mqtt;
	return bpf_map__set_max_entries(skel->maps.tcp_sessions, t->table)	       ?:
		       bpf_map__set_max_entries(skel->maps.tcp_pump, XR_TCP_PUMP_RING) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_request, 2 + (t->cap ? t->cap->nkeys : 0)) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_flows, t->cap ? t->cap->nflows : 1) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_steps, t->cap ? t->cap->nsteps : 1) ?:
		       bpf_map__set_max_entries(skel->maps.tcp_pace, t->pace.ps ? t->pace.sessions : 1) ?:
		       bpf_map__set_max_entries(skel->maps.mqtt_recv, books_stamps(t) ? t->mqtt.subs * t->mqtt.pubs : 1) ?:
		       bpf_map__set_max_entries(skel->maps.mqtt_pubacks, subscribers_reply(t) && !t->mqtt.responder ? t->table : 1) ?:
		       bpf_map__set_max_entries(skel->maps.mqtt_answers,
						t->mqtt.responder ? t->table : 1);
}

static int tcp_after_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	struct tcp *t = ctx;
	uint8_t *v = calloc(1, XR_TCP_REQUEST_VALUE);
	int err = 0;

	if (!v)
		return -ENOMEM;
	/* [0] requests 1.., [1] request 0; replay --sessions: the capture's at [2 + key] */
	for (__u32 key = 0; key < 2 && !t->cap && !err; key++) {
		memcpy(v, key ? t->first : t->req, key ? t->first_len : t->req_len);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.tcp_request), &key, v, 0)) {
			err = -errno;
			pr_warn("cannot load the requests into their map: %s\n", strerror(errno));
		}
	}
	for (__u32 key = 0; t->cap && key < t->cap->nkeys && !err; key++) {
		__u32 at = 2 + key;

		memset(v, 0, XR_TCP_REQUEST_VALUE);
		memcpy(v, t->cap->req[key], t->cap->req_len[key]);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.tcp_request), &at, v, 0)) {
			err = -errno;
			pr_warn("cannot load the capture's requests into their map: %s\n",
				strerror(errno));
		}
	}
	free(v);
	if (t->cap && !err)
		err = tcp_flows_load(t->cap, skel);
	t->skel = skel;
	t->sessions = engine_map_mmap(skel->maps.tcp_sessions, &t->sessions_sz);
	t->rs.ts = engine_map_mmap(skel->maps.send_ts, &t->rs.ts_sz);
	if (subscribers_reply(t) && !t->mqtt.responder)
		t->pubacks = engine_map_mmap(skel->maps.mqtt_pubacks, &t->pubacks_sz);
	if (t->mqtt.responder)
		t->answers = engine_map_mmap(skel->maps.mqtt_answers, &t->answers_sz);
	if (!err && (!t->sessions || (subscribers_reply(t) && !t->pubacks && !t->answers)))
		err = -ENOMEM;
	return err;
}

size_t tcp_segment_headers(const struct tcp *t, uint32_t tkey, uint32_t seq, uint32_t ack,
			   uint8_t flags, uint32_t plen, uint8_t *f)
{
	uint8_t *ip = f + 14, *th = f + tcp_hdrs(t) - 20;
	uint32_t idx = tkey - 1, sum;

	memcpy(f, t->rs.eth, 14);
	if (t->rs.m.ipv6) {
		memset(ip, 0, 60);
		ip[0] = 0x60;
		put16(ip + 4, 20 + plen);
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, t->rs.m.src_hi6, 8);
		put64(ip + 16, t->rs.m.src_base6 + idx % t->rs.m.src_count);
		memcpy(ip + 24, t->rs.m.server_addr6, 16);
		sum = csum_add(ip + 8, 32, IPPROTO_TCP + 20 + plen);
		goto tcp;
	}
	memset(ip, 0, 40);
	ip[0] = 0x45;
	put16(ip + 2, 40 + plen);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	put32(ip + 12, t->rs.m.src_base + idx % t->rs.m.src_count);
	memcpy(ip + 16, &t->rs.m.server_addr, 4);
	put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
	sum = csum_add(ip + 12, 8, IPPROTO_TCP + 20 + plen);
tcp:
	put16(th, t->rs.m.sport_base + idx / t->rs.m.src_count);
	memcpy(th + 2, &t->rs.m.server_port, 2);
	put32(th + 4, seq);
	put32(th + 8, ack);
	th[12] = 5 << 4;
	th[13] = flags;
	put16(th + 14, 64240);
	put16(th + 16, csum_fold(csum_add(th, 20 + plen, sum)));
	return tcp_hdrs(t) + plen;
}

/* Our sequence number at offset off of request k of session s */
static uint32_t tcp_request_seq(const struct tcp *t, const struct xr_tcp_session *s, uint32_t off)
{
	uint32_t seq = s->isn + 1 + off;

	if (t->cap)
		return seq + s->step_off;
	if (subscribers_reply(t))
		seq += tcp_reply_len(t) * s->pa_sent;
	if (tcp_mqtt_publisher(t))
		seq += 2 * (uint32_t)s->pings;
	if (s->k)
		seq += t->first_len + (uint32_t)(s->k - 1) * t->req_len;
	return seq;
}

/* Request k of session s: its bytes (NULL: none), their number into *rlen */
static const uint8_t *tcp_request_bytes(const struct tcp *t, const struct xr_tcp_session *s,
					uint32_t *rlen)
{
	if (t->cap) {
		*rlen = s->step_len;
		return s->step_key < t->cap->nkeys && s->step_len <= t->cap->req_len[s->step_key] ?
			       t->cap->req[s->step_key] :
			       NULL;
	}
	*rlen = s->k ? t->req_len : t->first_len;
	return s->k ? t->req : t->first;
}

size_t tcp_request_segment(const struct tcp *t, const struct xr_tcp_session *s, uint32_t off,
			   uint32_t len, uint8_t *f)
{
	uint32_t rlen;
	const uint8_t *req = tcp_request_bytes(t, s, &rlen);
	uint8_t flags = 0x10; /* ACK */

	if (!req || !len || len > XR_TCP_PAYLOAD_MAX || off > rlen || len > rlen - off)
		return 0;
	if (off + len == rlen)
		flags |= 0x08; /* PSH */
	memcpy(f + tcp_hdrs(t), req + off, len);
	if (t->patch)
		t->patch(t->patch_ctx, s, f + tcp_hdrs(t), off, len);
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, off), s->rcv_nxt, flags, len,
				   f);
}

size_t tcp_ack_segment(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint32_t rlen;

	if (!tcp_request_bytes(t, s, &rlen))
		return 0;
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, rlen), s->rcv_nxt, 0x10, 0, f);
}

size_t tcp_ping_segment(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	if (!s->pings)
		return 0;
	f[tcp_hdrs(t)] = 0xc0; /* PINGREQ */
	f[tcp_hdrs(t) + 1] = 0;
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, 0) - 2, s->rcv_nxt,
				   0x10 | 0x08, 2, f);
}

/*
 * A replying subscriber's PUBACKs or answers from the first the broker did
 * not acknowledge (as many as a segment, the window and the ring take), from
 * their ids in mqtt_pubacks or stamps in mqtt_answers: the segment into f,
 * its length, or 0.
 */
static size_t tcp_rebuild_replies(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint32_t slot = s->tkey & (t->table - 1), len = tcp_reply_len(t),
		 n = s->pa_sent - s->pa_acked,
		 mss = s->mss < XR_TCP_PAYLOAD_MAX ? s->mss : XR_TCP_PAYLOAD_MAX;

	if (n > XR_MQTT_REPLY_RING || !len)
		return 0;
	if (n > mss / len)
		n = mss / len;
	if (n > s->wnd / len)
		n = s->wnd / len;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t at = (s->pa_acked + j) % XR_MQTT_REPLY_RING;

		if (t->answers)
			mqtt_reply_write(&t->mqtt, t->answers[slot].stamp[at], 0,
					 f + tcp_hdrs(t) + len * j);
		else
			mqtt_reply_write(&t->mqtt, NULL, t->pubacks[slot].pid[at],
					 f + tcp_hdrs(t) + len * j);
	}
	if (!n)
		return 0;
	return tcp_segment_headers(t, s->tkey, s->isn + 1 + t->first_len + len * s->pa_acked,
				   s->rcv_nxt, 0x10 | 0x08, len * n, f);
}

/*
 * Session s's segment that is due again into f: request k's bytes from
 * acked (as much as MSS and window take), a QoS-1 subscriber's PUBACKs, or
 * our goodbye and FIN. Its length, or 0.
 */
static size_t tcp_rebuild(const struct tcp *t, const struct xr_tcp_session *s, uint8_t *f)
{
	uint32_t plen, rlen;

	tcp_request_bytes(t, s, &rlen);
	if (s->state == XR_TCP_RESPONSE)
		return subscribers_reply(t) ? tcp_rebuild_replies(t, s, f) : 0;

	if (s->state == XR_TCP_REQUEST) {
		plen = rlen - s->acked;
		if (plen > s->mss)
			plen = s->mss;
		if (plen > s->wnd)
			plen = s->wnd;
		if (plen > XR_TCP_PAYLOAD_MAX)
			plen = XR_TCP_PAYLOAD_MAX;
		return tcp_request_segment(t, s, s->acked, plen, f);
	}
	if (s->state != XR_TCP_FIN_SENT)
		return 0;
	memcpy(f + tcp_hdrs(t), t->bye, t->bye_len);
	/* FIN, with PSH when the goodbye rides on it */
	return tcp_segment_headers(t, s->tkey, tcp_request_seq(t, s, 0), s->rcv_nxt,
				   0x10 | 0x01 | (t->bye_len ? 0x08 : 0), t->bye_len, f);
}

/* One pass over the table: what waited longer than its timeout goes again. */
static void tcp_resend_pass(struct tcp *t)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = t->rs.ifindex,
				  .sll_halen = 6 };
	uint8_t f[TCP_FRAME_MAX];
	uint64_t now = now_ns();

	memcpy(to.sll_addr, t->rs.eth, 6);
	for (uint32_t i = 0; i < t->table && !atomic_load(&t->rs.stop); i++) {
		struct xr_tcp_session *live = &t->sessions[i], s;
		size_t len;

		if (live->state != XR_TCP_REQUEST && live->state != XR_TCP_FIN_SENT &&
		    !(live->state == XR_TCP_RESPONSE && subscribers_reply(t)))
			continue;
		/* a copy: XDP may change it meanwhile; at worst a segment goes once too often */
		memcpy(&s, live, sizeof(s));
		if ((s.state == XR_TCP_REQUEST && !s.in_flight) ||
		    (s.state == XR_TCP_RESPONSE && s.pa_sent == s.pa_acked) ||
		    (s.state == XR_TCP_FIN_SENT && (s.flags & XR_TCPF_FIN_ACKED)) ||
		    s.retries > XR_TCP_MAX_RETRIES || !s.t_sent || s.t_sent > now ||
		    now - s.t_sent < (XR_TCP_RTO_NS << s.retries))
			continue;
		if (s.retries == XR_TCP_MAX_RETRIES) {
			/* the last retransmission's timeout passed too: given up (a closed loop's to know) */
			live->retries = s.retries + 1;
			atomic_fetch_add(&t->rs.sessions_given_up, 1);
			continue;
		}
		len = tcp_rebuild(t, &s, f);
		if (!len)
			continue;
		live->retries = s.retries + 1;
		live->t_sent = now;
		if (sendto(t->rs.fd, f, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
			atomic_fetch_add(&t->rs.resent, 1);
		else
			atomic_fetch_add(&t->rs.failed, 1);
	}
}

/* Sessions sent so far: one past the highest sequence number any thread has used. */
static uint64_t tcp_syns_sent(const struct tcp *t)
{
	uint64_t hi = t->rs.o->first_n;

	for (unsigned int i = 0; i < t->rs.o->threads; i++) {
		uint64_t k = t->rs.slots[t->rs.o->cpus[i]].k_next;

		if (k && engine_seq(t->rs.o, i, k - 1) + 1 > hi)
			hi = engine_seq(t->rs.o, i, k - 1) + 1;
	}
	return hi;
}

/* Session c's SYN again: the template with c's source, port and ISN, checksums anew. */
static size_t tcp_rebuild_syn(const struct tcp *t, uint64_t c, uint8_t *f)
{
	uint32_t pairs = t->rs.m.src_count, l3 = t->rs.m.ipv6 ? 40 : 20, sum;
	uint8_t *ip = f + 14, *th = ip + l3;
	size_t l4 = t->rs.syn_len - 14 - l3;

	memcpy(f, t->rs.syn, t->rs.syn_len);
	put16(th, t->rs.m.sport_base + (c / pairs) % t->rs.m.sport_count);
	put32(th + 4, t->cfg.isn_base + (uint32_t)c * t->rs.isn_step);
	put16(th + 16, 0);
	if (t->rs.m.ipv6) {
		put64(ip + 16, t->rs.m.src_base6 + c % pairs);
		sum = csum_add(ip + 8, 32, IPPROTO_TCP + l4);
	} else {
		put32(ip + 12, t->rs.m.src_base + c % pairs);
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
		sum = csum_add(ip + 12, 8, IPPROTO_TCP + l4);
	}
	put16(th + 16, csum_fold(csum_add(th, l4, sum)));
	return t->rs.syn_len;
}

/* The SYNs of the last XR_TS_RING sessions that got no answer in time go again. */
static void tcp_resend_syns(struct tcp *t, const struct sockaddr_ll *to)
{
	uint64_t hi = tcp_syns_sent(t), now = now_ns();
	uint8_t f[sizeof(t->rs.syn)];

	if (!t->rs.ts)
		return;
	if (hi > XR_TS_RING && t->rs.syn_lo < hi - XR_TS_RING)
		t->rs.syn_lo = hi - XR_TS_RING;
	for (uint64_t c = t->rs.syn_lo; c < hi && !atomic_load(&t->rs.stop); c++) {
		struct xr_send_ts *e = &t->rs.ts[c & (XR_TS_RING - 1)];
		uint64_t ts = e->ts_ns;

		/* answered, given up, or another's: the oldest still waiting moves on */
		if (e->n32 != (uint32_t)c || (e->answered & XR_ANSWERED_FIRST) ||
		    e->tag > XR_TCP_SYN_RETRIES) {
			if (c == t->rs.syn_lo)
				t->rs.syn_lo++;
			continue;
		}
		/*
		 * tag counts the SYN's timeouts (gen tcp's frames have no tag of
		 * their own): again at 1 s and 3 s, given up at 7 s, as Linux does
		 */
		if (!ts || ts > now ||
		    now - ts < (XR_TCP_SYN_RTO_NS << (e->tag + 1)) - XR_TCP_SYN_RTO_NS)
			continue;
		if (++e->tag > XR_TCP_SYN_RETRIES) {
			atomic_fetch_add(&t->rs.syns_given_up, 1);
			continue;
		}
		if (sendto(t->rs.fd, f, tcp_rebuild_syn(t, c, f), 0, (const struct sockaddr *)to,
			   sizeof(*to)) > 0)
			atomic_fetch_add(&t->rs.syns_resent, 1);
		else
			atomic_fetch_add(&t->rs.failed, 1);
	}
}

/*
 * The other end of a run (send/peer.c) is ready once each of its sessions
 * subscribed, or ended (refused, reset, given up): the run may start.
 */
static void tcp_ready_check(struct tcp *t)
{
	struct xr_replies_stats r;

	if (!t->rs.ready_fd || engine_replies_sum(bpf_map__fd(t->skel->maps.replies_stats), &r) ||
	    r.ctr[XR_MQTT_SUBACKED] + tcp_ended(&r) + atomic_load(&t->rs.syns_given_up) <
		    t->rs.o->count)
		return;
	if (write(t->rs.ready_fd, "", 1) != 1)
		pr_debug("the run that waits for this one is gone: %s\n", strerror(errno));
	close(t->rs.ready_fd);
	t->rs.ready_fd = 0;
}

static void *tcp_resend_main(void *arg)
{
	struct tcp *t = arg;
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = t->rs.ifindex,
				  .sll_halen = 6 };

	memcpy(to.sll_addr, t->rs.eth, 6);
	while (!atomic_load(&t->rs.stop)) {
		tcp_resend_syns(t, &to);
		tcp_resend_pass(t);
		tcp_ready_check(t);
		/* a pass reads every slot once: RTO / 2 apart is soon enough, and cheap */
		usleep(XR_TCP_RTO_NS / 2000 / 2);
	}
	return NULL;
}

/* The threads that send (pacer, pump, retransmissions) end with the run's wait. */
static void tcp_threads_stop(struct tcp *t)
{
	tcp_pace_stop(t);
	tcp_pump_stop(t);
	if (t->rs.running) {
		atomic_store(&t->rs.stop, true);
		pthread_join(t->rs.tid, NULL);
		t->rs.running = false;
	}
}

/*
 * Sessions still open when the run ended (a paced search trial's publishers
 * whose messages the broker had not answered, responses that never ended),
 * each reset at our next sequence number, so that the server lets go of them
 * now and the next run (a search's next trial) does not meet a server still
 * busy with this one's. XDP is detached and the threads stopped, so the
 * table holds still. When a segment of ours never reached the server (lost,
 * or left in the pump's ring), the RST is past its rcv_nxt: Linux answers it
 * with a challenge ACK (RFC 5961), and that session ends at the server's own
 * timeout, as they all did before.
 */
static void tcp_reset_open(struct tcp *t)
{
	struct tcp_batch b;

	if (t->rs.fd < 0 || !t->sessions || tcp_batch_init(&b, t))
		return;
	for (uint32_t i = 0; i < t->table; i++) {
		struct xr_tcp_session s = t->sessions[i];
		uint32_t off = 0, rlen;

		if (s.state != XR_TCP_REQUEST && s.state != XR_TCP_RESPONSE &&
		    s.state != XR_TCP_PACED && s.state != XR_TCP_FIN_SENT)
			continue;
		tcp_request_bytes(t, &s, &rlen);
		if (s.state == XR_TCP_REQUEST)
			off = s.acked + s.in_flight;
		else if (s.state == XR_TCP_FIN_SENT)
			off = t->bye_len + 1;
		else if (s.state == XR_TCP_RESPONSE)
			off = rlen;
		/* a replying subscriber's replies not sent yet (its in_flight) are not on the wire */
		if (s.state == XR_TCP_RESPONSE && subscribers_reply(t))
			s.pa_sent -= s.in_flight;
		tcp_batch_take(&b, t,
			       tcp_segment_headers(t, s.tkey, tcp_request_seq(t, &s, off),
						   s.rcv_nxt, 0x10 | 0x04 /* ACK, RST */, 0,
						   tcp_batch_slot(&b)));
	}
	tcp_batch_flush(&b, t);
	t->stalled.reset_at_end = b.sent;
	t->stalled.reset_send_errors = b.send_errors;
	tcp_batch_free(&b);
}

/* The retransmissions end with the run's wait, before the table is read. */
static void tcp_resend_stop(struct tcp *t)
{
	tcp_threads_stop(t);
	if (t->rs.fd >= 0)
		close(t->rs.fd);
	t->rs.fd = -1;
}

static int tcp_start(void *ctx, const struct xr_gen_slot *slots, const struct engine_opts *o)
{
	struct tcp *t = ctx;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = o->ifc->ifindex };
	int err;

	t->rs.m = o->rpl;
	t->rs.ifindex = o->ifc->ifindex;
	t->rs.slots = slots;
	t->rs.o = o;
	t->rs.syn_lo = o->first_n;
	/* protocol 0: it only sends, and receives nothing */
	t->rs.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (t->rs.fd < 0 || bind(t->rs.fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		pr_warn("cannot open a packet socket on %s for retransmissions: %s\n", o->ifc->name,
			strerror(errno));
		if (t->rs.fd >= 0)
			close(t->rs.fd);
		t->rs.fd = -1;
		return err;
	}
	atomic_store(&t->rs.stop, false);
	err = -pthread_create(&t->rs.tid, NULL, tcp_resend_main, t);
	if (err) {
		close(t->rs.fd);
		t->rs.fd = -1;
		return err;
	}
	t->rs.running = true;
	err = tcp_pump_start(t, t->skel) ?: tcp_pace_start(t, t->skel);
	if (err)
		tcp_resend_stop(t);
	return err;
}

uint64_t tcp_ended(const struct xr_replies_stats *r)
{
	return r->ctr[XR_TCP_REFUSED] + r->ctr[XR_TCP_COMPLETED] + r->ctr[XR_TCP_RESET] +
	       r->ctr[XR_TCP_TABLE_FULL] + r->ctr[XR_TCP_MALFORMED] + r->ctr[XR_TCP_CLOSED_EARLY] +
	       r->ctr[XR_MQTT_REFUSED] + r->ctr[XR_MQTT_PROTOCOL] + r->ctr[XR_MQTT_SUB_REFUSED];
}

/* engine_proto.ended: what XDP ended, and what the retransmission thread gave up */
static uint64_t tcp_ended_now(void *ctx)
{
	struct tcp *t = ctx;
	struct xr_replies_stats r;

	if (engine_replies_sum(bpf_map__fd(t->skel->maps.replies_stats), &r))
		return 0;
	return tcp_ended(&r) + atomic_load(&t->rs.syns_given_up) +
	       atomic_load(&t->rs.sessions_given_up);
}

static bool tcp_settled(void *ctx, uint64_t sent)
{
	struct xr_replies_stats r;

	return !engine_replies_sum(bpf_map__fd(((struct tcp *)ctx)->skel->maps.replies_stats),
				   &r) &&
	       tcp_ended(&r) >= sent;
}

/* --listen: the sessions so far; gen mqtt's messages taken, or its subscribers' deliveries */
static void tcp_live_json(void *ctx, const struct xr_replies_stats *r, struct json *j)
{
	const struct tcp *t = ctx;

	json_open(j, "sessions", '{');
	json_u64(j, "completed", r->ctr[XR_TCP_COMPLETED]);
	json_u64(j, "ended", tcp_ended(r));
	json_u64(j, "responses", r->ctr[XR_TCP_RESPONSES]);
	json_close(j, '}');
	if (t->mqtt.subscriber) {
		json_open(j, "deliveries", '{');
		json_u64(j, "subacked", r->ctr[XR_MQTT_SUBACKED]);
		json_u64(j, "expected", (uint64_t)t->mqtt.subs * t->mqtt.sub_expect);
		json_u64(j, "delivered", r->ctr[XR_MQTT_DELIVERED]);
		json_close(j, '}');
	} else if (t->response == XR_TCP_RESP_MQTT) {
		json_open(j, "messages", '{');
		json_u64(j, "acked", r->ctr[XR_MQTT_ACKED]);
		json_u64(j, "refused", r->ctr[XR_MQTT_NACKED]);
		json_close(j, '}');
	}
}

static void tcp_live_metrics(void *ctx, const struct xr_replies_stats *r, struct prom *p)
{
	const struct tcp *t = ctx;

	prom_family(p, "xdpreplay_sessions_completed", PROM_COUNTER,
		    "Sessions that completed every response.");
	prom_u64(p, r->ctr[XR_TCP_COMPLETED], NULL);
	prom_family(p, "xdpreplay_sessions_ended", PROM_COUNTER,
		    "Sessions that ended, completed or failed.");
	prom_u64(p, tcp_ended(r), NULL);
	if (t->mqtt.subscriber) {
		prom_family(p, "xdpreplay_mqtt_delivered", PROM_COUNTER,
			    "PUBLISH packets delivered to the subscribers.");
		prom_u64(p, r->ctr[XR_MQTT_DELIVERED], NULL);
	} else if (t->response == XR_TCP_RESP_MQTT) {
		prom_family(p, "xdpreplay_mqtt_acked", PROM_COUNTER, "Messages the broker took.");
		prom_u64(p, r->ctr[XR_MQTT_ACKED], NULL);
	}
}

static void tcp_finish(void *ctx, struct gen_bpf *skel)
{
	struct tcp *t = ctx;
	struct veth_peer vp;

	memset(&t->stalled, 0, sizeof(t->stalled));
	if (t->veth_peer_xdp && !iface_veth_peer(t->rs.ifindex, &vp) && !vp.xdp)
		pr_warn("the veth peer %s lost its XDP program during the run: what this run sent "
			"by XDP_TX after that waited there for its next other frame\n",
			t->veth_peer);
	tcp_threads_stop(t);
	tcp_reset_open(t);
	tcp_resend_stop(t);
	for (uint32_t i = 0; t->sessions && i < t->table; i++) {
		const struct xr_tcp_session *s = &t->sessions[i];

		/* requests after the first answered: the paced ones (each session its own slot) */
		if (t->pace.ps && s->state != XR_TCP_FREE && s->k > 1)
			t->pace.answered += s->k - 1;
		/* a request after the first with bytes on the wire, whatever became of its session */
		t->stalled.request_partial += s->state == XR_TCP_REQUEST && s->k >= 1 &&
					      (s->acked || s->in_flight);
		if (s->state >= XR_TCP_REQUEST && s->state <= XR_TCP_FIN_SENT &&
		    s->retries >= XR_TCP_MAX_RETRIES)
			t->stalled.timeout++;
		else if (s->state == XR_TCP_REQUEST || s->state == XR_TCP_PACED)
			t->stalled.request++;
		else if (s->state == XR_TCP_RESPONSE)
			t->stalled.response++;
		else if (s->state == XR_TCP_FIN_SENT)
			t->stalled.close++;
	}
	engine_hist_read(bpf_map__fd(skel->maps.tcp_resp_hist), &t->resp);
	engine_hist_read(bpf_map__fd(skel->maps.tcp_first_hist), &t->first_byte);
	t->last_answer_ns = skel->bss->tcp_last_answer_ns;
	if (t->response == XR_TCP_RESP_MQTT)
		engine_percpu_sum(bpf_map__fd(skel->maps.mqtt_reasons), XR_MQTT_WHY_CELLS, t->why);
	if (books_stamps(t)) {
		size_t sz;
		struct xr_mqtt_recv *m = engine_map_mmap(skel->maps.mqtt_recv, &sz);

		engine_hist_read(bpf_map__fd(skel->maps.mqtt_deliver_hist), &t->deliver);
		t->nrecv = (uint64_t)t->mqtt.subs * t->mqtt.pubs;
		t->recv = m ? malloc(t->nrecv * sizeof(*t->recv)) : NULL;
		if (t->recv)
			memcpy(t->recv, m, t->nrecv * sizeof(*t->recv));
		else
			t->nrecv = 0;
		if (m)
			munmap(m, sz);
	}
}

static void tcp_close(void *ctx)
{
	struct tcp *t = ctx;

	tcp_resend_stop(t);
	if (t->sessions)
		munmap(t->sessions, t->sessions_sz);
	if (t->rs.ts)
		munmap(t->rs.ts, t->rs.ts_sz);
	if (t->pubacks)
		munmap(t->pubacks, t->pubacks_sz);
	t->pubacks = NULL;
	if (t->answers)
		munmap(t->answers, t->answers_sz);
	t->answers = NULL;
	t->rs.ts = NULL;
	t->sessions = NULL;
	t->skel = NULL;
}

static uint32_t next_pow2(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < XR_TCP_TABLE_MAX)
		p <<= 1;
	return p;
}

int tcp_sessions_build(struct tcp *t, const struct send_opts *so, const struct iface *ifc,
		       struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct template_addr ta;
	struct veth_peer vp;
	struct syn_isn isn;
	double planned;
	int err;

	if (!t->first) {
		t->first = t->req;
		t->first_len = t->req_len;
	}
	err = syn_template(so, ifc, fs, plan, &ta, &isn, "sessions", &planned, 0x02 /* SYN */);
	if (err)
		return err;
	memcpy(t->rs.eth, fs->bytes + fs->frames[0].off, 14);
	t->rs.syn_len = fs->frames[0].len < sizeof(t->rs.syn) ? fs->frames[0].len :
								sizeof(t->rs.syn);
	memcpy(t->rs.syn, fs->bytes + fs->frames[0].off, t->rs.syn_len);
	t->rs.isn_step = isn.step;
	t->rs.fd = -1;
	t->rs.ready_fd = so->ready_fd;
	t->concurrency = so->concurrency;
	t->veth = !strcmp(ifc->driver, "veth");
	/*
	 * measured on 6.18: a veth hands the frames its end sends by XDP_TX
	 * (every ACK and request after the SYN) to the peer at once only when
	 * the peer has an XDP program (veth_xdp_flush); with GRO alone they wait
	 * for its next ordinary frame, a retransmission 200 ms on, and a server
	 * that holds its answer for our ACK (Nagle) can wait forever
	 */
	if (t->veth && !iface_veth_peer(ifc->ifindex, &vp)) {
		t->veth_peer_xdp = vp.xdp;
		memcpy(t->veth_peer, vp.name, sizeof(t->veth_peer));
		if (!vp.xdp)
			pr_warn("%s's veth peer %s has no XDP program: the ACKs and requests this run "
				"sends by XDP_TX wait there for its next other frame; attach one to it "
				"(xdpreplay count -i %s --any)\n",
				ifc->name, vp.name, vp.name);
	}
	if (!planned && t->cap && (so->pace == XR_PACE_NONE || so->pace == XR_PACE_PCAP) &&
	    !so->duration_ns)
		planned = t->cap->nflows; /* replay --sessions: its flows once */
	if (!planned)
		planned = XR_TCP_TABLE_MAX;
	/*
	 * A closed loop's open sessions are a window of consecutive numbers,
	 * so of consecutive slots: room for eight such windows keeps a session
	 * that waits for a retransmission out of the way of the next ones, and
	 * the retransmission thread's pass over the table short (a million
	 * slots, 80 MiB then, read 20 times a second, took more CPU than the sessions)
	 */
	if (so->concurrency && planned > 8.0 * so->concurrency)
		planned = 8.0 * so->concurrency;
	if (ta.tuples && planned > ta.tuples)
		planned = ta.tuples;
	/*
	 * session c's slot is its (source, port) pair's number + 1; a
	 * responder's slots hold 32 KiB of stamps each: as many as it has
	 * sessions, not the usual 1,024 at least
	 */
	if (t->mqtt.responder)
		t->table = next_pow2(planned + 1);
	else
		t->table = next_pow2(planned < 1024 ? 1024 : planned);
	t->cfg = (struct xr_tcp_cfg){ .isn_base = isn.base,
				      .isn_inv = isn.inv,
				      .req_len = t->req_len,
				      .first_len = t->first_len,
				      .requests = t->requests,
				      .table_mask = t->table - 1,
				      .resp_size = t->resp_size,
				      .response = t->response,
				      .close = t->close,
				      .bye_len = t->bye_len,
				      .fields = t->fields,
				      .flows = t->cap ? t->cap->nflows : 0 };
	if (t->pace.ps) {
		/* the protocol asked for paced requests: its sessions, from the run's first */
		t->pace.sessions = so->count;
		t->pace.base = so->first_n;
		t->pace.departures = so->count * (t->requests - 1);
		t->cfg.pace_ps = t->pace.ps;
		t->cfg.pace_sessions = so->count;
		t->cfg.pace_base = so->first_n;
		/*
		 * --wait counts from the schedule's end (tcp_pace_wait_until),
		 * not from the last SYN; until the schedule starts, from the
		 * last SYN and the schedule's length
		 */
		t->pace.wait_ns = o->reply_wait_ns;
		o->reply_wait_ns += tcp_pace_span(&t->pace);
	}
	memcpy(t->cfg.bye, t->bye, sizeof(t->cfg.bye));
	if (t->fields.kind[0] && !t->patch) {
		t->patch = tcp_fields_write;
		t->patch_ctx = &t->cfg.fields;
	}
	t->ops = (struct engine_proto){ .ctx = t,
					.before_load = tcp_before_load,
					.after_load = tcp_after_load,
					.start = tcp_start,
					.settled = tcp_settled,
					.wait_until = tcp_pace_wait_until,
					.finish = tcp_finish,
					.close = tcp_close,
					.ended = tcp_ended_now,
					.live_json = tcp_live_json,
					.live_metrics = tcp_live_metrics };
	o->proto = &t->ops;
	o->reply_kind = XR_REPLY_TCP;
	o->rpl = ta.match;
	return 0;
}

static int tcp_build(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct tcp *t = st;
	int err = tcp_make_request(t, so);

	/* --request-rate: a request departs every 1 / rate seconds */
	if (t->request_rate)
		t->pace.ps = 1e12 / t->request_rate;
	return err ? err : tcp_sessions_build(t, so, ifc, fs, plan, o);
}

void tcp_books(const struct tcp *t, const struct engine_result *res, struct tcp_books *b)
{
	const __u64 *c = res->replies.st.ctr;
	uint64_t answered = res->replies.st.answered, ended;

	*b = (struct tcp_books){ .asked = res->asked,
				 .completed = c[XR_TCP_COMPLETED],
				 .not_sent = engine_unsent_total(&res->unsent),
				 .refused = c[XR_TCP_REFUSED],
				 .reset = c[XR_TCP_RESET],
				 .table_full = c[XR_TCP_TABLE_FULL],
				 .malformed = c[XR_TCP_MALFORMED],
				 .closed_early = c[XR_TCP_CLOSED_EARLY],
				 .app_refused = c[XR_MQTT_REFUSED] + c[XR_MQTT_SUB_REFUSED],
				 .app_protocol = c[XR_MQTT_PROTOCOL],
				 .stalled = t->stalled };
	b->no_answer = res->sent > answered + b->refused ? res->sent - answered - b->refused : 0;
	/*
	 * A SYN the driver refused has its send time recorded all the same,
	 * so the retransmission thread sends it again after 1 s: answered
	 * then, its session is not "not sent" (more handshakes answered than
	 * SYNs the driver took says how many)
	 */
	if (answered + b->refused > res->sent) {
		uint64_t again = answered + b->refused - res->sent,
			 refused = res->unsent.ring_full + res->unsent.redirect;

		b->syn_recovered = again < refused ? again : refused;
		b->not_sent -= b->syn_recovered;
	}
	b->failed = b->not_sent + b->no_answer + b->refused + b->reset + b->table_full +
		    b->malformed + b->closed_early + b->app_refused + b->app_protocol +
		    b->stalled.request + b->stalled.response + b->stalled.close +
		    b->stalled.timeout;
	ended = b->completed + b->failed;
	b->unaccounted = b->asked > ended ? b->asked - ended : ended - b->asked;
}

#define TCP_REASONS 13

struct tcp_reason {
	const char *what;
	uint64_t v;
};

/* Why sessions failed, by reason, in the report's order */
static void tcp_reasons(const struct tcp_books *b, struct tcp_reason why[TCP_REASONS])
{
	const struct tcp_reason now[TCP_REASONS] = {
		{ "not sent", b->not_sent },
		{ "no SYN-ACK", b->no_answer },
		{ "refused (RST to the SYN)", b->refused },
		{ "reset by the server", b->reset },
		{ "session table full", b->table_full },
		{ "response not readable", b->malformed },
		{ "closed by the server early", b->closed_early },
		{ "refused by the server after the handshake", b->app_refused },
		{ "a packet the session did not ask for", b->app_protocol },
		{ "request never acknowledged", b->stalled.request },
		{ "response never complete", b->stalled.response },
		{ "close never acknowledged", b->stalled.close },
		{ "no answer to 6 retransmissions", b->stalled.timeout },
	};

	memcpy(why, now, sizeof(now));
}

int tcp_none_completed_verdict(const struct tcp *t)
{
	if (!t->none_completed)
		return 0;
	pr_warn("no session of %llu completed: %llu failed as %s (the most; the report has the "
		"rest)\n",
		(unsigned long long)t->none_asked, (unsigned long long)t->none_completed_n,
		t->none_completed);
	return XR_EXIT_FAIL;
}

void tcp_sessions_report(struct tcp *t, const struct engine_result *res, FILE *human,
			 struct json *j)
{
	const __u64 *c = res->replies.st.ctr;
	struct tcp_books b;
	char x[16];

	if (!res->replies.hist)
		return;
	tcp_books(t, res, &b);
	t->none_completed = NULL;
	t->none_completed_n = 0;
	if (b.asked && !b.completed && b.failed) {
		struct tcp_reason why[TCP_REASONS];

		tcp_reasons(&b, why);
		for (size_t i = 0; i < TCP_REASONS; i++)
			if (why[i].v > t->none_completed_n) {
				t->none_completed = why[i].what;
				t->none_completed_n = why[i].v;
			}
		t->none_asked = b.asked;
	}
	if (human) {
		fprintf(human, "  sessions: %llu asked, %llu completed (%s/s), %llu failed",
			(unsigned long long)b.asked, (unsigned long long)b.completed,
			fmt_si(tcp_answers_per_s(t, res, b.completed), x, sizeof(x)),
			(unsigned long long)b.failed);
		if (b.unaccounted)
			fprintf(human, ", %llu UNACCOUNTED", (unsigned long long)b.unaccounted);
		fputc('\n', human);
		if (b.failed) {
			struct tcp_reason why[TCP_REASONS];
			const char *sep = "";

			tcp_reasons(&b, why);
			fprintf(human, "  failed:");
			for (size_t i = 0; i < TCP_REASONS; i++)
				if (why[i].v) {
					fprintf(human, "%s %s %llu", sep, why[i].what,
						(unsigned long long)why[i].v);
					sep = ",";
				}
			fputc('\n', human);
		}
		if (b.stalled.reset_at_end || b.stalled.reset_send_errors)
			fprintf(human,
				"  still open when the run ended: %llu reset (RST), so that the server "
				"lets go of them now%s\n",
				(unsigned long long)b.stalled.reset_at_end,
				b.stalled.reset_send_errors ? "; some RSTs refused by the socket" :
							      "");
		fprintf(human,
			"  segments: %llu sent, %llu again (%llu after a timeout, %llu on duplicate "
			"ACKs), %llu out of order "
			"answered, %llu stray; %llu SYNs again, %llu SYN-ACKs repeated; session table %u "
			"slots (%.1f MiB)\n",
			(unsigned long long)(c[XR_TCP_SEGMENTS] + t->pace.out.sent),
			(unsigned long long)(c[XR_TCP_RESENT] + t->rs.resent),
			(unsigned long long)t->rs.resent, (unsigned long long)c[XR_TCP_FAST_RESENT],
			(unsigned long long)c[XR_TCP_OUT_OF_ORDER],
			(unsigned long long)c[XR_TCP_STRAY], (unsigned long long)t->rs.syns_resent,
			(unsigned long long)res->replies.st.repeated, t->table,
			t->table * sizeof(struct xr_tcp_session) / 1048576.0);
		if (c[XR_TCP_PUMPED])
			fprintf(human,
				"  segments larger than XDP_TX builds in place: %llu asked of the pump, "
				"%llu sent, %llu no longer wanted, %llu left when the run ended, %llu not "
				"sent (%llu no room in its ring, %llu refused by the socket: sent again "
				"after a timeout)\n",
				(unsigned long long)c[XR_TCP_PUMPED],
				(unsigned long long)t->pump.out.sent,
				(unsigned long long)t->pump.stale,
				(unsigned long long)t->pump.left_at_end,
				(unsigned long long)(c[XR_TCP_PUMP_FULL] + t->pump.out.send_errors),
				(unsigned long long)c[XR_TCP_PUMP_FULL],
				(unsigned long long)t->pump.out.send_errors);
		if (c[XR_TCP_ACKS_DELAYED] || c[XR_TCP_ACKS_RING_FULL])
			fprintf(human,
				"  delayed ACKs (a publisher's, as its PUBACKs come): %llu asked of "
				"the pump, %llu sent, %llu carried by a segment of ours meanwhile, "
				"%llu left when the run ended, %llu refused by the socket; %llu "
				"sent at once, its ring full\n",
				(unsigned long long)c[XR_TCP_ACKS_DELAYED],
				(unsigned long long)t->pump.acks.sent,
				(unsigned long long)t->pump.acks_not_needed,
				(unsigned long long)t->pump.acks_left_at_end,
				(unsigned long long)t->pump.acks.send_errors,
				(unsigned long long)c[XR_TCP_ACKS_RING_FULL]);
		/*
		 * measured on 6.18: a veth hands the frames its end sends by XDP_TX to the
		 * peer at once only when the peer has an XDP program (veth_xdp_flush); with
		 * GRO alone they wait for the peer's next ordinary packet, here the
		 * retransmission 200 ms later, and every segment looks lost once
		 */
		if (t->veth && t->rs.resent * 4 > c[XR_TCP_SEGMENTS] && c[XR_TCP_SEGMENTS] >= 8)
			fprintf(human,
				"  most segments went again after a timeout: on veth, the peer needs an "
				"XDP program (xdpreplay count on it) for the XDP_TX frames to arrive at "
				"once; GRO is not enough\n");
		if (b.syn_recovered)
			fprintf(human,
				"  %llu SYNs the driver refused went again after 1 s and were answered "
				"(not counted as not sent)\n",
				(unsigned long long)b.syn_recovered);
		if (t->concurrency)
			fprintf(human,
				"  closed loop: at most %llu sessions open, %llu at the most seen, %llu "
				"waits for one to end\n",
				(unsigned long long)t->concurrency,
				(unsigned long long)res->open_peak,
				(unsigned long long)res->gate_waits);
		if (!res->replies.st.answered && !b.refused)
			replies_rtt_line(res, human);
		else
			replies_hist_line(human, "connect (SYN to SYN-ACK)", &res->replies);
	}
	if (!j)
		return;
	json_open(j, "sessions", '{');
	json_u64(j, "asked", b.asked);
	json_u64(j, "completed", b.completed);
	json_u64(j, "failed", b.failed);
	json_u64(j, "unaccounted", b.unaccounted);
	json_double(j, "completed_per_s", tcp_answers_per_s(t, res, b.completed));
	json_open(j, "failed_by", '{');
	json_u64(j, "not_sent", b.not_sent);
	json_u64(j, "no_syn_ack", b.no_answer);
	json_u64(j, "refused", b.refused);
	json_u64(j, "reset", b.reset);
	json_u64(j, "table_full", b.table_full);
	json_u64(j, "malformed", b.malformed);
	json_u64(j, "closed_early", b.closed_early);
	json_u64(j, "refused_after_handshake", b.app_refused);
	json_u64(j, "unexpected_packet", b.app_protocol);
	json_u64(j, "stalled_request", b.stalled.request);
	json_u64(j, "stalled_response", b.stalled.response);
	json_u64(j, "stalled_close", b.stalled.close);
	json_u64(j, "timeout", b.stalled.timeout);
	json_close(j, '}');
	json_u64(j, "reset_at_end", b.stalled.reset_at_end);
	json_u64(j, "reset_at_end_send_errors", b.stalled.reset_send_errors);
	if (t->concurrency) {
		json_open(j, "concurrency", '{');
		json_u64(j, "limit", t->concurrency);
		json_u64(j, "open_peak", res->open_peak);
		json_u64(j, "waits", res->gate_waits);
		json_close(j, '}');
	}
	json_u64(j, "table_slots", t->table);
	json_u64(j, "table_bytes", (uint64_t)t->table * sizeof(struct xr_tcp_session));
	json_close(j, '}');
	json_open(j, "segments", '{');
	/* first transmissions: XDP's, and the pacer's at their departures */
	json_u64(j, "sent", c[XR_TCP_SEGMENTS] + t->pace.out.sent);
	json_u64(j, "again", c[XR_TCP_RESENT] + t->rs.resent);
	json_u64(j, "after_timeout", t->rs.resent);
	json_u64(j, "after_duplicate_acks", c[XR_TCP_FAST_RESENT]);
	json_u64(j, "syns_again", t->rs.syns_resent);
	json_u64(j, "syns_refused_then_answered", b.syn_recovered);
	json_u64(j, "timeout_send_errors", t->rs.failed);
	json_u64(j, "out_of_order", c[XR_TCP_OUT_OF_ORDER]);
	json_u64(j, "stray", c[XR_TCP_STRAY]);
	json_u64(j, "window_waits", c[XR_TCP_WINDOW_WAITS]);
	json_open(j, "pump", '{');
	json_u64(j, "asked", c[XR_TCP_PUMPED]);
	json_u64(j, "sent", t->pump.out.sent);
	json_u64(j, "stale", t->pump.stale);
	json_u64(j, "send_errors", t->pump.out.send_errors);
	json_u64(j, "left_at_end", t->pump.left_at_end);
	json_u64(j, "ring_full", c[XR_TCP_PUMP_FULL]);
	json_u64(j, "cpu_ns", t->pump.cpu_ns);
	json_open(j, "delayed_acks", '{');
	json_u64(j, "asked", c[XR_TCP_ACKS_DELAYED]);
	json_u64(j, "sent", t->pump.acks.sent);
	json_u64(j, "not_needed", t->pump.acks_not_needed);
	json_u64(j, "send_errors", t->pump.acks.send_errors);
	json_u64(j, "left_at_end", t->pump.acks_left_at_end);
	/* not asked: XDP acknowledged at once */
	json_u64(j, "ring_full", c[XR_TCP_ACKS_RING_FULL]);
	json_close(j, '}');
	json_close(j, '}');
	json_close(j, '}');
	json_open(j, "replies", '{');
	json_u64(j, "syn_acks", res->replies.st.answered);
	json_u64(j, "repeated", res->replies.st.repeated);
	json_u64(j, "unmatched", res->replies.st.unmatched);
	replies_rtt_json(res, j);
	json_close(j, '}');
}

void tcp_answers_report(const struct tcp *t, const char *line, FILE *human, struct json *j,
			const char *what)
{
	if (!t->resp.hist)
		return;
	if (human)
		replies_hist_line(human, line, &t->resp);
	if (j)
		replies_hist_json(j, what, &t->resp);
}

void tcp_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
		struct json *j)
{
	struct tcp *t = st;
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

double tcp_answers_seconds(const struct tcp *t, const struct engine_result *res)
{
	return t->last_answer_ns > res->start_ns ? (t->last_answer_ns - res->start_ns) / 1e9 : 0;
}

double tcp_answers_per_s(const struct tcp *t, const struct engine_result *res, uint64_t v)
{
	double secs = tcp_answers_seconds(t, res);

	return secs > 0 ? v / secs : 0;
}

void tcp_sessions_free(struct tcp *t)
{
	if (t->first != t->req)
		free(t->first);
	free(t->req);
	free(t->resp.hist);
	free(t->first_byte.hist);
	free(t->deliver.hist);
	free(t->recv);
}

static void tcp_free(void *st)
{
	tcp_sessions_free(st);
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
	.state_size = sizeof(struct tcp),
	.parse_opt = tcp_opt,
	.check = tcp_check,
	.build = tcp_build,
	.report = tcp_report,
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
