// SPDX-License-Identifier: GPL-2.0
/* xdpreplay search's results: every trial and the bounds, as JSON, CSV and an SVG plot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/headline.h"
#include "report/report.h"
#include "report/svg.h"
#include "search/search.h"
#include "measure/sysinfo.h"
#include "util/json.h"
#include "util/log.h"
#include "util/units.h"

/* The x axis of the plot: the loads tried, on a log scale when they span more than a decade. */
static struct svg_axis load_axis(const struct search *s, double p0, double p1)
{
	struct svg_axis x = { .lo = s->max, .hi = s->min, .p0 = p0, .p1 = p1 };

	for (int i = 0; i < s->nt; i++) {
		x.lo = fmin(x.lo, s->t[i].load);
		x.hi = fmax(x.hi, s->t[i].load);
	}
	if (!s->nt)
		x.lo = s->min, x.hi = s->max;
	x.log = x.hi / x.lo > 10;
	if (x.log) {
		x.lo = svg_nice_125(x.lo * 0.9, false);
		x.hi = svg_nice_125(x.hi * 1.1, true);
	} else {
		double st = svg_nice_step(x.lo * 0.9, x.hi * 1.05, 5);

		x.lo = fmax(0, floor(x.lo * 0.9 / st) * st);
		x.hi = ceil(x.hi * 1.05 / st) * st;
	}
	return x;
}

static const char *const goal_color[MAX_GOALS] = { "#1f5fbf", "#d06000", "#7a3ea0", "#008a6e" };
static const char *const goal_dash[MAX_GOALS] = { "", "8 4", "2 3", "10 3 2 3" };

/* The plot's frame: its size, margins and panel heights, its axes */
struct svg_layout {
	double W, L, R, T, PH, GAP;
	struct svg_axis x, y; /* offered, received */
};

/* The SVG's header: its title (the trial's command), the witness, how it ended, when */
static void svg_head(const struct search *s, const struct svg_layout *k, double H, FILE *f)
{
	char title[200], when[32], wit[72];
	time_t now = s->start_unix;
	size_t at = 0;

	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' "
		"font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
		k->W, H);
	for (int i = 0; i < s->ncmd && at < 80; i++)
		at += snprintf(title + at, sizeof(title) - at, "%s%s", i ? " " : "", s->cmd[i]);
	if (at >= 80)
		snprintf(title + 77, sizeof(title) - 77, "...");
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "<text x='%.0f' y='20' text-anchor='middle' font-size='15'>Drop-point search: ",
		k->W / 2);
	svg_text(f, title);
	fprintf(f, "</text>\n<text x='%.0f' y='40' text-anchor='middle' fill='#444'>witness ",
		k->W / 2);
	snprintf(wit, sizeof(wit), "%.60s%s", s->witness, strlen(s->witness) > 60 ? "..." : "");
	svg_text(f, wit);
	fprintf(f, " | %s%s | %s</text>\n", s->interrupted ? "interrupted, " : "",
		s->stop_why ? s->stop_why : "done", when);
}

