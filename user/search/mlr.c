// SPDX-License-Identifier: GPL-2.0
/*
 * MLRsearch-style load classification (RFC 9971's vocabulary, a subset of
 * its method): pure functions of the trials, unit-tested in tests/unit.c.
 */
#include <math.h>
#include "search/search.h"

/*
 * Whether a trial speaks for the server: not one the sender did not keep (it
 * measured the sender), nor one whose witness restarted (nothing was read).
 */
bool search_has_latency_goal(const struct search *s)
{
	for (int gi = 0; gi < s->ng; gi++)
		if (s->g[gi].p99_us > 0)
			return true;
	return false;
}

bool trial_counted(const struct trial *t)
{
	return !t->sender_short && !t->witness_reset && !t->rank_failed;
}

/* Whether one trial meets goal g. */
bool trial_ok(const struct goal *g, const struct trial *t)
{
	return g->p99_us > 0 ? t->p99_us >= 0 && t->p99_us <= g->p99_us : t->loss <= g->loss;
}

/*
 * Bounds of goal g from every trial so far, load by load (RFC 9971's load
 * classification): with the trials of one load lasting good + bad seconds
 * (meeting the goal or not) out of the duration sum, the load is an upper
 * bound once bad exceeds exceed * dsum even if all missing time were good,
 * a lower bound once it cannot exceed it even if all missing time were bad,
 * and undecided otherwise (another trial at that load is needed). The
 * relevant upper bound is the smallest upper bound, the relevant lower bound
 * the largest lower bound below it (a lower bound above it is noise), and
 * only an undecided load between the two needs more trials.
 */
void classify(struct search *s, struct goal *g)
{
	enum { UNDECIDED, LOWER, UPPER } cls[MAX_TRIALS];
	double loads[MAX_TRIALS];
	int n = 0;

	g->lower = g->upper = g->pending = 0;
	for (int i = 0; i < s->nt; i++) {
		double load = s->t[i].load, good = 0, bad = 0, missing;
		bool seen = false;

		if (!trial_counted(&s->t[i]))
			continue;
		for (int j = 0; j < i; j++)
			seen |= s->t[j].load == load && trial_counted(&s->t[j]);
		if (seen)
			continue;
		for (int j = i; j < s->nt; j++) {
			if (s->t[j].load != load || !trial_counted(&s->t[j]))
				continue;
			if (trial_ok(g, &s->t[j]))
				good += s->t[j].duration_s;
			else
				bad += s->t[j].duration_s;
		}
		missing = fmax(0, g->dsum - good - bad);
		loads[n] = load;
		cls[n] = bad > g->exceed * g->dsum + 1e-9	     ? UPPER :
			 bad + missing <= g->exceed * g->dsum + 1e-9 ? LOWER :
								       UNDECIDED;
		if (cls[n] == UPPER && (!g->upper || load < g->upper))
			g->upper = load;
		n++;
	}
	for (int k = 0; k < n; k++)
		if (cls[k] == LOWER && loads[k] > g->lower && (!g->upper || loads[k] < g->upper))
			g->lower = loads[k];
	for (int k = 0; k < n && !g->pending; k++)
		/* above a max lowered to what the sender keeps, a load cannot be tried again */
		if (cls[k] == UNDECIDED && loads[k] > g->lower &&
		    (!g->upper || loads[k] < g->upper) && loads[k] <= s->max)
			g->pending = loads[k];
}

/* The received rate of the trials at a goal's lower bound (RFC 9971's conditional throughput). */
double conditional_throughput(const struct search *s, const struct goal *g)
{
	double rx = 0, dur = 0;

	for (int i = 0; i < s->nt; i++) {
		if (s->t[i].load == g->lower && trial_counted(&s->t[i])) {
			rx += s->t[i].received;
			dur += s->t[i].rx_s > 0 ? s->t[i].rx_s : s->t[i].duration_s;
		}
	}
	return dur > 0 ? rx / dur : 0;
}

struct load_trials trials_at(const struct search *s, const struct goal *g, double load)
{
	struct load_trials lt = {};

	for (int i = 0; load > 0 && i < s->nt; i++) {
		if (s->t[i].load != load)
			continue;
		if (!trial_counted(&s->t[i])) {
			lt.short_ += s->t[i].sender_short;
			continue;
		}
		lt.counted++;
		lt.over += !trial_ok(g, &s->t[i]);
	}
	return lt;
}

/* About how many trials the search takes: a bisection per goal to its width, and a few to start. */
int trials_expected(const struct search *s)
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
