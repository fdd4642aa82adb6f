/* SPDX-License-Identifier: GPL-2.0 */
/* The report's charts of a run second by second: what follows each section's headline. */
#ifndef __XR_REPORT_TIMELINES_H
#define __XR_REPORT_TIMELINES_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

/* A sender's frames sent and first answers, per second */
void timeline_sender(FILE *f, struct json_object *j);
/*
 * TCP sessions completed and failed per second, and what the application
 * counts (MQTT's messages the broker took, or deliveries), when the run has them
 */
void timeline_sessions(FILE *f, struct json_object *j);
/* Round trips per second: p50 and p99 of each second's answers */
void timeline_rtt(FILE *f, struct json_object *j);
/* count's: what arrived and where it went, per second; false for results from before the timeline */
bool timeline_count(FILE *f, struct json_object *j);
/*
 * A sender's run and its server's count on one chart, on the sender's clock:
 * offered, sent, arrived and dropped by reason; false when either lacks its
 * wall-clock start or count its timeline (then nothing is written, not
 * even opening, the HTML that comes first)
 */
bool timeline_both(FILE *f, struct json_object *sender, struct json_object *count,
		   const char *opening);

#endif
