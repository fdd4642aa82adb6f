/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_LORAWAN_CMD_H
#define __XR_LORAWAN_CMD_H

#include <stdio.h>
#include "engine/engine.h"
#include "frames/frameset.h"
#include "frames/template.h"
#include "util/json.h"
#include "proto/lorawan/lorawan.h"

void lorawan_send_usage(FILE *f);
/*
 * One PUSH_DATA per device of f into fs, from IFACE's addresses to g's
 * server, and the PUSH_ACK counter's configuration. 0 or -errno (printed).
 */
int lorawan_frames(struct lw_fleet *f, struct gen_opts *g, const struct iface *ifc, struct frameset *fs,
		   struct xr_replies_cfg *rpl);
/* Uplinks, PUSH_ACKs per gateway, set-up time and memory of a lorawan send run. */
void lorawan_report(const struct engine_result *res, const struct lw_fleet *f, uint64_t ready_ns, FILE *human,
		    struct json *j);

#endif
