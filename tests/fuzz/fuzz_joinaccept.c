// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: a JoinAccept's PULL_RESP JSON as XDP hands it to lorawan send
 * --join (user/proto/lorawan/join.c): parsed, its PHYPayload decoded,
 * matched by tmst and by trial against a small fleet's waiting devices, and
 * opened with their AppKeys. The first byte picks the gateway it reached.
 */
#include <stdint.h>
#include <string.h>
#include "util/log.h"
#include "proto/lorawan/join.h"

#define NDEV 6
#define NGW 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lw_device dev[NDEV];
	static struct lw_gateway gw[NGW];
	static struct lw_fleet f = { .dev = dev, .ndev = NDEV, .gw = gw, .ngw = NGW, .heard_by = 2 };
	static struct xr_lora_join stamps[NDEV];
	static struct lw_join j;
	static bool ready;
	uint8_t phy[64];
	size_t plen;
	bool has_tmst;
	uint32_t tmst;

	if (!ready) {
		xr_verbosity = -1;
		for (int d = 0; d < NDEV; d++) {
			dev[d].otaa = true;
			memset(dev[d].app_key, d + 1, 16);
			/* odd devices are 1.1's: NwkKey, and JSIntKey's MIC when OptNeg is set */
			dev[d].join11 = d & 1;
			memset(dev[d].nwk_key, 0x40 + d, 16);
			dev[d].gw[0] = d % NGW;
			dev[d].gw[1] = (d + 1) % NGW;
			/* devices 0..3 asked, with tmsts 5 s before 1,000,000,000 + d */
			stamps[d] = (struct xr_lora_join){ .sent_ns = 1000,
							   .tmst = 995000000 + d,
							   .requests = d < 4 };
		}
		if (lw_join_init(&j, &f, stamps))
			__builtin_trap();
		ready = true;
	}
	if (!size)
		return 0;
	if (!lw_pull_resp_phy((const char *)data + 1, size - 1, phy, sizeof(phy), &plen, &has_tmst,
			      &tmst) &&
	    plen > sizeof(phy))
		__builtin_trap();
	lw_join_accept(&j, data[0] % (NGW + 1), 2000, (const char *)data + 1, size - 1);
	/* every JoinAccept is counted once, in one of its outcomes */
	if (j.accepts != atomic_load(&j.joined) + j.duplicates + j.unmatched + j.malformed)
		__builtin_trap();
	return 0;
}
