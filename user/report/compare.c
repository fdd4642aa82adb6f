// SPDX-License-Identifier: GPL-2.0
/* Two runs side by side (report/compare.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/compare.h"
#include "report/figures.h"
#include "report/headline.h"
#include "report/plot.h"
#include "util/jsonpath.h"
#include "util/log.h"
#include "util/words.h"

#define ALPHA 0.05
#define MAX_ROUNDS 32
#define MAX_ROWS 64

/* A figure compared: where it is, what it is called and its unit (the schema's), which way is better */
struct figure {
	char path[96], label[96];
	const char *unit;
	int better; /* +1 more is better, -1 less, 0 neither */
};

/* What each kind compares, and which way is better; labels and units from report/figures.h */
struct compared_path {
	const char *path;
	int better;
};

static const struct compared_path sender_figures[] = {
	{ "asked", 0 },
	{ "sent", +1 },
	{ "failed", -1 },
	{ "pps", +1 },
	{ "replies.syn_acks", +1 },
	{ "replies.answers", +1 },
	{ "replies.push_acks", +1 },
	{ "sessions.completed", +1 },
	{ "sessions.failed", -1 },
	{ "sessions.completed_per_s", +1 },
	{ "messages.acked", +1 },
	{ "replies.rtt_us.p50", -1 },
	{ "replies.rtt_us.p99", -1 },
	{ "replies.rtt_us.max", -1 },
};

static const struct compared_path count_figures[] = {
	{ "matched", 0 },
	{ "pps", 0 },
	{ "passed", 0 },
	{ "xdp_dropped", 0 },
	{ "drops.inbound_total", -1 },
	{ "delivered", +1 },
	{ "books.unattributed", 0 },
};

struct rows {
	struct figure f[MAX_ROWS];
	int n;
};

/* A row: its label and unit given, or the schema's */
static void add(struct rows *r, const char *path, const char *label, const char *unit, int better)
{
	const struct figure_doc *d = figure_find(path);

	if (r->n == MAX_ROWS)
		return;
	snprintf(r->f[r->n].path, sizeof(r->f[0].path), "%.95s", path);
	snprintf(r->f[r->n].label, sizeof(r->f[0].label), "%.95s", label ?: d ? d->label : path);
	r->f[r->n].unit = unit ?: d ? d->unit : "";
	r->f[r->n++].better = better;
}

/* Each reason the kernel dropped for on either side */
static void reason_rows(struct rows *r, const struct compare_side *s)
{
	char path[96], label[96];

	for (int i = 0; i < s->n; i++) {
		struct json_object *in = json_path_get(s->docs[i].j, "drops.inbound");

		if (!in || !json_object_is_type(in, json_type_object))
			continue;
		json_object_object_foreach(in, key, val) {
			bool seen = false;

			(void)val;
			snprintf(path, sizeof(path), "drops.inbound.%.64s", key);
			for (int k = 0; k < r->n; k++)
				seen |= !strcmp(r->f[k].path, path);
			snprintf(label, sizeof(label), "dropped by the kernel: %.64s", key);
			if (!seen)
				add(r, path, label, "", -1);
		}
	}
}

/* A search's bounds, goal by goal (by the first side's names) */
static void goal_rows(struct rows *r, const struct compare_side *a)
{
	struct json_object *g = json_path_get(a->docs[0].j, "goals");
	char path[96], label[96];

	for (size_t i = 0; g && i < json_object_array_length(g) && i < 8; i++) {
		struct json_object *name = json_path_get(json_object_array_get_idx(g, i), "name");
		const char *n = name ? json_object_get_string(name) : "goal";

		snprintf(path, sizeof(path), "goals.%zu.lower", i);
		snprintf(label, sizeof(label), "%.64s: lower bound", n);
		add(r, path, label, "/s", +1);
		snprintf(path, sizeof(path), "goals.%zu.upper", i);
		snprintf(label, sizeof(label), "%.64s: upper bound", n);
		add(r, path, label, "/s", +1);
	}
}

static const char *protocol(const struct report_doc *d)
{
	struct json_object *p = json_path_get(d->j, "protocol");

	return p ? json_object_get_string(p) : "";
}

