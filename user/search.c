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
 * its method): for each goal (a loss ratio), the lower bound is the highest
 * load whose trial met the goal, the upper bound the lowest load whose trial
 * did not; it halves the interval until it is narrower than the goal width.
 * Trial results are shared between goals. Not implemented: trial duration
 * escalation, repeated trials and the exceed ratio (one trial per load).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "cli.h"
#include "engine.h"
#include "json.h"
#include "log.h"
#include "pacer.h"
#include "units.h"

#define MAX_TRIALS 64
#define MAX_GOALS 4

#define MAX_ATTR 16

struct trial {
	double load;        /* asked frames per second */
	uint64_t asked, sent, received;
	double loss;        /* (asked - received) / asked */
	double duration_s;
	double p99_us;      /* gen syn: 99th percentile round trip; < 0 when unknown */
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
	uint64_t pause_ns;    /* between trials */
	uint64_t warmup_ns;   /* a first trial at --min, not counted */
};

/* GET / from a counter's --listen endpoint into buf (NUL-terminated). */
static int http_get_json(const char *url, char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	unsigned int port;
	size_t got = 0;
	char host[64];
	int fd, err = 0;
	ssize_t n;

	if (sscanf(url, "http://%63[0-9.]:%u", host, &port) != 2 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    port < 1 || port > 65535)
		return -EINVAL;
	sa.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto out;
	}
	dprintf(fd, "GET / HTTP/1.0\r\n\r\n");
	while (got < len - 1) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		if (poll(&pf, 1, 3000) <= 0) {
			err = -ETIMEDOUT;
			goto out;
		}
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
out:
	buf[got] = 0;
	close(fd);
	return err;
}

