/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --json-stream FILE|-: one JSON object per line while a command runs, as
 * iperf3's --json-stream: {"event": "start"|"interval"|"trial"|"end", "data":
 * {...}}, each line flushed when written, so that a script follows the run.
 */
#ifndef __XR_UTIL_JSTREAM_H
#define __XR_UTIL_JSTREAM_H

#include <pthread.h>
#include <stdio.h>
#include "util/json.h"

struct jstream {
	FILE *f; /* NULL: no stream */
	pthread_mutex_t lock; /* lines from several threads stay whole */
};

/* Opens path ("-": standard output): 0, or -errno after a one-line message. */
int jstream_open(struct jstream *s, const char *path);
/* Starts an event's line: j writes inside its "data" object until jstream_emit. */
void jstream_begin(struct jstream *s, struct json *j, const char *event);
void jstream_emit(struct jstream *s, struct json *j);
/* An event whose data is the document write(ctx, f) writes (a command's JSON result). */
void jstream_document(struct jstream *s, const char *event, void (*write)(void *ctx, FILE *f),
		      void *ctx);
/* Closes it: 0, or -errno when a line was lost (a full disk). */
int jstream_close(struct jstream *s);

#endif
