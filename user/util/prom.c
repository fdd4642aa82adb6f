// SPDX-License-Identifier: GPL-2.0
/* The Prometheus/OpenMetrics exposition writer (util/prom.h). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "util/prom.h"

void prom_begin(struct prom *p, FILE *f, const char *accept)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->openmetrics = accept && strstr(accept, "application/openmetrics-text");
}

/* value escaped as a label value (backslash, quote, newline) into out of len; false when cut */
static bool escape_value(char *out, size_t len, const char *value)
{
	size_t o = 0;

	for (const char *c = value; *c; c++) {
		const char *e = *c == '\\' ? "\\\\" :
				*c == '"'  ? "\\\"" :
				*c == '\n' ? "\\n" :
					     NULL;
		size_t n = e ? 2 : 1;

		if (o + n >= len)
			return false;
		memcpy(out + o, e ? e : c, n);
		o += n;
	}
	out[o] = 0;
	return true;
}

/* appends name="value" to buf (of len, holding used bytes), a comma first if needed */
static void append_label(char *buf, size_t len, const char *name, const char *value)
{
	char esc[256];
	size_t used = strlen(buf);

	if (!escape_value(esc, sizeof(esc), value))
		esc[0] = 0;
	snprintf(buf + used, len - used, "%s%s=\"%s\"", used ? "," : "", name, esc);
}

void prom_common(struct prom *p, const char *name, const char *value)
{
	append_label(p->common, sizeof(p->common), name, value);
}

void prom_family(struct prom *p, const char *name, enum prom_type type, const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	const char *suffix = type == PROM_COUNTER && !p->openmetrics ? "_total" : "";

	snprintf(p->family, sizeof(p->family), "%s", name);
	p->type = type;
	/* HELP text escapes backslash and newline only */
	fprintf(p->f, "# HELP %s%s ", name, suffix);
	for (const char *c = help; *c; c++)
		fputs(*c == '\\' ? "\\\\" : *c == '\n' ? "\\n" : (char[]){ *c, 0 }, p->f);
	fprintf(p->f, "\n# TYPE %s%s %s\n", name, suffix, types[type]);
}

/* the sample's label set: common labels, then the pairs of ap, then extra (or NULL) */
static void labels(const struct prom *p, char *buf, size_t len, va_list ap, const char *extra)
{
	const char *k, *v;

	snprintf(buf, len, "%s", p->common);
	while ((k = va_arg(ap, const char *)) && (v = va_arg(ap, const char *)))
		append_label(buf, len, k, v);
	if (extra) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", used ? "," : "", extra);
	}
}

static void sample(const struct prom *p, const char *suffix, const char *lbl, const char *value)
{
	fprintf(p->f, "%s%s%s%s%s %s\n", p->family, suffix, *lbl ? "{" : "", lbl, *lbl ? "}" : "",
		value);
}

static void fmt_double(char *out, size_t len, double v)
{
	if (isnan(v))
		snprintf(out, len, "NaN");
	else if (isinf(v))
		snprintf(out, len, "%sInf", v > 0 ? "+" : "-");
	else
		snprintf(out, len, "%.10g", v);
}

/* a counter's or gauge's sample of value (text) with the labels of ap */
static void scalar_sample(const struct prom *p, const char *value, va_list ap)
{
	char lbl[512];

	labels(p, lbl, sizeof(lbl), ap, NULL);
	sample(p, p->type == PROM_COUNTER ? "_total" : "", lbl, value);
}

void prom_u64(struct prom *p, uint64_t v, ...)
{
	char val[24];
	va_list ap;

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	va_start(ap, v);
	scalar_sample(p, val, ap);
	va_end(ap);
}

void prom_double(struct prom *p, double v, ...)
{
	char val[32];
	va_list ap;

	fmt_double(val, sizeof(val), v);
	va_start(ap, v);
	scalar_sample(p, val, ap);
	va_end(ap);
}

void prom_histogram(struct prom *p, const double *le, const uint64_t *cum, unsigned int n,
		    uint64_t count, double sum, ...)
{
	char lbl[512], le_lbl[48], bound[32], val[32];
	va_list ap;

	for (unsigned int i = 0; i <= n; i++) {
		if (i < n)
			fmt_double(bound, sizeof(bound), le[i]);
		snprintf(le_lbl, sizeof(le_lbl), "le=\"%s\"", i < n ? bound : "+Inf");
		va_start(ap, sum);
		labels(p, lbl, sizeof(lbl), ap, le_lbl);
		va_end(ap);
		snprintf(val, sizeof(val), "%llu", (unsigned long long)(i < n ? cum[i] : count));
		sample(p, "_bucket", lbl, val);
	}
	va_start(ap, sum);
	labels(p, lbl, sizeof(lbl), ap, NULL);
	va_end(ap);
	snprintf(val, sizeof(val), "%llu", (unsigned long long)count);
	sample(p, "_count", lbl, val);
	fmt_double(val, sizeof(val), sum);
	sample(p, "_sum", lbl, val);
}

const char *prom_end(struct prom *p)
{
	if (p->openmetrics) {
		fputs("# EOF\n", p->f);
		return PROM_OPENMETRICS_TYPE;
	}
	return PROM_TEXT_TYPE;
}

static char run_id[17];

static void make_run_id(void)
{
	uint64_t r;

	/* without entropy (never on Linux >= 3.17 once booted): the time and the pid */
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	snprintf(run_id, sizeof(run_id), "%016llx", (unsigned long long)r);
}

const char *prom_run_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, make_run_id);
	return run_id;
}
