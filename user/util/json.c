// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/json.h"

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void key_prefix(struct json *j, const char *key)
{
	if (j->comma[j->depth])
		fputc(',', j->f);
	j->comma[j->depth] = true;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

void json_open(struct json *j, const char *key, char bracket)
{
	key_prefix(j, key);
	fputc(bracket, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->comma[j->depth] = false;
}

void json_close(struct json *j, char bracket)
{
	if (j->depth > 0)
		j->depth--;
	fputc(bracket, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	key_prefix(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	key_prefix(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
	char buf[32];

	key_prefix(j, key);
	if (!isfinite(v)) {
		fputs("null", j->f);
		return;
	}
	/* the shortest of these that reads back as v: a time since the epoch keeps its microseconds */
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	key_prefix(j, key);
	put_string(j->f, v ? v : "");
}

void json_flag(struct json *j, const char *key, bool v)
{
	key_prefix(j, key);
	fputs(v ? "true" : "false", j->f);
}

FILE *json_fopen(const char *path)
{
	if (!strcmp(path, "-"))
		return stdout;
	return fopen(path, "w");
}

int json_fclose(FILE *f)
{
	int bad;

	if (!f)
		return 0;
	bad = ferror(f);
	if (f != stdout)
		bad |= fclose(f);
	else
		bad |= fflush(f);
	return bad ? (errno ? -errno : -EIO) : 0;
}
