/* SPDX-License-Identifier: GPL-2.0 */
/* count's maps (bpf/count.bpf.c) read and summed over CPUs. */
#ifndef __XR_MEASURE_COUNT_MAPS_H
#define __XR_MEASURE_COUNT_MAPS_H

#include <stdint.h>
#include "measure/count.h"
#include "util/json.h"

struct count_bpf;

/* The counters (and --respond's) into t: 0 or -errno */
int read_totals(struct count_bpf *skel, struct count_totals *t);
/* Sums the per-flow sequence state; prints up to max_list flows into j when given */
void read_seq(struct count_bpf *skel, struct seq_totals *st, struct json *j, int max_list);
/* Frames per second since the first one, summed over CPUs; returns how many seconds have data */
int read_series(struct count_bpf *skel, uint64_t *out, int max);

#endif
