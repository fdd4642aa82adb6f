/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_PROBE_H
#define __XR_PROBE_H

#include <stdbool.h>
#include "engine/iface.h"

enum { PROBE_ENGINE_KERNEL = 1, PROBE_ENGINE_XSK = 2 };

#define PROBE_MAX_CHECKS 24

struct check {
	const char *name;
	bool ok;
	char detail[160];
	char fix[200]; /* what to do about it; empty when ok */
};

struct probe_report {
	struct check c[PROBE_MAX_CHECKS];
	int n;
};

/*
 * Every check into r: the host's (BTF, privileges, bpffs; without ifc, live
 * frames on loopback and an AF_XDP socket), and with ifc the interface's
 * (XDP features, a veth peer, native XDP, live frames, transmit, AF_XDP).
 */
void probe_checks(struct probe_report *r, const struct iface *ifc);

/* A new row of r, zeroed but for its name and verdict. */
struct check *probe_add(struct probe_report *r, const char *name, bool ok);

/*
 * The programs this kernel's verifier may refuse, each loaded alone: every
 * reply kind's (the protocols'), and count's drop tracer. Needs root.
 */
void probe_programs(struct probe_report *r);

/* The engine --engine auto picks for ifc, or -EOPNOTSUPP with the reason in *why. */
int probe_best_engine(const struct iface *ifc, const char **why);

#endif
