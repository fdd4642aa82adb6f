// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include "engine/meter.h"
#include "util/units.h"

#define SEC 1000000000ULL

void meter_init(struct run_meter *m, const struct engine_opts *o, uint64_t start_ns, uint64_t total)
{
	*m = (struct run_meter){ .start_ns = start_ns,
				 .total = total,
				 .duration_ns = o->duration_ns,
				 .progress = o->progress,
				 .live = o->live,
				 .last_t = start_ns,
				 .next_line = start_ns + SEC,
				 .next_sec = start_ns + SEC };
	if (m->live) {
		pthread_mutex_lock(&m->live->lock);
		m->live->start_ns = m->live->now_ns = start_ns;
		m->live->total = total;
		m->live->running = true;
		pthread_mutex_unlock(&m->live->lock);
	}
}

static void sample(struct run_meter *m, uint64_t cumulative)
{
	if (m->nsec == m->cap) {
		unsigned int cap = m->cap ? m->cap * 2 : 64;
		uint64_t *p = realloc(m->per_sec, cap * sizeof(*p));

		if (!p)
			return; /* the series stops growing; the run goes on */
		m->per_sec = p;
		m->cap = cap;
	}
	/* cumulative for now; meter_finish turns the series into differences */
	m->per_sec[m->nsec++] = cumulative;
}

void meter_tick(struct run_meter *m, uint64_t now, uint64_t sent, uint64_t failed, double mean_len)
{
	char a[16], b[16], c[16], eta[16], tot[16];
	double dt, pps, left_s = -1;

	if (m->live) {
		pthread_mutex_lock(&m->live->lock);
		m->live->sent = sent;
		m->live->failed = failed;
		m->live->bytes = (uint64_t)(mean_len * (sent + failed));
		m->live->now_ns = now;
		pthread_mutex_unlock(&m->live->lock);
	}
	while (now >= m->next_sec) {
		sample(m, sent);
		m->next_sec += SEC;
	}
	if (!m->progress || now < m->next_line)
		return;
	dt = (now - m->last_t) / 1e9;
	pps = dt > 0 ? (sent - m->last_sent) / dt : 0;
	fprintf(stderr, "\r  sent %s  %s pps  %sbit/s  failed %llu", fmt_si(sent, a, sizeof(a)),
		fmt_si(pps, b, sizeof(b)), fmt_si(pps * (mean_len + 24) * 8, c, sizeof(c)),
		(unsigned long long)failed);
	if (m->total != XR_FOREVER && m->total) {
		uint64_t done = sent + failed;

		if (pps > 0 && done < m->total)
			left_s = (m->total - done) / pps;
		fprintf(stderr, "  %.1f%% of %s", 100.0 * done / m->total,
			fmt_si(m->total, tot, sizeof(tot)));
	} else if (m->duration_ns) {
		uint64_t end = m->start_ns + m->duration_ns;

		left_s = end > now ? (end - now) / 1e9 : 0;
	}
	if (left_s >= 0)
		fprintf(stderr, "  ETA %s",
			fmt_duration((uint64_t)(left_s * 1e9), eta, sizeof(eta)));
	fputs("   ", stderr);
	m->last_sent = sent;
	m->last_t = now;
	m->next_line += SEC;
}

void meter_finish(struct run_meter *m, uint64_t now, uint64_t sent, struct engine_result *res)
{
	uint64_t prev = 0;

	if (now > m->next_sec - SEC)
		sample(m, sent);
	if (m->live) {
		pthread_mutex_lock(&m->live->lock);
		m->live->sent = sent;
		m->live->now_ns = now;
		m->live->running = false;
		pthread_mutex_unlock(&m->live->lock);
	}
	for (unsigned int i = 0; i < m->nsec; i++) {
		uint64_t c = m->per_sec[i];

		m->per_sec[i] = c >= prev ? c - prev : 0;
		prev = c;
	}
	res->per_sec = m->per_sec;
	res->nsec = m->nsec;
	m->per_sec = NULL;
	if (m->progress && now - m->start_ns >= SEC)
		fputc('\n', stderr);
}
