/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run did, in one sentence, computed from its JSON: the same words
 * in the terminal's summary, the JSON's "summary" and the report's headline.
 * A sender's: what was asked at what load, whether all went, then its
 * protocol's own clause (struct xr_proto's headline: answers, sessions,
 * messages, uplinks), then its thresholds; count's: where the frames went,
 * largest first; a search's: the bounds and what dropped above them.
 */
#ifndef __XR_REPORT_HEADLINE_H
#define __XR_REPORT_HEADLINE_H

#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include "util/words.h"

enum result_kind { RESULT_UNKNOWN, RESULT_SENDER, RESULT_COUNT, RESULT_SEARCH };

/* Which command's result j is, by the members each always writes */
enum result_kind result_kind_of(struct json_object *j);
/* The headline of result j into buf: 0, or -EINVAL when j is no result xdpreplay wrote */
int headline_of(struct json_object *j, char *buf, size_t len);
/*
 * The same of a result being written: text (len bytes) is its object
 * still open (no closing brace), as a struct json has written it so far
 */
int headline_of_open(const char *text, size_t len, char *buf, size_t blen);

struct json;
/*
 * A result's JSON with its headline: members(j, ctx) writes the document
 * (its object left open), which is read back for the headline (into hl, when
 * not NULL); then, when f is not NULL, the document to f with "summary" last.
 * The figures are read once, so the words and the numbers beside them agree.
 */
void headline_json(FILE *f, void (*members)(struct json *j, const void *ctx), const void *ctx,
		   char *hl, size_t hlen);

/* For the protocols' clauses: the number at a dotted path, NAN when there is none */
double headline_num(struct json_object *j, const char *path);
/* The string at a dotted path, NULL when there is none */
const char *headline_str(struct json_object *j, const char *path);
/* "the server VERB N (share of the frames sent)", from the count at path */
void headline_answered(struct words *w, struct json_object *j, const char *path, const char *verb);
/* "round trip p99 156 us", from the percentiles object at path (rtt_us) */
void headline_p99(struct words *w, struct json_object *j, const char *path, const char *what);
/* "N of M WHAT completed (share)" */
void headline_done(struct words *w, double done, double of, const char *what, const char *verb);
/* ", the most as WORDS (N)": the largest member of the object of counts at path, if any is not 0 */
void headline_largest(struct words *w, struct json_object *j, const char *path,
		      const char *(*words)(const char *key));

/* Each kind's first clauses (headline_sender.c, headline_count.c, headline_search.c) */
void headline_sender(struct words *w, struct json_object *j);
void headline_count(struct words *w, struct json_object *j);
void headline_search(struct words *w, struct json_object *j);

#endif