/* A number in flat JSON: the last component of a dotted name, searched after the others in turn. */
static int json_find_u64(const char *json, const char *dotted, uint64_t *v)
{
	char name[96], pat[100], *part, *save = NULL;
	const char *at = json;

	snprintf(name, sizeof(name), "%s", dotted);
	for (part = strtok_r(name, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		/* kernel counters are keyed "Udp.NoPorts": try the rest of the name as one key first */
		char *rest = save && *save ? save : NULL;

		if (rest) {
			snprintf(pat, sizeof(pat), "\"%s.%s\":", part, rest);
			if (strstr(at, pat)) {
				at = strstr(at, pat) + strlen(pat);
				return sscanf(at, "%lu", v) == 1 ? 0 : -EPROTO;
			}
		}
		snprintf(pat, sizeof(pat), "\"%s\":", part);
		at = strstr(at, pat);
		if (!at)
			return -ENOENT;
		at += strlen(pat);
	}
	return sscanf(at, "%lu", v) == 1 ? 0 : -EPROTO;
}

/* The attribution object's counters, in order. */
static void json_attribution(const char *json, struct trial *t)
{
	const char *p = strstr(json, "\"attribution\":{"), *end;

	t->nattr = 0;
	if (!p)
		return;
	p += strlen("\"attribution\":{");
	end = strchr(p, '}');
	while (p && p < end && t->nattr < MAX_ATTR) {
		unsigned long v;
		char key[32];

		if (sscanf(p, "\"%31[^\"]\":%lu", key, &v) != 2)
			break;
		snprintf(t->attr_name[t->nattr], sizeof(t->attr_name[0]), "%s", key);
		t->attr[t->nattr++] = v;
		p = strchr(p, ',');
		if (p)
			p++;
	}
}

static int witness_http(const struct search *s, uint64_t *out, struct trial *attr)
{
	static char buf[65536];
	int err = http_get_json(s->witness, buf, sizeof(buf));

	if (err)
		return err;
	if (attr)
		json_attribution(buf, attr);
	err = json_find_u64(buf, s->field ? s->field : "matched", out);
	if (err == -ENOENT)
		pr_warn("the witness has no field %s\n", s->field ? s->field : "matched");
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

/* The trial's JSON result, read once into buf (NUL-terminated). */
static int read_file(const char *path, char *buf, size_t len)
{
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return 0;
}

/* One trial at load pps: the child replay/gen, then the witness. */
static int run_trial(struct search *s, double load, struct trial *t)
{
	char rate[32], dur[32], first[32], json[] = "/tmp/xdpreplay-trial.XXXXXX";
	static char result[65536];
	/* "xdpreplay", the command (and subcommand), 10 options and values of ours, NULL */
	char **argv = calloc(s->ncmd + 14, sizeof(char *));
	uint64_t before, after, sent, asked, p99;
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
	/* exit 1 means some frames were not sent: that is loss at the sender, still a trial */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
		pr_warn("the trial at %s pps failed (exit %d)\n", rate,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		err = -ECHILD;
		goto out;
	}
	/* frames still in flight (queues, the server's backlog) are counted before reading */
	sleep_until(now_ns() + s->settle_ns);
	err = read_file(json, result, sizeof(result)) ?: json_find_u64(result, "sent", &sent) ?:
	      json_find_u64(result, "asked", &asked);
	if (!err && !strcmp(s->witness, "replies"))
		err = json_find_u64(result, s->lorawan ? "replies.push_acks" : "replies.syn_acks", &after);
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
	t->received = strcmp(s->witness, "replies") ? after - before : after;
	t->loss = asked ? (asked > t->received ? (double)(asked - t->received) / asked : 0) : 1;
	t->duration_s = s->trial_ns / 1e9;
	/* json_find_u64 reads integers: the p99 in microseconds is printed with decimals */
	t->p99_us = -1;
	if (!json_find_u64(result, "replies.rtt_us.p99", &p99))
		t->p99_us = p99;
	for (int i = 0; i < t->nattr && i < a0.nattr; i++)
		t->attr[i] = t->attr[i] >= a0.attr[i] ? t->attr[i] - a0.attr[i] : 0;
out:
	unlink(json);
	free(argv);
	return err;
}

static void print_trial(const struct trial *t, int i)
{
	char a[16];

	fprintf(stderr, "  trial %2d: offered %9s pps  asked %10llu  sent %10llu  received %10llu  loss %.5f%s",
		i + 1, fmt_si(t->load, a, sizeof(a)), (unsigned long long)t->asked, (unsigned long long)t->sent,
		(unsigned long long)t->received, t->loss, t->sent < t->asked ? "  (sender short)" : "");
	if (t->p99_us >= 0)
		fprintf(stderr, "  p99 %.0f us", t->p99_us);
	/* where the server dropped: every drop counter that moved */
	for (int k = 0; k < t->nattr; k++)
		if (t->attr[k] && strcmp(t->attr_name[k], "udp_delivered") && strcmp(t->attr_name[k], "udp_no_ports"))
			fprintf(stderr, "  %s %llu", t->attr_name[k], (unsigned long long)t->attr[k]);
	fputc('\n', stderr);
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

		for (int j = 0; j < i; j++)
			seen |= s->t[j].load == load;
		if (seen)
			continue;
		for (int j = i; j < s->nt; j++) {
			if (s->t[j].load != load)
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
		if (s->t[i].load == g->lower) {
			rx += s->t[i].received;
			dur += s->t[i].duration_s;
		}
	}
	return dur > 0 ? rx / dur : 0;
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
			if (g->pending)
				next = g->pending; /* this load needs more trial time to be judged */
			else if (!g->lower && !g->upper)
				next = s->max;
			else if (!g->lower)
				next = fmax(s->min, g->upper / 2);
			else if (!g->upper)
				next = fmin(s->max, g->lower * 2);
			else
				next = (g->lower + g->upper) / 2;
			if (s->nt >= MAX_TRIALS) {
				pr_warn("%d trials and not done; the bounds so far are reported\n", MAX_TRIALS);
				break;
			}
			if (s->nt && s->pause_ns)
				sleep_until(now_ns() + s->pause_ns);
			err = run_trial(s, next, &s->t[s->nt]);
			if (err)
				return err;
			print_trial(&s->t[s->nt], s->nt);
			s->nt++;
			if (xr_stop)
				return -EINTR;
		}
	}
	return 0;
}

