// SPDX-License-Identifier: GPL-2.0
/* The report page's frame, its figures and tables (report/report.h). */
#include <string.h>
#include "report/figures.h"
#include "report/report.h"
#include "report/svg.h"
#include "util/jsonpath.h"

/* readable on a phone and on a wide screen: the plots shrink, tables scroll inside their box */
static const char css[] =
	"body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}"
	"table{border-collapse:collapse;margin:.5em 0;font-size:.9em;display:block;overflow-x:auto;"
	"max-width:100%}"
	"td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}td{overflow-wrap:anywhere}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;"
	"overflow-wrap:normal}"
	".verdict{padding:.6em 1em;border-radius:4px;font-weight:bold}"
	".failed{background:#fbe3e0;color:#8a1c0c}.passed{background:#e2f4e4;color:#14532d}"
	".none{background:#eee}svg.plot{max-width:100%;height:auto;display:block;margin:.5em 0}"
	"code{overflow-wrap:anywhere}"
	".headline{font-size:1.1em;line-height:1.4;margin:.6em 0 1em}"
	"td.zeros{color:#666;font-size:.9em}"
	/* a caption as wide as its words, not squeezed into a narrow table's width */
	"caption{text-align:left;white-space:nowrap;font-weight:bold;padding:.2em 0}"
	"@media print{@page{size:A4;margin:12mm}body{margin:0;max-width:none;padding:0}"
	"h2{break-after:avoid}svg.plot,table{break-inside:avoid}"
	/* paper does not scroll: a table fits the page's width, its words broken where needed */
	"table{display:table;font-size:.75em}th{overflow-wrap:anywhere}td,th{padding:1px 4px}}";

void page_text(FILE *f, const char *t)
{
	svg_text(f, t ? t : "");
}

void page_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
	      "<meta name='viewport' content='width=device-width, initial-scale=1'><title>",
	      f);
	page_text(f, title);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>", css);
	page_text(f, title);
	fputs("</h1>\n", f);
}

void page_end(FILE *f)
{
	/*
	 * what a check of the layout reads (tests/t_report.sh): whether anything
	 * is wider than the window, which boxes their content overflows (a table
	 * scrolls inside its own), and how many numbers break across lines
	 */
	fputs("<script>addEventListener('load', () => {\n"
	      "const d = document.documentElement, over = [];\n"
	      "d.dataset.overflow = d.scrollWidth > window.innerWidth;\n"
	      "for (const e of document.body.querySelectorAll('*')) {\n"
	      "  if (e.tagName === 'TABLE' || e.closest('svg') !== null && e.tagName !== 'svg') continue;\n"
	      "  if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)\n"
	      "    over.push(e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));\n"
	      "}\n"
	      "d.dataset.boxesOver = over.length; d.dataset.boxesOverWhat = over.slice(0, 5).join(' ');\n"
	      "let split = 0;\n"
	      "for (const e of document.querySelectorAll('td.n')) {\n"
	      "  const r = document.createRange(); r.selectNodeContents(e);\n"
	      "  if (new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1) split++;\n"
	      "}\n"
	      "d.dataset.splitNumbers = split;\n"
	      "});</script>\n"
	      "</body></html>\n",
	      f);
}

/* a scalar as the JSON has it: integers whole, other numbers to 6 significant digits */
static void scalar(FILE *f, struct json_object *v)
{
	char buf[64];

	switch (json_object_get_type(v)) {
	case json_type_int: fprintf(f, "%lld", (long long)json_object_get_int64(v)); break;
	case json_type_double:
		snprintf(buf, sizeof(buf), "%.6g", json_object_get_double(v));
		fputs(buf, f);
		break;
	case json_type_boolean: fputs(json_object_get_boolean(v) ? "yes" : "no", f); break;
	case json_type_string: page_text(f, json_object_get_string(v)); break;
	default: fputs("-", f);
	}
}

void page_cell(FILE *f, struct json_object *j, const char *path)
{
	struct json_object *v = json_path_get(j, path);
	bool num = v && (json_object_is_type(v, json_type_int) ||
			 json_object_is_type(v, json_type_double));

	fprintf(f, "<td%s data-k='", num ? " class='n'" : "");
	page_text(f, path);
	fputs("'>", f);
	scalar(f, v);
	fputs("</td>", f);
}