/* The throughput panel: received against offered, the diagonal, each goal's lower bound, each trial */
static void svg_throughput(const struct search *s, const struct svg_layout *k, FILE *f)
{
	char a[16];

	/* the throughput panel */
	fprintf(f,
		"<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#000'/>\n",
		k->L, k->T, k->W - k->L - k->R, k->PH);
	svg_axis_ticks(f, &k->x, false, k->T + k->PH + 16, "");
	svg_axis_ticks(f, &k->y, true, k->L - 6, "");
	fprintf(f, "<text x='%.0f' y='%.0f' text-anchor='middle'>offered (%s/s%s)</text>\n",
		(k->L + k->W - k->R) / 2, k->T + k->PH + 36, s->unit,
		k->x.log ? ", log scale" : "");
	fprintf(f,
		"<text x='18' y='%.0f' transform='rotate(-90 18 %.0f)' text-anchor='middle'>received "
		"(%s/s)</text>\n",
		k->T + k->PH / 2, k->T + k->PH / 2, s->unit);
	/* everything offered was received: the diagonal, as a curve on a log axis */
	fprintf(f, "<polyline fill='none' stroke='#aaa' stroke-dasharray='4' points='");
	for (int step = 0; step <= 64; step++) {
		double v = k->x.log ? k->x.lo * pow(k->x.hi / k->x.lo, step / 64.0) :
				      k->x.lo + (k->x.hi - k->x.lo) * step / 64;

		if (v <= k->y.hi)
			fprintf(f, "%.1f,%.1f ", svg_axis_px(&k->x, v), svg_axis_px(&k->y, v));
	}
	fprintf(f, "'/>\n");
	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];
		double gx = svg_axis_px(&k->x, g->lower);

		if (g->lower <= 0)
			continue;
		fprintf(f,
			"<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' stroke='%s' stroke-width='2' "
			"stroke-dasharray='%s'/>\n",
			gx, k->T, gx, k->T + k->PH, goal_color[gi], goal_dash[gi]);
		/* a label per goal at its own height, on the side with room: coinciding bounds stay readable */
		fprintf(f, "<text x='%.1f' y='%.0f' fill='%s' text-anchor='%s'>",
			gx + (gx > k->W / 2 ? -4 : 4), k->T + k->PH - 10 - 14 * gi, goal_color[gi],
			gx > k->W / 2 ? "end" : "start");
		svg_text(f, g->name);
		fprintf(f, " %s</text>\n", fmt_si(g->lower, a, sizeof(a)));
	}
	for (int i = 0; i < s->nt; i++) {
		const struct trial *t = &s->t[i];
		double px = svg_axis_px(&k->x, t->load),
		       py = svg_axis_px(&k->y, t->received / t->duration_s);

		if (t->sender_short)
			fprintf(f,
				"<circle cx='%.1f' cy='%.1f' r='4' fill='none' stroke='#777'/>\n",
				px, py);
		else
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/>\n", px, py,
				t->loss > 0 ? "#c33" : "#393");
	}
}

/* The legend, inside the panel's top-left corner: one line per mark, nothing near an edge */
static void svg_legend(const struct search *s, const struct svg_layout *k, FILE *f)
{
	char a[16], b[16];

	fprintf(f,
		"<g transform='translate(%.0f,%.0f)'><rect width='300' height='%d' fill='white' "
		"fill-opacity='0.85' stroke='#ccc'/>\n",
		k->L + 8, k->T + 8, 20 + 16 * (s->ng + 2));
	fprintf(f,
		"<circle cx='12' cy='14' r='4' fill='#393'/><text x='22' y='18'>trial without loss</text>\n"
		"<circle cx='150' cy='14' r='4' fill='#c33'/><text x='160' y='18'>trial with loss</text>\n"
		"<circle cx='12' cy='30' r='4' fill='none' stroke='#777'/><text x='22' y='34'>sender fell behind "
		"(not counted)</text>\n");
	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];
		char lim[24];

		if (g->p99_us > 0)
			snprintf(lim, sizeof(lim), "p99 <= %s",
				 fmt_duration((uint64_t)(g->p99_us * 1e3), a, sizeof(a)));
		else
			snprintf(lim, sizeof(lim), "loss <= %g%%", g->loss * 100);
		fprintf(f,
			"<line x1='4' y1='%d' x2='24' y2='%d' stroke='%s' stroke-width='2' stroke-dasharray='%s'/>"
			"<text x='30' y='%d'>",
			46 + 16 * gi, 46 + 16 * gi, goal_color[gi], goal_dash[gi], 50 + 16 * gi);
		svg_text(f, g->name);
		fprintf(f, " (");
		svg_text(f, lim);
		fprintf(f, "): lower bound %s, upper %s</text>\n",
			g->lower ? fmt_si(g->lower, a, sizeof(a)) : "none",
			g->upper ? fmt_si(g->upper, b, sizeof(b)) : "none");
	}
	fprintf(f, "</g>\n");
}

