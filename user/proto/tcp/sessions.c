// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay replay --sessions: the client side of each TCP flow of a
 * capture, played over fresh connections against a live server. The
 * server's ISNs, windows and timing are its own, live; what the client
 * says is the capture's (flows.h). The sessions are gen tcp's (session.h):
 * session c plays flow c mod flows, its requests one after the other, each
 * sent once the last one's response is complete, where a response ends as
 * HTTP/1.x says, or after as many bytes as the capture saw.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd/cli.h"
#include "frames/frameset.h"
#include "proto/proto.h"
#include "proto/tcp/flows.h"
#include "proto/tcp/session.h"
#include "send/opts.h"
#include "util/log.h"
#include "gen.skel.h"

enum { O_RESPONSE = PROTO_OPT_BASE, O_CLOSE };

static const struct option sessions_opts[] = {
	{ "response", required_argument, NULL, O_RESPONSE },
	{ "close", required_argument, NULL, O_CLOSE },
	{},
};

enum sessions_response { RESP_AUTO = 0, RESP_HTTP, RESP_CAPTURE };

struct sessions {
	struct tcp t;
	struct tcp_capture cap;
	struct tcp_flow_books books;
	enum sessions_response response;
	struct send_opts so; /* the run's, with the capture's port when --dst gave none */
};

int tcp_flows_load(const struct tcp_capture *cap, struct gen_bpf *skel)
{
	int ffd = bpf_map__fd(skel->maps.tcp_flows), sfd = bpf_map__fd(skel->maps.tcp_steps);

	for (__u32 f = 0; f < cap->nflows; f++)
		if (bpf_map_update_elem(ffd, &f, &cap->flows[f], 0))
			goto fail;
	for (__u32 k = 0; k < cap->nsteps; k++)
		if (bpf_map_update_elem(sfd, &k, &cap->steps[k], 0))
			goto fail;
	return 0;
fail:
	pr_warn("cannot load the capture's flows into their maps: %s\n", strerror(errno));
	return -errno;
}

static int sessions_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct sessions *s = st;

	switch (id) {
	case O_RESPONSE:
		if (!strcmp(arg, "http"))
			s->response = RESP_HTTP;
		else if (!strcmp(arg, "capture"))
			s->response = RESP_CAPTURE;
		else
			return cli_usage_error(so->cmd, "--response: http or capture, not '%s'",
					       arg);
		break;
	case O_CLOSE: return tcp_close_opt(&s->t, arg, so);
	}
	return -1;
}

static int sessions_check(void *st, const struct send_opts *so)
{
	if (so->net.dst.ipv6)
		return cli_usage_error(so->cmd, "sessions are IPv4 only for now");
	return 0;
}

/* The human line's reasons a flow was not played */
static void skipped_line(const struct tcp_flow_books *b, FILE *f)
{
	static const char *const what[TCP_FLOW_SKIPS] = {
		[TCP_FLOW_NO_SYN] = "begun before the capture (no SYN)",
		[TCP_FLOW_SERVER_FIRST] = "the server spoke first",
		[TCP_FLOW_NO_DATA] = "no client data",
		[TCP_FLOW_GAP] = "client bytes missing from the capture",
		[TCP_FLOW_REQUEST_TOO_LONG] = "a request over 68 KiB",
		[TCP_FLOW_TOO_MANY_REQUESTS] = "over 65,535 requests",
		[TCP_FLOW_STREAM_TOO_LONG] = "a client stream over 16 MiB",
		[TCP_FLOW_KEYS_FULL] = "past 1,024 distinct requests",
	};
	const char *sep = "";

	for (int i = 0; i < TCP_FLOW_SKIPS; i++)
		if (b->skipped[i]) {
			fprintf(f, "%s%s %llu", sep, what[i], (unsigned long long)b->skipped[i]);
			sep = ", ";
		}
}

