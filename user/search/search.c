// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay search: the highest load a server takes within a loss goal.
 *
 * Each trial runs this binary's replay or gen command at one rate for one
 * trial duration (a child process: its BPF state dies with it), then reads
 * what the server received from a witness: a counter over HTTP (xdpreplay
 * count --listen), the SYN-ACKs gen syn counted, or a command that prints a
 * number. Loss is measured against what was asked for, so frames the sender
 * could not send count as loss too (and are reported as such).
 *
 * The search is MLRsearch-style bisection (RFC 9971's vocabulary, a subset of
 * its method): each goal is a loss ratio (or a p99 latency) with an exceed
 * ratio and a duration sum; a load is classified from all its trials (see
 * classify()); the interval between the relevant bounds is halved until it is
 * narrower than the width. Trial results are shared between goals. A trial
 * whose sender fell behind its schedule measured the sender, not the server:
 * it is shown and kept, but never classified. Not implemented: trial
 * duration escalation.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include "cmd/cli.h"
#include "measure/httpd.h"
#include "util/jsonpath.h"
#include "engine/engine.h"
#include "util/json.h"
#include "util/log.h"
#include "engine/pacer.h"
#include "util/units.h"

#define MAX_TRIALS 64
#define MAX_GOALS 4

#define MAX_ATTR 16

struct trial {
	double load;        /* asked frames per second */
	uint64_t asked, sent, received;
	double loss;        /* (asked - received) / asked */
	double duration_s;
	double p99_us;      /* gen syn: 99th percentile round trip; < 0 when unknown */
	uint64_t behind;    /* frames the sender fell behind on (its own shortfall) */
	bool sender_short;  /* the sender did not keep the trial's schedule: not the server's result */
	bool witness_reset; /* the witness's count went down (it restarted): nothing to read */
	/* count --listen: the attribution's counters, growth during the trial */
	int nattr;
	char attr_name[MAX_ATTR][32];
	uint64_t attr[MAX_ATTR];
};

struct goal {
	double loss;        /* ratio, e.g. 0 for NDR, 0.005 for PDR */
	double exceed;      /* MLRsearch exceed ratio: share of the duration sum allowed above the loss */
	double dsum;        /* MLRsearch duration sum in s: trial time a load needs before it is judged */
	double pending;     /* a load whose trials do not decide yet (needs another trial); 0 = none */
	double p99_us;      /* > 0: a latency goal, p99 round trip at most this (gen syn) */
	const char *name;
	double lower, upper; /* loads; 0 = none found */
};

struct search {
	const char *witness;  /* http://ADDR:PORT/, replies, cmd:COMMAND */
	const char *field;    /* http: the JSON field that counts what was received */
	double min, max, width;
	uint64_t trial_ns, settle_ns;
	char **cmd;           /* replay|gen ARGS..., or lorawan send ARGS... */
	bool lorawan;
	int ncmd;
	struct trial t[MAX_TRIALS];
	int nt;
	struct goal g[MAX_GOALS];
	int ng;
	uint64_t next_n;      /* the next trial's first sequence number */
	bool interrupted;     /* SIGINT/SIGTERM: the bounds so far are reported */
	const char *stop_why; /* why the search ended before every goal was done, or NULL */
	double max_asked;     /* --max as given (max may be lowered to what the sender keeps) */
	uint64_t start_unix;
	char token[260];      /* --witness-token-file: sent as a bearer token */
	uint64_t pause_ns;    /* between trials */
	uint64_t warmup_ns;   /* a first trial at --min, not counted */
};

/* A witness's answer may be large (a count --seq with thousands of flows), but not without end. */
#define WITNESS_MAX (16U << 20)

struct body {
	char *buf;
	size_t len;
};

static size_t take_body(char *data, size_t size, size_t n, void *ctx)
{
	struct body *b = ctx;
	size_t add = size * n;
	char *nb;

	/* past the limit the transfer fails (CURLE_WRITE_ERROR) instead of growing without end */
	if (b->len + add > WITNESS_MAX)
		return 0;
	nb = realloc(b->buf, b->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + b->len, data, add);
	b->buf = nb;
	b->len += add;
	nb[b->len] = 0;
	return add;
}