/* The latency panel (a latency goal's): each trial's p99 against offered, each goal's bound */
static void svg_latency(const struct search *s, const struct svg_layout *k, double pmin,
			double pmax, FILE *f)
{
	double top = k->T + k->PH + 50 + k->GAP, ph = 200;
	struct svg_axis yl = { .lo = pmin, .hi = pmax, .p0 = top + ph, .p1 = top };

	for (int gi = 0; gi < s->ng; gi++)
		if (s->g[gi].p99_us > 0)
			yl.hi = fmax(yl.hi, s->g[gi].p99_us), yl.lo = fmin(yl.lo, s->g[gi].p99_us);
	yl.log = yl.hi / yl.lo > 10;
	if (yl.log) {
		yl.lo = pow(10, floor(log10(yl.lo * 0.9)));
		yl.hi = pow(10, ceil(log10(yl.hi * 1.1)));
	} else {
		yl.lo = 0;
		yl.hi = yl.hi * 1.1;
	}
	fprintf(f,
		"<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#000'/>\n",
		k->L, top, k->W - k->L - k->R, ph);
	svg_axis_ticks(f, &k->x, false, top + ph + 16, "");
	svg_axis_ticks_fmt(f, &yl, true, k->L - 6, "", svg_tick_us);
	fprintf(f,
		"<text x='18' y='%.0f' transform='rotate(-90 18 %.0f)' text-anchor='middle'>p99 round "
		"trip</text>\n",
		top + ph / 2, top + ph / 2);
	for (int gi = 0; gi < s->ng; gi++) {
		double gy;

		if (s->g[gi].p99_us <= 0)
			continue;
		gy = svg_axis_px(&yl, s->g[gi].p99_us);
		fprintf(f,
			"<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='%s' stroke-width='2' "
			"stroke-dasharray='%s'/>\n",
			k->L, gy, k->W - k->R, gy, goal_color[gi], goal_dash[gi]);
	}
	for (int i = 0; i < s->nt; i++)
		if (s->t[i].p99_us > 0)
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/>\n",
				svg_axis_px(&k->x, s->t[i].load), svg_axis_px(&yl, s->t[i].p99_us),
				s->t[i].sender_short ? "#bbb" : "#1f5fbf");
}

static void write_svg(const struct search *s, FILE *f)
{
	struct svg_layout k = { .W = 760, .L = 80, .R = 30, .T = 64, .PH = 300, .GAP = 70 };
	double H, ymax = 0, pmax = 0, pmin = 1e18;
	bool lat = false;

	for (int gi = 0; gi < s->ng; gi++)
		lat |= s->g[gi].p99_us > 0;
	H = k.T + k.PH + 50 + (lat ? k.GAP + 200 : 0);
	k.x = load_axis(s, k.L, k.W - k.R);
	for (int i = 0; i < s->nt; i++) {
		ymax = fmax(ymax, fmax(s->t[i].load, s->t[i].received / s->t[i].duration_s));
		if (s->t[i].p99_us > 0) {
			pmax = fmax(pmax, s->t[i].p99_us);
			pmin = fmin(pmin, s->t[i].p99_us);
		}
	}
	/* received on the same scale as offered: the diagonal is straight, the knee shows */
	k.y = k.x;
	k.y.p0 = k.T + k.PH;
	k.y.p1 = k.T;
	if (ymax > k.y.hi)
		k.y.hi = ymax;
	svg_head(s, &k, H, f);
	svg_throughput(s, &k, f);
	svg_legend(s, &k, f);
	if (lat && pmax > 0)
		svg_latency(s, &k, pmin, pmax, f);
	fprintf(f, "</svg>\n");
}