/* the names of a table's rows that are 0, said in one line after the others */
struct zeros {
	char text[1024];
	size_t at, base; /* base: the table's own path, left out of the names */
	unsigned int n;
};

static bool is_zero(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) && !json_object_get_int64(v);
}

/*
 * rows of the object o's scalars, its nested objects' with their keys joined
 * by dots; the zeros' names into z, not as rows
 */
static void kv_rows(FILE *f, struct json_object *root, struct json_object *o, const char *prefix,
		    struct zeros *z)
{
	json_object_object_foreach(o, k, v) {
		char path[256];

		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (json_object_is_type(v, json_type_object)) {
			kv_rows(f, root, v, path, z);
			continue;
		}
		if (json_object_is_type(v, json_type_array))
			continue;
		if (is_zero(v)) {
			const struct figure_doc *d = figure_find(path);

			if (z->at < sizeof(z->text))
				z->at += snprintf(z->text + z->at, sizeof(z->text) - z->at, "%s%s",
						  z->n ? ", " : "", d ? d->label : path + z->base);
			z->n++;
			continue;
		}
		page_label(f, "th", path);
		page_cell(f, root, path);
		fputs("</tr>\n", f);
	}
}

void page_label(FILE *f, const char *tag, const char *path)
{
	const struct figure_doc *d = figure_find(path);
	char label[160];

	fprintf(f, "<%s", tag);
	if (d) {
		fputs(" title='", f);
		page_text(f, d->meaning);
		fputs("'", f);
	}
	fputs(">", f);
	page_text(f, figure_label(path, label, sizeof(label)));
	fprintf(f, "</%s>", tag);
}

void page_kv_table(FILE *f, struct json_object *j, const char *path, const char *caption)
{
	struct json_object *o = json_path_get(j, path);
	struct zeros z = { .base = strlen(path) + 1 };

	if (!o || !json_object_is_type(o, json_type_object))
		return;
	fputs("<table><caption>", f);
	page_text(f, caption);
	fputs("</caption>\n", f);
	kv_rows(f, j, o, path, &z);
	if (!json_object_object_length(o))
		fputs("<tr><td>none</td></tr>\n", f);
	if (z.n) {
		fputs("<tr><td colspan='2' class='zeros'>0: ", f);
		page_text(f, z.text);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* a result's "thresholds" array, or NULL */
static struct json_object *thresholds(struct json_object *j)
{
	struct json_object *t = json_path_get(j, "thresholds");

	return t && json_object_is_type(t, json_type_array) ? t : NULL;
}

void page_verdict(FILE *f, const struct report_doc *docs, int n)
{
	int given = 0, failed = 0;

	for (int i = 0; i < n; i++) {
		struct json_object *t = thresholds(docs[i].j);

		for (size_t k = 0; t && k < json_object_array_length(t); k++) {
			struct json_object *f_;

			given++;
			failed += json_object_object_get_ex(json_object_array_get_idx(t, k),
							    "failed", &f_) &&
				  json_object_get_boolean(f_);
		}
	}
	fprintf(f, "<p class='verdict %s' id='verdict'>%s</p>\n",
		!given ? "none" :
		failed ? "failed" :
			 "passed",
		!given ? "No thresholds were given (--fail-if)." :
		failed ? "FAILED: a threshold was broken." :
			 "PASSED: every threshold held.");
	if (!given)
		return;
	fputs("<table><tr><th>result</th><th>threshold</th><th>value</th><th>failed</th></tr>\n",
	      f);
	for (int i = 0; i < n; i++) {
		struct json_object *t = thresholds(docs[i].j);

		for (size_t k = 0; t && k < json_object_array_length(t); k++) {
			char path[64];

			fputs("<tr><td>", f);
			page_text(f, docs[i].name);
			snprintf(path, sizeof(path), "thresholds.%zu.expr", k);
			fputs("</td>", f);
			page_cell(f, docs[i].j, path);
			snprintf(path, sizeof(path), "thresholds.%zu.value", k);
			page_cell(f, docs[i].j, path);
			snprintf(path, sizeof(path), "thresholds.%zu.failed", k);
			page_cell(f, docs[i].j, path);
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}
