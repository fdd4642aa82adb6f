/* SPDX-License-Identifier: GPL-2.0 */
/* lorawan send's report: its lines and its JSON members, from the run and the kernel's books. */
#ifndef __XR_PROTO_LORAWAN_REPORT_H
#define __XR_PROTO_LORAWAN_REPORT_H

#include <stdio.h>
#include "proto/lorawan/kernel.h"

struct engine_result;
struct json;

/* What the report is made of: the fleet, the kernel side's books, what --mac asked */
struct lw_report_in {
	const struct lw_fleet *f;
	const struct lw_kernel *lk;
	uint8_t mac_asks; /* XR_LORA_ASK_* */
	uint64_t mac_every;
};

/* The run res's lines (human) and JSON members (j); either may be NULL */
void lw_report_write(const struct lw_report_in *in, const struct engine_result *res,
		     uint64_t ready_ns, FILE *human, struct json *j);

/* The headline's clauses (report/headline.h): joins, uplinks, PUSH_ACKs */
struct json_object;
struct words;
void lw_headline(struct json_object *result, struct words *w);

#endif
