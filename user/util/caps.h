/* SPDX-License-Identifier: GPL-2.0 */
/* The process's effective capabilities, from /proc/self/status (no libcap needed). */
#ifndef __XR_UTIL_CAPS_H
#define __XR_UTIL_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#define XR_CAP_IPC_LOCK 14
#define XR_CAP_NET_ADMIN 12
#define XR_CAP_SYS_ADMIN 21
#define XR_CAP_PERFMON 38
#define XR_CAP_BPF 39

/* The effective set as a bit mask (bit n: capability n); 0 when it cannot be read. */
uint64_t caps_effective(void);

static inline bool cap_effective(int cap)
{
	return caps_effective() & (1ULL << cap);
}

#endif
