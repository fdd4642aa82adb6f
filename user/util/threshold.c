// SPDX-License-Identifier: GPL-2.0
/* --fail-if (util/threshold.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/log.h"
#include "util/threshold.h"
#include "util/units.h"

static const char
	*const op_text[] = { [THR_LT] = "<", [THR_LE] = "<=", [THR_GT] = ">", [THR_GE] = ">=" };

/* The operator at s: its length, and *op; 0 when there is none. */
static size_t op_at(const char *s, enum threshold_op *op)
{
	if (s[0] == '<' || s[0] == '>') {
		bool eq = s[1] == '=';

		*op = s[0] == '<' ? (eq ? THR_LE : THR_LT) : (eq ? THR_GE : THR_GT);
		return 1 + eq;
	}
	return 0;
}

/* VALUE in the metric's unit into t: 0, or -EINVAL. */
static int parse_value(struct threshold *t, const char *v)
{
	size_t len = strlen(v);
	uint64_t ns;
	char *end;

	switch (t->metric->kind) {
	case THR_FRACTION:
		if (len && v[len - 1] == '%') {
			char num[32];

			if (len >= sizeof(num))
				return -EINVAL;
			memcpy(num, v, len - 1);
			num[len - 1] = 0;
			if (parse_number(num, &t->value))
				return -EINVAL;
			t->value /= 100;
		} else if (parse_number(v, &t->value)) {
			return -EINVAL;
		}
		return t->value <= 1 ? 0 : -EINVAL;
	case THR_TIME:
		if (parse_duration(v, &ns))
			return -EINVAL;
		t->value = ns;
		return 0;
	case THR_RATE:
		if (len > 7 && !strcmp(v + len - 7, "*target")) {
			t->value = strtod(v, &end);
			t->of_target = true;
			return end == v + len - 7 && isfinite(t->value) && t->value >= 0 ? 0 :
											   -EINVAL;
		}
		return parse_number(v, &t->value);
	case THR_COUNT: return parse_number(v, &t->value) || t->value < 0 ? -EINVAL : 0;
	}
	return -EINVAL;
}

int threshold_add(struct thresholds *ts, const char *cmd, const char *expr,
		  const struct threshold_metric *metrics, unsigned int n)
{
	struct threshold *t = &ts->t[ts->n];
	size_t name_len = strcspn(expr, "<>"), oplen;

	if (ts->n >= THR_MAX) {
		pr_warn("--fail-if: at most %d thresholds\n", THR_MAX);
		return -EINVAL;
	}
	memset(t, 0, sizeof(*t));
	snprintf(t->text, sizeof(t->text), "%s", expr);
	for (unsigned int i = 0; i < n && !t->metric; i++)
		if (strlen(metrics[i].name) == name_len &&
		    !strncmp(expr, metrics[i].name, name_len))
			t->metric = &metrics[i];
	oplen = expr[name_len] ? op_at(expr + name_len, &t->op) : 0;
	if (!t->metric || !oplen || strlen(expr) >= sizeof(t->text)) {
		char names[256] = "";
		size_t at = 0;

		for (unsigned int i = 0; i < n && at < sizeof(names); i++)
			at += snprintf(names + at, sizeof(names) - at, "%s%s", i ? ", " : "",
				       metrics[i].name);
		pr_warn("--fail-if: '%s' is not METRIC<VALUE, <=, > or >= (METRIC: %s)\n", expr,
			names);
		return -EINVAL;
	}
	if (parse_value(t, expr + name_len + oplen)) {
		pr_warn("--fail-if: '%s': '%s' is not %s\n", expr, expr + name_len + oplen,
			t->metric->kind == THR_FRACTION ?
				"a fraction (0.001 or 0.1%)" :
			t->metric->kind == THR_TIME ?
				"a time (250us, 10ms, 1.5s)" :
			t->metric->kind == THR_COUNT ?
				"a number (0, 1k, 2.5M)" :
				"a rate (50k, 2.5M) or F*target (0.99*target)");
		return -EINVAL;
	}
	ts->n++;
	return 0;
}

bool threshold_fails(const struct threshold *t, double v, double target)
{
	double limit = t->of_target ? t->value * target : t->value;

	if (isnan(v))
		return true;
	switch (t->op) {
	case THR_LT: return v < limit;
	case THR_LE: return v <= limit;
	case THR_GT: return v > limit;
	case THR_GE: return v >= limit;
	}
	return true;
}

/* v in the metric's unit, for a person */
static void fmt_value(const struct threshold_metric *m, double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "none in this run");
	else if (m->kind == THR_FRACTION)
		snprintf(buf, len, "%.4g%%", v * 100);
	else if (m->kind == THR_TIME)
		fmt_duration(v, buf, len);
	else if (m->kind == THR_COUNT)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%s/s", fmt_si(v, (char[16]){}, 16));
}

bool thresholds_judge(const struct thresholds *ts, const double *values, double target, FILE *human,
		      struct json *j)
{
	bool any = false;
	char buf[64];

	if (j && ts->n)
		json_open(j, "thresholds", '[');
	for (unsigned int i = 0; i < ts->n; i++) {
		const struct threshold *t = &ts->t[i];
		bool fails = threshold_fails(t, values[i], target);

		any |= fails;
		fmt_value(t->metric, values[i], buf, sizeof(buf));
		if (human)
			fprintf(human, "  --fail-if %s: %s (%s %s)\n", t->text,
				fails ? "FAILED" : "passed", t->metric->name, buf);
		if (j) {
			json_open(j, NULL, '{');
			json_str(j, "expr", t->text);
			json_str(j, "metric", t->metric->name);
			json_str(j, "op", op_text[t->op]);
			json_double(j, "limit", t->of_target ? t->value * target : t->value);
			if (!isnan(values[i]))
				json_double(j, "value", values[i]);
			json_flag(j, "failed", fails);
			json_close(j, '}');
		}
	}
	if (j && ts->n)
		json_close(j, ']');
	return any;
}
