// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: a witness's answer as search reads it: "PATH\nJSON". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/jsonpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	char path[128];
	struct json_tokener *tok;
	struct json_object *o;
	uint64_t v;

	if (!nl || nl - data >= (long)sizeof(path))
		return 0;
	memcpy(path, data, nl - data);
	path[nl - data] = 0;
	tok = json_tokener_new();
	if (!tok)
		return 0;
	o = json_tokener_parse_ex(tok, (const char *)nl + 1, size - (nl + 1 - data));
	if (o) {
		json_path_u64(o, path, &v);
		json_object_put(o);
	}
	json_tokener_free(tok);
	return 0;
}
