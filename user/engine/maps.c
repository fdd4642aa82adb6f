// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the BPF maps protocols keep beside the engine's: an array mapped
 * into memory, a per-CPU array summed over the CPUs.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine.h"

static size_t page_round(size_t sz)
{
	size_t pg = sysconf(_SC_PAGESIZE);

	return (sz + pg - 1) / pg * pg;
}

void *engine_map_mmap(struct bpf_map *map, size_t *sz)
{
	void *p;

	*sz = page_round((size_t)bpf_map__value_size(map) * bpf_map__max_entries(map));
	p = mmap(NULL, *sz, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The whole array in one call (Linux >= 5.6): 0, or -errno to read it key by key */
static int percpu_sum_batch(int fd, uint32_t cells, int ncpu, uint64_t *sum)
{
	uint64_t *vals = calloc((size_t)cells * ncpu, sizeof(uint64_t));
	__u32 *keys = calloc(cells, sizeof(__u32)), out, n = cells;
	int err;

	err = vals && keys ? bpf_map_lookup_batch(fd, NULL, &out, keys, vals, &n, NULL) : -ENOMEM;
	/* ENOENT: the batch ended at the array's end, with every cell read */
	if (err == -ENOENT)
		err = 0;
	if (!err && n != cells)
		err = -EIO;
	for (__u32 i = 0; !err && i < n; i++) {
		sum[keys[i]] = 0;
		for (int c = 0; c < ncpu; c++)
			sum[keys[i]] += vals[(size_t)i * ncpu + c];
	}
	free(vals);
	free(keys);
	return err;
}

int engine_percpu_sum(int fd, uint32_t cells, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;
	int err = 0;

	if (ncpu > 0 && !percpu_sum_batch(fd, cells, ncpu, sum))
		return 0;
	vals = calloc(ncpu, sizeof(uint64_t));
	if (!vals)
		return -ENOMEM;
	for (__u32 key = 0; key < cells; key++) {
		sum[key] = 0;
		if (bpf_map_lookup_elem(fd, &key, vals)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpu; c++)
			sum[key] += vals[c];
	}
	free(vals);
	return err;
}
