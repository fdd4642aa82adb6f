// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/json.h"

/*
 * The length of the UTF-8 sequence s starts with (its first byte >= 0x80),
 * or 0 where it is not one (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF).
 */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* the second byte's range rules out overlongs, surrogates and what is past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* s as a JSON string: escaped, and valid UTF-8 whatever it held (a byte that is not: U+FFFD). */
static void put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		unsigned char c = *s;
		int n;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if ((n = utf8_len(s))) {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		} else
			fputs("\\ufffd", f);
		s++;
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
