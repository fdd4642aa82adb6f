/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Human units on the command line and in reports: counts (10k, 2.5M, 1G),
 * bit rates (100Mbit, 1Gbit, 2.5G), durations (250ms, 30s, 5m, 1h).
 * Decimal prefixes throughout, as network people write them.
 */
#ifndef __XR_UNITS_H
#define __XR_UNITS_H

#include <stdint.h>
#include <stddef.h>

/* Each returns 0, or -EINVAL for text that is not a valid, finite, non-negative value. */
int parse_count(const char *s, uint64_t *out);
int parse_number(const char *s, double *out); /* 2.5M -> 2500000.0 */
int parse_bitrate(const char *s, double *bits_per_s);
int parse_duration(const char *s, uint64_t *ns);

/*
 * Decimal digits only (no sign, no space, no 0x) up to max: the value and
 * where the digits end. 0, -EINVAL (no digits) or -ERANGE (above max).
 * sscanf's %u would take "-2" as 4294967294.
 */
int parse_uint(const char *s, unsigned int max, unsigned int *out, const char **end);
/* "N" or "A-B" (A <= B <= max), the whole string: 0 or -EINVAL. */
int parse_uint_range(const char *s, unsigned int max, unsigned int *lo, unsigned int *hi);
/* "I/N", the whole string: shard I of N (I < N, 1 <= N <= max). 0 or -EINVAL. */
int parse_shard(const char *s, unsigned int max, unsigned int *shard, unsigned int *shards);
/* A MAC address, six groups of one or two hex digits joined by ':': 0 or -EINVAL. */
int parse_mac(const char *s, uint8_t mac[6]);

/* "4.78M", "812k", "950" with up to 3 significant digits; returns buf. */
char *fmt_si(double v, char *buf, size_t len);
/* "1.50 s", "250 ms", "12.0 us" */
char *fmt_duration(uint64_t ns, char *buf, size_t len);

#endif
