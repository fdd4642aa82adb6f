// SPDX-License-Identifier: GPL-2.0
/* What every selftest of a BPF test program does: a run on its map's value. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "selftest/selftest.h"

int test_prog_run(struct bpf_map *map, struct bpf_program *prog, void *v,
		  struct bpf_test_run_opts *o)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(map), &zero, v, 0) ||
	    bpf_prog_test_run_opts(bpf_program__fd(prog), o) ||
	    bpf_map_lookup_elem(bpf_map__fd(map), &zero, v))
		return -errno;
	return 0;
}
