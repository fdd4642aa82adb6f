// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in frame templates: one frame with valid checksums, plus the plan
 * specs that make every packet's source distinct. The kernel engine then
 * sends it like any replayed capture. See template.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include "util/bytes.h"
#include "frames/csum.h"
#include "frames/template.h"
#include "util/log.h"

int template_addressing(const struct template_net *net, const struct iface *ifc, uint8_t l4,
			const struct port_range *default_ports, uint64_t port_divisor,
			struct rewrite_spec *specs, int *nspecs, struct template_addr *ta)
{
	static const struct port_range any_port = { 1024, 65535 };
	const struct port_range *ports = net->have_sport ? &net->sport :
					 default_ports	 ? default_ports :
							   &any_port;
	bool ipv6 = net->dst.ipv6;
	char a[INET6_ADDRSTRLEN];

	memset(ta, 0, sizeof(*ta));
	if (net->have_mac) {
		memcpy(ta->dst_mac, net->dst_mac, 6);
	} else if (addr_neigh_mac(&net->dst, ifc->name, ta->dst_mac)) {
		inet_ntop(ipv6 ? AF_INET6 : AF_INET, net->dst.addr, a, sizeof(a));
		pr_warn("no neighbour entry for %s on %s: give --dst-mac\n", a, ifc->name);
		return -ENOENT;
	}
	/* after the user's --rewrite specs: room for the 3 this adds */
	if (*nspecs > XR_MAX_USER_SPECS) {
		pr_warn("too many --rewrite ops\n");
		return -EINVAL;
	}
	ta->pool = 1;
	if (net->have_src) {
		if (net->src.ipv6 != ipv6) {
			pr_warn("--src: an IPv%d range for an IPv%d destination\n",
				net->src.ipv6 ? 6 : 4, ipv6 ? 6 : 4);
			return -EINVAL;
		}
		rewrite_spec_src(&specs[(*nspecs)++], &net->src);
		/* the template starts at the range's first address (for IPv6 the plan checks the prefix) */
		addr_range_first(&net->src, ta->src);
		ta->pool = net->src.count;
	} else if (addr_iface(ifc->name, ipv6, ta->src)) {
		pr_warn("%s has no %s address: give --src\n", ifc->name, ipv6 ? "IPv6" : "IPv4");
		return -ENOENT;
	}
	/*
	 * The address takes n mod pool, the port (n / pool) mod ports: every
	 * (address, port) pair comes once before any repeats. With both taking
	 * n mod their own size, only lcm(pool, ports) pairs would be distinct.
	 */
	ta->ports = (uint64_t)ports->hi - ports->lo + 1;
	if (!port_divisor)
		port_divisor = ta->pool > 1 ? ta->pool : 0;
	rewrite_spec_sport(&specs[(*nspecs)++], l4, ports, port_divisor);
	ta->tuples = ta->pool && ta->pool <= UINT64_MAX / ta->ports ? ta->pool * ta->ports : 0;
	ta->match.server_port = htons(net->dst.port);
	ta->match.sport_base = ports->lo;
	ta->match.sport_count = ta->ports;
	if (!ipv6) {
		memcpy(&ta->match.server_addr, net->dst.addr, 4);
		ta->match.src_base = net->have_src ? net->src.base : ntohl(*(uint32_t *)ta->src);
		ta->match.src_count = net->have_src ? net->src.count : 1;
		return 0;
	}
	/* our sources within one /64 (--src takes no shorter prefix): its upper half and a count */
	ta->match.ipv6 = 1;
	memcpy(ta->match.server_addr6, net->dst.addr, 16);
	memcpy(ta->match.src_hi6, ta->src, 8);
	ta->match.src_base6 = get64(ta->src + 8);
	ta->match.src_count = !net->have_src		  ? 1 :
			      net->src.count > UINT32_MAX ? UINT32_MAX :
							    (uint32_t)net->src.count;
	return 0;
}