static uint64_t skipped_total(const struct tcp_flow_books *b)
{
	uint64_t n = 0;

	for (int i = 0; i < TCP_FLOW_SKIPS; i++)
		n += b->skipped[i];
	return n;
}

static int sessions_read(struct sessions *s, const struct send_opts *so, const struct iface *ifc)
{
	struct fs_load_opts lo = { .max_len = 65535,
				   .max_memory = (uint64_t)sysconf(_SC_PHYS_PAGES) *
						 sysconf(_SC_PAGESIZE) / 2,
				   .max_ratio = 200 };
	struct fs_skips sk = {};
	struct frameset fs;
	int err = 0;

	frameset_init(&fs);
	for (int i = 0; i < so->nfiles && !err; i++)
		err = pcap_load(so->files[i], &fs, &lo, &sk);
	if (!err)
		err = tcp_flows_extract(&fs, &s->cap, &s->books);
	frameset_free(&fs);
	if (err)
		return err;
	if (!s->books.played) {
		pr_warn("no TCP flow to play in %s%s: %llu frames, %llu IPv4 TCP segments, %llu "
			"flows",
			so->files[0], so->nfiles > 1 ? " and the other files" : "",
			(unsigned long long)s->books.frames,
			(unsigned long long)s->books.tcp_frames,
			(unsigned long long)s->books.flows);
		if (s->books.flows) {
			fprintf(stderr, " (");
			skipped_line(&s->books, stderr);
			fputc(')', stderr);
		}
		fputc('\n', stderr);
		return -EINVAL;
	}
	if (sk.truncated)
		pr_info("%llu frames captured shorter than they were were left out "
			"(--allow-truncated is replay's, not --sessions')\n",
			(unsigned long long)sk.truncated);
	return 0;
}

/*
 * --multiplier: session c starts when its flow (c mod flows) did in the
 * capture, from the first played flow's SYN on: one SYN frame per flow,
 * stamped with that time, whose timing the engine keeps (frame c mod flows
 * at (c / flows) x span + its time, as replay's frames). The frames are the
 * template's: each session's own addresses and ISN are written in per packet.
 */
static int sessions_timed(struct sessions *s, struct frameset *fs)
{
	const struct fs_frame syn = fs->frames[0];
	uint64_t t0 = s->cap.start_ns[0], last = 0;
	uint8_t frame[128]; /* a copy: adding to the set may move its bytes */
	int err = 0;

	if (fs->n != 1 || syn.len > sizeof(frame))
		return -EINVAL;
	memcpy(frame, fs->bytes + syn.off, syn.len);
	for (uint32_t f = 1; f < s->cap.nflows && !err; f++) {
		/* a later file's flows may start earlier: not before the one before them */
		uint64_t ts = s->cap.start_ns[f] > t0 ? s->cap.start_ns[f] - t0 : 0;

		last = ts > last ? ts : last;
		err = frameset_add(fs, frame, syn.len, syn.orig_len, last);
	}
	if (err) {
		pr_warn("no memory for the flows' %u SYN frames\n", s->cap.nflows);
		return err;
	}
	frameset_finish(fs);
	return 0;
}

static int sessions_build(void *st, const struct send_opts *so, const struct iface *ifc,
			  struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct sessions *s = st;
	int err = sessions_read(s, so, ifc);

	if (err)
		return err;
	s->so = *so;
	if (!s->so.net.dst.port) {
		if (!s->books.server_port) {
			pr_warn("the capture's flows go to several server ports: say which with --dst "
				"ADDR:PORT\n");
			return -EINVAL;
		}
		s->so.net.dst.port = s->books.server_port;
	}
	if (s->response == RESP_HTTP || (s->response == RESP_AUTO && s->books.http)) {
		s->t.response = XR_TCP_RESP_HTTP;
		s->response = RESP_HTTP;
	} else {
		s->t.response = XR_TCP_RESP_SIZE;
		s->response = RESP_CAPTURE;
	}
	s->t.cap = &s->cap;
	s->t.requests = 1;
	err = tcp_sessions_build(&s->t, &s->so, ifc, fs, plan, o);
	if (!err && so->pace == XR_PACE_PCAP)
		err = sessions_timed(s, fs);
	return err;
}