static void write_svg(const struct search *s, FILE *f)
{
	const double W = 640, H = 400, L = 70, R = 20, T = 30, B = 50;
	double xmax = s->max * 1.05, ymax = 0;
	char a[16];

	for (int i = 0; i < s->nt; i++)
		ymax = fmax(ymax, fmax(s->t[i].load, s->t[i].received / s->t[i].duration_s));
	ymax = ymax > 0 ? ymax * 1.1 : 1;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' "
		   "font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n", W, H);
	fprintf(f, "<text x='%.0f' y='18' text-anchor='middle' font-size='14'>Offered vs received "
		   "(one point per trial)</text>\n", W / 2);
	fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='black'/>\n", L, H - B, W - R, H - B);
	fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='black'/>\n", L, T, L, H - B);
	/* the diagonal: everything offered was received */
	fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.1f' y2='%.1f' stroke='#bbb' stroke-dasharray='4'/>\n", L,
		H - B, L + (W - L - R) * fmin(1, ymax / xmax), H - B - (H - T - B) * fmin(1, xmax / ymax));
	for (int k = 0; k <= 4; k++) {
		double x = L + (W - L - R) * k / 4, y = H - B - (H - T - B) * k / 4;

		fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='middle'>%s</text>\n", x, H - B + 16,
			fmt_si(xmax * k / 4, a, sizeof(a)));
		fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='end'>%s</text>\n", L - 6, y + 4,
			fmt_si(ymax * k / 4, a, sizeof(a)));
	}
	fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='middle'>offered (frames/s)</text>\n", (L + W - R) / 2,
		H - 12);
	fprintf(f, "<text x='16' y='%.0f' transform='rotate(-90 16 %.0f)' text-anchor='middle'>received "
		   "(frames/s)</text>\n", (T + H - B) / 2, (T + H - B) / 2);
	for (int i = 0; i < s->nt; i++) {
		const struct trial *t = &s->t[i];
		double x = L + (W - L - R) * t->load / xmax;
		double y = H - B - (H - T - B) * (t->received / t->duration_s) / ymax;

		fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'><title>offered %.0f, loss %.5f</title>"
			   "</circle>\n", x, y, t->loss > 0 ? "#c33" : "#393", t->load, t->loss);
	}
	fprintf(f, "<circle cx='%.0f' cy='%.0f' r='4' fill='#393'/><text x='%.0f' y='%.0f'>no loss</text>\n"
		   "<circle cx='%.0f' cy='%.0f' r='4' fill='#c33'/><text x='%.0f' y='%.0f'>loss (ratio on hover)</text>\n",
		W - 190, T + 12, W - 182, T + 16, W - 190, T + 28, W - 182, T + 32);
	for (int gi = 0; gi < s->ng; gi++) {
		double x = L + (W - L - R) * s->g[gi].lower / xmax;

		if (!s->g[gi].lower)
			continue;
		fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='#36c'/>\n", x, T, x, H - B);
		fprintf(f, "<text x='%.1f' y='%.0f' fill='#36c'>%s %s</text>\n", x + 4, T + 14 + 14 * gi,
			s->g[gi].name, fmt_si(s->g[gi].lower, a, sizeof(a)));
	}
	fprintf(f, "</svg>\n");
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
		"      --warmup T       first a trial of T at --min, not counted (warms caches, ARP,\n"
		"                       connection tracking)\n"
		"      --json FILE|-, --csv FILE, --svg FILE   results, every trial, a plot\n"
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
	       O_FIELD, O_LATENCY, O_PAUSE, O_WARMUP };
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
	int opt, err, ret = XR_EXIT_USAGE;
	char a[16], b[16], c[16];
	FILE *f;

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
	if (!s->ng) {
		s->g[s->ng++] = (struct goal){ .loss = 0, .name = "NDR" };
		s->g[s->ng++] = (struct goal){ .loss = 0.005, .name = "PDR" };
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
	cli_catch_signals();
	fprintf(stderr, "search: %s to %s frames/s, %.1f s trials, width %.3f, witness %s\n",
		fmt_si(s->min, a, sizeof(a)), fmt_si(s->max, b, sizeof(b)), s->trial_ns / 1e9, s->width, s->witness);
	if (s->warmup_ns) {
		uint64_t trial = s->trial_ns;
		struct trial w = {};

		s->trial_ns = s->warmup_ns;
		err = run_trial(s, s->min, &w);
		s->trial_ns = trial;
		if (err) {
			ret = XR_EXIT_ENV;
			goto out;
		}
		fprintf(stderr, "  warm-up: %.1f s at %s pps, loss %.5f (not counted)\n", s->warmup_ns / 1e9,
			fmt_si(s->min, a, sizeof(a)), w.loss);
	}
	err = do_search(s);
	if (err) {
		ret = err == -EINTR ? XR_EXIT_FAIL : XR_EXIT_ENV;
		goto out;
	}
	for (int gi = 0; gi < s->ng; gi++) {
		struct goal *g = &s->g[gi];

		classify(s, g);
		fprintf(stderr, "%s (%s <= %g): lower bound %s frames/s (received %s/s), upper bound %s%s\n", g->name,
			g->p99_us > 0 ? "p99 us" : "loss", g->p99_us > 0 ? g->p99_us : g->loss,
			fmt_si(g->lower, a, sizeof(a)), fmt_si(conditional_throughput(s, g), c, sizeof(c)), g->upper ? fmt_si(g->upper, b, sizeof(b)) : "none",
			g->lower >= s->max ? " (the server was never saturated: the lower bound is the most offered)" : "");
	}
	if (json_path && (f = json_fopen(json_path))) {
		struct json j = { .f = f };

		json_open(&j, NULL, '{');
		json_str(&j, "witness", s->witness);
		json_double(&j, "trial_s", s->trial_ns / 1e9);
		json_open(&j, "goals", '[');
		for (int gi = 0; gi < s->ng; gi++) {
			json_open(&j, NULL, '{');
			json_str(&j, "name", s->g[gi].name);
			if (s->g[gi].p99_us > 0)
				json_double(&j, "p99_us", s->g[gi].p99_us);
			else
				json_double(&j, "loss", s->g[gi].loss);
			json_double(&j, "lower", s->g[gi].lower);
			json_double(&j, "upper", s->g[gi].upper);
			json_flag(&j, "never_saturated", s->g[gi].lower >= s->max);
			json_double(&j, "conditional_throughput", conditional_throughput(s, &s->g[gi]));
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_open(&j, "trials", '[');
		for (int i = 0; i < s->nt; i++) {
			json_open(&j, NULL, '{');
			json_double(&j, "offered_pps", s->t[i].load);
			json_u64(&j, "asked", s->t[i].asked);
			json_u64(&j, "sent", s->t[i].sent);
			json_u64(&j, "received", s->t[i].received);
			json_double(&j, "loss", s->t[i].loss);
			if (s->t[i].p99_us >= 0)
				json_double(&j, "p99_us", s->t[i].p99_us);
			json_open(&j, "server_drops", '{');
			for (int k = 0; k < s->t[i].nattr; k++)
				json_u64(&j, s->t[i].attr_name[k], s->t[i].attr[k]);
			json_close(&j, '}');
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_close(&j, '}');
		json_fclose(f);
	}
	if (csv_path && (f = fopen(csv_path, "w"))) {
		fprintf(f, "trial,offered_pps,asked,sent,received,loss\n");
		for (int i = 0; i < s->nt; i++)
			fprintf(f, "%d,%.0f,%llu,%llu,%llu,%.6f\n", i + 1, s->t[i].load,
				(unsigned long long)s->t[i].asked, (unsigned long long)s->t[i].sent,
				(unsigned long long)s->t[i].received, s->t[i].loss);
		fclose(f);
	}
	if (svg_path && (f = fopen(svg_path, "w"))) {
		write_svg(s, f);
		fclose(f);
	}
	ret = XR_EXIT_OK;
out:
	free(s);
	return ret;
}
