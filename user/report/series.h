/* SPDX-License-Identifier: GPL-2.0 */
/* A result's per-second and per-trial figures read out of its JSON as a chart's series. */
#ifndef __XR_REPORT_SERIES_H
#define __XR_REPORT_SERIES_H

#include <json-c/json.h>

#define SERIES_MAX_POINTS 4096

/* The array at path, or NULL when there is none (or something else is there) */
struct json_object *series_array_at(struct json_object *j, const char *path);

/*
 * The numbers of the array at path (its elements' member key, or the elements
 * themselves with key NULL) into y, their indices into x: how many
 */
unsigned int series_of(struct json_object *j, const char *path, const char *key, double *x,
		       double *y);

/*
 * A per-second table's member as a rate: rows of whole seconds as they are,
 * the last (shorter) one over its length last_s, left out under 0.2 s (a
 * burst over a sliver of a second is no rate)
 */
unsigned int series_rate(struct json_object *j, const char *path, const char *key, double last_s,
			 double *x, double *y);

#endif