/* GET / from a counter's --listen endpoint (libcurl): the body, parsed (json_object_put it). */
static int http_get_json(const struct search *s, struct json_object **out)
{
	struct curl_slist *hdr = NULL;
	struct body b = {};
	char auth[300];
	CURLcode rc;
	long status = 0;
	CURL *c;
	int err = 0;

	*out = NULL;
	c = curl_easy_init();
	if (!c)
		return -ENOMEM;
	if (s->token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", s->token);
		hdr = curl_slist_append(NULL, auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, s->witness);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	if (hdr)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		pr_warn("the witness %s: %s\n", s->witness,
			rc == CURLE_WRITE_ERROR ? "answer larger than 16 MiB" : curl_easy_strerror(rc));
		err = rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EPROTO;
	} else if (status != 200) {
		pr_warn("the witness %s answered HTTP %ld%s\n", s->witness, status,
			status == 401 ? " (give its token: --witness-token-file)" : "");
		err = -EPROTO;
	} else if (!b.buf || !(*out = json_tokener_parse(b.buf))) {
		pr_warn("the witness %s did not answer JSON\n", s->witness);
		err = -EPROTO;
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	free(b.buf);
	return err;
}

/* The attribution object's counters, in order. */
static void json_attribution(struct json_object *root, struct trial *t)
{
	struct json_object *a;

	t->nattr = 0;
	if (!json_object_object_get_ex(root, "attribution", &a) || !json_object_is_type(a, json_type_object))
		return;
	json_object_object_foreach(a, key, val) {
		if (t->nattr >= MAX_ATTR || !json_object_is_type(val, json_type_int))
			continue;
		snprintf(t->attr_name[t->nattr], sizeof(t->attr_name[0]), "%s", key);
		t->attr[t->nattr++] = json_object_get_int64(val) < 0 ? 0 : json_object_get_uint64(val);
	}
}

static int witness_http(const struct search *s, uint64_t *out, struct trial *attr)
{
	struct json_object *root;
	int err = http_get_json(s, &root);

	if (err)
		return err;
	if (attr)
		json_attribution(root, attr);
	err = json_path_u64(root, s->field ? s->field : "matched", out);
	if (err == -ENOENT)
		pr_warn("the witness has no field %s\n", s->field ? s->field : "matched");
	json_object_put(root);
	return err;
}

static int witness_cmd(const char *cmd, uint64_t *out)
{
	unsigned long long v;
	FILE *p = popen(cmd, "r");
	int ok;

	if (!p)
		return -errno;
	ok = fscanf(p, "%llu", &v) == 1;
	pclose(p);
	if (!ok)
		return -EPROTO;
	*out = v;
	return 0;
}

/* The witness's running total (and attribution); "replies" has none (the trial's JSON says). */
static int witness_read(const struct search *s, uint64_t *v, struct trial *attr)
{
	*v = 0;
	if (!strncmp(s->witness, "http://", 7))
		return witness_http(s, v, attr);
	if (!strncmp(s->witness, "cmd:", 4))
		return witness_cmd(s->witness + 4, v);
	return 0;
}

/* One trial at load pps: the child replay/gen, then the witness. */
static int run_trial(struct search *s, double load, struct trial *t)
{
	char rate[32], dur[32], first[32], json[] = "/tmp/xdpreplay-trial.XXXXXX";
	struct json_object *result = NULL;
	/* "xdpreplay", the command (and subcommand), 10 options and values of ours, NULL */
	char **argv = calloc(s->ncmd + 14, sizeof(char *));
	uint64_t before, after, sent, asked;
	struct json_object *rp;
	struct trial a0 = {};
	int fd, status, err, a = 0;
	pid_t pid;

	if (!argv)
		return -ENOMEM;
	fd = mkstemp(json);
	if (fd < 0) {
		free(argv);
		return -errno;
	}
	close(fd);
	snprintf(rate, sizeof(rate), "%.0f", load);
	snprintf(dur, sizeof(dur), "%lluns", (unsigned long long)s->trial_ns);
	argv[a++] = "xdpreplay";
	argv[a++] = s->cmd[0];
	/* lorawan send: the subcommand comes first */
	if (s->lorawan)
		argv[a++] = s->cmd[1];
	argv[a++] = "--pps";
	argv[a++] = rate;
	argv[a++] = "--duration";
	argv[a++] = dur;
	argv[a++] = "--json";
	argv[a++] = json;
	argv[a++] = "-q";
	/* each trial goes on where the last stopped: no repeated sources, ports or ISNs */
	snprintf(first, sizeof(first), "%llu", (unsigned long long)s->next_n);
	argv[a++] = "--first-seq";
	argv[a++] = first;
	for (int i = s->lorawan ? 2 : 1; i < s->ncmd; i++)
		argv[a++] = s->cmd[i];
	argv[a] = NULL;

	err = witness_read(s, &before, &a0);
	if (err) {
		pr_warn("cannot read the witness %s: %s\n", s->witness, strerror(-err));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		if (xr_stop)
			kill(pid, SIGINT);
	/* an interrupted trial measured nothing: it is not reported as one */
	if (xr_stop || (WIFEXITED(status) && WEXITSTATUS(status) == XR_EXIT_INTERRUPTED)) {
		err = -EINTR;
		goto out;
	}
	/* exit 1 means some frames were not sent: that is loss at the sender, still a trial */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
		pr_warn("the trial at %s pps failed (exit %d)\n", rate,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		err = -ECHILD;
		goto out;
	}
	/* frames still in flight (queues, the server's backlog) are counted before reading */
	sleep_until(now_ns() + s->settle_ns);
	result = json_object_from_file(json);
	err = !result ? -EPROTO : json_path_u64(result, "sent", &sent) ?: json_path_u64(result, "asked", &asked);
	if (!err && !strcmp(s->witness, "replies"))
		err = json_path_u64(result, s->lorawan ? "replies.push_acks" : "replies.syn_acks", &after);
	else if (!err)
		err = witness_read(s, &after, t);
	if (err) {
		pr_warn("cannot read the trial's results: %s\n", strerror(-err));
		goto out;
	}
	s->next_n += asked;
	t->load = load;
	t->asked = asked;
	t->sent = sent;
	/* a witness whose count went down restarted: the trial cannot be read from it */
	t->witness_reset = strcmp(s->witness, "replies") && after < before;
	t->received = !strcmp(s->witness, "replies") ? after : t->witness_reset ? 0 : after - before;
	t->loss = asked ? (asked > t->received ? (double)(asked - t->received) / asked : 0) : 1;
	t->duration_s = s->trial_ns / 1e9;
	t->p99_us = -1;
	if (json_object_object_get_ex(result, "replies", &rp) && json_object_object_get_ex(rp, "rtt_us", &rp) &&
	    json_object_object_get_ex(rp, "p99", &rp))
		t->p99_us = json_object_get_double(rp);
	for (int i = 0; i < t->nattr && i < a0.nattr; i++)
		t->attr[i] = t->attr[i] >= a0.attr[i] ? t->attr[i] - a0.attr[i] : 0;
	if (json_path_u64(result, "failed_reasons.fell_behind", &t->behind))
		t->behind = 0;
	t->sender_short = t->behind > 0;
out:
	if (result)
		json_object_put(result);
	unlink(json);
	free(argv);
	return err;
}

static void print_trial(const struct trial *t, int i)
{
	char a[16], d[16];

	fprintf(stderr, "  trial %2d: offered %9s pps  asked %10llu  sent %10llu  received %10llu  loss %.5f",
		i + 1, fmt_si(t->load, a, sizeof(a)), (unsigned long long)t->asked, (unsigned long long)t->sent,
		(unsigned long long)t->received, t->loss);
	if (t->witness_reset)
		fprintf(stderr, "  WITNESS RESET (its count went down: not counted)");
	else if (t->sender_short)
		fprintf(stderr, "  SENDER SHORT (%llu behind: not counted)", (unsigned long long)t->behind);
	else if (t->sent < t->asked)
		fprintf(stderr, "  (%llu not sent: driver refused)", (unsigned long long)(t->asked - t->sent));
	if (t->p99_us >= 0)
		fprintf(stderr, "  p99 %s", fmt_duration((uint64_t)(t->p99_us * 1e3), d, sizeof(d)));
	/* where the server dropped: every drop counter that moved */
	for (int k = 0; k < t->nattr; k++)
		if (t->attr[k] && strcmp(t->attr_name[k], "udp_delivered") && strcmp(t->attr_name[k], "udp_no_ports"))
			fprintf(stderr, "  %s %llu", t->attr_name[k], (unsigned long long)t->attr[k]);
	fputc('\n', stderr);
}

/*
 * Whether a trial speaks for the server: not one the sender did not keep (it
 * measured the sender), nor one whose witness restarted (nothing was read).
 */
static bool counted(const struct trial *t)
{
	return !t->sender_short && !t->witness_reset;
}

/* Bounds of goal g from every trial so far. */
/* Whether one trial meets goal g. */
static bool trial_ok(const struct goal *g, const struct trial *t)
{
	return g->p99_us > 0 ? t->p99_us >= 0 && t->p99_us <= g->p99_us : t->loss <= g->loss;
}

/*
 * Bounds of goal g from every trial so far, load by load (RFC 9971's load
 * classification): with the trials of one load lasting good + bad seconds
 * (meeting the goal or not) out of the duration sum, the load is an upper
 * bound once bad exceeds exceed * dsum even if all missing time were good,
 * a lower bound once it cannot exceed it even if all missing time were bad,
 * and undecided otherwise (another trial at that load is needed).
 */
static void classify(struct search *s, struct goal *g)
{
	g->lower = g->upper = g->pending = 0;
	for (int i = 0; i < s->nt; i++) {
		double load = s->t[i].load, good = 0, bad = 0, missing;
		bool seen = false;

		if (!counted(&s->t[i]))
			continue;
		for (int j = 0; j < i; j++)
			seen |= s->t[j].load == load && counted(&s->t[j]);
		if (seen)
			continue;
		for (int j = i; j < s->nt; j++) {
			if (s->t[j].load != load || !counted(&s->t[j]))
				continue;
			if (trial_ok(g, &s->t[j]))
				good += s->t[j].duration_s;
			else
				bad += s->t[j].duration_s;
		}
		missing = fmax(0, g->dsum - good - bad);
		if (bad > g->exceed * g->dsum + 1e-9) {
			if (!g->upper || load < g->upper)
				g->upper = load;
		} else if (bad + missing <= g->exceed * g->dsum + 1e-9) {
			if (load > g->lower)
				g->lower = load;
		} else if (!g->pending) {
			g->pending = load;
		}
	}
	/* a lower bound above an upper bound (noise) is not one */
	if (g->upper && g->lower > g->upper)
		g->lower = 0;
}

/* The received rate of the trials at a goal's lower bound (RFC 9971's conditional throughput). */
static double conditional_throughput(const struct search *s, const struct goal *g)
{
	double rx = 0, dur = 0;

	for (int i = 0; i < s->nt; i++) {
		if (s->t[i].load == g->lower && counted(&s->t[i])) {
			rx += s->t[i].received;
			dur += s->t[i].duration_s;
		}
	}
	return dur > 0 ? rx / dur : 0;
}

/* About how many trials the search takes: a bisection per goal to its width, and a few to start. */
static int trials_expected(const struct search *s)
{
	double left = 0;

	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];
		double hi = g->upper ? g->upper : s->max, lo = g->lower ? g->lower : s->min, steps;

		if (g->lower >= s->max || (g->upper && g->upper <= s->min))
			continue;
		steps = hi > lo ? ceil(log2(fmax(1, (hi - lo) / (s->width * hi)))) : 0;
		if (!g->lower || !g->upper)
			steps += 1;
		/* later goals mostly reuse the trials of the first */
		left += gi ? steps / 2 : steps;
	}
	return s->nt + (int)ceil(left);
}

