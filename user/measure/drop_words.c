// SPDX-License-Identifier: GPL-2.0
/* Where a frame died, in words (measure/drop_words.h). */
#include <stdio.h>
#include <string.h>
#include "measure/drop_words.h"

struct drop_word {
	const char *key, *words;
};

/* the kernel's reasons a server's load meets most (include/net/dropreason-core.h) */
static const struct drop_word reasons[] = {
	{ "NO_SOCKET", "no socket on the port" },
	{ "NETFILTER_DROP", "the firewall" },
	{ "SOCKET_RCVBUFF", "a socket's receive buffer full" },
	{ "SOCKET_BACKLOG", "a socket's backlog full" },
	{ "SOCKET_FILTER", "a socket filter" },
	{ "PROTO_MEM", "the protocol's memory limit" },
	{ "OTHERHOST", "addressed to another host" },
	{ "IP_NOPROTO", "no handler for the IP protocol" },
	{ "IP_NOROUTE", "no route" },
	{ "IP_INADDRERRORS", "a bad destination address" },
	{ "IP_CSUM", "a bad IP checksum" },
	{ "UDP_CSUM", "a bad UDP checksum" },
	{ "TCP_CSUM", "a bad TCP checksum" },
	{ "PKT_TOO_SMALL", "too short" },
	{ "CPU_BACKLOG", "the CPU's backlog full" },
	{ "QDISC_DROP", "the queueing discipline" },
	{ "XDP", "an XDP program" },
	{ "TCP_LISTEN_DROPS", "the listener refused it (listen queue)" },
	{ "TCP_LISTEN_OVERFLOW", "the listen queue full" },
	{ "TCP_REQQFULLDROP", "the SYN queue full" },
	{ "TCP_OLD_DATA", "TCP data already received" },
	{ "TCP_OFOMERGE", "TCP data out of order, merged" },
	{ "TCP_FLAGS", "TCP flags the socket refuses" },
	{ "TCP_INVALID_SEQUENCE", "a TCP sequence number out of the window" },
	{ "TCP_RESET", "a TCP reset" },
	{ "NOT_SPECIFIED", "no reason given" },
	{ "SUBSYSTEM", "a subsystem's own reason" },
	{},
};

/* count's attribution counters (measure/attrib.h), by their JSON names */
static const struct drop_word counters[] = {
	{ "iface_rx_dropped", "the interface's receive drops" },
	{ "softnet_dropped", "the CPU's backlog full (softnet)" },
	{ "xdp_dropped", "dropped in XDP by count --drop" },
	{ "firewall_dropped", "the firewall (nftables)" },
	{ "ip_discarded", "IP discards" },
	{ "udp_rcvbuf_errors", "UDP socket buffers full" },
	{ "udp_no_ports", "no socket on the UDP port" },
	{ "udp_other_errors", "other UDP errors" },
	{ "tcp_listen_drops", "TCP listen drops" },
	{ "tcp_listen_overflows", "the TCP listen queue full" },
	{ "tcp_reqq_full_drops", "the SYN queue full" },
	{ "unattributed", "unattributed (passed to the stack, no drop traced)" },
	{},
};

static const char *lookup(const struct drop_word *t, const char *key)
{
	for (; t->key; t++)
		if (!strcmp(t->key, key))
			return t->words;
	return NULL;
}

const char *drop_words(const char *key, char *buf, unsigned int len)
{
	const char *reason = !strncmp(key, "drop:", 5) ? key + 5 : key, *w;

	if ((w = lookup(counters, key)))
		snprintf(buf, len, "%s", w);
	else if ((w = lookup(reasons, reason)))
		snprintf(buf, len, "%s (%s)", w, reason);
	else
		snprintf(buf, len, "%s", reason);
	return buf;
}

int drop_key_is_loss(const char *key)
{
	return strcmp(key, "udp_delivered") && strcmp(key, "tcp_syncookies_sent");
}