int template_build(const struct template_frame *t, struct frameset *fs)
{
	const struct template_net *net = t->net;
	bool ipv6 = net->dst.ipv6, tcp = t->l4 == IPPROTO_TCP, icmp = t->l4 == IPPROTO_ICMP;
	/* an echo request over IPv6 is ICMPv6's (type 128, a pseudo-header in its checksum) */
	uint8_t proto = icmp && ipv6 ? IPPROTO_ICMPV6 : t->l4;
	/* a SYN carries an MSS option, other TCP segments none */
	uint32_t l3len = ipv6 ? 40 : 20, l4len = tcp ? (t->tcp_flags & 0x02 ? 24 : 20) : 8;
	/* --vlan: an 802.1Q tag before the EtherType */
	uint32_t l2 = net->have_vlan ? 18 : 14, len = t->len, payload;
	uint8_t f[XR_MAX_FRAME] = {}, *ip = f + l2, *l4 = ip + l3len;
	uint32_t sum;
	int err;

	if (len < l2 + l3len + l4len)
		len = l2 + l3len + l4len;
	if (tcp)
		len = l2 + l3len + l4len; /* a SYN carries no data */
	if (len > (uint32_t)t->ifc->mtu + l2 || len > XR_MAX_FRAME) {
		pr_warn("a %u-byte frame is more than %s's MTU allows\n", len + 4, t->ifc->name);
		return -EINVAL;
	}
	payload = len - l2 - l3len - l4len;
	memcpy(f, t->ta->dst_mac, 6);
	memcpy(f + 6, t->ifc->mac, 6);
	if (net->have_vlan) {
		put16(f + 12, 0x8100);
		put16(f + 14, net->vlan_tci);
	}
	if (ipv6) {
		put16(f + l2 - 2, 0x86dd);
		ip[0] = 0x60;
		put16(ip + 4, l4len + payload);
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, t->ta->src, 16);
		memcpy(ip + 24, net->dst.addr, 16);
	} else {
		put16(f + l2 - 2, 0x0800);
		ip[0] = 0x45;
		put16(ip + 2, l3len + l4len + payload);
		put16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, t->ta->src, 4);
		memcpy(ip + 16, net->dst.addr, 4);
		put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
	}
	if (icmp) {
		l4[0] = ipv6 ? 128 : 8; /* echo request */
		put16(l4 + 4, 1024); /* the identifier: the plan's icmp.id (--sport) */
		memcpy(l4 + 8, t->payload, t->payload_len < payload ? t->payload_len : payload);
		sum = ipv6 ? csum_add(ip + 8, 32, proto + l4len + payload) : 0;
		put16(l4 + 2, csum_fold(csum_add(l4, l4len + payload, sum)));
		goto add;
	}
	put16(l4, 1024);
	put16(l4 + 2, net->dst.port);
	if (tcp) {
		l4[12] = (l4len / 4) << 4;
		l4[13] = t->tcp_flags;
		put16(l4 + 14, 64240);
		/* MSS 1460 (IPv6: 1440): what a Linux client offers on Ethernet */
		if (l4len == 24) {
			l4[20] = 2;
			l4[21] = 4;
			put16(l4 + 22, ipv6 ? 1440 : 1460);
		}
	} else {
		put16(l4 + 4, l4len + payload);
		memcpy(l4 + 8, t->payload, t->payload_len < payload ? t->payload_len : payload);
	}
	sum = ipv6 ? csum_add(ip + 8, 32, 0) : csum_add(ip + 12, 8, 0);
	sum = csum_add(l4, l4len + payload, sum + t->l4 + l4len + payload);
	put16(l4 + (tcp ? 16 : 6), csum_fold(sum) ? csum_fold(sum) : 0xffff);
add:
	err = frameset_add(fs, f, len, len, 0);
	if (err)
		pr_warn("out of memory for the frame set\n");
	return err;
}

int template_stamped(const struct template_net *net, const struct iface *ifc, uint8_t l4,
		     const struct port_range *default_ports, struct frameset *fs,
		     struct rewrite_spec *specs, int *nspecs)
{
	struct template_addr ta;
	struct template_frame t = { .net = net,
				    .ta = &ta,
				    .ifc = ifc,
				    .l4 = l4,
				    .payload = (const uint8_t *)"XRGEN",
				    .payload_len = 5,
				    .len = (net->size ? net->size : 64) - 4 };
	uint32_t hdrs = (net->have_vlan ? 18 : 14) + (net->dst.ipv6 ? 40 : 20) + 8;
	int err;

	err = template_addressing(net, ifc, l4, default_ports, 0, specs, nspecs, &ta);
	if (err)
		return err;
	err = template_build(&t, fs);
	if (err)
		return err;
	/* the sequence number, for count --seq payload@0:8 */
	if (fs->frames[0].len >= hdrs + 8 && rewrite_parse("payload@0:8=seq", &specs[(*nspecs)++]))
		return -EINVAL;
	return 0;
}
