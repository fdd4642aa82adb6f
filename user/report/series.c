// SPDX-License-Identifier: GPL-2.0
/* A result's figures read out of its JSON as a chart's series (report/series.h). */
#include "report/series.h"
#include "util/jsonpath.h"

struct json_object *series_array_at(struct json_object *j, const char *path)
{
	struct json_object *a = json_path_get(j, path);

	return a && json_object_is_type(a, json_type_array) ? a : NULL;
}

unsigned int series_of(struct json_object *j, const char *path, const char *key, double *x,
		       double *y)
{
	struct json_object *a = series_array_at(j, path), *v;
	unsigned int n = 0;

	for (size_t i = 0; a && i < json_object_array_length(a) && n < SERIES_MAX_POINTS; i++) {
		v = json_object_array_get_idx(a, i);
		if (key && !json_object_object_get_ex(v, key, &v))
			continue;
		x[n] = i;
		y[n++] = json_object_get_double(v);
	}
	return n;
}

unsigned int series_rate(struct json_object *j, const char *path, const char *key, double last_s,
			 double *x, double *y)
{
	unsigned int n = series_of(j, path, key, x, y);

	if (n && last_s < 0.2)
		n--;
	else if (n)
		y[n - 1] /= last_s;
	return n;
}