/* One pass over the flows, unless --count or --duration says otherwise (0: the run's own rule) */
static uint64_t sessions_default_count(void *st, const struct send_opts *so,
				       const struct frameset *fs)
{
	return so->duration_ns ? 0 : ((struct sessions *)st)->cap.nflows;
}

static void sessions_report(void *st, const struct engine_result *res, uint64_t ready_ns,
			    FILE *human, struct json *j)
{
	struct sessions *s = st;
	const struct tcp_flow_books *b = &s->books;

	if (human) {
		fprintf(human,
			"  capture: %llu flows, %llu played (%llu requests, %u distinct; %llu client "
			"bytes, %llu server bytes), responses end %s",
			(unsigned long long)b->flows, (unsigned long long)b->played,
			(unsigned long long)b->requests, s->cap.nkeys,
			(unsigned long long)b->client_bytes, (unsigned long long)b->server_bytes,
			s->response == RESP_HTTP ? "as HTTP/1.x says" :
						   "after the capture's bytes");
		if (skipped_total(b)) {
			fprintf(human, "; not played: ");
			skipped_line(b, human);
		}
		fputc('\n', human);
	}
	if (j) {
		json_open(j, "flows", '{');
		json_u64(j, "frames", b->frames);
		json_u64(j, "tcp_frames", b->tcp_frames);
		json_u64(j, "other_frames", b->not_ipv4_tcp);
		json_u64(j, "seen", b->flows);
		json_u64(j, "played", b->played);
		json_u64(j, "skipped", skipped_total(b));
		json_open(j, "skipped_by", '{');
		for (int i = 0; i < TCP_FLOW_SKIPS; i++)
			json_u64(j, tcp_flow_skip_name(i), b->skipped[i]);
		json_close(j, '}');
		json_u64(j, "requests", b->requests);
		json_u64(j, "distinct_requests", s->cap.nkeys);
		json_u64(j, "client_bytes", b->client_bytes);
		json_u64(j, "server_bytes", b->server_bytes);
		json_str(j, "response", s->response == RESP_HTTP ? "http" : "capture");
		json_close(j, '}');
	}
	tcp_requests_report(&s->t, res, human, j);
}

static int sessions_verdict(void *st)
{
	return tcp_none_completed_verdict(&((struct sessions *)st)->t);
}

static void sessions_free(void *st)
{
	struct sessions *s = st;

	tcp_sessions_free(&s->t);
	tcp_capture_free(&s->cap);
}

const struct xr_proto proto_sessions = {
	.name = "sessions",
	.summary = "the client side of a capture's TCP flows, over fresh connections",
	.usage =
		"      --response http|capture  where a response ends: as HTTP/1.x says (the\n"
		"                          default when every request and response of the\n"
		"                          capture is HTTP/1.x), or after as many bytes as the\n"
		"                          capture saw\n"
		"      --close fin|rst     how a session ends after its last response (default fin)\n",
	.opts = sessions_opts,
	.accepts = SO_DST | SO_SRC | SO_SPORT | SO_DSTMAC | SO_WAIT | SO_SEED | SO_CONCURRENCY |
		   SO_FILES,
	.state_size = sizeof(struct sessions),
	.parse_opt = sessions_opt,
	.check = sessions_check,
	.build = sessions_build,
	.default_count = sessions_default_count,
	.report = sessions_report,
	.frames_are = "sessions",
	.headline = tcp_headline,
	.verdict = sessions_verdict,
	.witness = "sessions.completed",
	.load_unit = "sessions",
	.latency = "requests.response_us.p99",
	.free = sessions_free,
};
