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
#include "util/time.h"
#include "search/search.h"
#include "send/run.h"
#include "util/jsonpath.h"
#include "util/log.h"
#include "util/units.h"

/* The last line a shard wrote on stderr (why it failed), and the rest echoed with its rank. */
static void shard_stderr(const char *path, struct rank_result *r, bool echo)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!*line)
			continue;
		/* the line cut to fit: why is a reason, not a log */
		memcpy(r->why, line, sizeof(r->why) - 1);
		r->why[sizeof(r->why) - 1] = 0;
		if (echo)
			fprintf(stderr, "  rank %d: %s\n", xr_rank, line);
	}
	fclose(f);
}

/*
 * This rank's part of trial rt: the sender in a child process (its BPF state
 * dies with it), run from the options parsed once with the trial's rate,
 * duration, first sequence number (and under MPI its shard and start) set in
 * a copy; then what its JSON says. -EINTR when interrupted; a shard that
 * failed is not an error here (r->exit says so, r->why why).
 */
static int shard_trial(struct search *s, const struct rank_trial *rt, struct rank_result *r)
{
	char json[] = "/tmp/xdpreplay-trial.XXXXXX", errs[] = "/tmp/xdpreplay-trial-err.XXXXXX";
	bool replies = !strcmp(s->witness, "replies"), mpi = xr_nranks > 1;
	struct trial_paths paths = { .witness = s->proto->witness,
				     .latency = s->proto->latency ?: "replies.rtt_us.p99",
				     .asked = "asked",
				     .sent = "sent",
				     .behind = "failed_reasons.fell_behind" };
	struct json_object *result = NULL;
	int fd, efd = -1, status = 0, err = 0;
	pid_t pid;

	*r = (struct rank_result){ .exit = -1, .p99_us = -1 };
	if (s->proto->trial_paths)
		s->proto->trial_paths(s->proto_state, &paths);
	fd = mkstemp(json);
	if (fd < 0)
		return -errno;
	close(fd);
	/* under MPI a shard's messages are kept: its last line is why it failed */
	if (mpi) {
		efd = mkstemp(errs);
		if (efd < 0) {
			err = -errno;
			goto out;
		}
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0) {
		struct send_opts so = s->so;

		if (efd >= 0)
			dup2(efd, STDERR_FILENO);
		if (s->paced) {
			/* the trial's sessions and connection rate are its own: the load is its pace */
			int ret =
				s->proto->paced_trial(s->proto_state, &so, rt->load, rt->trial_ns);

			if (ret)
				_exit(ret);
			/* what is answered by the schedule's end and the settle time counts, as RFC 2544's wait */
			so.reply_wait_ns = s->settle_ns;
		} else {
			so.pace = XR_PACE_RATE;
			so.pps = rt->load;
			so.rate_bps = 0;
			so.duration_ns = rt->trial_ns;
		}
		so.json_path = json;
		so.quiet = true;
		xr_verbosity = XR_LOG_WARN;
		/* each trial goes on where the last stopped: no repeated sources, ports or ISNs */
		so.first_n = rt->first_n;
		so.trial = rt->trial;
		if (mpi) {
			so.shard = xr_rank;
			so.shards = xr_nranks;
			so.start_unix_ns = rt->start_unix_ns;
		}
		_exit(send_run_with_peer(&so, s->proto, s->proto_state));
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		if (xr_stop)
			kill(pid, SIGINT);
	r->exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (mpi)
		shard_stderr(errs, r, true);
	/* an interrupted trial measured nothing: it is not reported as one */
	if (xr_stop || r->exit == XR_EXIT_INTERRUPTED) {
		err = -EINTR;
		goto out;
	}
	/* exit 1 means some frames were not sent: that is loss at the sender, still a trial */
	if (r->exit != 0 && r->exit != 1)
		goto out;
	result = json_object_from_file(json);
	if (!result || json_path_u64(result, paths.sent, &r->sent) ||
	    json_path_u64(result, paths.asked, &r->asked) ||
	    (replies && json_path_u64(result, paths.witness, &r->witness))) {
		snprintf(r->why, sizeof(r->why), "its results (%s) could not be read", json);
		r->exit = -1;
		goto out;
	}
	r->ran = 1;
	if (json_path_double(result, paths.latency, &r->p99_us))
		r->p99_us = -1;
	if (!paths.seconds || json_path_double(result, paths.seconds, &r->rx_s))
		r->rx_s = 0;
	if (json_path_u64(result, paths.behind, &r->behind))
		r->behind = 0;
	if (json_path_double(result, "start_unix", &r->start_unix))
		r->start_unix = 0;
	if (json_path_u64(result, "shard.unit", &r->unit) || !r->unit)
		r->unit = 1;
out:
	if (result)
		json_object_put(result);
	unlink(json);
	if (efd >= 0) {
		close(efd);
		unlink(errs);
	}
	return err;
}

void trials_stop(void)
{
	struct rank_trial rt = { .stop = 1 };

	if (xr_nranks > 1 && xr_rank == 0)
		ranks_bcast(&rt);
}

int serve_trials(struct search *s)
{
	struct rank_result mine, all;
	struct rank_trial rt;
	int err;

	for (;;) {
		err = ranks_bcast(&rt);
		if (err || rt.stop)
			return err;
		err = shard_trial(s, &rt, &mine);
		/* an interrupted rank still reports, so that rank 0 is not left waiting */
		if (err == -EINTR)
			mine.exit = XR_EXIT_INTERRUPTED;
		if (ranks_gather(&mine, &all))
			return -EIO;
	}
}

/* What the ranks' parts of a trial add up to, beside the trial's own figures. */
struct trial_sums {
	uint64_t after; /* the witnesses' counts after the trial (replies: the answers) */
	uint64_t most; /* the most any rank asked for */
	uint64_t unit; /* the largest unit a rank's n come in */
	double first, last; /* the earliest and latest start (Unix s) */
};

/*
 * Every rank's part summed into t and sum; the first rank that failed is
 * flagged. -EINTR when a rank (or this process) was interrupted.
 */
static int trial_sum_ranks(const struct rank_result *all, struct trial *t, struct trial_sums *sum)
{
	for (int i = 0; i < xr_nranks; i++) {
		const struct rank_result *r = &all[i];

		if (r->exit == XR_EXIT_INTERRUPTED || xr_stop)
			return -EINTR;
		if (!r->ran) {
			if (!t->rank_failed) {
				t->rank_failed = true;
				t->failed_rank = i;
			}
			continue;
		}
		t->asked += r->asked;
		t->sent += r->sent;
		t->behind += r->behind;
		sum->after += r->witness;
		sum->most = r->asked > sum->most ? r->asked : sum->most;
		sum->unit = r->unit > sum->unit ? r->unit : sum->unit;
		if (r->p99_us > t->p99_us)
			t->p99_us = r->p99_us;
		if (r->rx_s > t->rx_s)
			t->rx_s = r->rx_s;
		if (!sum->first || r->start_unix < sum->first)
			sum->first = r->start_unix;
		if (r->start_unix > sum->last)
			sum->last = r->start_unix;
	}
	return 0;
}

/*
 * The witness after the trial into t and *after: the server's CPU since a0
 * (read before it, at read_before), and what a webhook witness must have.
 * 0 or -errno, said.
 */
static int trial_read_after(struct search *s, uint64_t first_n, const struct trial *a0,
			    uint64_t read_before, struct trial *t, uint64_t *after)
{
	int err = witness_read(s, first_n, after, t);

	if (err && xr_stop)
		return -EINTR;
	if (err) {
		pr_warn("cannot read the trial's results: %s\n", strerror(-err));
		return err;
	}
	if (t->server_cpu_s >= 0 && a0->server_cpu_s >= 0 && t->server_cpu_s >= a0->server_cpu_s) {
		t->server_cpu_s -= a0->server_cpu_s;
		t->server_cores = t->server_cpu_s / ((now_ns() - read_before) / 1e9);
	} else {
		/* none, or a counter that started over (another process) */
		t->server_cpu_s = -1;
	}
	if (t->witness_webhook && !t->from_run &&
	    (t->webhook_alone || search_has_latency_goal(s))) {
		pr_warn("the witness (count --webhook) has no run that began at n=%llu: give the "
			"trial --schedule FILE, the file count --webhook reads with --schedule\n",
			(unsigned long long)first_n);
		return -ENOENT;
	}
	if (!t->witness_webhook && search_has_latency_goal(s)) {
		pr_warn("a latency goal with an http witness needs count --webhook (its latency "
			"from departure); count --listen has none\n");
		return -EINVAL;
	}
	/* the webhook's latency from departure is what the application saw: that is judged */
	if (t->from_run)
		t->p99_us = t->run_p99_us;
	return 0;
}

/*
 * What the trial comes to: received and loss (the witness read before the
 * trial: before, a0), the drop reasons' growth; the next trial's first n.
 */
static void trial_books(struct search *s, bool replies, uint64_t before, const struct trial *a0,
			const struct trial_sums *sum, struct trial *t)
{
	uint64_t n = xr_nranks;

	/*
	 * the next trial starts past every n this one used: each shard's n are
	 * N apart, in units (an uplink's copies) that the next start keeps whole
	 */
	if (xr_nranks > 1)
		s->next_n +=
			(sum->most * n + sum->unit * n + sum->unit - 1) / sum->unit * sum->unit;
	else
		s->next_n += t->asked;
	/* a witness whose count went down restarted: the trial cannot be read from it */
	t->witness_reset = !replies && !t->webhook_alone && sum->after < before;
	t->received = replies || t->webhook_alone ? sum->after :
		      t->witness_reset		  ? 0 :
						    sum->after - before;
	t->loss = t->asked ? (t->asked > t->received ? (double)(t->asked - t->received) / t->asked :
						       0) :
			     1;
	t->duration_s = s->trial_ns / 1e9;
	if (t->rx_s < t->duration_s)
		t->rx_s = t->duration_s;
	/* growth during the trial, by name: a drop reason may first appear after the trial */
	for (int i = 0; i < t->nattr; i++)
		for (int k = 0; k < a0->nattr; k++)
			if (!strcmp(t->attr_name[i], a0->attr_name[k]))
				t->attr[i] = t->attr[i] >= a0->attr[k] ? t->attr[i] - a0->attr[k] :
									 0;
	t->sender_short = t->behind > 0;
}

/* Every rank's shard of the trial rt (one rank without MPI), gathered into all. 0 or -errno. */
static int trial_shards(struct search *s, struct rank_trial *rt, struct rank_result *all)
{
	struct rank_result mine;
	struct timespec ts;
	int err;

	if (xr_nranks > 1) {
		clock_gettime(CLOCK_REALTIME, &ts);
		rt->start_unix_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec + s->start_margin_ns;
		err = ranks_bcast(rt);
		if (err)
			return err;
	}
	err = shard_trial(s, rt, &mine);
	if (err == -EINTR)
		mine.exit = XR_EXIT_INTERRUPTED;
	/* rank 0 gathers whatever went wrong here: the other ranks wait for it there */
	if (ranks_gather(&mine, all) && !err)
		err = -EIO;
	return err;
}

/*
 * One trial at load pps: the witness before, every rank's shard of the trial
 * (one rank without MPI), then the witness after. A rank that failed flags
 * the trial (not counted) with the rank and why; the figures are the sums
 * over the ranks, the round trip the highest rank's p99 (percentiles of
 * parts do not add).
 */
int run_trial(struct search *s, double load, struct trial *t)
{
	bool replies = !strcmp(s->witness, "replies");
	struct rank_trial rt = { .load = load,
				 .first_n = s->next_n,
				 .trial_ns = s->trial_ns,
				 .trial = s->nt + 1 };
	struct trial_sums sum = { .unit = 1 };
	struct rank_result *all = NULL;
	struct trial a0 = { .server_cpu_s = -1 };
	uint64_t read_before, before = 0;
	int err;

	if (xr_stop)
		return -EINTR;
	read_before = now_ns();
	err = witness_read(s, s->next_n, &before, &a0);
	if (err && xr_stop)
		err = -EINTR;
	if (err) {
		pr_warn("cannot read the witness %s: %s\n", s->witness, strerror(-err));
		return err;
	}
	all = calloc(xr_nranks, sizeof(*all));
	if (!all)
		return -ENOMEM;
	err = trial_shards(s, &rt, all);
	if (err && err != -EINTR)
		goto out;
	*t = (struct trial){ .load = load, .p99_us = -1, .server_cpu_s = -1, .nranks = xr_nranks };
	err = trial_sum_ranks(all, t, &sum);
	if (err)
		goto out;
	if (xr_nranks == 1 && t->rank_failed) {
		pr_warn("the trial at %.0f %s/s failed (exit %d)%s%s\n", load, s->unit, all[0].exit,
			all[0].why[0] ? ": " : "", all[0].why);
		err = -ECHILD;
		goto out;
	}
	if (xr_nranks > 1) {
		t->start_skew_us = (sum.last - sum.first) * 1e6;
		/* a shard that started late had no time to set up: give the next trials more */
		if (t->start_skew_us > 1000 && s->start_margin_ns < 8000000000ULL)
			s->start_margin_ns *= 2;
	}
	/* frames still in flight (queues, the server's backlog) are counted before reading */
	sleep_until(now_ns() + s->settle_ns);
	if (!replies) {
		err = trial_read_after(s, rt.first_n, &a0, read_before, t, &sum.after);
		if (err)
			goto out;
	}
	trial_books(s, replies, before, &a0, &sum, t);
	/* the trial keeps each rank's part (the search frees it) */
	if (xr_nranks > 1) {
		t->ranks = all;
		all = NULL;
	}
out:
	free(all);
	return err;
}

static void print_trial(const struct search *s, const struct trial *t, int i)
{
	char a[16], d[16];

	fprintf(stderr,
		"  trial %2d: offered %9s %s/s  asked %10llu  sent %10llu  received %10llu  loss %.5f",
		i + 1, fmt_si(t->load, a, sizeof(a)), s->unit, (unsigned long long)t->asked,
		(unsigned long long)t->sent, (unsigned long long)t->received, t->loss);
	if (t->rank_failed)
		fprintf(stderr, "  RANK %d FAILED (exit %d: %s; not counted)", t->failed_rank,
			t->ranks[t->failed_rank].exit,
			t->ranks[t->failed_rank].why[0] ? t->ranks[t->failed_rank].why :
							  "no message");
	else if (t->witness_reset)
		fprintf(stderr, "  WITNESS RESET (its count went down: not counted)");
	else if (t->sender_short)
		fprintf(stderr, "  SENDER SHORT (%llu behind: not counted)",
			(unsigned long long)t->behind);
	else if (t->sent < t->asked)
		fprintf(stderr, "  (%llu not sent: %s)", (unsigned long long)(t->asked - t->sent),
			s->paced ? "the trial ended first, their sessions waiting for answers" :
				   "driver refused");
	if (t->p99_us >= 0)
		fprintf(stderr, "  p99 %s",
			fmt_duration((uint64_t)(t->p99_us * 1e3), d, sizeof(d)));
	if (t->nranks > 1 && !t->rank_failed)
		fprintf(stderr, "  %d ranks, start skew %s", t->nranks,
			fmt_duration((uint64_t)(t->start_skew_us * 1e3), d, sizeof(d)));
	if (t->server_cpu_s >= 0)
		fprintf(stderr, "  server CPU %.2f s (%.2f of a core)", t->server_cpu_s,
			t->server_cores);
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
		pr_warn("the sender cannot offer even --min %s %s/s here (it kept %s)\n",
			fmt_si(s->min, a, sizeof(a)), s->unit,
			fmt_si(t->sent / t->duration_s, b, sizeof(b)));
		s->stop_why = "the sender cannot offer --min";
		return -ERANGE;
	}
	pr_warn("warning: the sender fell behind twice at %s %s/s: searching up to %s (what it keeps)\n",
		fmt_si(load, a, sizeof(a)), s->unit, fmt_si(kept, b, sizeof(b)));
	s->max = kept;
	return 0;
}

