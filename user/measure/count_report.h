/* SPDX-License-Identifier: GPL-2.0 */
/* count's report: the text on stderr, the JSON (the final one, the live figures), what --fail-if reads. */
#ifndef __XR_MEASURE_COUNT_REPORT_H
#define __XR_MEASURE_COUNT_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "engine/iface.h"
#include "measure/attrib.h"
#include "measure/count.h"
#include "measure/count_verdict.h"
#include "measure/drops.h"
#include "measure/kstats.h"
#include "measure/proc.h"
#include "measure/timeline.h"
#include "measure/appwitness.h"
#include "util/jstream.h"

struct count_bpf;

/* What a report (the final one, or the live figures) is made of */
struct count_report {
	const struct iface *ifc;
	const struct xr_count_cfg *cfg; /* what it matched; NULL in the live figures */
	const struct count_totals *t;
	const struct kstats *d;
	const struct attribution *a;
	double dur;
	double start_unix; /* when count began: its timeline's second 0 */
	struct count_bpf *seq_skel; /* --seq; NULL otherwise */
	const struct nft_counters *nft; /* --nft; NULL otherwise */
	const struct app_witness *wit; /* --webhook; NULL otherwise */
	struct drops *drops; /* kernel drop reasons; NULL when unavailable */
	const struct proc_watch *pw; /* --server-pid; NULL otherwise */
	const struct thresholds *fail_if; /* judged at the end; NULL in the live figures */
	const struct count_verdict_in *verdict; /* what they read */
	const struct timeline *tl; /* second by second; NULL in the live figures */
};

/* Matched frames per second from the first to the last (n frames span n - 1 intervals) */
double matched_rate(const struct count_totals *t);
/* The report on stderr; drop: --drop or --respond (nothing went up the stack) */
void report_text(const char *ifname, const struct count_totals *t, const struct kstats *d,
		 const struct attribution *a, double dur, bool drop,
		 const struct nft_counters *nft);
/* The JSON document into f, with the per-second series when given */
void report_json(FILE *f, const struct count_report *r, const uint64_t *series, int nseries);
/* The report's headline (report/headline.h), as the JSON's "summary" says it */
void count_headline(const struct count_report *r, char *buf, size_t len);
/* What --fail-if reads, from the figures at the end */
void verdict_figures(struct count_bpf *skel, struct drops *drops, const struct count_totals *t,
		     const struct attribution *a, bool seq, struct count_verdict_in *in);

/* --json-stream: "start" (interface, system) and one "interval" a second, second k of the count */
int count_stream_start(struct jstream *js, const char *path, const struct iface *ifc);
void count_stream_interval(struct jstream *js, unsigned int k, const struct count_totals *t,
			   const struct count_totals *prev);
/* "end": the JSON document of r, and the stream closed: 0, or -errno when a line was lost */
int count_stream_end(struct jstream *js, const struct count_report *r, const uint64_t *series,
		     int nseries);

#endif
