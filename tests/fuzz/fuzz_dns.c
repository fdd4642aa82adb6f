// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: gen dns's names files (dnsperf's format) and the queries it takes from captures. */
#include <stdint.h>
#include <string.h>
#include "proto/dns/query.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query_opts o = { .rd = true, .edns = size & 1 ? 1232 : 0 };
	struct dns_query_set s = {};
	struct dns_query q;

	xr_verbosity = -1;
	if (!dns_names_parse((const char *)data, size, "fuzz", 1, &o, &s))
		for (size_t i = 0; i < s.n; i++)
			/* every query built is a well-formed one: header, a name that ends, type and class */
			if (s.q[i].len < 12 + 1 + 4 || s.q[i].len > DNS_MAX_MSG ||
			    s.q[i].msg[5] != 1)
				__builtin_trap();
	dns_set_free(&s);
	if (!dns_query_from_wire(data, size, &o, &q) && (q.len < 12 + 5 || q.len > DNS_MAX_MSG))
		__builtin_trap();
	return 0;
}