static void print_progress(const struct search *s)
{
	int left = trials_expected(s) - s->nt;

	if (left < 0)
		left = 0;
	char a[16], b[16], c[16];

	fprintf(stderr, "  after %d of about %d trials:", s->nt, s->nt + left);
	for (int gi = 0; gi < s->ng; gi++)
		fprintf(stderr, " %s [%s, %s]", s->g[gi].name, fmt_si(s->g[gi].lower, a, sizeof(a)),
			s->g[gi].upper ? fmt_si(s->g[gi].upper, b, sizeof(b)) : "?");
	fprintf(stderr, ", ETA %s\n",
		fmt_duration((uint64_t)left * (s->trial_ns + s->settle_ns + s->pause_ns), c, sizeof(c)));
}

/*
 * A trial whose sender fell behind is tried once more at the same load; a
 * second one lowers --max to 95% of what the sender did keep (the search
 * cannot measure loads this sender cannot offer) and says so.
 */
static int sender_short(struct search *s, double load)
{
	const struct trial *t = &s->t[s->nt - 1];
	double kept = 0.95 * t->sent / t->duration_s;
	int shorts = 0;
	char a[16], b[16];

	for (int i = s->nt - 1; i >= 0 && s->t[i].load == load && s->t[i].sender_short; i--)
		shorts++;
	if (shorts < 2)
		return 0;
	if (kept <= s->min) {
		pr_warn("the sender cannot offer even --min %s pps here (it kept %s pps)\n",
			fmt_si(s->min, a, sizeof(a)), fmt_si(t->sent / t->duration_s, b, sizeof(b)));
		s->stop_why = "the sender cannot offer --min";
		return -ERANGE;
	}
	pr_warn("warning: the sender fell behind twice at %s pps: searching up to %s pps (what it keeps)\n",
		fmt_si(load, a, sizeof(a)), fmt_si(kept, b, sizeof(b)));
	s->max = kept;
	return 0;
}

static int do_search(struct search *s)
{
	int err;

	for (int gi = 0; gi < s->ng; gi++) {
		struct goal *g = &s->g[gi];

		for (;;) {
			double next;

			classify(s, g);
			if (g->lower >= s->max)
				break; /* the server took the most we offer */
			if (g->upper && g->upper <= s->min)
				break; /* even the least we offer is too much */
			if (g->lower && g->upper && (g->upper - g->lower) <= s->width * g->upper)
				break;
			if (s->nt && !counted(&s->t[s->nt - 1]))
				next = s->t[s->nt - 1].load; /* once more: the host may only have been busy */
			else if (g->pending)
				next = g->pending; /* this load needs more trial time to be judged */
			else if (!g->lower && !g->upper)
				next = s->max;
			else if (!g->lower)
				next = fmax(s->min, g->upper / 2);
			else if (!g->upper)
				next = fmin(s->max, g->lower * 2);
			else
				next = (g->lower + g->upper) / 2;
			next = fmin(next, s->max);
			if (s->nt >= MAX_TRIALS) {
				pr_warn("%d trials and not done; the bounds so far are reported\n", MAX_TRIALS);
				s->stop_why = "trial limit reached";
				return 0;
			}
			if (s->nt && s->pause_ns)
				sleep_until(now_ns() + s->pause_ns);
			err = run_trial(s, next, &s->t[s->nt]);
			if (err == -EINTR)
				s->interrupted = true;
			if (err)
				return err;
			print_trial(&s->t[s->nt], s->nt);
			s->nt++;
			for (int k = 0; k < s->ng; k++)
				classify(s, &s->g[k]);
			print_progress(s);
			if (s->t[s->nt - 1].sender_short && (err = sender_short(s, next)))
				return err;
			if (xr_stop) {
				s->interrupted = true;
				return -EINTR;
			}
		}
	}
	return 0;
}

