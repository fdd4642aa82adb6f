// SPDX-License-Identifier: GPL-2.0
/* Drop attribution from the kernel counters' growth: see attrib.h. */
#include <string.h>
#include "measure/attrib.h"

void attribute(const struct kstats *d, struct attribution *a)
{
	const uint64_t *v = d->v;

	memset(a, 0, sizeof(*a));
	a->ip_discarded = v[KS_IP_IN_DISCARDS] + v[KS_IP_IN_HDR_ERRORS] + v[KS_IP_IN_ADDR_ERRORS];
	a->udp_delivered = v[KS_UDP_IN_DATAGRAMS];
	a->udp_rcvbuf = v[KS_UDP_RCVBUF_ERRORS];
	a->udp_noport = v[KS_UDP_NO_PORTS];
	/* the kernel counts a full receive buffer in InErrors too */
	a->udp_other = v[KS_UDP_IN_ERRORS] > v[KS_UDP_RCVBUF_ERRORS] ?
			       v[KS_UDP_IN_ERRORS] - v[KS_UDP_RCVBUF_ERRORS] :
			       0;
	a->tcp_listen_drops = v[KS_TCPEXT_LISTEN_DROPS];
	a->tcp_listen_overflows = v[KS_TCPEXT_LISTEN_OVERFLOWS];
	a->tcp_syncookies = v[KS_TCPEXT_SYNCOOKIES_SENT];
	a->tcp_reqq_full = v[KS_TCPEXT_REQQFULL_DROP];
	a->if_rx_dropped = v[KS_IF_RX_DROPPED] + v[KS_ET_RX_DROPS];
	a->softnet_dropped = v[KS_SOFTNET_DROPPED];
}
