/* SPDX-License-Identifier: GPL-2.0 */
/* splitmix64 (Steele, Lea, Flood 2014): a small generator for reproducible test data and fleets. */
#ifndef __XR_SPLITMIX_H
#define __XR_SPLITMIX_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif
