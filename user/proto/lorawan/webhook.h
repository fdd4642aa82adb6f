/* SPDX-License-Identifier: GPL-2.0 */
/*
 * count --webhook for LoRaWAN (measure/appwitness.h): a LoRaWAN network
 * server's HTTP integration posts one JSON "up" event per deduplicated
 * uplink (ChirpStack v4: deviceInfo.devEui, devAddr, fCnt); each is counted
 * per device of the fleet by FCnt: received, lost (gaps), duplicated,
 * reordered; and, given the sender's schedule, the latency from the uplink's
 * departure (n, and so its departure, follows from the device and FCnt).
 */
#ifndef __XR_WEBHOOK_H
#define __XR_WEBHOOK_H

#include <stdint.h>
#include <stdio.h>
#include "util/json.h"
#include "measure/appwitness.h"
#include "proto/lorawan/lorawan.h"

struct wh_dev;

/*
 * One run's schedule, so that a receiver can tell an uplink's departure from
 * n: each run of lorawan send --schedule appends one line (a search appends
 * one per trial).
 */
struct wh_schedule {
	double t0_unix; /* departure of first_n, seconds since the epoch */
	double pps; /* 0: not paced (no latency) */
	uint64_t first_n;
};

/* Latencies: 16 buckets per octave of nanoseconds (about 4% wide), up to 2^44 ns (4.9 h). */
#define WH_LAT_BUCKETS (16 * 41)

struct wh_latency {
	uint64_t hist[WH_LAT_BUCKETS], n, early; /* early: before departure (clocks apart) */
	int64_t max;
};

/* A sender's run as its schedule line gives it, and what of it arrived (n from first_n on). */
struct wh_run {
	struct wh_schedule sched;
	uint64_t uplinks;
	struct wh_latency lat;
};

/* runs kept (a search has at most 256 trials); later ones are counted, not timed */
#define WH_MAX_RUNS 1024

struct webhook {
	struct lw_fleet fleet;
	struct wh_dev *st; /* per device */
	struct lw_eui_index *by_eui; /* devices by DevEUI, sorted */
	const char *schedule; /* lorawan send --schedule appends a line per run */
	uint64_t events, uplinks, dup, lost, reordered, too_late, unknown, bad, jumps;
	uint64_t first_ns, last_ns; /* CLOCK_REALTIME of the first and last event */
	/* the schedule's runs, read from sched_off on (what was there before count started is not read) */
	struct wh_run *runs;
	size_t nruns;
	uint64_t runs_ignored;
	long long sched_off;
	/* arrivals before any run they belong to: kept (bounded), timed once their run is read */
	struct wh_arrival *pending;
	size_t npending, cap;
	uint64_t untimed; /* arrivals neither timed nor kept (the pending list was full) */
	struct wh_latency lat; /* every run's */
};

/* Loads the fleet (required: events are counted per device). 0 or -errno (printed). */
int webhook_init(struct webhook *w, const char *fleet_dir, const char *schedule);

/* count --webhook's witness over w (initialised by webhook_init) */
void webhook_witness(struct webhook *w, struct app_witness *out);
void webhook_free(struct webhook *w);
/* One POSTed body. */
void webhook_event(struct webhook *w, const char *body, size_t len);
/* The reports; they look for the schedule once more (and time what waited for it). */
void webhook_text(struct webhook *w, FILE *f);
void webhook_json(struct webhook *w, struct json *j);

int wh_schedule_write(const char *path, const struct wh_schedule *s);

#endif
