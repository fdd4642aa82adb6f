// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the addresses the HTTP endpoints bind (--listen, --webhook), gen's --dst, --src and --sport. */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include "frames/addr.h"
#include "measure/httpd.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa;
	struct addr_range r;
	struct port_range p;
	struct xr_dst d = {};
	char s[96];

	xr_verbosity = -1;
	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (!httpd_parse_addr(s, &sa) && !sa.sin_port)
		__builtin_trap();
	if (!addr_parse_dst(s, &d) && d.port == 0 && strchr(s, ']') && strstr(s, "]:"))
		__builtin_trap();
	/* a range holds its first address; IPv4 ranges stay inside 32 bits */
	if (!addr_parse_range(s, &r) && !r.ipv6 && (!r.count || r.base + r.count > (1ULL << 32)))
		__builtin_trap();
	if (!addr_parse_ports(s, &p) && p.lo > p.hi)
		__builtin_trap();
	return 0;
}
