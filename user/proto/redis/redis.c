// SPDX-License-Identifier: GPL-2.0
/*
 * gen redis: Redis clients on the TCP sessions (proto/tcp/session.h), each
 * sending K commands in RESP one after the other, PING or SET of a key of its
 * own, and reading the server's replies (+PONG, +OK) by their length, an
 * error (-ERR, -NOAUTH) by its first byte. Built from this file and its
 * registration alone: the TCP core carries its bytes as it carries gen
 * tcp's, and asks nothing else of it (no struct tcp_app).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "proto/tcp/session.h"
#include "send/opts.h"
#include "util/json.h"
#include "util/log.h"
#include "util/units.h"

enum { O_COMMAND = PROTO_OPT_BASE, O_VALUE_SIZE, O_RPS, O_CLOSE };

static const struct option redis_opts[] = {
	{ "command", required_argument, NULL, O_COMMAND },
	{ "value-size", required_argument, NULL, O_VALUE_SIZE },
	{ "requests-per-session", required_argument, NULL, O_RPS },
	{ "close", required_argument, NULL, O_CLOSE },
	{},
};

/* The key a session SETs: this prefix and its number's XR_TCP_DIGITS digits */
#define REDIS_KEY_PREFIX "xr:"
#define REDIS_VALUE_MAX (64U << 10)

struct redis {
	struct tcp t;
	bool set; /* SET xr:<session> <value>, not PING */
	uint64_t value_size;
	uint64_t ok, errors; /* the replies, by their first byte (the report's, for the verdict) */
};

static int redis_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct redis *r = st;

	switch (id) {
	case O_COMMAND:
		if (strcmp(arg, "ping") && strcmp(arg, "set"))
			return cli_usage_error(so->cmd, "--command: ping or set, not '%s'", arg);
		r->set = !strcmp(arg, "set");
		break;
	case O_VALUE_SIZE:
		if (cli_count(so->cmd, "value-size", arg, &r->value_size))
			return XR_EXIT_USAGE;
		if (!r->value_size || r->value_size > REDIS_VALUE_MAX)
			return cli_usage_error(so->cmd, "--value-size: 1 to %u bytes",
					       REDIS_VALUE_MAX);
		break;
	case O_RPS:
		if (cli_count(so->cmd, "requests-per-session", arg, &r->t.requests))
			return XR_EXIT_USAGE;
		if (r->t.requests < 1 || r->t.requests > 65535)
			return cli_usage_error(
				so->cmd, "--requests-per-session must be between 1 and 65535");
		break;
	case O_CLOSE: return tcp_close_opt(&r->t, arg, so);
	}
	return -1;
}

static int redis_check(void *st, const struct send_opts *so)
{
	struct redis *r = st;

	if (r->value_size && !r->set)
		return cli_usage_error(so->cmd, "--value-size goes with --command set");
	if (!r->t.requests)
		r->t.requests = 1;
	if (!r->value_size)
		r->value_size = 16;
	return 0;
}

/*
 * The command in RESP (an array of bulk strings) into t's request, the key's
 * digits a {c} field that XDP writes per session; the reply's length.
 */
static int redis_command(struct redis *r)
{
	struct tcp *t = &r->t;
	size_t cap = 64 + r->value_size;
	int n;

	t->req = malloc(cap);
	if (!t->req)
		return -ENOMEM;
	if (!r->set) {
		n = snprintf((char *)t->req, cap, "*1\r\n$4\r\nPING\r\n");
		t->resp_size = strlen("+PONG\r\n");
	} else {
		n = snprintf((char *)t->req, cap, "*3\r\n$3\r\nSET\r\n$%zu\r\n%s%0*u\r\n$%llu\r\n",
			     strlen(REDIS_KEY_PREFIX) + XR_TCP_DIGITS, REDIS_KEY_PREFIX,
			     XR_TCP_DIGITS, 0U, (unsigned long long)r->value_size);
		t->fields.kind[0] = XR_TCP_FIELD_C;
		t->fields.off[0] = strstr((char *)t->req, REDIS_KEY_PREFIX) - (char *)t->req +
				   strlen(REDIS_KEY_PREFIX);
		memset(t->req + n, 'v', r->value_size);
		n += r->value_size;
		memcpy(t->req + n, "\r\n", 2);
		n += 2;
		t->resp_size = strlen("+OK\r\n");
	}
	t->req_len = n;
	return 0;
}

