// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the addresses the HTTP endpoints bind (--listen, --webhook) and gen's --dst. */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include "frames/template.h"
#include "measure/httpd.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa;
	struct gen_opts g = {};
	char s[96];

	xr_verbosity = -1;
	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (!httpd_parse_addr(s, &sa) && !sa.sin_port)
		__builtin_trap();
	if (!gen_parse_dst(s, "--dst", &g) && g.dport == 0 && strchr(s, ']') && strstr(s, "]:"))
		__builtin_trap();
	return 0;
}
