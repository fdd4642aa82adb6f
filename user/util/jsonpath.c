// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/jsonpath.h"

/*
 * A number at a dotted path; a key may itself hold dots ("kernel" then
 * "Udp.NoPorts"), so the longest key that exists is taken at each level.
 */
/* The value at a dotted path, or NULL. */
struct json_object *json_path_get(struct json_object *o, const char *dotted)
{
	char key[128];
	const char *p = dotted;

	while (*p) {
		size_t len = strlen(p);
		struct json_object *next = NULL;

		/* an array's element by its index: "trials.3.loss" */
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			unsigned long i = strtoul(p, &end, 10);

			if (end == p || (*end && *end != '.') || i >= json_object_array_length(o))
				return NULL;
			o = json_object_array_get_idx(o, i);
			p = *end ? end + 1 : end;
			continue;
		}
		for (; len; len--) {
			if (p[len] && p[len] != '.')
				continue;
			if (len >= sizeof(key))
				continue;
			memcpy(key, p, len);
			key[len] = 0;
			if (json_object_is_type(o, json_type_object) &&
			    json_object_object_get_ex(o, key, &next))
				break;
		}
		if (!len)
			return NULL;
		o = next;
		p += len + (p[len] == '.');
	}
	return o;
}

int json_path_double(struct json_object *o, const char *dotted, double *v)
{
	o = json_path_get(o, dotted);
	if (!o)
		return -ENOENT;
	if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double))
		return -EPROTO;
	*v = json_object_get_double(o);
	return 0;
}

int json_path_u64(struct json_object *o, const char *dotted, uint64_t *v)
{
	o = json_path_get(o, dotted);
	if (!o)
		return -ENOENT;
	if (json_object_is_type(o, json_type_int)) {
		if (json_object_get_int64(o) < 0)
			return -EPROTO;
		*v = json_object_get_uint64(o);
		return 0;
	}
	if (json_object_is_type(o, json_type_double) && json_object_get_double(o) >= 0 &&
	    json_object_get_double(o) < 1.8e19) {
		*v = (uint64_t)json_object_get_double(o);
		return 0;
	}
	return -EPROTO;
}