static int redis_build(void *st, const struct send_opts *so, const struct iface *ifc,
		       struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct redis *r = st;
	int err = redis_command(r);

	if (err)
		return err;
	r->t.response = XR_TCP_RESP_SIZE;
	r->t.resp_first = '+'; /* a simple string: the command's success; '-' an error */
	return tcp_sessions_build(&r->t, so, ifc, fs, plan, o);
}

/* The sessions' books, then the commands': sent, replied, how fast and how soon */
static void redis_report(void *st, const struct engine_result *res, uint64_t ready_ns, FILE *human,
			 struct json *j)
{
	struct redis *r = st;
	const __u64 *c = res->replies.st.ctr;
	double per_s = tcp_answers_per_s(&r->t, res, c[XR_TCP_RESPONSES]);
	char y[16];

	if (!res->replies.hist)
		return;
	r->ok = c[XR_TCP_2XX];
	r->errors = c[XR_TCP_OTHER_STATUS];
	tcp_sessions_report(&r->t, res, human, j);
	if (human) {
		fprintf(human,
			"  commands: %s, %llu sent whole, %llu replies (%s/s): %llu ok, %llu errors\n",
			r->set ? "SET" : "PING", (unsigned long long)c[XR_TCP_REQUESTS],
			(unsigned long long)c[XR_TCP_RESPONSES], fmt_si(per_s, y, sizeof(y)),
			(unsigned long long)c[XR_TCP_2XX],
			(unsigned long long)c[XR_TCP_OTHER_STATUS]);
		tcp_answers_report(&r->t, "reply (command to reply)", human, NULL, NULL);
	}
	if (!j)
		return;
	json_open(j, "commands", '{');
	json_str(j, "command", r->set ? "set" : "ping");
	json_u64(j, "sent", c[XR_TCP_REQUESTS]);
	json_u64(j, "replies", c[XR_TCP_RESPONSES]);
	json_u64(j, "ok", c[XR_TCP_2XX]);
	json_u64(j, "errors", c[XR_TCP_OTHER_STATUS]);
	json_double(j, "replies_per_s", per_s);
	json_u64(j, "bytes", r->t.req_len);
	tcp_answers_report(&r->t, NULL, NULL, j, "reply_us");
	json_close(j, '}');
}

/* No session completed, or every reply an error (a password the server wants): exit 1 after a line */
static int redis_verdict(void *st)
{
	struct redis *r = st;

	if (tcp_none_completed_verdict(&r->t))
		return XR_EXIT_FAIL;
	if (r->errors && !r->ok) {
		pr_warn("every reply of %llu was an error (-ERR, -NOAUTH: redis-cli says which)\n",
			(unsigned long long)r->errors);
		return XR_EXIT_FAIL;
	}
	return 0;
}

static void redis_free(void *st)
{
	tcp_sessions_free(&((struct redis *)st)->t);
}

const struct xr_proto proto_redis = {
	.name = "redis",
	.gen = true,
	.summary = "Redis clients (PING or SET in RESP) on socket-less TCP sessions, in XDP",
	.usage = "      --command ping|set  what each session sends (default ping): PING, or\n"
		 "                        SET xr:<session number, 10 digits> <value>\n"
		 "      --value-size N    with set: bytes of the value (default 16)\n"
		 "      --requests-per-session K  K commands one after the other on each\n"
		 "                        session, each once the one before is answered\n"
		 "                        (default 1)\n"
		 "      --close fin|rst   how a session ends after its last reply (default fin)\n"
		 "  --count is sessions, --pps new sessions per second. A reply is read by its\n"
		 "  length (+PONG, +OK); one that begins with '-' (-ERR, -NOAUTH) is counted as\n"
		 "  an error, and a run whose every reply was one exits 1.\n",
	.opts = redis_opts,
	.accepts = SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT | SO_SEED | SO_CONCURRENCY,
	.default_port = 6379,
	.state_size = sizeof(struct redis),
	.parse_opt = redis_opt,
	.check = redis_check,
	.build = redis_build,
	.report = redis_report,
	.frames_are = "sessions",
	.headline = tcp_headline,
	.witness = "sessions.completed",
	.latency = "commands.reply_us.p99",
	.load_unit = "sessions",
	.verdict = redis_verdict,
	.free = redis_free,
};
