/* SPDX-License-Identifier: GPL-2.0 */
/* count --listen's /metrics: the counter's figures as Prometheus families (util/prom.h). */
#ifndef __XR_MEASURE_COUNT_METRICS_H
#define __XR_MEASURE_COUNT_METRICS_H

#include "measure/attrib.h"
#include "measure/count.h"
#include "measure/kstats.h"
#include "util/prom.h"

/* What matched, where it went (a), the kernel counters' growth (d), the nft rules (or NULL) */
void count_metrics(struct prom *p, const struct count_totals *t, const struct attribution *a,
		   const struct kstats *d, const struct nft_counters *nft);
/* --seq's sequence figures */
void count_seq_metrics(struct prom *p, const struct seq_totals *st);

#endif
