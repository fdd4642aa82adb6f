// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: a fleet's CSV files as lorawan send and count --webhook load
 * them, and what lorawan send builds of a loaded fleet: each device's
 * PUSH_DATA (an OTAA device's JoinRequest too) and each gateway's PULL_DATA, from one address and from the
 * gateways' own. The input is devices.csv, then a NUL, then gateways.csv.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/log.h"
#include "tmpdir.h"
#include "proto/lorawan/keepalive.h"
#include "proto/lorawan/lorawan.h"

/* The frames lorawan send builds; a frame that does not fit is refused, never overrun. */
static void build_frames(struct lw_fleet *f)
{
	const struct lw_net net = { .saddr = 0x010012c6,
				    .daddr = 0x020012c6,
				    .sport = 1700,
				    .dport = 1700 };
	uint8_t buf[XR_MAX_FRAME], pull[LW_PULL_DATA_LEN], join[LW_JOIN_REQUEST_LEN];
	static struct lw_crypto *c;

	if (!c && !(c = lw_crypto_new()))
		__builtin_trap();
	for (size_t d = 0; d < f->ndev && d < 64; d++) {
		/* an OTAA device's JoinRequest as lorawan send --join builds it, or its uplink */
		bool joining = f->dev[d].otaa &&
			       !lw_join_request(c, &f->dev[d], f->dev[d].dev_nonce, join);
		int len = lw_build_frame(f, d, &net, joining ? join : NULL, buf, sizeof(buf));

		if (len > (int)sizeof(buf))
			__builtin_trap();
	}
	for (size_t g = 0; g < f->ngw && g < 64; g++)
		lw_build_pull_data(f, g, &net, pull);
}

static int put(const char *dir, const char *name, const uint8_t *d, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fwrite(d, 1, n, f);
	return fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[] = "/dev/shm/xdpreplay-fuzz-csv.XXXXXX";
	static bool ready;
	const uint8_t *sep = memchr(data, 0, size);
	struct lw_fleet f;

	if (!ready) {
		xr_verbosity = -1;
		fuzz_dir_make(dir);
		ready = true;
	}
	if (!sep)
		return 0;
	if (put(dir, "devices.csv", data, sep - data) ||
	    put(dir, "gateways.csv", sep + 1, size - (sep + 1 - data)))
		return 0;
	if (!lw_fleet_load(dir, &f)) {
		/* what the engine relies on: every gateway a device lists exists */
		for (size_t d = 0; d < f.ndev; d++)
			for (unsigned int k = 0; k < f.heard_by; k++)
				if (f.dev[d].gw[k] >= f.ngw)
					__builtin_trap();
		build_frames(&f);
		/* gateways with their own addresses: 3 of them, as many ports as they need */
		if (!lw_fleet_gateway_addrs(&f, 0xc6124000, 3, 1700, (f.ngw + 2) / 3 + 1))
			build_frames(&f);
		lw_fleet_free(&f);
	}
	return 0;
}
