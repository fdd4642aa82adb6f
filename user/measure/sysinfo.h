/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run ran on, in its JSON, so that two results can be compared later
 * (iperf3's start.system_info): the build, the host, the interface and the
 * engine.
 */
#ifndef __XR_SYSINFO_H
#define __XR_SYSINFO_H

#include "engine/iface.h"
#include "util/json.h"

/*
 * "system": {...} into j: xdpreplay's version, the run's id (the run label
 * of its --listen metrics), hostname, kernel, CPU model and
 * count, clock source; with ifc its driver, driver version, firmware, queues
 * and MTU; with engine (NULL: none) the engine and its mode.
 */
void sysinfo_json(struct json *j, const struct iface *ifc, const char *engine);

#endif
