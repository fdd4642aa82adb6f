/* SPDX-License-Identifier: GPL-2.0 */
/* The one clock every part reads: CLOCK_MONOTONIC in nanoseconds, and a sleep until a time on it. */
#ifndef __XR_UTIL_TIME_H
#define __XR_UTIL_TIME_H

#include <stdint.h>

uint64_t now_ns(void);
void sleep_until(uint64_t t_ns);
/* The wall clock's time (seconds since 1970) of t_ns on the monotonic clock, as it reads now */
double unix_of_ns(uint64_t t_ns);

#endif