/* Text inside an SVG element: the five characters XML reserves, escaped. */
static void xml_text(FILE *f, const char *t)
{
	for (; *t; t++) {
		switch (*t) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*t, f);
		}
	}
}

/* An axis: linear or logarithmic between lo and hi, mapped onto [p0, p1] pixels. */
struct axis {
	double lo, hi, p0, p1;
	bool log;
};

static double axis_px(const struct axis *x, double v)
{
	double f;

	if (x->log)
		f = (log10(fmax(v, x->lo)) - log10(x->lo)) / (log10(x->hi) - log10(x->lo));
	else
		f = (v - x->lo) / (x->hi - x->lo);
	return x->p0 + (x->p1 - x->p0) * fmin(1, fmax(0, f));
}

/* The nice step (1, 2 or 5 times a power of ten) that cuts [lo, hi] into about n parts. */
static double nice_step(double lo, double hi, int n)
{
	double raw = (hi - lo) / n, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* A tick label without trailing zeros: 10k, 2.5M, 500. */
static char *fmt_tick(double v, char *buf, size_t len)
{
	char *dot, *end;

	fmt_si(v, buf, len);
	dot = strchr(buf, '.');
	if (!dot)
		return buf;
	for (end = dot + 1; *end >= '0' && *end <= '9'; end++)
		;
	/* the digits after the point, trimmed of zeros; the point too when none is left */
	char *last = end;

	while (last > dot + 1 && last[-1] == '0')
		last--;
	if (last == dot + 1)
		last = dot;
	memmove(last, end, strlen(end) + 1);
	return buf;
}

/* A tick label of a round trip given in microseconds: 500 us, 2 ms, 1 s. */
static char *fmt_tick_us(double v, char *buf, size_t len)
{
	return fmt_duration((uint64_t)(v * 1e3), buf, len);
}

/* Round ticks: 1-2-5 in each decade on a log axis, a nice step on a linear one. */
static void axis_ticks_fmt(FILE *f, const struct axis *x, bool vertical, double at, const char *unit,
			   char *(*fmt)(double, char *, size_t))
{
	char a[16];

	if (x->log) {
		for (double d = pow(10, floor(log10(x->lo))); d <= x->hi * 1.0001; d *= 10)
			for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
				double v = d * m, px = axis_px(x, v);

				if (v < x->lo * 0.9999 || v > x->hi * 1.0001)
					continue;
				fprintf(f, vertical ? "<text x='%.0f' y='%.1f' text-anchor='end'>%s%s</text>\n" :
						      "<text x='%.1f' y='%.0f' text-anchor='middle'>%s%s</text>\n",
					vertical ? at : px, vertical ? px + 4 : at, fmt(v, a, sizeof(a)), unit);
			}
		return;
	}
	double st = nice_step(x->lo, x->hi, 5);

	for (double v = ceil(x->lo / st) * st; v <= x->hi * 1.0001; v += st) {
		double px = axis_px(x, v);

		fprintf(f, vertical ? "<text x='%.0f' y='%.1f' text-anchor='end'>%s%s</text>\n" :
				      "<text x='%.1f' y='%.0f' text-anchor='middle'>%s%s</text>\n",
			vertical ? at : px, vertical ? px + 4 : at, fmt(v, a, sizeof(a)), unit);
	}
}

static void axis_ticks(FILE *f, const struct axis *x, bool vertical, double at, const char *unit)
{
	axis_ticks_fmt(f, x, vertical, at, unit, fmt_tick);
}

/* The 1-2-5 value (1, 2 or 5 times a power of ten) just below v, or just above it (up). */
static double nice_125(double v, bool up)
{
	double p = pow(10, floor(log10(v))), m = v / p;

	if (up)
		return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
}

/* The x axis of the plot: the loads tried, on a log scale when they span more than a decade. */
static struct axis load_axis(const struct search *s, double p0, double p1)
{
	struct axis x = { .lo = s->max, .hi = s->min, .p0 = p0, .p1 = p1 };

	for (int i = 0; i < s->nt; i++) {
		x.lo = fmin(x.lo, s->t[i].load);
		x.hi = fmax(x.hi, s->t[i].load);
	}
	if (!s->nt)
		x.lo = s->min, x.hi = s->max;
	x.log = x.hi / x.lo > 10;
	if (x.log) {
		x.lo = nice_125(x.lo * 0.9, false);
		x.hi = nice_125(x.hi * 1.1, true);
	} else {
		double st = nice_step(x.lo * 0.9, x.hi * 1.05, 5);

		x.lo = fmax(0, floor(x.lo * 0.9 / st) * st);
		x.hi = ceil(x.hi * 1.05 / st) * st;
	}
	return x;
}

static const char *const goal_color[MAX_GOALS] = { "#1f5fbf", "#d06000", "#7a3ea0", "#008a6e" };
static const char *const goal_dash[MAX_GOALS] = { "", "8 4", "2 3", "10 3 2 3" };

