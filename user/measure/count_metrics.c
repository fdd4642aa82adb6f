// SPDX-License-Identifier: GPL-2.0
/* count --listen's Prometheus families (measure/count_metrics.h). */
#include "measure/count_metrics.h"
#include "report/figures.h"

/* a counter of the figure the schema says the family carries (report/figures.h) */
static void counter(struct prom *p, const char *name, uint64_t v)
{
	figure_prom_family(p, name, PROM_COUNTER);
	prom_u64(p, v, NULL);
}

/* where what arrived went, the same figures as the JSON's attribution object */
static void attribution_metrics(struct prom *p, const struct count_totals *t,
				const struct attribution *a)
{
	const struct {
		const char *name;
		uint64_t v;
	} stage[] = {
		{ "iface_rx_dropped", a->if_rx_dropped },
		{ "softnet_dropped", a->softnet_dropped },
		{ "xdp_dropped", t->dropped },
		{ "firewall_dropped", a->firewall_dropped },
		{ "ip_discarded", a->ip_discarded },
		{ "udp_delivered", a->udp_delivered },
		{ "udp_rcvbuf_errors", a->udp_rcvbuf },
		{ "udp_no_ports", a->udp_noport },
		{ "udp_other_errors", a->udp_other },
		{ "tcp_listen_drops", a->tcp_listen_drops },
		{ "tcp_listen_overflows", a->tcp_listen_overflows },
		{ "tcp_syncookies_sent", a->tcp_syncookies },
		{ "tcp_reqq_full_drops", a->tcp_reqq_full },
	};

	figure_prom_family(p, "xdpreplay_attribution", PROM_COUNTER);
	for (size_t i = 0; i < sizeof(stage) / sizeof(stage[0]); i++)
		prom_u64(p, stage[i].v, "stage", stage[i].name, NULL);
}

void count_metrics(struct prom *p, const struct count_totals *t, const struct attribution *a,
		   const struct kstats *d, const struct nft_counters *nft)
{
	counter(p, "xdpreplay_count_matched", t->matched);
	prom_family(p, "xdpreplay_count_matched_bytes", PROM_COUNTER,
		    "Bytes of the frames that matched the filter.");
	prom_u64(p, t->bytes, NULL);
	counter(p, "xdpreplay_count_seen", t->seen);
	counter(p, "xdpreplay_count_xdp_dropped", t->dropped);
	attribution_metrics(p, t, a);
	if (nft) {
		prom_family(p, "xdpreplay_nft_rule_packets", PROM_COUNTER,
			    "Packets per nftables rule since the counter started.");
		for (int i = 0; i < nft->n; i++)
			prom_u64(p, nft->r[i].packets, "rule", nft->r[i].id, "drops",
				 nft->r[i].drops ? "1" : "0", NULL);
	}
	/* a gauge: a difference of two readings, which a counter reset would make negative */
	prom_family(p, "xdpreplay_kernel_delta", PROM_GAUGE,
		    "Kernel counters' growth since the counter started.");
	for (int i = 0; i < KS_NUM; i++) {
		char name[64];

		if (!d->have[i])
			continue;
		snprintf(name, sizeof(name), "%s.%s", kstat_defs[i].group, kstat_defs[i].name);
		prom_u64(p, d->v[i], "counter", name, NULL);
	}
}

void count_seq_metrics(struct prom *p, const struct seq_totals *st)
{
	prom_family(p, "xdpreplay_sequence", PROM_COUNTER,
		    "Frames by what their sequence numbers say (--seq).");
	prom_u64(p, st->received, "state", "received", NULL);
	prom_u64(p, st->lost, "state", "lost", NULL);
	prom_u64(p, st->dup, "state", "duplicated", NULL);
	prom_u64(p, st->reordered, "state", "reordered", NULL);
	prom_family(p, "xdpreplay_sequence_flows", PROM_GAUGE,
		    "Flows the sequence numbers came in.");
	prom_u64(p, st->flows, NULL);
}
