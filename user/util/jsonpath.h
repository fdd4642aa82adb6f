/* SPDX-License-Identifier: GPL-2.0 */
/* Figures out of another command's JSON (a trial's result, a witness's answer). */
#ifndef __XR_JSONPATH_H
#define __XR_JSONPATH_H

#include <stdint.h>
#include <json-c/json.h>

/*
 * The non-negative number at a dotted path ("replies.syn_acks"); a key may
 * itself hold dots ("kernel.Udp.NoPorts": "kernel", then "Udp.NoPorts"), so
 * the longest key that exists is taken at each level. 0, -ENOENT (no such
 * path) or -EPROTO (not a number of that kind).
 */
int json_path_u64(struct json_object *o, const char *dotted, uint64_t *v);
/* The value at a dotted path (an array's element by its index: "trials.3.loss"), or NULL */
struct json_object *json_path_get(struct json_object *o, const char *dotted);
/* Any number at a dotted path: 0, -ENOENT or -EPROTO. */
int json_path_double(struct json_object *o, const char *dotted, double *v);

#endif
