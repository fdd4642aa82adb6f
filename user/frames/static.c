// SPDX-License-Identifier: GPL-2.0
/*
 * Static rewrites (see static.h). Every header read is bounded by the
 * captured length: the frames come from files that may be hostile.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frames/addr.h"
#include "frames/csum.h"
#include "frames/static.h"
#include "util/bytes.h"
#include "util/log.h"

bool static_active(const struct static_rewrite *sr)
{
	return sr->src_mac_how != MAC_KEEP || sr->dst_mac_how != MAC_KEEP || sr->nmaps ||
	       sr->nports || sr->ttl_how != TTL_KEEP || sr->vlan_push || sr->vlan_strip ||
	       sr->mtu_trunc;
}

/* A.B.C.D[/P] or an IPv6 ADDR[/P] of len bytes at s: the address (its prefix only) and P. */
static int parse_prefix(const char *s, size_t len, int family, uint8_t a[16], unsigned int *plen)
{
	unsigned int bits = family == AF_INET6 ? 128 : 32;
	char buf[64], *slash, *end;
	unsigned long p = bits;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		p = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || p > bits)
			return -EINVAL;
	}
	if (inet_pton(family, buf, a) != 1)
		return -EINVAL;
	*plen = p;
	for (unsigned int b = p; b < bits; b++)
		a[b / 8] &= ~(0x80 >> (b % 8));
	return 0;
}

int static_parse_map_ip(const char *s, struct ip_map *m)
{
	const char *eq = strchr(s, '=');
	int family;

	memset(m, 0, sizeof(*m));
	if (!eq)
		return -EINVAL;
	m->ipv6 = memchr(s, ':', eq - s) != NULL;
	family = m->ipv6 ? AF_INET6 : AF_INET;
	if (parse_prefix(s, eq - s, family, m->from6, &m->from_len) ||
	    parse_prefix(eq + 1, strlen(eq + 1), family, m->to6, &m->to_len))
		return -EINVAL;
	if (!m->ipv6) {
		m->from = get32(m->from6);
		m->to = get32(m->to6);
		m->from_mask = m->from_len ? ~0U << (32 - m->from_len) : 0;
		m->to_mask = m->to_len ? ~0U << (32 - m->to_len) : 0;
	}
	return 0;
}

static int parse_port(const char *s, uint16_t *p)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || (*end && *end != '=') || v > 65535 || *s == '-' || *s == '+')
		return -EINVAL;
	*p = v;
	return 0;
}

int static_parse_map_port(const char *s, struct port_map *m)
{
	const char *eq = strchr(s, '=');

	if (!eq || parse_port(s, &m->from) || parse_port(eq + 1, &m->to) || strchr(eq + 1, '='))
		return -EINVAL;
	return 0;
}

int static_parse_ttl(const char *s, struct static_rewrite *sr)
{
	enum ttl_how how = *s == '+' ? TTL_ADD : *s == '-' ? TTL_SUB : TTL_SET;
	const char *d = how == TTL_SET ? s : s + 1;
	char *end;
	unsigned long v = strtoul(d, &end, 10);

	if (!*d || *end || *d == '-' || *d == '+' || v > 255 || (how == TTL_SET && !v))
		return -EINVAL;
	sr->ttl_how = how;
	sr->ttl = v;
	return 0;
}

