/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdpreplay selftest's checks (cmd/selftest.c runs them): each BPF part held
 * byte for byte against an implementation of its own in userspace, over
 * published vectors and random cases.
 */
#ifndef __XR_SELFTEST_H
#define __XR_SELFTEST_H

#include <stdint.h>
#include "engine/iface.h"

/*
 * The LoRaWAN checks of xdpreplay selftest (selftest/lorawan.c): vectors,
 * then `cases` random fleets; counts what it checked and what differed.
 * 0 or -errno when a check could not run.
 */
int selftest_lorawan(const struct iface *lo, uint64_t cases, uint64_t (*rnd)(void),
		     uint64_t *checked, uint64_t *mismatches, uint64_t *frames);

struct bpf_map;
struct bpf_program;
struct bpf_test_run_opts;

/* One run of a test program on its map's single value: v in, the program run with o's packet, v back out. 0 or -errno. */
int test_prog_run(struct bpf_map *map, struct bpf_program *prog, void *v,
		  struct bpf_test_run_opts *o);

/*
 * The TCP reply builder of bpf/lib/tcp.bpf.h (selftest/tcp.c) with payloads
 * of 0 to 1460 bytes against a segment built from scratch; gen tcp's fields.
 */
int selftest_tcp(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches);

/* gen mqtt's per-session bytes in BPF against user/proto/mqtt/stream.c's, in five stream shapes. */
int selftest_mqtt(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches,
		  unsigned int *nshapes);

/*
 * gen mqtt's subscriber reader in XDP (CONNACK, SUBACK, deliveries with their
 * stamps booked per pair) against a whole-packet reading of random streams
 * cut into random segments.
 */
int selftest_mqtt_deliveries(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked,
			     uint64_t *mismatches);
/* gen mqtt's callers' reading of their answers against a reference */
int selftest_mqtt_calls(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked,
			uint64_t *mismatches);

/*
 * gen tcp's HTTP reader in XDP against user/proto/http/http.c over random
 * responses cut into random segments.
 */
int selftest_http(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches);

/*
 * The round-trip histograms' regions per CPU: one record on each CPU, each
 * found in the sum; 1 mismatch when not.
 */
int selftest_hist(uint64_t *checked, uint64_t *mismatches);

#endif
