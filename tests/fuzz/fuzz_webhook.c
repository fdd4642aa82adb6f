// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: network-server events posted to count --webhook, counted per
 * device of a small fleet (the fleet made once, in a private directory), and
 * the schedule lines lorawan send --schedule appends, which count reads
 * between events: the input is schedule lines, a NUL, then the event. The
 * schedule file starts anew (shorter than what was read) now and then.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "util/log.h"
#include "tmpdir.h"
#include "proto/lorawan/lorawan.h"
#include "proto/lorawan/webhook.h"

#define SCHEDULE_MAX (1 << 20) /* bytes before the schedule file is written anew */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct webhook w;
	static bool ready;
	static char dir[] = "/dev/shm/xdpreplay-fuzz-fleet.XXXXXX", sched[64];
	const uint8_t *nul = memchr(data, 0, size);
	size_t lines = nul ? (size_t)(nul - data) : 0;
	struct json j = { .f = NULL };
	FILE *f;

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
		struct lw_fleet fl;

		xr_verbosity = -1;
		fuzz_dir_make(dir);
		snprintf(sched, sizeof(sched), "%s/schedule.json", dir);
		if (lw_fleet_generate(&o, &fl) || lw_fleet_save(&fl, dir))
			abort();
		lw_fleet_free(&fl);
		if (webhook_init(&w, dir, sched))
			abort();
		ready = true;
	}
	if (lines) {
		struct stat st;

		f = fopen(sched, !stat(sched, &st) && st.st_size > SCHEDULE_MAX ? "w" : "a");
		if (!f)
			abort();
		fwrite(data, 1, lines, f);
		fclose(f);
		data += lines + 1;
		size -= lines + 1;
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
