// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: network-server events posted to count --webhook, counted per
 * device of a small fleet (the fleet made once, in a private directory).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/log.h"
#include "tmpdir.h"
#include "proto/lorawan/lorawan.h"
#include "measure/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct webhook w;
	static bool ready;
	static char dir[] = "/dev/shm/xdpreplay-fuzz-fleet.XXXXXX";
	struct json j = { .f = NULL };

	if (!ready) {
		struct lw_gen_opts o = { .devices = 4,
					 .gateways = 2,
					 .heard_by = 1,
					 .seed = 1,
					 .region = "eu868",
					 .sf = 7,
					 .bw_khz = 125,
					 .payload_min = 8,
					 .payload_max = 8,
					 .fport = 1 };
		struct lw_fleet f;

		xr_verbosity = -1;
		fuzz_dir_make(dir);
		if (lw_fleet_generate(&o, &f) || lw_fleet_save(&f, dir))
			abort();
		lw_fleet_free(&f);
		if (webhook_init(&w, dir, NULL))
			abort();
		ready = true;
	}
	webhook_event(&w, (const char *)data, size);
	/* the report of whatever came in so far */
	j.f = fopen("/dev/null", "w");
	if (j.f) {
		webhook_json(&w, &j);
		fclose(j.f);
	}
	return 0;
}
