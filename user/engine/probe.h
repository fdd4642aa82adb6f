/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_PROBE_H
#define __XR_PROBE_H

#include "engine/iface.h"

enum { PROBE_ENGINE_KERNEL = 1, PROBE_ENGINE_XSK = 2 };

/* The engine --engine auto picks for ifc, or -EOPNOTSUPP with the reason in *why. */
int probe_best_engine(const struct iface *ifc, const char **why);

#endif