static void write_svg(const struct search *s, FILE *f)
{
	bool lat = false;
	const double W = 760, L = 80, R = 30, T = 64, PH = 300, GAP = 70;
	double H, ymax = 0, pmax = 0, pmin = 1e18;
	char a[16], b[16], title[200], when[32], wit[72];
	struct axis x, y, yl = {};
	size_t at = 0;
	time_t now = s->start_unix;

	for (int gi = 0; gi < s->ng; gi++)
		lat |= s->g[gi].p99_us > 0;
	H = T + PH + 50 + (lat ? GAP + 200 : 0);
	x = load_axis(s, L, W - R);
	for (int i = 0; i < s->nt; i++) {
		ymax = fmax(ymax, fmax(s->t[i].load, s->t[i].received / s->t[i].duration_s));
		if (s->t[i].p99_us > 0) {
			pmax = fmax(pmax, s->t[i].p99_us);
			pmin = fmin(pmin, s->t[i].p99_us);
		}
	}
	/* received on the same scale as offered: the diagonal is straight, the knee shows */
	y = x;
	y.p0 = T + PH;
	y.p1 = T;
	if (ymax > y.hi)
		y.hi = ymax;

	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' "
		   "font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n", W, H);
	for (int i = 0; i < s->ncmd && at < 80; i++)
		at += snprintf(title + at, sizeof(title) - at, "%s%s", i ? " " : "", s->cmd[i]);
	if (at >= 80)
		snprintf(title + 77, sizeof(title) - 77, "...");
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "<text x='%.0f' y='20' text-anchor='middle' font-size='15'>Drop-point search: ", W / 2);
	xml_text(f, title);
	fprintf(f, "</text>\n<text x='%.0f' y='40' text-anchor='middle' fill='#444'>witness ", W / 2);
	snprintf(wit, sizeof(wit), "%.60s%s", s->witness, strlen(s->witness) > 60 ? "..." : "");
	xml_text(f, wit);
	fprintf(f, " | %s%s | %s</text>\n", s->interrupted ? "interrupted, " : "", s->stop_why ? s->stop_why : "done",
		when);

	/* the throughput panel */
	fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#000'/>\n", L, T,
		W - L - R, PH);
	axis_ticks(f, &x, false, T + PH + 16, "");
	axis_ticks(f, &y, true, L - 6, "");
	fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='middle'>offered (frames/s%s)</text>\n", (L + W - R) / 2,
		T + PH + 36, x.log ? ", log scale" : "");
	fprintf(f, "<text x='18' y='%.0f' transform='rotate(-90 18 %.0f)' text-anchor='middle'>received "
		   "(frames/s)</text>\n", T + PH / 2, T + PH / 2);
	/* everything offered was received: the diagonal, as a curve on a log axis */
	fprintf(f, "<polyline fill='none' stroke='#aaa' stroke-dasharray='4' points='");
	for (int k = 0; k <= 64; k++) {
		double v = x.log ? x.lo * pow(x.hi / x.lo, k / 64.0) : x.lo + (x.hi - x.lo) * k / 64;

		if (v <= y.hi)
			fprintf(f, "%.1f,%.1f ", axis_px(&x, v), axis_px(&y, v));
	}
	fprintf(f, "'/>\n");
	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];
		double gx = axis_px(&x, g->lower);

		if (g->lower <= 0)
			continue;
		fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='%s' stroke-width='2' "
			   "stroke-dasharray='%s'/>\n", gx, T, gx, T + PH, goal_color[gi], goal_dash[gi]);
		/* a label per goal at its own height, on the side with room: coinciding bounds stay readable */
		fprintf(f, "<text x='%.1f' y='%.0f' fill='%s' text-anchor='%s'>", gx + (gx > W / 2 ? -4 : 4),
			T + PH - 10 - 14 * gi, goal_color[gi], gx > W / 2 ? "end" : "start");
		xml_text(f, g->name);
		fprintf(f, " %s</text>\n", fmt_si(g->lower, a, sizeof(a)));
	}
	for (int i = 0; i < s->nt; i++) {
		const struct trial *t = &s->t[i];
		double px = axis_px(&x, t->load), py = axis_px(&y, t->received / t->duration_s);

		if (t->sender_short)
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='none' stroke='#777'/>\n", px, py);
		else
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/>\n", px, py, t->loss > 0 ? "#c33" : "#393");
	}
	/* the legend, inside the panel's top-left corner: one line per mark, nothing near an edge */
	fprintf(f, "<g transform='translate(%.0f,%.0f)'><rect width='300' height='%d' fill='white' "
		   "fill-opacity='0.85' stroke='#ccc'/>\n", L + 8, T + 8, 20 + 16 * (s->ng + 2));
	fprintf(f, "<circle cx='12' cy='14' r='4' fill='#393'/><text x='22' y='18'>trial without loss</text>\n"
		   "<circle cx='150' cy='14' r='4' fill='#c33'/><text x='160' y='18'>trial with loss</text>\n"
		   "<circle cx='12' cy='30' r='4' fill='none' stroke='#777'/><text x='22' y='34'>sender fell behind "
		   "(not counted)</text>\n");
	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];
		char lim[24];

		if (g->p99_us > 0)
			snprintf(lim, sizeof(lim), "p99 <= %s", fmt_duration((uint64_t)(g->p99_us * 1e3), a, sizeof(a)));
		else
			snprintf(lim, sizeof(lim), "loss <= %g%%", g->loss * 100);
		fprintf(f, "<line x1='4' y1='%d' x2='24' y2='%d' stroke='%s' stroke-width='2' stroke-dasharray='%s'/>"
			   "<text x='30' y='%d'>", 46 + 16 * gi, 46 + 16 * gi, goal_color[gi], goal_dash[gi], 50 + 16 * gi);
		xml_text(f, g->name);
		fprintf(f, " (");
		xml_text(f, lim);
		fprintf(f, "): lower bound %s, upper %s</text>\n", g->lower ? fmt_si(g->lower, a, sizeof(a)) : "none",
			g->upper ? fmt_si(g->upper, b, sizeof(b)) : "none");
	}
	fprintf(f, "</g>\n");

	if (lat && pmax > 0) {
		double top = T + PH + 50 + GAP, ph = 200;

		yl = (struct axis){ .lo = pmin, .hi = pmax, .p0 = top + ph, .p1 = top };
		for (int gi = 0; gi < s->ng; gi++)
			if (s->g[gi].p99_us > 0)
				yl.hi = fmax(yl.hi, s->g[gi].p99_us), yl.lo = fmin(yl.lo, s->g[gi].p99_us);
		yl.log = yl.hi / yl.lo > 10;
		if (yl.log) {
			yl.lo = pow(10, floor(log10(yl.lo * 0.9)));
			yl.hi = pow(10, ceil(log10(yl.hi * 1.1)));
		} else {
			yl.lo = 0;
			yl.hi = yl.hi * 1.1;
		}
		fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#000'/>\n", L, top,
			W - L - R, ph);
		axis_ticks(f, &x, false, top + ph + 16, "");
		axis_ticks_fmt(f, &yl, true, L - 6, "", fmt_tick_us);
		fprintf(f, "<text x='18' y='%.0f' transform='rotate(-90 18 %.0f)' text-anchor='middle'>p99 round "
			   "trip</text>\n", top + ph / 2, top + ph / 2);
		for (int gi = 0; gi < s->ng; gi++) {
			double gy;

			if (s->g[gi].p99_us <= 0)
				continue;
			gy = axis_px(&yl, s->g[gi].p99_us);
			fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='%s' stroke-width='2' "
				   "stroke-dasharray='%s'/>\n", L, gy, W - R, gy, goal_color[gi], goal_dash[gi]);
		}
		for (int i = 0; i < s->nt; i++)
			if (s->t[i].p99_us > 0)
				fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/>\n", axis_px(&x, s->t[i].load),
					axis_px(&yl, s->t[i].p99_us), s->t[i].sender_short ? "#bbb" : "#1f5fbf");
	}
	fprintf(f, "</svg>\n");
}

