// SPDX-License-Identifier: GPL-2.0
/* A search's headline: the bounds found, and what dropped above them. */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include "measure/drop_words.h"
#include "report/headline.h"
#include "util/jsonpath.h"

#define MAX_KEYS 64

/* "NDR 19.9k/s", or "NDR at least 100k/s (the most offered)"; the lowest lower bound into *limit */
static void bounds(struct words *w, struct json_object *j, double *limit)
{
	struct json_object *goals = json_path_get(j, "goals");
	size_t n = goals && json_object_is_type(goals, json_type_array) ?
			   json_object_array_length(goals) :
			   0;
	char r[24];

	*limit = INFINITY;
	for (size_t i = 0; i < n; i++) {
		struct json_object *g = json_object_array_get_idx(goals, i), *name, *never;
		double lower = headline_num(g, "lower");

		json_object_object_get_ex(g, "name", &name);
		json_object_object_get_ex(g, "never_saturated", &never);
		if (json_object_get_boolean(never))
			words_add(w, "%s%s at least %s (the most offered)", i ? ", " : "",
				  json_object_get_string(name), words_rate(lower, r, sizeof(r)));
		else
			words_add(w, "%s%s %s", i ? ", " : "", json_object_get_string(name),
				  words_rate(lower, r, sizeof(r)));
		*limit = fmin(*limit, lower);
	}
	w->clauses++;
}

struct growth {
	char key[64];
	double below, above; /* drops per frame sent, summed over the trials each side */
};

static struct growth *growth_of(struct growth *g, int *n, const char *key)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(g[i].key, key))
			return &g[i];
	if (*n >= MAX_KEYS)
		return NULL;
	snprintf(g[*n].key, sizeof(g[0].key), "%s", key);
	g[*n].below = g[*n].above = 0;
	return &g[(*n)++];
}

/*
 * What dropped above the limit: the counter whose share of the frames sent
 * grew the most from the trials at or below it to those above (a counter
 * that is the load itself, as a closed port's, grows on neither side)
 */
static void above_limit(struct words *w, struct json_object *j, double limit)
{
	static struct growth g[MAX_KEYS];
	struct json_object *trials = json_path_get(j, "trials");
	size_t nt = trials && json_object_is_type(trials, json_type_array) ?
			    json_object_array_length(trials) :
			    0;
	int n = 0, below = 0, above = 0, best = -1;
	char d[96];

	for (size_t i = 0; i < nt; i++) {
		struct json_object *t = json_object_array_get_idx(trials, i), *drops;
		double sent = headline_num(t, "sent"), load = headline_num(t, "offered_pps");
		bool up = load > limit;

		if (!(sent > 0) || !json_object_object_get_ex(t, "server_drops", &drops))
			continue;
		up ? above++ : below++;
		json_object_object_foreach(drops, key, val) {
			struct growth *k = drop_key_is_loss(key) ? growth_of(g, &n, key) : NULL;

			if (k)
				*(up ? &k->above : &k->below) += json_object_get_double(val) / sent;
		}
	}
	for (int i = 0; i < n && above; i++) {
		double grew = g[i].above / above - (below ? g[i].below / below : 0);

		if (grew > 0 && (best < 0 || grew > g[best].above / above -
							     (below ? g[best].below / below : 0)))
			best = i;
	}
	if (best >= 0)
		words_clause(w, "above it the server dropped: %s",
			     drop_words(g[best].key, d, sizeof(d)));
}

void headline_search(struct words *w, struct json_object *j)
{
	struct json_object *stopped = json_path_get(j, "stopped");
	double limit;

	bounds(w, j, &limit);
	if (isfinite(limit))
		above_limit(w, j, limit);
	if (stopped && strcmp(json_object_get_string(stopped), "done"))
		words_clause(w, "stopped early: %s", json_object_get_string(stopped));
}
