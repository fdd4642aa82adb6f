// SPDX-License-Identifier: GPL-2.0
/* The monotonic clock (util/time.h). */
#include <time.h>
#include "util/time.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ULL, .tv_nsec = t % 1000000000ULL };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

double unix_of_ns(uint64_t t)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	return rt.tv_sec + rt.tv_nsec / 1e9 - ((double)now_ns() - (double)t) / 1e9;
}
