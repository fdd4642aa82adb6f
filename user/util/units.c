// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "util/units.h"

/* Splits "2.5Mbit" into 2.5 and "Mbit"; rejects empty numbers, signs, nan and inf. */
static int split(const char *s, double *v, const char **suffix)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	/* strtod also reads exponents, hex floats, inf and nan: allow digits and a dot only */
	if (end == s || errno || !isfinite(*v) || *v < 0 ||
	    strspn(s, "0123456789.") != (size_t)(end - s))
		return -EINVAL;
	*suffix = end;
	return 0;
}

static int si_prefix(const char **p, double *mult)
{
	switch (**p) {
	case 'k':
	case 'K': *mult = 1e3; break;
	case 'M': *mult = 1e6; break;
	case 'G':
	case 'g': *mult = 1e9; break;
	case 'T': *mult = 1e12; break;
	default: *mult = 1; return 0;
	}
	(*p)++;
	return 0;
}

int parse_number(const char *s, double *out)
{
	const char *suf;
	double v, mult;

	if (split(s, &v, &suf) || si_prefix(&suf, &mult) || *suf)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

int parse_count(const char *s, uint64_t *out)
{
	double v;

	if (parse_number(s, &v) || v != floor(v) || v > 1.8e19)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int parse_bitrate(const char *s, double *bits_per_s)
{
	const char *suf;
	double v, mult;

	if (split(s, &v, &suf) || si_prefix(&suf, &mult))
		return -EINVAL;
	if (*suf && strcasecmp(suf, "bit") && strcasecmp(suf, "bps") && strcasecmp(suf, "bit/s") &&
	    strcasecmp(suf, "b"))
		return -EINVAL;
	*bits_per_s = v * mult;
	return 0;
}

int parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 },   { "s", 1e9 },
		{ "", 1e9 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	const char *suf;
	double v;
	size_t i;

	if (split(s, &v, &suf))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(suf, units[i].name)) {
			/* 31 years: far past any run, and inside what the conversion can hold */
			if (v * units[i].ns > 1e18)
				return -EINVAL;
			*ns = (uint64_t)(v * units[i].ns + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

int parse_uint(const char *s, unsigned int max, unsigned int *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -ERANGE;
	}
	if (p == s)
		return -EINVAL;
	*out = v;
	*end = p;
	return 0;
}

int parse_shard(const char *s, unsigned int max, unsigned int *shard, unsigned int *shards)
{
	unsigned int i, n;
	const char *end;

	if (parse_uint(s, max, &i, &end) || *end != '/' || parse_uint(end + 1, max, &n, &end) ||
	    *end || n < 1 || i >= n)
		return -EINVAL;
	*shard = i;
	*shards = n;
	return 0;
}

int parse_uint_range(const char *s, unsigned int max, unsigned int *lo, unsigned int *hi)
{
	const char *end;

	if (parse_uint(s, max, lo, &end))
		return -EINVAL;
	*hi = *lo;
	if (*end == '-' && parse_uint(end + 1, max, hi, &end))
		return -EINVAL;
	return *end || *lo > *hi ? -EINVAL : 0;
}

int parse_mac(const char *s, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		unsigned int v = 0, n = 0;

		for (; n < 2 && isxdigit((unsigned char)*s); n++, s++)
			v = v * 16 + (isdigit((unsigned char)*s) ?
					      *s - '0' :
					      (tolower((unsigned char)*s) - 'a' + 10));
		if (!n || *s != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		mac[i] = v;
		if (i < 5)
			s++;
	}
	return 0;
}

char *fmt_si(double v, char *buf, size_t len)
{
	static const char prefix[] = " kMGT";
	int i = 0;

	while (fabs(v) >= 999.5 && i < 4) {
		v /= 1000;
		i++;
	}
	if (!i)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f%c", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, prefix[i]);
	return buf;
}

char *fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.1f us", ns / 1e3);
	return buf;
}
