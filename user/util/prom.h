/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Prometheus exposition: the text format 0.0.4, or OpenMetrics 1.0.0 when
 * the scraper's Accept header asks for it. Every family has its HELP and
 * TYPE; label values are escaped; labels common to every sample (the run's
 * id, its shard, a search's trial) are added to each.
 */
#ifndef __XR_UTIL_PROM_H
#define __XR_UTIL_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

#define PROM_COMMON_LEN 192

struct prom {
	FILE *f;
	bool openmetrics;
	char common[PROM_COMMON_LEN]; /* escaped `k="v",...` pairs, or "" */
	char family[96]; /* the family being written, without _total */
	enum prom_type type;
};

#define PROM_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Starts an exposition into f, OpenMetrics if accept (an Accept header, or NULL) asks for it. */
void prom_begin(struct prom *p, FILE *f, const char *accept);
/* Adds a label to every sample that follows (value escaped). */
void prom_common(struct prom *p, const char *name, const char *value);
/* HELP and TYPE of family name (a counter's without its _total). */
void prom_family(struct prom *p, const char *name, enum prom_type type, const char *help);
/* A sample of the current family: label name/value pairs, then NULL. */
void prom_u64(struct prom *p, uint64_t v, ...) __attribute__((sentinel));
void prom_double(struct prom *p, double v, ...) __attribute__((sentinel));
/*
 * A histogram sample of the current family: cum[i] observations <= le[i]
 * (n bounds, ascending), count in all (the +Inf bucket) and their sum.
 */
void prom_histogram(struct prom *p, const double *le, const uint64_t *cum, unsigned int n,
		    uint64_t count, double sum, ...) __attribute__((sentinel));
/* Ends the exposition (OpenMetrics' # EOF); returns its content type. */
const char *prom_end(struct prom *p);

/* A run's id for the run label and the JSON's run_id: 16 hex digits, random per process. */
const char *prom_run_id(void);

#endif
