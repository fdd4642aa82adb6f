// SPDX-License-Identifier: GPL-2.0
/* What a run did, in one sentence, from its JSON (report/headline.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/headline.h"
#include "util/json.h"
#include "util/jsonpath.h"

double headline_num(struct json_object *j, const char *path)
{
	double v;

	return json_path_double(j, path, &v) ? NAN : v;
}

const char *headline_str(struct json_object *j, const char *path)
{
	struct json_object *v = json_path_get(j, path);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool has(struct json_object *j, const char *a, const char *b)
{
	return json_path_get(j, a) && json_path_get(j, b);
}

enum result_kind result_kind_of(struct json_object *j)
{
	if (!j || !json_object_is_type(j, json_type_object))
		return RESULT_UNKNOWN;
	if (has(j, "goals", "trials"))
		return RESULT_SEARCH;
	if (has(j, "matched", "attribution"))
		return RESULT_COUNT;
	if (has(j, "sent", "asked"))
		return RESULT_SENDER;
	return RESULT_UNKNOWN;
}

void headline_answered(struct words *w, struct json_object *j, const char *path, const char *verb)
{
	double n = headline_num(j, path), sent = headline_num(j, "sent");
	char c[16], s[16];

	if (!isnan(n))
		words_clause(w, "the server %s %s (%s)", verb, words_count(n, c, sizeof(c)),
			     words_share(n, sent, s, sizeof(s)));
}

void headline_p99(struct words *w, struct json_object *j, const char *path, const char *what)
{
	char p[96], u[16];
	double v;

	snprintf(p, sizeof(p), "%s.p99", path);
	v = headline_num(j, p);
	if (!isnan(v) && v > 0)
		words_clause(w, "%s p99 %s", what, words_us(v, u, sizeof(u)));
}

void headline_done(struct words *w, double done, double of, const char *what, const char *verb)
{
	char a[16], b[16], s[16];

	if (isnan(done) || isnan(of))
		return;
	if (done == of)
		words_clause(w, "all %s %s %s", words_count(of, a, sizeof(a)), what, verb);
	else
		words_clause(w, "%s of %s %s %s (%s)", words_count(done, a, sizeof(a)),
			     words_count(of, b, sizeof(b)), what, verb,
			     words_share(done, of, s, sizeof(s)));
}

/* a JSON key as words: its underscores spaces */
static const char *key_words(const char *key)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s", key);
	for (char *c = buf; *c; c++)
		if (*c == '_')
			*c = ' ';
	return buf;
}

void headline_largest(struct words *w, struct json_object *j, const char *path,
		      const char *(*words)(const char *key))
{
	struct json_object *o = json_path_get(j, path);
	const char *best = NULL;
	double most = 0;
	char c[16];

	if (!o || !json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, key, val) {
		double v = json_object_get_double(val);

		if (json_object_is_type(val, json_type_int) && v > most)
			most = v, best = key;
	}
	if (best)
		words_add(w, ", the most as %s (%s)", (words ?: key_words)(best),
			  words_count(most, c, sizeof(c)));
}

/* "2 thresholds held", or "1 of 2 thresholds failed: p99>2ms" */
static void thresholds_clause(struct words *w, struct json_object *j)
{
	struct json_object *a = json_path_get(j, "thresholds"), *t, *f, *e;
	size_t n = a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	const char *first = NULL;
	size_t failed = 0;

	for (size_t i = 0; i < n; i++) {
		t = json_object_array_get_idx(a, i);
		if (json_object_object_get_ex(t, "failed", &f) && json_object_get_boolean(f)) {
			if (!failed++ && json_object_object_get_ex(t, "expr", &e))
				first = json_object_get_string(e);
		}
	}
	if (!n)
		return;
	if (!failed)
		words_clause(w, "%s threshold%s held", n > 1 ? (n == 2 ? "both" : "all") : "the",
			     n > 1 ? "s" : "");
	else
		words_clause(w, "%zu of %zu threshold%s failed (%s%s)", failed, n, n > 1 ? "s" : "",
			     first ?: "?", failed > 1 ? ", ..." : "");
}

int headline_of(struct json_object *j, char *buf, size_t len)
{
	struct words w;

	words_init(&w, buf, len);
	switch (result_kind_of(j)) {
	case RESULT_SENDER: headline_sender(&w, j); break;
	case RESULT_COUNT: headline_count(&w, j); break;
	case RESULT_SEARCH: headline_search(&w, j); break;
	default: return -EINVAL;
	}
	thresholds_clause(&w, j);
	return 0;
}

int headline_of_open(const char *text, size_t len, char *buf, size_t blen)
{
	struct json_object *j;
	char *whole = malloc(len + 2);
	int err;

	if (!whole)
		return -ENOMEM;
	memcpy(whole, text, len);
	memcpy(whole + len, "}", 2);
	j = json_tokener_parse(whole);
	free(whole);
	err = j ? headline_of(j, buf, blen) : -EINVAL;
	json_object_put(j);
	return err;
}

void headline_json(FILE *f, void (*members)(struct json *j, const void *ctx), const void *ctx,
		   char *hl, size_t hlen)
{
	char *text = NULL, own[512];
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	struct json j = { .f = m ?: f };

	if (!hl)
		hl = own, hlen = sizeof(own);
	hl[0] = 0;
	if (!j.f)
		return;
	members(&j, ctx);
	/* no memory for the copy: the document without its summary */
	if (m && (fclose(m) || headline_of_open(text, len, hl, hlen)))
		hl[0] = 0;
	if (m && f)
		fwrite(text, 1, len, f);
	free(text);
	if (!f)
		return;
	j.f = f;
	if (hl[0])
		json_str(&j, "summary", hl);
	json_close(&j, '}');
}