// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay probe's rows for the programs a kernel's verifier may refuse:
 * each reply kind's program of the gen object, loaded alone as a run of that
 * kind would load it, and count's drop tracer. A verifier's refusal (EACCES,
 * E2BIG, EINVAL) is told apart from missing privileges (EPERM).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "engine/engine.h"
#include "engine/probe.h"
#include "engine/session.h"
#include "measure/drops.h"

/* Why a load failed, in words: the verifier, privileges, or what else the kernel said. */
static void refusal(struct check *c, const char *prog, int err)
{
	struct utsname uts;

	uname(&uts);
	if (err == -EOPNOTSUPP) {
		snprintf(c->detail, sizeof(c->detail),
			 "%s calls a helper Linux %s lacks (bpf_loop: 5.17, "
			 "bpf_xdp_store_bytes: 5.18)",
			 prog, uts.release);
		snprintf(c->fix, sizeof(c->fix),
			 "a newer kernel (docs/kernels.md says which work)");
		return;
	}
	/* libbpf: no such tracepoint or function in the kernel's BTF */
	if (err == -ESRCH || err == -ENOENT) {
		snprintf(c->detail, sizeof(c->detail), "%s needs a tracepoint Linux %s lacks", prog,
			 uts.release);
		snprintf(c->fix, sizeof(c->fix),
			 "a newer kernel (docs/kernels.md says which work)");
		return;
	}
	if (err == -E2BIG) {
		snprintf(c->detail, sizeof(c->detail),
			 "the verifier of Linux %s gave up on %s (a million instructions)",
			 uts.release, prog);
		snprintf(c->fix, sizeof(c->fix),
			 "a newer kernel (docs/kernels.md says which work)");
		return;
	}
	if (err == -EPERM) {
		snprintf(c->detail, sizeof(c->detail), "%s not loaded: no privilege (EPERM)", prog);
		snprintf(c->fix, sizeof(c->fix), "run as root, or grant CAP_BPF and CAP_NET_ADMIN");
		return;
	}
	snprintf(c->detail, sizeof(c->detail), "the verifier of Linux %s refused %s: %s",
		 uts.release, prog, strerror(-err));
	snprintf(c->fix, sizeof(c->fix),
		 "a newer kernel (docs/kernels.md says which work); -vv shows the verifier's log");
}

static bool yes(void *ctx)
{
	(void)ctx;
	return true;
}

/*
 * Where a kind's program needs what this kernel lacks, its lighter one
 * (XR_REPLY_PROGS_LITE), as a run that can do without the rest would take it
 */
static void probe_lite(struct probe_report *r, const struct iface *lo, unsigned int kind)
{
	static const char *const lite[] = XR_REPLY_PROGS_LITE, *const leaves[] =
								       XR_REPLY_LITE_LEAVES;
	static const char *const users[] = XR_REPLY_USERS;
	struct engine_proto without = { .answers_unread_ok = yes };
	struct engine_opts o = { .ifc = lo,
				 .threads = 1,
				 .reply_kind = kind,
				 .quiet_load = true,
				 .proto = &without };
	uint8_t frame[60] = {};
	struct gen_session k;
	struct check *c;
	int err;

	if (kind >= sizeof(lite) / sizeof(lite[0]) || !lite[kind])
		return;
	err = session_open(&k, lo, NULL, frame, sizeof(frame), &o, SESSION_MAPS);
	c = probe_add(r, lite[kind] + 3, !err);
	if (err) {
		refusal(c, lite[kind], err);
		return;
	}
	snprintf(c->detail, sizeof(c->detail), "%s loads: %s, where %s", lite[kind], users[kind],
		 leaves[kind]);
	session_close(&k);
}

static void probe_replies(struct probe_report *r, const struct iface *lo)
{
	static const char *const names[] = XR_REPLY_PROGS;
	static const char *const users[] = XR_REPLY_USERS;
	uint8_t frame[60] = {};

	for (unsigned int kind = 0; kind < sizeof(names) / sizeof(names[0]); kind++) {
		struct engine_opts o = { .ifc = lo,
					 .threads = 1,
					 .reply_kind = kind,
					 .quiet_load = true };
		struct gen_session k;
		struct check *c;
		int err;

		if (!names[kind])
			continue;
		err = session_open(&k, lo, NULL, frame, sizeof(frame), &o, SESSION_MAPS);
		/* "xr_replies_syn" -> "replies_syn" */
		c = probe_add(r, names[kind] + 3, !err);
		if (err)
			refusal(c, names[kind], err);
		if (err == -EOPNOTSUPP)
			probe_lite(r, lo, kind);
		else if (!err)
			snprintf(c->detail, sizeof(c->detail), "%s loads: the answers of %s",
				 names[kind], users[kind]);
		if (!err)
			session_close(&k);
	}
}

static void probe_drops(struct probe_report *r)
{
	bool books = false;
	int err = drops_probe(&books);
	struct check *c = probe_add(r, "drop_reasons", !err);

	if (!err) {
		snprintf(c->detail, sizeof(c->detail),
			 "count's tracer of skb:kfree_skb loads: drop reasons by name%s",
			 books ? ", deliveries to sockets traced" :
				 "; deliveries to UDP and TCP sockets not traced here");
	} else if (err == -EOPNOTSUPP) {
		snprintf(c->detail, sizeof(c->detail),
			 "skb:kfree_skb carries no drop reason before Linux 5.17");
		snprintf(c->fix, sizeof(c->fix),
			 "count still attributes loss from the kernel's counters (SNMP, ethtool)");
	} else {
		refusal(c, "count's drop tracer", err);
	}
}

void probe_programs(struct probe_report *r)
{
	struct iface lo;

	if (iface_get("lo", &lo) == 0)
		probe_replies(r, &lo);
	probe_drops(r);
}
