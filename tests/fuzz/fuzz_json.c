// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the JSON writer (user/util/json.c) on any bytes as a key and a
 * value. What it writes must parse as strict JSON (json-c's own parser) and
 * be valid UTF-8, and bytes that were valid UTF-8 must come back unchanged;
 * glibc's iconv (UTF-8 to UTF-32, which refuses overlong forms and
 * surrogates) is the judge of validity.
 */
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "util/json.h"

/* Whether len bytes at s are valid UTF-8, by glibc's iconv. */
static int utf8_valid(const char *s, size_t len)
{
	static iconv_t cd = (iconv_t)-1;
	/* a UTF-32 character for each byte at the most */
	size_t ilen = len, olen = 4 * len + 4;
	char *out = malloc(olen), *in = (char *)s, *o = out;
	int ok;

	if (cd == (iconv_t)-1)
		cd = iconv_open("UTF-32LE", "UTF-8");
	iconv(cd, NULL, NULL, NULL, NULL);
	ok = iconv(cd, &in, &ilen, &o, &olen) != (size_t)-1 && !ilen;
	free(out);
	return ok;
}

/* text as strict JSON into *out: 1, or 0 when json-c refuses it. */
static int parse_strict(const char *text, size_t len, struct json_object **out)
{
	struct json_tokener *tok = json_tokener_new();

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	*out = json_tokener_parse_ex(tok, text, (int)len);
	int ok = json_tokener_get_error(tok) == json_tokener_success && *out;

	json_tokener_free(tok);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *obj, *v;
	char *s, *text = NULL;
	size_t tlen = 0;
	FILE *f;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = 0;
	f = open_memstream(&text, &tlen);
	{
		struct json j = { .f = f };

		json_open(&j, NULL, '{');
		json_str(&j, s, s);
		json_str(&j, "k", s);
		json_close(&j, '}');
	}
	fclose(f);
	if (!parse_strict(text, tlen, &obj))
		__builtin_trap();
	/* all of it valid UTF-8; a string that was (up to its first NUL) comes back as it went in */
	if (!utf8_valid(text, tlen) || !json_object_object_get_ex(obj, "k", &v))
		__builtin_trap();
	if (utf8_valid(s, strlen(s)) && strcmp(json_object_get_string(v), s))
		__builtin_trap();
	json_object_put(obj);
	free(text);
	free(s);
	return 0;
}
