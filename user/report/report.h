/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdpreplay report: one self-contained HTML page (inline CSS and SVG, nothing
 * fetched) from the JSON results of senders, count and search: the verdict of
 * their thresholds, settings and system, the figures, and plots per second,
 * of the round trips' spectrum and of a search's trials. Every figure shown
 * carries its JSON path (data-k), so that a page can be held against its JSON.
 */
#ifndef __XR_REPORT_REPORT_H
#define __XR_REPORT_REPORT_H

#include <stdio.h>
#include <json-c/json.h>

struct report_doc {
	const char *name; /* the file it came from */
	struct json_object *j;
};

/* 0, or -EINVAL after a one-line message when a document is no result xdpreplay wrote */
int report_html(FILE *f, const char *title, const struct report_doc *docs, int n);

/* page.c: the page's frame, a figure with its path, a table of an object's scalars */
void page_begin(FILE *f, const char *title);
void page_end(FILE *f);
void page_text(FILE *f, const char *t);
/* <td data-k=PATH>value</td>: the number or string at path in j (a dash when there is none) */
void page_cell(FILE *f, struct json_object *j, const char *path);
/* <TAG title=MEANING>LABEL (UNIT)</TAG>: the figure at path as the schema names it (report/figures.h) */
void page_label(FILE *f, const char *tag, const char *path);
/* A two-column table of the scalars in the object at path (nested objects flattened) */
void page_kv_table(FILE *f, struct json_object *j, const char *path, const char *caption);
/* The verdict of every document's "thresholds" */
void page_verdict(FILE *f, const struct report_doc *docs, int n);

/* sections.c: a sender's, count's and search's part of the page */
void section_sender(FILE *f, const struct report_doc *d);
void section_count(FILE *f, const struct report_doc *d);
void section_search(FILE *f, const struct report_doc *d);

#endif
