// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the static rewrites (frames/static.c) on hostile frames. The first
 * 8 bytes choose the rewrites, the rest is the frame. Beyond the sanitizers,
 * the property the checksums must keep: an IPv4 header, and a whole UDP or TCP
 * segment, that verified before verifies after.
 */
#include <stdint.h>
#include <string.h>
#include "frames/csum.h"
#include "frames/static.h"
#include "util/log.h"

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

/* -1: not IPv4; else bit 0 the header verifies, bit 1 the segment is whole and verifies */
static int verdict(const uint8_t *f, uint32_t len)
{
	uint32_t off = 12, ihl, tot, sum;
	uint16_t type = len >= 14 ? get16(f + 12) : 0;
	int v = 0;

	for (int t = 0; t < 2 && (type == 0x8100 || type == 0x88a8) && len >= off + 6; t++) {
		off += 4;
		type = get16(f + off);
	}
	off += 2;
	if (type == 0x86dd && len >= off + 40 && f[off] >> 4 == 6) {
		uint32_t plen = get16(f + off + 4), nh = f[off + 6], at;

		/* no header checksum: bit 0 always; the segment when UDP, TCP or ICMPv6 follows whole */
		if ((nh != 17 && nh != 6 && nh != 58) || len < off + 40 + plen ||
		    plen < (nh == 6  ? 20u :
			    nh == 17 ? 8u :
				       4u))
			return 1;
		at = off + 40 + (nh == 17 ? 6 : nh == 6 ? 16 : 2);
		if (nh == 17 && !get16(f + at))
			return 1; /* no UDP checksum: nothing to verify */
		sum = csum_add(f + off + 8, 32, 0) + nh + plen;
		sum = csum_add(f + off + 40, plen, sum);
		return 1 | (!csum_fold(sum) ? 2 : 0);
	}
	if (type != 0x0800 || len < off + 20 || f[off] >> 4 != 4)
		return -1;
	ihl = (f[off] & 15) * 4;
	tot = get16(f + off + 2);
	if (ihl < 20 || len < off + ihl)
		return -1;
	v |= !csum_fold(csum_add(f + off, ihl, 0));
	if ((get16(f + off + 6) & 0x3fff) || tot < ihl + 8 || len < off + tot ||
	    (f[off + 9] != 17 && f[off + 9] != 6) || (f[off + 9] == 6 && tot < ihl + 20))
		return v;
	if (f[off + 9] == 17 && !get16(f + off + ihl + 6))
		return v | 2; /* no UDP checksum */
	sum = csum_add(f + off + 12, 8, 0) + f[off + 9] + (tot - ihl);
	sum = csum_add(f + off + ihl, tot - ihl, sum);
	return v | (!csum_fold(sum) ? 2 : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct static_rewrite sr;
	static uint8_t out[9018 + 4];
	uint32_t len, out_len, out_orig;
	int before, after;

	if (size < 8 || size - 8 > 9018)
		return 0;
	xr_verbosity = -1;
	memset(&sr, 0, sizeof(sr));
	sr.vlan_strip = data[0] & 1;
	sr.vlan_push = data[0] & 2;
	sr.vlan_tci = get16(data + 1);
	sr.mtu_trunc = data[0] & 4;
	sr.mtu = 68 + get16(data + 3) % 9000;
	sr.skip_misfits = data[0] & 8;
	sr.src_mac_how = data[0] & 16 ? MAC_SET : MAC_KEEP;
	sr.dst_mac_how = data[0] & 32 ? MAC_SET : MAC_KEEP;
	if (data[0] & 64) {
		sr.maps[0] = (struct ip_map){ .from = 0,
					      .from_mask = 0,
					      .to = 0xc6120000,
					      .to_mask = 0xfffe0000 };
		sr.nmaps = 1 + (data[5] & 1);
		sr.maps[1] = (struct ip_map){ .from = 0x0a000000,
					      .from_mask = 0xff000000,
					      .to = 0xc6120000,
					      .to_mask = 0xffff0000 };
		/* and every IPv6 address into 2001:db8::/(data[5] / 2) */
		sr.maps[sr.nmaps++] = (struct ip_map){ .ipv6 = true,
						       .from_len = 0,
						       .to6 = { 0x20, 0x01, 0x0d, 0xb8 },
						       .to_len = (data[5] >> 1) % 129 };
	}
	if (data[0] & 128) {
		sr.ports[0] = (struct port_map){ get16(data + 5), get16(data + 6) };
		sr.nports = 1;
	}
	sr.ttl_how = data[7] % 4;
	sr.ttl = data[7] >> 2;
	if (sr.ttl_how == TTL_SET && !sr.ttl)
		sr.ttl = 1;
	data += 8;
	len = size - 8;
	before = verdict(data, len);
	if (static_frame(&sr, data, len, len, out, &out_len, &out_orig, 1))
		return 0;
	if (out_len > len + 4 || out_orig < out_len)
		__builtin_trap();
	after = verdict(out, out_len);
	/* a header or a whole segment that verified still does (unless no longer IPv4 at all) */
	if (before > 0 && after >= 0 && (before & ~after & 3))
		__builtin_trap();
	return 0;
}
