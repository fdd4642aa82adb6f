// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "util/caps.h"

uint64_t caps_effective(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return eff;
}