void search_trial_json(struct json *j, const struct trial *t)
{
	json_double(j, "offered_pps", t->load);
	json_u64(j, "asked", t->asked);
	json_u64(j, "sent", t->sent);
	json_u64(j, "received", t->received);
	/* the trial's time, or a paced trial's from its schedule's start to its last answer */
	json_double(j, "received_over_s", t->rx_s);
	json_double(j, "loss", t->loss);
	json_flag(j, "sender_short", t->sender_short);
	json_flag(j, "witness_reset", t->witness_reset);
	json_u64(j, "fell_behind", t->behind);
	if (t->nranks > 1) {
		if (t->rank_failed)
			json_u64(j, "rank_failed", t->failed_rank);
		json_double(j, "start_skew_us", t->start_skew_us);
		json_open(j, "ranks", '[');
		for (int r = 0; r < t->nranks; r++) {
			const struct rank_result *rr = &t->ranks[r];

			json_open(j, NULL, '{');
			json_u64(j, "rank", r);
			json_i64(j, "exit", rr->exit);
			if (rr->ran) {
				json_u64(j, "asked", rr->asked);
				json_u64(j, "sent", rr->sent);
				json_double(j, "start_unix", rr->start_unix);
			} else {
				json_str(j, "why", rr->why);
			}
			json_close(j, '}');
		}
		json_close(j, ']');
	}
	if (t->p99_us >= 0)
		json_double(j, "p99_us", t->p99_us);
	if (t->server_cpu_s >= 0) {
		json_double(j, "server_cpu_s", t->server_cpu_s);
		json_double(j, "server_cores", t->server_cores);
	}
	json_open(j, "server_drops", '{');
	for (int k = 0; k < t->nattr; k++)
		json_u64(j, t->attr_name[k], t->attr[k]);
	json_close(j, '}');
}

