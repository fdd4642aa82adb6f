/* SPDX-License-Identifier: GPL-2.0 */
/* The Internet checksum (RFC 1071), from scratch, over big-endian 16-bit words. */
#ifndef __XR_CSUM_H
#define __XR_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Adds the words of p (an odd last byte padded with zero) to sum. */
static inline uint32_t csum_add(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	return sum;
}

/* Folds the carries back in and complements: the checksum to store (or 0 when it verifies). */
static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

#endif
