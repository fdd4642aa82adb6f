// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: --rewrite specs, planned against a UDP/IPv4 frame and a TCP/IPv6
 * one, then applied by the reference for a few sequence numbers; every write
 * must stay inside the frame (ASan watches).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/log.h"
#include "frames/rewrite.h"

static void frame_udp4(uint8_t *f, uint32_t len)
{
	memset(f, 0, len);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = 0;
	f[17] = len - 14;
	f[22] = 64;
	f[23] = 17;
	f[38] = 0;
	f[39] = len - 34;
}

static void frame_tcp6(uint8_t *f, uint32_t len)
{
	memset(f, 0, len);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = len - 54;
	f[20] = 6;
	f[21] = 64;
	f[54 + 12] = 5 << 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rewrite_spec specs[4];
	struct xr_op ops[XR_MAX_OPS];
	char text[96 * 4 + 4], *save = NULL, *tok;
	uint8_t tmpl[2][128];
	uint32_t lens[2] = { 60, 128 };
	int n = 0, nops;

	xr_verbosity = -1;
	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (tok = strtok_r(text, "\n", &save); tok && n < 4; tok = strtok_r(NULL, "\n", &save))
		if (!rewrite_parse(tok, &specs[n]))
			n++;
	frame_udp4(tmpl[0], lens[0]);
	frame_tcp6(tmpl[1], lens[1]);
	for (int t = 0; t < 2; t++) {
		struct frameset fs;

		frameset_init(&fs);
		if (frameset_add(&fs, tmpl[t], lens[t], lens[t], 0))
			return 0;
		frameset_finish(&fs);
		nops = rewrite_plan(specs, n, &fs, ops);
		if (nops > 0) {
			struct xr_nocopy nc;

			rewrite_nocopy(ops, nops, tmpl[t], lens[t], &nc);
			for (uint64_t seq = 0; seq < 4; seq++) {
				uint8_t *buf = malloc(lens[t]);

				memcpy(buf, tmpl[t], lens[t]);
				rewrite_apply(ops, nops, buf, lens[t], seq * 0x9e3779b97f4a7c15ULL);
				free(buf);
			}
		}
		frameset_free(&fs);
	}
	return 0;
}
