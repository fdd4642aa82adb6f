// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay search's trials and its bisection. Loss is measured against what
 * was asked for, so frames the sender could not send count as loss too (and
 * are reported as such). A trial whose sender fell behind its schedule
 * measured the sender, not the server: it is shown and kept, but never
 * classified.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include "cmd/cli.h"
#include "engine/pacer.h"
#include "search/search.h"
#include "send/run.h"
#include "util/jsonpath.h"
#include "util/log.h"
#include "util/units.h"

/*
 * One trial at load pps: the trial's sender in a child process (its BPF
 * state dies with it), run from the options parsed once with this trial's
 * rate, duration and first sequence number set in a copy; then the witness.
 */
int run_trial(struct search *s, double load, struct trial *t)
{
	char json[] = "/tmp/xdpreplay-trial.XXXXXX";
	struct json_object *result = NULL;
	uint64_t before, after, sent, asked;
	bool replies = !strcmp(s->witness, "replies");
	struct trial a0 = {};
	int fd, status, err;
	pid_t pid;

	if (xr_stop)
		return -EINTR;
	fd = mkstemp(json);
	if (fd < 0)
		return -errno;
	close(fd);
	err = witness_read(s, &before, &a0);
	if (err && xr_stop)
		err = -EINTR;
	if (err) {
		pr_warn("cannot read the witness %s: %s\n", s->witness, strerror(-err));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0) {
		struct send_opts so = s->so;

		so.pace = XR_PACE_RATE;
		so.pps = load;
		so.rate_bps = 0;
		so.duration_ns = s->trial_ns;
		so.json_path = json;
		so.quiet = true;
		xr_verbosity = XR_LOG_WARN;
		/* each trial goes on where the last stopped: no repeated sources, ports or ISNs */
		so.first_n = s->next_n;
		_exit(send_run(&so, s->proto, s->proto_state));
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
		pr_warn("the trial at %.0f pps failed (exit %d)\n", load,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		err = -ECHILD;
		goto out;
	}
	/* frames still in flight (queues, the server's backlog) are counted before reading */
	sleep_until(now_ns() + s->settle_ns);
	result = json_object_from_file(json);
	err = !result				   ? -EPROTO :
	      json_path_u64(result, "sent", &sent) ?:
						     json_path_u64(result, "asked", &asked);
	if (!err && replies)
		err = json_path_u64(result, s->proto->witness, &after);
	else if (!err)
		err = witness_read(s, &after, t);
	if (err && xr_stop)
		err = -EINTR;
	if (err) {
		pr_warn("cannot read the trial's results: %s\n", strerror(-err));
		goto out;
	}
	s->next_n += asked;
	t->load = load;
	t->asked = asked;
	t->sent = sent;
	/* a witness whose count went down restarted: the trial cannot be read from it */
	t->witness_reset = !replies && after < before;
	t->received = replies ? after : t->witness_reset ? 0 : after - before;
	t->loss = asked ? (asked > t->received ? (double)(asked - t->received) / asked : 0) : 1;
	t->duration_s = s->trial_ns / 1e9;
	if (json_path_double(result, s->proto->latency ?: "replies.rtt_us.p99", &t->p99_us))
		t->p99_us = -1;
	/* growth during the trial, by name: a drop reason may first appear after the trial */
	for (int i = 0; i < t->nattr; i++)
		for (int k = 0; k < a0.nattr; k++)
			if (!strcmp(t->attr_name[i], a0.attr_name[k]))
				t->attr[i] = t->attr[i] >= a0.attr[k] ? t->attr[i] - a0.attr[k] : 0;
	if (json_path_u64(result, "failed_reasons.fell_behind", &t->behind))
		t->behind = 0;
	t->sender_short = t->behind > 0;
out:
	if (result)
		json_object_put(result);
	unlink(json);
	return err;
}

static void print_trial(const struct trial *t, int i)
{
	char a[16], d[16];

	fprintf(stderr,
		"  trial %2d: offered %9s pps  asked %10llu  sent %10llu  received %10llu  loss %.5f",
		i + 1, fmt_si(t->load, a, sizeof(a)), (unsigned long long)t->asked,
		(unsigned long long)t->sent, (unsigned long long)t->received, t->loss);
	if (t->witness_reset)
		fprintf(stderr, "  WITNESS RESET (its count went down: not counted)");
	else if (t->sender_short)
		fprintf(stderr, "  SENDER SHORT (%llu behind: not counted)",
			(unsigned long long)t->behind);
	else if (t->sent < t->asked)
		fprintf(stderr, "  (%llu not sent: driver refused)",
			(unsigned long long)(t->asked - t->sent));
	if (t->p99_us >= 0)
		fprintf(stderr, "  p99 %s",
			fmt_duration((uint64_t)(t->p99_us * 1e3), d, sizeof(d)));
	/* where the server dropped: every drop counter that moved */
	for (int k = 0; k < t->nattr; k++)
		if (t->attr[k] && strcmp(t->attr_name[k], "udp_delivered") &&
		    strcmp(t->attr_name[k], "udp_no_ports"))
			fprintf(stderr, "  %s %llu", t->attr_name[k],
				(unsigned long long)t->attr[k]);
	fputc('\n', stderr);
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
		fmt_duration((uint64_t)left * (s->trial_ns + s->settle_ns + s->pause_ns), c,
			     sizeof(c)));
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
			fmt_si(s->min, a, sizeof(a)),
			fmt_si(t->sent / t->duration_s, b, sizeof(b)));
		s->stop_why = "the sender cannot offer --min";
		return -ERANGE;
	}
	pr_warn("warning: the sender fell behind twice at %s pps: searching up to %s pps (what it keeps)\n",
		fmt_si(load, a, sizeof(a)), fmt_si(kept, b, sizeof(b)));
	s->max = kept;
	return 0;
}

int do_search(struct search *s)
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
			if (s->nt && !trial_counted(&s->t[s->nt - 1]))
				next = s->t[s->nt - 1]
					       .load; /* once more: the host may only have been busy */
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
			if (s->nt >= s->max_trials) {
				pr_warn("%d trials (--max-trials) and not done; the bounds so far are "
					"reported\n",
					s->max_trials);
				s->stop_why = "trial limit reached";
				return 0;
			}
			if (s->max_time_ns && now_ns() - s->start_ns >= s->max_time_ns) {
				pr_warn("%.0f s (--max-time) and not done after %d trials; the bounds so "
					"far are reported\n",
					s->max_time_ns / 1e9, s->nt);
				s->stop_why = "time limit reached";
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