static void write_json(const struct search *s, FILE *f)
{
	struct json j = { .f = f };

	json_open(&j, NULL, '{');
	json_str(&j, "version", XR_VERSION);
	json_u64(&j, "start_unix", s->start_unix);
	json_str(&j, "witness", s->witness);
	if (s->field)
		json_str(&j, "witness_field", s->field);
	json_open(&j, "settings", '{');
	json_double(&j, "min_pps", s->min);
	json_double(&j, "max_pps", s->max_asked);
	json_double(&j, "max_pps_searched", s->max);
	json_double(&j, "width", s->width);
	json_double(&j, "trial_s", s->trial_ns / 1e9);
	json_double(&j, "settle_s", s->settle_ns / 1e9);
	json_double(&j, "pause_s", s->pause_ns / 1e9);
	json_double(&j, "warmup_s", s->warmup_ns / 1e9);
	json_open(&j, "trial_command", '[');
	for (int i = 0; i < s->ncmd; i++)
		json_str(&j, NULL, s->cmd[i]);
	json_close(&j, ']');
	json_close(&j, '}');
	json_flag(&j, "interrupted", s->interrupted);
	json_str(&j, "stopped", s->stop_why ? s->stop_why : "done");
	/* kept for scripts written against earlier versions */
	json_double(&j, "trial_s", s->trial_ns / 1e9);
	json_open(&j, "goals", '[');
	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];

		json_open(&j, NULL, '{');
		json_str(&j, "name", g->name);
		if (g->p99_us > 0)
			json_double(&j, "p99_us", g->p99_us);
		else
			json_double(&j, "loss", g->loss);
		json_double(&j, "exceed", g->exceed);
		json_double(&j, "duration_sum_s", g->dsum);
		json_double(&j, "lower", g->lower);
		json_double(&j, "upper", g->upper);
		json_flag(&j, "never_saturated", g->lower >= s->max);
		json_double(&j, "conditional_throughput", conditional_throughput(s, g));
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_open(&j, "trials", '[');
	for (int i = 0; i < s->nt; i++) {
		const struct trial *t = &s->t[i];

		json_open(&j, NULL, '{');
		json_double(&j, "offered_pps", t->load);
		json_u64(&j, "asked", t->asked);
		json_u64(&j, "sent", t->sent);
		json_u64(&j, "received", t->received);
		json_double(&j, "loss", t->loss);
		json_flag(&j, "sender_short", t->sender_short);
		json_flag(&j, "witness_reset", t->witness_reset);
		json_u64(&j, "fell_behind", t->behind);
		if (t->p99_us >= 0)
			json_double(&j, "p99_us", t->p99_us);
		json_open(&j, "server_drops", '{');
		for (int k = 0; k < t->nattr; k++)
			json_u64(&j, t->attr_name[k], t->attr[k]);
		json_close(&j, '}');
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_close(&j, '}');
}

static void write_csv(const struct search *s, FILE *f)
{
	fprintf(f, "trial,offered_pps,asked,sent,received,loss,sender_short,witness_reset\n");
	for (int i = 0; i < s->nt; i++)
		fprintf(f, "%d,%.0f,%llu,%llu,%llu,%.6f,%d,%d\n", i + 1, s->t[i].load, (unsigned long long)s->t[i].asked,
			(unsigned long long)s->t[i].sent, (unsigned long long)s->t[i].received, s->t[i].loss,
			s->t[i].sender_short, s->t[i].witness_reset);
}

/* One result file (- is standard output): 0, or -errno after a message when it could not be written. */
static int write_one(const struct search *s, const char *path, void (*write)(const struct search *, FILE *))
{
	FILE *f = json_fopen(path);
	int err;

	if (!f) {
		err = -errno;
	} else {
		write(s, f);
		err = json_fclose(f);
	}
	if (err)
		pr_warn("cannot write %s: %s\n", path, strerror(-err));
	return err;
}

/* The results as JSON, CSV and SVG, where asked for: 0, or -errno when one could not be written. */
static int write_results(const struct search *s, const char *json_path, const char *csv_path, const char *svg_path)
{
	int err = 0;

	if (json_path)
		err = write_one(s, json_path, write_json) ?: err;
	if (csv_path)
		err = write_one(s, csv_path, write_csv) ?: err;
	if (svg_path)
		err = write_one(s, svg_path, write_svg) ?: err;
	return err;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay search [options] -- replay|gen|lorawan send ARGS...\n"
		"\n"
		"Finds the highest load the server takes within each loss goal: trials of ARGS at\n"
		"chosen rates (--pps and --duration are added), each read from a witness of what\n"
		"the server received, bisected until the bounds are within --width of each other.\n"
		"Loss is counted against the frames asked for, so the sender's own shortfall\n"
		"counts too (a trial says \"sender short\").\n"
		"\n"
		"Options:\n"
		"      --witness W      http://ADDR:PORT/ (xdpreplay count --listen on the server),\n"
		"                       replies (the SYN-ACKs of gen syn, the PUSH_ACKs of lorawan\n"
		"                       send), or cmd:COMMAND (prints a\n"
		"                       running count of frames received)\n"
		"      --witness-field F  with an http witness: the JSON field that counts what was\n"
		"                       received (default matched; e.g. kernel.Udp.NoPorts,\n"
		"                       attribution.udp_delivered); every attribution counter that\n"
		"                       grows during a trial is shown with it\n"
		"      --goal NAME=LOSS[,exceed=X][,dsum=T]  a loss ratio goal (repeatable; default\n"
		"                       NDR=0 and PDR=0.005); with RFC 9971's exceed ratio X and\n"
		"                       duration sum T a load gets trials until T is judged, and\n"
		"                       passes while at most X of it is above the loss ratio\n"
		"      --latency-goal NAME=T  highest load whose p99 round trip stays within T\n"
		"                       (gen syn with --witness replies; e.g. p99=10ms)\n"
		"      --preset P       default, quick (0.5 s trials, 2%% width) or rfc2544 (60 s\n"
		"                       trials, zero loss)\n"
		"      --min R, --max R loads to search between (default 1k and 1M frames/s)\n"
		"      --width W        relative width of the final interval (default 0.005)\n"
		"      --trial T        trial duration (default 1s)\n"
		"      --settle T       wait after a trial before reading the witness (default 300ms):\n"
		"                       frames still in queues and backlogs are counted\n"
		"      --pause T        between trials (e.g. to let a server's queues drain)\n"
		"      --witness-token-file F  an http witness's bearer token (count --token-file)\n"
		"      --warmup T       first a trial of T at --min, not counted (warms caches, ARP,\n"
		"                       connection tracking)\n"
		"      --json FILE|-, --csv FILE, --svg FILE   results, every trial, a plot\n"
		"\n"
		"A trial whose sender fell behind its schedule is marked SENDER SHORT, tried once\n"
		"more, and never classified; a second one at the same load lowers the searched\n"
		"maximum to what the sender keeps. Ctrl-C stops the search and still writes the\n"
		"bounds found so far (text, JSON, CSV, SVG).\n"
		"\n"
		"Exit status: 0 every goal found, 1 the search ended early (trial limit, or the\n"
		"sender cannot offer --min), 2 bad usage, 3 the environment (a trial or the witness\n"
		"failed), 4 interrupted.\n"
		"\n"
		"Examples:\n"
		"  xdpreplay search --witness http://198.18.0.2:9100/ --max 2M -- replay -i eth1 frame.pcap\n"
		"  xdpreplay search --witness replies --goal p=0.001 -- gen syn -i eth1 --dst 198.18.0.2:80\n"
		"  xdpreplay search --witness replies --latency-goal p99=10ms -- gen syn -i eth1 --dst 198.18.0.2:80\n"
		"  xdpreplay search --witness replies --max 100k -- lorawan send -i eth1 --fleet f/ --server 198.18.0.2\n");
}

