// SPDX-License-Identifier: GPL-2.0
/* Sentences about figures (util/words.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include "util/units.h"
#include "util/words.h"

void words_init(struct words *w, char *buf, size_t len)
{
	*w = (struct words){ .buf = buf, .len = len };
	if (len)
		buf[0] = 0;
}

static void words_vadd(struct words *w, const char *fmt, va_list ap)
{
	int n;

	if (w->at + 1 >= w->len)
		return;
	n = vsnprintf(w->buf + w->at, w->len - w->at, fmt, ap);
	if (n > 0)
		w->at = w->at + n < w->len ? w->at + n : w->len - 1;
}

void words_add(struct words *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	words_vadd(w, fmt, ap);
	va_end(ap);
}

void words_clause(struct words *w, const char *fmt, ...)
{
	va_list ap;

	if (w->clauses++)
		words_add(w, "; ");
	va_start(ap, fmt);
	words_vadd(w, fmt, ap);
	va_end(ap);
}

char *words_count(double v, char *buf, size_t len)
{
	unsigned long long n = llround(v);

	if (v >= 99999.5 || v < 0)
		return fmt_si(v, buf, len);
	if (n >= 1000)
		snprintf(buf, len, "%llu,%03llu", n / 1000, n % 1000);
	else
		snprintf(buf, len, "%llu", n);
	return buf;
}

char *words_rate(double per_s, char *buf, size_t len)
{
	char c[16];

	snprintf(buf, len, "%s/s",
		 per_s < 9999.5 ? words_count(per_s, c, sizeof(c)) : fmt_si(per_s, c, sizeof(c)));
	return buf;
}

char *words_share(double part, double whole, char *buf, size_t len)
{
	double pct = whole > 0 ? 100 * part / whole : 0;
	/* cut, not rounded: never a whole it is not */
	double cut = floor(pct * 100) / 100;

	if (part == whole && whole > 0)
		snprintf(buf, len, "100%%");
	else if (part <= 0 || whole <= 0)
		snprintf(buf, len, "0%%");
	else if (pct > 100)
		snprintf(buf, len, "%.4g%%", pct);
	else if (cut <= 0)
		snprintf(buf, len, "under 0.01%%");
	else
		snprintf(buf, len, "%.4g%%", cut);
	return buf;
}

char *words_us(double us, char *buf, size_t len)
{
	if (us >= 1e6)
		snprintf(buf, len, "%.2f s", us / 1e6);
	else if (us >= 1e3)
		snprintf(buf, len, "%.*f ms", us < 1e4 ? 2 : us < 1e5 ? 1 : 0, us / 1e3);
	else
		snprintf(buf, len, "%.0f us", us);
	return buf;
}