/* Whether every round of both sides is the same kind of result (and protocol): -EINVAL, said, if not */
static int comparable(const struct compare_side *a, const struct compare_side *b)
{
	const struct report_doc *first = &a->docs[0];
	enum result_kind kind = result_kind_of(first->j);

	for (int s = 0; s < 2; s++) {
		const struct compare_side *side = s ? b : a;

		for (int i = 0; i < side->n; i++) {
			const struct report_doc *d = &side->docs[i];

			if (result_kind_of(d->j) != kind || strcmp(protocol(d), protocol(first))) {
				pr_warn("%s and %s cannot be compared: results of different commands "
					"or protocols\n",
					first->name, d->name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static void rows_of(struct rows *r, enum result_kind kind, const struct compare_side *a,
		    const struct compare_side *b)
{
	const struct compared_path *f = kind == RESULT_COUNT ? count_figures : sender_figures;
	size_t n = kind == RESULT_COUNT	 ? sizeof(count_figures) / sizeof(f[0]) :
		   kind == RESULT_SENDER ? sizeof(sender_figures) / sizeof(f[0]) :
					   0;

	r->n = 0;
	for (size_t i = 0; i < n; i++)
		add(r, f[i].path, NULL, NULL, f[i].better);
	if (kind == RESULT_COUNT) {
		reason_rows(r, a);
		reason_rows(r, b);
	}
	if (kind == RESULT_SEARCH)
		goal_rows(r, a);
}

/* The side's values of a figure: how many rounds have it */
static int values(const struct compare_side *s, const char *path, double *v)
{
	int n = 0;

	for (int i = 0; i < s->n && n < MAX_ROUNDS; i++)
		if (!json_path_double(s->docs[i].j, path, &v[n]))
			n++;
	return n;
}

static int by_value(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One compared figure: the medians, the change, and its verdict in words */
struct compared {
	double a, b, p;
	int na, nb;
	char change[32], verdict[64];
};

static bool compare_one(const struct figure *f, const struct compare_side *a,
			const struct compare_side *b, struct compared *c)
{
	double va[MAX_ROUNDS], vb[MAX_ROUNDS];
	bool noisy;

	c->na = values(a, f->path, va);
	c->nb = values(b, f->path, vb);
	if (!c->na || !c->nb)
		return false;
	c->p = c->na > 1 && c->nb > 1 ? compare_u_test(va, c->na, vb, c->nb) : NAN;
	c->a = median(va, c->na);
	c->b = median(vb, c->nb);
	noisy = !isnan(c->p) && c->p > ALPHA;
	if (c->a == c->b)
		snprintf(c->change, sizeof(c->change), "same");
	else if (c->a == 0)
		snprintf(c->change, sizeof(c->change), "from 0");
	else
		snprintf(c->change, sizeof(c->change), "%+.1f%%", 100 * (c->b - c->a) / fabs(c->a));
	/* benchstat: "~" where the rounds cannot tell the change from their noise */
	if (c->a == c->b)
		c->verdict[0] = 0;
	else if (noisy)
		snprintf(c->verdict, sizeof(c->verdict), "~ (p=%.2f: within the noise)", c->p);
	else if (!f->better)
		snprintf(c->verdict, sizeof(c->verdict), isnan(c->p) ? "" : "(p=%.3f)", c->p);
	else if (isnan(c->p))
		snprintf(c->verdict, sizeof(c->verdict), "%s (one run each: the noise unknown)",
			 (c->b > c->a) == (f->better > 0) ? "better" : "worse");
	else
		snprintf(c->verdict, sizeof(c->verdict), "%s (p=%.3f)",
			 (c->b > c->a) == (f->better > 0) ? "better" : "worse", c->p);
	return true;
}

static char *value_words(double v, const char *unit, char *buf, size_t len)
{
	char c[24];

	if (!strcmp(unit, "us"))
		return words_us(v, buf, len);
	if (!strcmp(unit, "/s"))
		return words_rate(v, buf, len);
	if (v != floor(v) || v < 0) {
		snprintf(buf, len, "%s%s", v < 0 ? "-" : "", words_count(fabs(v), c, sizeof(c)));
		return buf;
	}
	return words_count(v, buf, len);
}

static void text_row(FILE *t, const struct figure *f, const struct compared *c)
{
	char a[32], b[32];

	fprintf(t, "  %-34s %12s %12s %9s  %s\n", f->label,
		value_words(c->a, f->unit, a, sizeof(a)), value_words(c->b, f->unit, b, sizeof(b)),
		c->change, c->verdict);
}

static void html_row(FILE *h, const struct figure *f, const struct compared *c)
{
	char a[32], b[32];

	fputs("<tr><th>", h);
	page_text(h, f->label);
	fprintf(h, "</th><td class='n' data-k='%s' data-a='%.17g'>%s</td>", f->path, c->a,
		value_words(c->a, f->unit, a, sizeof(a)));
	fprintf(h, "<td class='n' data-k='%s' data-b='%.17g'>%s</td><td class='n'>%s</td><td>",
		f->path, c->b, value_words(c->b, f->unit, b, sizeof(b)), c->change);
	page_text(h, c->verdict);
	fputs("</td></tr>\n", h);
}

/* Two searches: loss against load, one curve each */
static void search_overlay(FILE *h, const struct compare_side *a, const struct compare_side *b)
{
	static double x[2][4096], y[2][4096];
	struct plot p = { .title = "Loss at each load offered: A against B",
			  .xlabel = "offered per second",
			  .ylabel = "loss (fraction)" };
	struct plot_series s[2] = { { "A", x[0], y[0], 0 }, { "B", x[1], y[1], 0 } };

	for (int k = 0; k < 2; k++) {
		struct json_object *t = json_path_get((k ? b : a)->docs[0].j, "trials");

		for (size_t i = 0; t && i < json_object_array_length(t) && s[k].n < 4096; i++) {
			struct json_object *tr = json_object_array_get_idx(t, i);
			double o, l;

			if (json_path_double(tr, "offered_pps", &o) ||
			    json_path_double(tr, "loss", &l))
				continue;
			x[k][s[k].n] = o;
			y[k][s[k].n++] = l;
		}
		/* in the order of their loads, as a curve */
		for (unsigned int i = 1; i < s[k].n; i++)
			for (unsigned int j = i; j > 0 && x[k][j - 1] > x[k][j]; j--) {
				double tx = x[k][j], ty = y[k][j];

				x[k][j] = x[k][j - 1], y[k][j] = y[k][j - 1];
				x[k][j - 1] = tx, y[k][j - 1] = ty;
			}
	}
	plot_svg(h, &p, s, 2);
}

static void side_names(FILE *h, const char *which, const struct compare_side *s)
{
	char hl[512];

	fprintf(h, "<p class='side'><b>%s</b>: ", which);
	for (int i = 0; i < s->n; i++) {
		fputs(i ? ", <code>" : "<code>", h);
		page_text(h, s->docs[i].name);
		fputs("</code>", h);
	}
	fprintf(h, " (%d run%s)</p>\n", s->n, s->n > 1 ? "s" : "");
	if (!headline_of(s->docs[0].j, hl, sizeof(hl))) {
		fputs("<p class='headline'>", h);
		page_text(h, hl);
		fputs("</p>\n", h);
	}
}

int report_compare(FILE *html, FILE *text, const char *title, const struct compare_side *a,
		   const struct compare_side *b)
{
	static struct rows rows;
	enum result_kind kind = result_kind_of(a->docs[0].j);
	struct compared c;

	if (comparable(a, b))
		return -EINVAL;
	rows_of(&rows, kind, a, b);
	if (text)
		fprintf(text,
			"compare: A = %s (%d run%s), B = %s (%d run%s)\n  %-34s %12s %12s %9s\n",
			a->docs[0].name, a->n, a->n > 1 ? "s" : "", b->docs[0].name, b->n,
			b->n > 1 ? "s" : "", "figure (medians)", "A", "B", "change");
	if (html) {
		page_begin(html, title);
		fputs("<section data-doc='compare'><h2>Comparison</h2>\n", html);
		side_names(html, "A", a);
		side_names(html, "B", b);
		fputs("<table class='compare'><tr><th>figure (medians)</th><th>A</th><th>B</th>"
		      "<th>change</th><th>beyond the noise?</th></tr>\n",
		      html);
	}
	for (int i = 0; i < rows.n; i++) {
		if (!compare_one(&rows.f[i], a, b, &c))
			continue;
		if (text)
			text_row(text, &rows.f[i], &c);
		if (html)
			html_row(html, &rows.f[i], &c);
	}
	if (html) {
		fputs("</table>\n", html);
		if (kind == RESULT_SEARCH)
			search_overlay(html, a, b);
		fputs("</section>\n", html);
		page_end(html);
	}
	return 0;
}
