/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sentences about figures: a bounded builder of clauses, and figures as a
 * person reads them (3,000 and 1.60M, 20.0k/s, 156 us, 99.97%), for the
 * headlines of report/headline.h.
 */
#ifndef __XR_WORDS_H
#define __XR_WORDS_H

#include <stddef.h>
#include <stdint.h>

struct words {
	char *buf;
	size_t len, at;
	int clauses; /* how many words_clause began */
};

void words_init(struct words *w, char *buf, size_t len);
/* Text appended (cut at the buffer's end, always terminated) */
void words_add(struct words *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A clause appended: "; " before it unless it is the first */
void words_clause(struct words *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A count: digits grouped by commas below 100,000 ("3,000"), three figures above ("188k", "1.60M") */
char *words_count(double v, char *buf, size_t len);
/* A rate: "1,000/s" below 10k, then "19.9k/s", "2.50M/s" */
char *words_rate(double per_s, char *buf, size_t len);
/* Part of a whole: "100%" only when it is all, "0%" only when none, else 2 decimals at most */
char *words_share(double part, double whole, char *buf, size_t len);
/* Microseconds: "156 us", "2.35 ms", "1.20 s" */
char *words_us(double us, char *buf, size_t len);

#endif
