// SPDX-License-Identifier: GPL-2.0
/* A sender's headline: what was asked at what load, whether all went, its protocol's clause. */
#include <math.h>
#include <string.h>
#include "proto/proto.h"
#include "report/figures.h"
#include "report/headline.h"
#include "util/jsonpath.h"

/* failed_reasons' members, in words: the schema's labels (report/figures.h) */
static const char *unsent_words(const char *key)
{
	const struct figure_doc *d;
	char path[96];

	snprintf(path, sizeof(path), "failed_reasons.%.64s", key);
	d = figure_find(path);
	return d ? d->label : key;
}

static const struct xr_proto *proto_of(struct json_object *j)
{
	struct json_object *p = json_path_get(j, "protocol");

	return p && json_object_is_type(p, json_type_string) ?
		       proto_find(json_object_get_string(p)) :
		       NULL;
}

/* " at 1,000/s", " at top speed", " at the capture's timing" */
static void load_words(struct words *w, struct json_object *j)
{
	struct json_object *pace = json_path_get(j, "target.pace");
	const char *p = pace ? json_object_get_string(pace) : "";
	double x = headline_num(j, "target.multiplier");
	char r[24];

	if (!strcmp(p, "rate"))
		words_add(w, " at %s", words_rate(headline_num(j, "target.pps"), r, sizeof(r)));
	else if (!strcmp(p, "topspeed"))
		words_add(w, " at top speed");
	else if (!strcmp(p, "capture") && x == 1)
		words_add(w, " at the capture's timing");
	else if (!strcmp(p, "capture"))
		words_add(w, " at %gx the capture's timing", x);
}

void headline_sender(struct words *w, struct json_object *j)
{
	const struct xr_proto *p = proto_of(j);
	double asked = headline_num(j, "asked"), sent = headline_num(j, "sent");
	struct json_object *counted = json_path_get(j, "replies_counted");
	char a[16], s[16], r[16];

	if (json_object_get_boolean(json_path_get(j, "interrupted")))
		words_add(w, "Interrupted: ");
	words_clause(w, "%s %s asked", words_count(asked, a, sizeof(a)),
		     p && p->frames_are ? p->frames_are : "frames");
	load_words(w, j);
	if (sent == asked) {
		words_add(w, ", all sent");
	} else {
		words_add(w, ", %s sent (%s), %s not sent", words_count(sent, s, sizeof(s)),
			  words_share(sent, asked, r, sizeof(r)),
			  words_count(asked - sent, a, sizeof(a)));
		headline_largest(w, j, "failed_reasons", unsent_words);
	}
	if (counted && !json_object_get_boolean(counted))
		words_clause(w, "answers not counted (no reply program here)");
	else if (p && p->headline)
		p->headline(j, w);
}
