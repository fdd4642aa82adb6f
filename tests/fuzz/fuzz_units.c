// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the human units of the command line (counts, numbers, bit rates, durations, shards). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[64], out[32];
	uint64_t c, ns;
	unsigned int i, n;
	double v;

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (!parse_count(s, &c))
		fmt_si(c, out, sizeof(out));
	if (!parse_number(s, &v) && !(isfinite(v) && v >= 0))
		__builtin_trap();
	if (!parse_bitrate(s, &v) && !(isfinite(v) && v >= 0))
		__builtin_trap();
	if (!parse_duration(s, &ns))
		fmt_duration(ns, out, sizeof(out));
	if (!parse_shard(s, 65536, &i, &n) && !(i < n && n >= 1 && n <= 65536))
		__builtin_trap();
	return 0;
}
