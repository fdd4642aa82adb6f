// SPDX-License-Identifier: GPL-2.0
/* --json-stream's lines (util/jstream.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/jstream.h"
#include "util/log.h"

int jstream_open(struct jstream *s, const char *path)
{
	pthread_mutex_init(&s->lock, NULL);
	s->f = json_fopen(path);
	if (!s->f) {
		pr_warn("--json-stream: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}

void jstream_begin(struct jstream *s, struct json *j, const char *event)
{
	pthread_mutex_lock(&s->lock);
	*j = (struct json){ .f = s->f };
	json_open(j, NULL, '{');
	json_str(j, "event", event);
	json_open(j, "data", '{');
}

void jstream_emit(struct jstream *s, struct json *j)
{
	json_close(j, '}');
	json_close(j, '}');
	fflush(s->f);
	pthread_mutex_unlock(&s->lock);
}

void jstream_document(struct jstream *s, const char *event, void (*write)(void *ctx, FILE *f),
		      void *ctx)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&doc, &len);

	if (!m)
		return;
	write(ctx, m);
	if (fclose(m)) {
		free(doc);
		return;
	}
	/* the document's own newline ends the event's line */
	while (len && doc[len - 1] == '\n')
		doc[--len] = 0;
	pthread_mutex_lock(&s->lock);
	fprintf(s->f, "{\"event\":\"%s\",\"data\":%s}\n", event, len ? doc : "{}");
	fflush(s->f);
	pthread_mutex_unlock(&s->lock);
	free(doc);
}

int jstream_close(struct jstream *s)
{
	int err;

	if (!s->f)
		return 0;
	err = json_fclose(s->f);
	s->f = NULL;
	pthread_mutex_destroy(&s->lock);
	return err;
}
