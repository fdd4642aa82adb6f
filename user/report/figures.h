/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The figures of xdpreplay's results, held once: each JSON path's label,
 * unit and one-line meaning. The report labels its tables with them (the
 * paths stay in data-k), --compare names its rows, and `report --figures`
 * prints them as the table docs/results.md carries; Prometheus families take their
 * HELP from the figure they carry. A path may end in ".*":
 * every member of that object (the kernel's drop reasons, by name).
 */
#ifndef __XR_REPORT_FIGURES_H
#define __XR_REPORT_FIGURES_H

#include <stdio.h>
#include "util/prom.h"

struct figure_doc {
	const char *path; /* in the JSON, dotted */
	const char *label; /* what a person calls it */
	const char *unit; /* "" for a count; "/s", "us", "s", "bit/s", "B"; "text" for words */
	const char *meaning; /* one line */
	const char *metric; /* the Prometheus family that carries it (--listen), or NULL */
};

/* The figure at path (its family's, for a member of a ".*" one), or NULL */
const struct figure_doc *figure_find(const char *path);
/* "round trip p99 (us)", or path itself when the schema has no figure there; buf returned */
const char *figure_label(const char *path, char *buf, size_t len);
/* The schema as a Markdown table (docs/results.md's) */
void figures_markdown(FILE *f);

/* The figure the Prometheus family metric carries, or NULL */
const struct figure_doc *figure_of_metric(const char *metric);
/* prom_family() with its HELP from the schema: "label: meaning (JSON path)" */
void figure_prom_family(struct prom *p, const char *metric, enum prom_type type);

#endif