/* The JSON document's members, its object left open (report/headline.h) */
static void write_json_members(struct json *jp, const void *ctx)
{
	const struct search *s = ctx;
	struct json j = *jp;

	json_open(&j, NULL, '{');
	json_str(&j, "version", XR_VERSION);
	json_u64(&j, "start_unix", s->start_unix);
	/* the host; each trial's sender says its interface and engine in its own JSON */
	sysinfo_json(&j, NULL, NULL);
	json_str(&j, "witness", s->witness);
	json_u64(&j, "ranks", xr_nranks);
	if (s->field)
		json_str(&j, "witness_field", s->field);
	json_open(&j, "settings", '{');
	/* what the loads below count (their names say pps for every unit) */
	json_str(&j, "load_unit", s->unit);
	json_double(&j, "min_pps", s->min);
	json_double(&j, "max_pps", s->max_asked);
	json_double(&j, "max_pps_searched", s->max);
	json_double(&j, "width", s->width);
	json_double(&j, "trial_s", s->trial_ns / 1e9);
	json_double(&j, "settle_s", s->settle_ns / 1e9);
	json_double(&j, "pause_s", s->pause_ns / 1e9);
	json_double(&j, "warmup_s", s->warmup_ns / 1e9);
	json_open(&j, "trial_command", '[');
	for (int i = 0; i < s->ncmd; i++)
		json_str(&j, NULL, s->cmd[i]);
	json_close(&j, ']');
	json_close(&j, '}');
	json_flag(&j, "interrupted", s->interrupted);
	json_str(&j, "stopped", s->stop_why ? s->stop_why : "done");
	/* kept for scripts written against earlier versions */
	json_double(&j, "trial_s", s->trial_ns / 1e9);
	json_open(&j, "goals", '[');
	for (int gi = 0; gi < s->ng; gi++) {
		const struct goal *g = &s->g[gi];

		json_open(&j, NULL, '{');
		json_str(&j, "name", g->name);
		if (g->p99_us > 0)
			json_double(&j, "p99_us", g->p99_us);
		else
			json_double(&j, "loss", g->loss);
		json_double(&j, "exceed", g->exceed);
		json_double(&j, "duration_sum_s", g->dsum);
		json_double(&j, "lower", g->lower);
		json_double(&j, "upper", g->upper);
		json_flag(&j, "never_saturated", g->lower >= s->max);
		json_double(&j, "conditional_throughput", conditional_throughput(s, g));
		/* what each bound stands on: RFC 9971 says a bound without its trials is not a result */
		for (int b = 0; b < 2; b++) {
			struct load_trials lt = trials_at(s, g, b ? g->upper : g->lower);

			json_open(&j, b ? "upper_trials" : "lower_trials", '{');
			json_u64(&j, "counted", lt.counted);
			json_u64(&j, "over_goal", lt.over);
			json_u64(&j, "sender_short", lt.short_);
			json_close(&j, '}');
		}
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_open(&j, "trials", '[');
	for (int i = 0; i < s->nt; i++) {
		json_open(&j, NULL, '{');
		search_trial_json(&j, &s->t[i]);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	search_thresholds_judge(s, NULL, &j);
	*jp = j;
}

static void write_json(const struct search *s, FILE *f)
{
	headline_json(f, write_json_members, s, NULL, 0);
}

void search_headline(const struct search *s, char *buf, size_t len)
{
	headline_json(NULL, write_json_members, s, buf, len);
}

static void write_csv(const struct search *s, FILE *f)
{
	fprintf(f, "trial,offered_pps,asked,sent,received,loss,sender_short,witness_reset\n");
	for (int i = 0; i < s->nt; i++)
		fprintf(f, "%d,%.0f,%llu,%llu,%llu,%.6f,%d,%d\n", i + 1, s->t[i].load,
			(unsigned long long)s->t[i].asked, (unsigned long long)s->t[i].sent,
			(unsigned long long)s->t[i].received, s->t[i].loss, s->t[i].sender_short,
			s->t[i].witness_reset);
}

/* One result file (- is standard output): 0, or -errno after a message when it could not be written. */
static int write_one(const struct search *s, const char *path,
		     void (*write)(const struct search *, FILE *))
{
	FILE *f = json_fopen(path);
	int err;

	if (!f) {
		err = -errno;
	} else {
		write(s, f);
		err = json_fclose(f);
	}
	if (err)
		pr_warn("cannot write %s: %s\n", path, strerror(-err));
	return err;
}

int search_stream_start(struct search *s, const char *path)
{
	struct json j;
	int err = jstream_open(&s->stream, path);

	if (err)
		return err;
	jstream_begin(&s->stream, &j, "start");
	json_str(&j, "witness", s->witness);
	json_u64(&j, "ranks", xr_nranks);
	sysinfo_json(&j, NULL, NULL);
	json_open(&j, "settings", '{');
	json_str(&j, "load_unit", s->unit);
	json_double(&j, "min_pps", s->min);
	json_double(&j, "max_pps", s->max_asked);
	json_double(&j, "trial_s", s->trial_ns / 1e9);
	json_close(&j, '}');
	jstream_emit(&s->stream, &j);
	return 0;
}

void search_stream_trial(struct search *s, const struct trial *t, int i)
{
	struct json j;

	if (!s->stream.f)
		return;
	jstream_begin(&s->stream, &j, "trial");
	json_u64(&j, "trial", i + 1);
	search_trial_json(&j, t);
	jstream_emit(&s->stream, &j);
}

static void write_json_doc(void *ctx, FILE *f)
{
	write_json(ctx, f);
}

int search_stream_end(struct search *s)
{
	if (!s->stream.f)
		return 0;
	jstream_document(&s->stream, "end", write_json_doc, s);
	return jstream_close(&s->stream);
}

/* --html: the page xdpreplay report makes of this search's JSON */
static void write_html(const struct search *s, FILE *f)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&doc, &len);
	struct report_doc d = { .name = "search" };

	if (!m)
		return;
	write_json(s, m);
	if (!fclose(m))
		d.j = json_tokener_parse(doc);
	if (d.j)
		report_html(f, "xdpreplay search", &d, 1);
	json_object_put(d.j);
	free(doc);
}

int write_results(const struct search *s, const char *json_path, const char *csv_path,
		  const char *svg_path, const char *html_path)
{
	int err = 0;

	if (html_path)
		err = write_one(s, html_path, write_html) ?: err;
	if (json_path)
		err = write_one(s, json_path, write_json) ?: err;
	if (csv_path)
		err = write_one(s, csv_path, write_csv) ?: err;
	if (svg_path)
		err = write_one(s, svg_path, write_svg) ?: err;
	return err;
}