/*
 * A rank that could not run its shard is given one more trial at the load (a
 * busy moment); a second failure ends the search with the bounds so far and
 * the rank's reason.
 */
static bool rank_failed_twice(struct search *s, double load)
{
	const struct trial *t = &s->t[s->nt - 1], *prev = s->nt > 1 ? &s->t[s->nt - 2] : NULL;
	static char why[300];

	if (!prev || prev->load != load || !prev->rank_failed ||
	    prev->failed_rank != t->failed_rank)
		return false;
	snprintf(why, sizeof(why), "rank %d could not send twice (%s)", t->failed_rank,
		 t->ranks[t->failed_rank].why[0] ? t->ranks[t->failed_rank].why : "no message");
	pr_warn("search: %s\n", why);
	s->stop_why = why;
	return true;
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
			print_trial(s, &s->t[s->nt], s->nt);
			search_stream_trial(s, &s->t[s->nt], s->nt);
			s->nt++;
			for (int k = 0; k < s->ng; k++)
				classify(s, &s->g[k]);
			print_progress(s);
			if (s->t[s->nt - 1].sender_short && (err = sender_short(s, next)))
				return err;
			if (s->t[s->nt - 1].rank_failed && rank_failed_twice(s, next))
				return 0;
			if (xr_stop) {
				s->interrupted = true;
				return -EINTR;
			}
		}
	}
	return 0;
}
