// SPDX-License-Identifier: GPL-2.0
/* HdrHistogram interval logs of the round trips (engine/hlog.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <openssl/evp.h>
#include "engine/hlog.h"

#define V2_COOKIE (0x1c849303 | 0x10) /* V2, its low bits the word size of the counts */
#define V2_COMPRESSED_COOKIE (0x1c849304 | 0x10)
#define V2_HEADER 40
#define SUB_BUCKET_DIGITS 1 /* 32 sub-buckets: 2 * 10^1 rounded up to a power of two */
#define HIGHEST_NS ((1ULL << 35) - 1) /* 31 buckets: the 512 counts exactly */
/* a count's ZigZag LEB128: at most 9 bytes */
#define ENCODED_MAX (V2_HEADER + XR_RTT_BUCKETS * 9)

static uint8_t *put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*p++ = v >> (8 * i);
	return p;
}

/* HdrHistogram's ZigZagEncoding.putLong: 7 bits a byte, the 9th byte whole */
static uint8_t *put_zigzag(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);

	for (int i = 0; i < 8; i++) {
		if (z < 0x80) {
			*p++ = z;
			return p;
		}
		*p++ = (z & 0x7f) | 0x80;
		z >>= 7;
	}
	*p++ = z;
	return p;
}

/* The uncompressed V2 encoding into out: its length. Counts up to the last non-zero one, zero runs negative */
static size_t encode_v2(const uint64_t *counts, uint8_t *out)
{
	unsigned int limit = 0;
	uint8_t *p = out + V2_HEADER;
	double one = 1.0;
	uint64_t one_bits;

	for (unsigned int i = 0; i < XR_RTT_BUCKETS; i++)
		if (counts[i])
			limit = i + 1;
	for (unsigned int i = 0; i < limit;) {
		unsigned int zeros = 0;

		while (i < limit && !counts[i])
			zeros++, i++;
		if (zeros > 1)
			p = put_zigzag(p, -(int64_t)zeros);
		else if (zeros == 1)
			p = put_zigzag(p, 0);
		else
			p = put_zigzag(p, (int64_t)counts[i++]);
	}
	memcpy(&one_bits, &one, sizeof(one));
	put_be(put_be(put_be(put_be(put_be(put_be(put_be(out, V2_COOKIE, 4), p - out - V2_HEADER, 4),
					   0, 4),
				    SUB_BUCKET_DIGITS, 4),
			     1, 8),
		      HIGHEST_NS, 8),
	       one_bits, 8);
	return p - out;
}

int hlog_encode(const uint64_t *counts, char *out, size_t len)
{
	uint8_t raw[ENCODED_MAX], *packed;
	uLongf zlen = compressBound(ENCODED_MAX);
	size_t n = encode_v2(counts, raw);
	int ret = -ENOMEM;

	packed = malloc(8 + zlen);
	if (!packed)
		return -ENOMEM;
	if (compress2(packed + 8, &zlen, raw, n, Z_DEFAULT_COMPRESSION) != Z_OK)
		goto out;
	put_be(put_be(packed, V2_COMPRESSED_COOKIE, 4), zlen, 4);
	ret = -ENOSPC;
	/* base64: 4 characters for every 3 bytes, and its NUL */
	if (4 * ((8 + zlen + 2) / 3) + 1 > len)
		goto out;
	ret = EVP_EncodeBlock((unsigned char *)out, packed, 8 + zlen);
out:
	free(packed);
	return ret;
}

int hlog_write(FILE *f, const struct engine_result *res, double start_unix)
{
	const struct engine_replies *r = &res->replies;
	char b64[4 * ((8 + ENCODED_MAX + ENCODED_MAX / 100 + 64) / 3) + 8], when[64];
	time_t t = (time_t)start_unix;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%a %b %d %H:%M:%S UTC %Y", &tm);
	fprintf(f,
		"#[Histogram log format version 1.3]\n"
		"#[StartTime: %.3f (seconds since epoch), %s]\n"
		"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
		start_unix, when);
	for (unsigned int s = 0; r->hist && s < r->seconds && s < XR_RTT_SECS; s++) {
		const uint64_t *h = r->hist + (size_t)s * XR_RTT_BUCKETS;
		unsigned int top = 0;
		int n;

		for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++)
			if (h[b])
				top = b + 1;
		if (!top)
			continue;
		n = hlog_encode(h, b64, sizeof(b64));
		if (n < 0)
			return n;
		/* the interval's max in milliseconds, its bucket's highest equivalent value */
		fprintf(f, "%.3f,%.3f,%.3f,%s\n", (double)s, 1.0, (rtt_bucket_floor(top) - 1) / 1e6,
			b64);
	}
	return ferror(f) ? -EIO : 0;
}
