/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Drop attribution: where the frames that reached the server went, from the
 * growth of the kernel's counters during a run (struct kstats): delivered,
 * or dropped by the interface, softnet, IP, UDP (buffer, no port), TCP's
 * listener, or the firewall.
 */
#ifndef __XR_MEASURE_ATTRIB_H
#define __XR_MEASURE_ATTRIB_H

#include <stdint.h>
#include "measure/kstats.h"

struct attribution {
	uint64_t firewall_dropped; /* nftables rules that drop or reject (--nft) */
	uint64_t ip_discarded, udp_delivered, udp_rcvbuf, udp_noport, udp_other;
	uint64_t tcp_listen_drops, tcp_listen_overflows, tcp_syncookies, tcp_reqq_full;
	uint64_t if_rx_dropped, softnet_dropped;
};

/* a from the counters' growth d */
void attribute(const struct kstats *d, struct attribution *a);

#endif