int cmd_search(int argc, char **argv)
{
	enum { O_WITNESS = 256, O_GOAL, O_PRESET, O_MIN, O_MAX, O_WIDTH, O_TRIAL, O_SETTLE, O_JSON, O_CSV, O_SVG,
	       O_FIELD, O_LATENCY, O_PAUSE, O_WARMUP, O_TOKEN };
	static const struct option opts[] = {
		{ "witness", required_argument, NULL, O_WITNESS },
		{ "goal", required_argument, NULL, O_GOAL },
		{ "witness-field", required_argument, NULL, O_FIELD },
		{ "latency-goal", required_argument, NULL, O_LATENCY },
		{ "preset", required_argument, NULL, O_PRESET },
		{ "min", required_argument, NULL, O_MIN },
		{ "max", required_argument, NULL, O_MAX },
		{ "width", required_argument, NULL, O_WIDTH },
		{ "trial", required_argument, NULL, O_TRIAL },
		{ "settle", required_argument, NULL, O_SETTLE },
		{ "pause", required_argument, NULL, O_PAUSE },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "witness-token-file", required_argument, NULL, O_TOKEN },
		{ "json", required_argument, NULL, O_JSON },
		{ "csv", required_argument, NULL, O_CSV },
		{ "svg", required_argument, NULL, O_SVG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct search *s = calloc(1, sizeof(*s));
	const char *json_path = NULL, *csv_path = NULL, *svg_path = NULL;
	static char names[MAX_GOALS][32];
	int opt, err, ret = XR_EXIT_USAGE, loss_goals = 0;
	char a[16], b[16], c[16], d[16];

	if (!s)
		return XR_EXIT_ENV;
	s->min = 1000;
	s->max = 1000000;
	s->width = 0.005;
	s->trial_ns = 1000000000ULL;
	s->settle_ns = 300000000ULL;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:vh", opts, NULL)) != -1) {
		switch (opt) {
		case O_WITNESS: s->witness = optarg; break;
		case O_GOAL: {
			const char *eq = strchr(optarg, '=');
			double v;

			char lossbuf[32], *comma;
			double exceed = 0;
			uint64_t dsum = 0;

			snprintf(lossbuf, sizeof(lossbuf), "%s", eq ? eq + 1 : "");
			comma = strchr(lossbuf, ',');
			if (comma)
				*comma = 0;
			/* optional ,exceed=X,dsum=T (RFC 9971's goal exceed ratio and duration sum) */
			for (const char *p = eq ? strchr(eq, ',') : NULL; p; p = strchr(p + 1, ',')) {
				char val[32];

				if (sscanf(p, ",exceed=%31[^,]", val) == 1 && !parse_number(val, &exceed) && exceed < 1)
					continue;
				if (sscanf(p, ",dsum=%31[^,]", val) == 1 && !parse_duration(val, &dsum))
					continue;
				eq = NULL;
				break;
			}
			if (!eq || eq == optarg || eq - optarg >= 32 || s->ng >= MAX_GOALS ||
			    parse_number(lossbuf, &v) || v >= 1) {
				ret = cli_usage_error("search", "--goal: '%s' is not NAME=LOSS[,exceed=X][,dsum=T] "
						      "(e.g. PDR=0.005)", optarg);
				goto out;
			}
			snprintf(names[s->ng], sizeof(names[0]), "%.*s", (int)(eq - optarg), optarg);
			s->g[s->ng] = (struct goal){ .loss = v, .exceed = exceed, .dsum = dsum / 1e9, .name = names[s->ng] };
			s->ng++;
			break;
		}
		case O_FIELD: s->field = optarg; break;
		case O_LATENCY: {
			const char *eq = strchr(optarg, '=');
			uint64_t ns;

			if (!eq || eq == optarg || eq - optarg >= 32 || s->ng >= MAX_GOALS || parse_duration(eq + 1, &ns) ||
			    !ns) {
				ret = cli_usage_error("search", "--latency-goal: '%s' is not NAME=DURATION (e.g. p99=10ms)",
						      optarg);
				goto out;
			}
			snprintf(names[s->ng], sizeof(names[0]), "%.*s", (int)(eq - optarg), optarg);
			s->g[s->ng] = (struct goal){ .p99_us = ns / 1e3, .name = names[s->ng] };
			s->ng++;
			break;
		}
		case O_PRESET:
			if (!strcmp(optarg, "quick")) {
				s->trial_ns = 500000000ULL;
				s->width = 0.02;
			} else if (!strcmp(optarg, "rfc2544")) {
				s->trial_ns = 60000000000ULL;
				s->ng = 1;
				s->g[0] = (struct goal){ .loss = 0, .name = "NDR" };
			} else if (strcmp(optarg, "default")) {
				ret = cli_usage_error("search", "--preset: '%s' is not default, quick or rfc2544", optarg);
				goto out;
			}
			break;
		case O_MIN: if (cli_number("search", "min", optarg, &s->min)) goto out; break;
		case O_MAX: if (cli_number("search", "max", optarg, &s->max)) goto out; break;
		case O_WIDTH:
			if (cli_number("search", "width", optarg, &s->width) || s->width <= 0 || s->width >= 1) {
				ret = cli_usage_error("search", "--width must be between 0 and 1");
				goto out;
			}
			break;
		case O_TRIAL: if (cli_duration("search", "trial", optarg, &s->trial_ns)) goto out; break;
		case O_SETTLE: if (cli_duration("search", "settle", optarg, &s->settle_ns)) goto out; break;
		case O_PAUSE: if (cli_duration("search", "pause", optarg, &s->pause_ns)) goto out; break;
		case O_WARMUP: if (cli_duration("search", "warmup", optarg, &s->warmup_ns)) goto out; break;
		case O_TOKEN:
			if (httpd_read_token(optarg, s->token, sizeof(s->token)))
				goto out;
			break;
		case O_JSON: json_path = optarg; break;
		case O_CSV: csv_path = optarg; break;
		case O_SVG: svg_path = optarg; break;
		case 'v': xr_verbosity++; break;
		case 'h': usage(stdout); ret = XR_EXIT_OK; goto out;
		default: ret = cli_bad_option("search", argv, opt); goto out;
		}
	}
	if (optind >= argc || (strcmp(argv[optind], "replay") && strcmp(argv[optind], "gen") &&
			       (strcmp(argv[optind], "lorawan") || optind + 1 >= argc ||
				strcmp(argv[optind + 1], "send")))) {
		ret = cli_usage_error("search", "give the trial after --: replay ARGS..., gen udp|syn ARGS... or "
				      "lorawan send ARGS...");
		goto out;
	}
	s->lorawan = !strcmp(argv[optind], "lorawan");
	if (!s->witness || (strncmp(s->witness, "http://", 7) && strcmp(s->witness, "replies") &&
			    strncmp(s->witness, "cmd:", 4))) {
		ret = cli_usage_error("search", "--witness http://ADDR:PORT/, replies or cmd:COMMAND is needed");
		goto out;
	}
	if (s->min <= 0 || s->min >= s->max) {
		ret = cli_usage_error("search", "--min must be above 0 and below --max");
		goto out;
	}
	for (int i = optind + 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pps") || !strcmp(argv[i], "--rate") || !strcmp(argv[i], "--duration") ||
		    !strcmp(argv[i], "--count") || !strcmp(argv[i], "--topspeed") || !strcmp(argv[i], "--json")) {
			ret = cli_usage_error("search", "the trial's %s is the search's to set", argv[i]);
			goto out;
		}
	}
	/* the replies witness counts SYN-ACKs or PUSH_ACKs: nothing else answers a trial */
	if (!strcmp(s->witness, "replies") && !s->lorawan &&
	    (strcmp(argv[optind], "gen") || optind + 1 >= argc || strcmp(argv[optind + 1], "syn"))) {
		ret = cli_usage_error("search", "--witness replies counts the answers of gen syn and lorawan send; "
				      "for %s use http://ADDR:PORT/ (count --listen on the server) or cmd:COMMAND",
				      argv[optind]);
		goto out;
	}
	for (int gi = 0; gi < s->ng; gi++) {
		if (s->g[gi].p99_us > 0 && strcmp(s->witness, "replies")) {
			ret = cli_usage_error("search", "--latency-goal needs --witness replies (the round trips of gen "
					      "syn or lorawan send)");
			goto out;
		}
		loss_goals += s->g[gi].p99_us <= 0;
	}
	/* the default loss goals stay unless the user gave loss goals of their own */
	if (!loss_goals) {
		if (s->ng + 2 > MAX_GOALS) {
			ret = cli_usage_error("search", "at most %d goals with the default NDR and PDR", MAX_GOALS - 2);
			goto out;
		}
		memmove(&s->g[2], &s->g[0], s->ng * sizeof(s->g[0]));
		s->g[0] = (struct goal){ .loss = 0, .name = "NDR" };
		s->g[1] = (struct goal){ .loss = 0.005, .name = "PDR" };
		s->ng += 2;
		if (s->ng > 2)
			fprintf(stderr, "search: with the default goals NDR (loss 0) and PDR (loss 0.5%%)\n");
	}
	/* without a duration sum, one trial judges a load */
	for (int gi = 0; gi < s->ng; gi++)
		if (s->g[gi].dsum < s->trial_ns / 1e9)
			s->g[gi].dsum = s->trial_ns / 1e9;
	if (cli_need_root("search")) {
		ret = XR_EXIT_ENV;
		goto out;
	}
	s->cmd = argv + optind;
	s->ncmd = argc - optind;
	s->max_asked = s->max;
	s->start_unix = time(NULL);
	cli_catch_signals();
	fprintf(stderr, "search: %s to %s frames/s, %.1f s trials, width %.3f, witness %s\n",
		fmt_si(s->min, a, sizeof(a)), fmt_si(s->max, b, sizeof(b)), s->trial_ns / 1e9, s->width, s->witness);
	err = 0;
	if (s->warmup_ns) {
		uint64_t trial = s->trial_ns;
		struct trial w = {};

		s->trial_ns = s->warmup_ns;
		err = run_trial(s, s->min, &w);
		s->trial_ns = trial;
		if (err == -EINTR)
			s->interrupted = true;
		else if (err)
			goto env;
		else
			fprintf(stderr, "  warm-up: %.1f s at %s pps, loss %.5f (not counted)\n", s->warmup_ns / 1e9,
				fmt_si(s->min, a, sizeof(a)), w.loss);
	}
	if (!err)
		err = do_search(s);
	if (err && err != -EINTR && err != -ERANGE)
		goto env;
	if (s->interrupted) {
		s->stop_why = "interrupted";
		fprintf(stderr, "search: interrupted after %d trials; the bounds so far:\n", s->nt);
	}
	for (int gi = 0; gi < s->ng; gi++) {
		struct goal *g = &s->g[gi];
		char lim[32];

		classify(s, g);
		if (g->p99_us > 0)
			snprintf(lim, sizeof(lim), "p99 <= %s", fmt_duration((uint64_t)(g->p99_us * 1e3), d, sizeof(d)));
		else
			snprintf(lim, sizeof(lim), "loss <= %g", g->loss);
		fprintf(stderr, "%s (%s): lower bound %s frames/s (received %s/s), upper bound %s%s\n", g->name, lim,
			fmt_si(g->lower, a, sizeof(a)), fmt_si(conditional_throughput(s, g), c, sizeof(c)),
			g->upper ? fmt_si(g->upper, b, sizeof(b)) : "none",
			g->lower >= s->max ? " (the server was never saturated: the lower bound is the most offered)" : "");
	}
	if (write_results(s, json_path, csv_path, svg_path)) {
		ret = XR_EXIT_ENV;
		goto out;
	}
	ret = s->interrupted ? XR_EXIT_INTERRUPTED : s->stop_why ? XR_EXIT_FAIL : XR_EXIT_OK;
	goto out;
env:
	ret = XR_EXIT_ENV;
	goto out;
out:
	free(s);
	return ret;
}
