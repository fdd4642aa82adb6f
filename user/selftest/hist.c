// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay selftest: the round-trip histograms' regions per CPU
 * (XR_HIST_MAP, engine_hists_size, engine_hist_sum). A round trip recorded
 * on each CPU in turn is found once in the sum.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine.h"
#include "engine/pacer.h"
#include "selftest/selftest.h"
#include "selftest.skel.h"

/* One run of xr_hist_test on cpu: 0, -errno, or 1 when the CPU is not ours to run on. */
static int record_on(struct selftest_bpf *skel, int cpu)
{
	uint8_t pkt[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1);

	if (pin_to_cpu(cpu))
		return 1;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xr_hist_test), &topts))
		return -errno;
	return 0;
}

int selftest_hist(uint64_t *checked, uint64_t *mismatches)
{
	int ncpu = libbpf_num_possible_cpus(), err, r;
	uint64_t *sum = calloc(XR_RTT_CELLS, sizeof(uint64_t)), recorded = 0, found = 0;
	struct selftest_bpf *skel = selftest_bpf__open();
	cpu_set_t was;

	err = !sum || !skel ? -ENOMEM : sched_getaffinity(0, sizeof(was), &was) ? -errno : 0;
	if (err)
		goto out;
	err = engine_hists_size(skel->obj);
	if (!err)
		err = selftest_bpf__load(skel);
	for (int c = 0; !err && c < ncpu; c++) {
		r = record_on(skel, c);
		err = r < 0 ? r : 0;
		recorded += r == 0;
	}
	/* the CPUs this process had before it went round them */
	sched_setaffinity(0, sizeof(was), &was);
	if (!err)
		err = engine_hist_sum(bpf_map__fd(skel->maps.rtt_hist), sum);
	for (__u32 i = 0; !err && i < XR_RTT_CELLS; i++)
		found += sum[i];
	*checked += recorded;
	*mismatches += !err && (found != recorded || !recorded);
out:
	selftest_bpf__destroy(skel);
	free(sum);
	return err;
}
