/* SPDX-License-Identifier: GPL-2.0 */
/* A small streaming JSON writer for --json output: objects, arrays, scalars. */
#ifndef __XR_JSON_H
#define __XR_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool comma[JSON_MAX_DEPTH];
};

/* key is NULL inside arrays and for the top-level value. */
void json_open(struct json *j, const char *key, char bracket);
void json_close(struct json *j, char bracket);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v);
void json_str(struct json *j, const char *key, const char *v);
void json_flag(struct json *j, const char *key, bool v);

/* Opens "-" as stdout or a file for writing; NULL with errno set on failure. */
FILE *json_fopen(const char *path);
/* Closes (or flushes stdout): 0, or -errno when anything written was lost (a full disk). */
int json_fclose(FILE *f);

#endif