int static_parse_vlan(const char *s, uint16_t *tci)
{
	char *end;
	unsigned long vid = strtoul(s, &end, 10), pri = 0;

	if (!*s || *s == '-' || *s == '+' || vid > 4095)
		return -EINVAL;
	if (*end == ':') {
		const char *p = end + 1;

		pri = strtoul(p, &end, 10);
		if (!*p || *p == '-' || *p == '+' || pri > 7)
			return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	*tci = pri << 13 | vid;
	return 0;
}

/* bit b (0: the most significant) of a 128-bit address */
static bool bit6(const uint8_t a[16], unsigned int b)
{
	return a[b / 8] & (0x80 >> (b % 8));
}

static bool map_ip6(const struct static_rewrite *sr, uint8_t a[16])
{
	for (int i = 0; i < sr->nmaps; i++) {
		const struct ip_map *m = &sr->maps[i];
		unsigned int b;

		if (!m->ipv6)
			continue;
		for (b = 0; b < m->from_len && bit6(a, b) == bit6(m->from6, b); b++)
			;
		if (b < m->from_len)
			continue;
		/* TO's prefix, the address's bits below it */
		for (b = 0; b < m->to_len; b++)
			a[b / 8] = (a[b / 8] & ~(0x80 >> (b % 8))) |
				   (m->to6[b / 8] & (0x80 >> (b % 8)));
		return true;
	}
	return false;
}

static bool map_ip(const struct static_rewrite *sr, uint32_t *a)
{
	for (int i = 0; i < sr->nmaps; i++) {
		const struct ip_map *m = &sr->maps[i];

		if (m->ipv6)
			continue;
		if ((*a & m->from_mask) == m->from) {
			/* tcprewrite's arithmetic: TO's network, the address's bits below TO's prefix */
			*a = m->to | (*a & ~m->to_mask);
			return true;
		}
	}
	return false;
}

static uint16_t map_port(const struct static_rewrite *sr, uint16_t p)
{
	for (int i = 0; i < sr->nports; i++)
		if (sr->ports[i].from == p)
			return sr->ports[i].to;
	return p;
}

/* --ttl: the new TTL or hop limit (a sum stops at 255, a difference at 1) */
static uint8_t new_ttl(const struct static_rewrite *sr, unsigned int t)
{
	return sr->ttl_how == TTL_SET ? sr->ttl :
	       sr->ttl_how == TTL_ADD ? (t + sr->ttl > 255 ? 255 : t + sr->ttl) :
					(t > sr->ttl ? t - sr->ttl : 1);
}

/* RFC 1624: the checksum at c after a 16-bit word covered by it went from old to new */
static void csum_replace(uint8_t *c, uint16_t old, uint16_t new, bool udp)
{
	uint32_t sum = (uint16_t)~get16(c) + (uint16_t)~old + new;
	uint16_t v = csum_fold(sum);

	/* a UDP checksum that computes to 0 is sent as 0xffff (0 means none) */
	put16(c, udp && !v ? 0xffff : v);
}

/* --map-port on the UDP/TCP header at l4; the checksum at csum (NULL: none to update) follows */
static void map_ports(const struct static_rewrite *sr, uint8_t *l4, uint8_t *csum, bool udp)
{
	for (int at = 0; at <= 2; at += 2) {
		uint16_t p = get16(l4 + at), q = map_port(sr, p);

		if (p == q)
			continue;
		put16(l4 + at, q);
		if (csum)
			csum_replace(csum, p, q, udp);
	}
}

static void csum_replace32(uint8_t *c, uint32_t old, uint32_t new, bool udp)
{
	csum_replace(c, old >> 16, new >> 16, udp);
	csum_replace(c, old & 0xffff, new & 0xffff, udp);
}

/* --dst-mac auto: the neighbour table's entry for the frame's destination, looked up once */
static int auto_dst_mac(struct static_rewrite *sr, uint32_t daddr, uint8_t mac[6], uint64_t n)
{
	struct xr_dst d = {};
	char a[INET_ADDRSTRLEN];
	int i;

	for (i = 0; i < sr->nauto; i++)
		if (sr->auto_ip[i] == daddr) {
			memcpy(mac, sr->auto_mac[i], 6);
			return 0;
		}
	put32(d.addr, daddr);
	if (addr_neigh_mac(&d, sr->ifname, mac)) {
		inet_ntop(AF_INET, d.addr, a, sizeof(a));
		pr_warn("--dst-mac auto: frame %llu: no neighbour entry for %s on %s (ping it first, "
			"or give --dst-mac MAC)\n",
			(unsigned long long)n, a, sr->ifname);
		return -EHOSTUNREACH;
	}
	if (sr->nauto < STATIC_AUTO_MACS) {
		sr->auto_ip[sr->nauto] = daddr;
		memcpy(sr->auto_mac[sr->nauto++], mac, 6);
	}
	return 0;
}

/* ARP for IPv4 over Ethernet: the maps apply to its sender's and target's addresses too */
static bool arp_map(struct static_rewrite *sr, uint8_t *arp, uint32_t room)
{
	bool changed = false;

	if (room < 28 || get16(arp) != 1 || get16(arp + 2) != 0x0800 || arp[4] != 6 || arp[5] != 4)
		return false;
	for (int at = 14; at <= 24; at += 10) {
		uint32_t a = get32(arp + at);

		if (map_ip(sr, &a)) {
			put32(arp + at, a);
			changed = true;
		}
	}
	return changed;
}

static int ipv4(struct static_rewrite *sr, uint8_t *f, uint32_t *len, uint32_t off, uint64_t n)
{
	uint32_t ihl = (f[off] & 15) * 4, tot = get16(f + off + 2), l4 = off + ihl;
	uint32_t saddr = get32(f + off + 12), daddr = get32(f + off + 16), s2 = saddr, d2 = daddr;
	bool first_frag = !(get16(f + off + 6) & 0x1fff), udp = f[off + 9] == IPPROTO_UDP;
	bool tcp = f[off + 9] == IPPROTO_TCP, hdr_changed = false;
	uint32_t csum_at = udp ? l4 + 6 : l4 + 16;
	bool have_csum = (udp || tcp) && first_frag && *len >= csum_at + 2 &&
			 !(udp && !get16(f + csum_at));
	int err;

	if (ihl < 20 || *len < off + ihl)
		return 1; /* not a header we can read: a misfit */
	/* a cut into the UDP/TCP header leaves no segment a server could read: a misfit */
	if (sr->mtu_trunc && tot > sr->mtu) {
		uint32_t keep = ihl + 8;

		if (tcp && first_frag)
			keep = ihl + (*len >= l4 + 13 && f[l4 + 12] >> 4 > 5 ?
					      (f[l4 + 12] >> 4) * 4 :
					      20);
		if (sr->mtu < keep)
			return 1;
	}
	if (sr->nmaps) {
		map_ip(sr, &s2);
		map_ip(sr, &d2);
		if (s2 != saddr || d2 != daddr) {
			put32(f + off + 12, s2);
			put32(f + off + 16, d2);
			hdr_changed = true;
			/* the pseudo-header holds the addresses */
			if (have_csum) {
				csum_replace32(f + csum_at, saddr, s2, udp);
				csum_replace32(f + csum_at, daddr, d2, udp);
			}
		}
	}
	if (sr->ttl_how != TTL_KEEP) {
		uint8_t t = new_ttl(sr, f[off + 8]);

		hdr_changed |= f[off + 8] != t;
		f[off + 8] = t;
	}
	if (sr->nports && (udp || tcp) && first_frag && *len >= l4 + 4)
		map_ports(sr, f + l4, have_csum ? f + csum_at : NULL, udp);
	if (sr->mtu_trunc && tot > sr->mtu) {
		put16(f + off + 2, sr->mtu);
		if (*len > off + sr->mtu)
			*len = off + sr->mtu;
		hdr_changed = true;
		sr->truncated++;
		/* what is left is the whole segment: its checksum from scratch */
		if (udp && first_frag)
			put16(f + l4 + 4, sr->mtu - ihl);
		if (have_csum && *len == off + sr->mtu) {
			uint32_t seg = sr->mtu - ihl, sum = 0;

			put16(f + csum_at, 0);
			sum = csum_add(f + off + 12, 8, sum);
			sum += f[off + 9] + seg;
			sum = csum_add(f + l4, seg, sum);
			put16(f + csum_at, udp && !csum_fold(sum) ? 0xffff : csum_fold(sum));
		}
	}
	if (hdr_changed) {
		put16(f + off + 10, 0);
		put16(f + off + 10, csum_fold(csum_add(f + off, ihl, 0)));
	}
	if (sr->dst_mac_how == MAC_AUTO && !(f[0] & 1)) {
		err = auto_dst_mac(sr, d2, f, n);
		if (err)
			return err;
	}
	return 0;
}

/* The checksum at c after the 16-bit words of old (n of them) became those of new. */
static void csum_replace_words(uint8_t *c, const uint8_t *old, const uint8_t *new, int n, bool udp)
{
	for (int i = 0; i < n; i++)
		csum_replace(c, get16(old + 2 * i), get16(new + 2 * i), udp);
}

/*
 * IPv6: the maps on both addresses, the hop limit, the ports of a UDP or TCP
 * header that follows the fixed header; UDP, TCP and ICMPv6 checksums cover
 * the addresses. Extension headers are not followed (their L4 checksum is
 * left as it was: a misfit when anything it covers would change).
 */
static int ipv6(struct static_rewrite *sr, uint8_t *f, uint32_t len, uint32_t off)
{
	uint8_t nh = f[off + 6], src[16], dst[16];
	uint32_t l4 = off + 40;
	bool udp = nh == IPPROTO_UDP, tcp = nh == IPPROTO_TCP, icmp6 = nh == IPPROTO_ICMPV6;
	uint32_t csum_at = udp ? l4 + 6 : tcp ? l4 + 16 : l4 + 2;
	bool have_csum = (udp || tcp || icmp6) && len >= csum_at + 2 &&
			 !(udp && !get16(f + csum_at));

	/* no IPv6 cut to the MTU, no IPv6 neighbour lookup: a misfit */
	if ((sr->mtu_trunc && 40u + get16(f + off + 4) > sr->mtu) ||
	    (sr->dst_mac_how == MAC_AUTO && !(f[0] & 1)))
		return 1;
	if (sr->nmaps) {
		memcpy(src, f + off + 8, 16);
		memcpy(dst, f + off + 24, 16);
		map_ip6(sr, src);
		map_ip6(sr, dst);
		if (have_csum) {
			csum_replace_words(f + csum_at, f + off + 8, src, 8, udp);
			csum_replace_words(f + csum_at, f + off + 24, dst, 8, udp);
		}
		memcpy(f + off + 8, src, 16);
		memcpy(f + off + 24, dst, 16);
	}
	if (sr->ttl_how != TTL_KEEP)
		f[off + 7] = new_ttl(sr, f[off + 7]);
	if (sr->nports && (udp || tcp) && len >= l4 + 4)
		map_ports(sr, f + l4, have_csum ? f + csum_at : NULL, udp);
	return 0;
}

int static_frame(struct static_rewrite *sr, const uint8_t *in, uint32_t len, uint32_t orig_len,
		 uint8_t *out, uint32_t *out_len, uint32_t *out_orig, uint64_t n)
{
	bool ip_rewrites = sr->nmaps || sr->nports || sr->ttl_how != TTL_KEEP || sr->mtu_trunc ||
			   sr->dst_mac_how == MAC_AUTO;
	uint32_t l = len, orig = orig_len, off = 12;
	uint64_t truncated = sr->truncated;
	uint16_t type;
	int err = 1;

	memcpy(out, in, len);
	if (sr->vlan_strip && l >= 18 && (get16(out + 12) == 0x8100 || get16(out + 12) == 0x88a8)) {
		memmove(out + 12, out + 16, l - 16);
		l -= 4;
		orig = orig >= 4 ? orig - 4 : orig;
	}
	if (sr->vlan_push && l >= 14) {
		memmove(out + 16, out + 12, l - 12);
		put16(out + 12, 0x8100);
		put16(out + 14, sr->vlan_tci);
		l += 4;
		orig += 4;
	}
	if (sr->src_mac_how != MAC_KEEP)
		memcpy(out + 6, sr->src_mac_how == MAC_SET ? sr->src_mac : sr->if_mac, 6);
	if (sr->dst_mac_how == MAC_SET)
		memcpy(out, sr->dst_mac, 6);
	if (ip_rewrites) {
		type = get16(out + off);
		for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8) && l >= off + 6;
		     tags++) {
			off += 4;
			type = get16(out + off);
		}
		off += 2;
		if (type == 0x0800 && l >= off + 20 && (out[off] >> 4) == 4)
			err = ipv4(sr, out, &l, off, n);
		else if (type == 0x86dd && l >= off + 40 && (out[off] >> 4) == 6)
			err = ipv6(sr, out, l, off);
		else if (type == 0x0806 && sr->nmaps && !sr->nports && sr->ttl_how == TTL_KEEP &&
			 l >= off) {
			arp_map(sr, out + off, l - off);
			err = 0;
		}
		if (err < 0)
			return err;
		if (err) {
			/* not a frame the IP rewrites fit: as it was (the L2 rewrites done), or left out */
			if (sr->skip_misfits) {
				sr->misfits_skipped++;
				return 1;
			}
			sr->misfits_sent++;
		}
	}
	if (l != len || memcmp(out, in, l))
		sr->changed++;
	*out_len = l;
	/* a frame cut to the MTU is whole at its new length */
	*out_orig = orig < l || sr->truncated != truncated ? l : orig;
	return 0;
}
