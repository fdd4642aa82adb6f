/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The round trips as an HdrHistogram interval log (.hlog, format 1.3), the
 * file HdrHistogram's tools read (HistogramLogProcessor, the plotter): one
 * line a second of the run, its histogram in HdrHistogram's V2 compressed
 * encoding (ZigZag LEB128 counts with zero runs, zlib, base64). The BPF's
 * buckets are HdrHistogram's counts array with 32 sub-buckets (1 significant
 * digit), a unit of 1 ns and values up to 2^35 ns, index for index.
 */
#ifndef __XR_ENGINE_HLOG_H
#define __XR_ENGINE_HLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/engine.h"

/*
 * One histogram of XR_RTT_BUCKETS counts in the V2 compressed encoding,
 * base64, into out (of len): its length, or -ENOSPC / -ENOMEM.
 */
int hlog_encode(const uint64_t *counts, char *out, size_t len);

/* The log of res's per-second histograms, the run begun at start_unix (seconds): 0 or -errno */
int hlog_write(FILE *f, const struct engine_result *res, double start_unix);

#endif
