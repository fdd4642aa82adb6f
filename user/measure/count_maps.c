// SPDX-License-Identifier: GPL-2.0
/* count's maps read and summed over CPUs (measure/count_maps.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "measure/count_maps.h"
#include "count.skel.h"

/* --respond's counters, summed over CPUs into t. 0 or -errno. */
static int read_respond(struct count_bpf *skel, struct count_totals *t)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xr_respond_stats *per = calloc(ncpu, sizeof(*per));
	__u32 key = 0;
	int err = 0;

	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.respond_stats), &key, per)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < ncpu; i++) {
		t->rsp.syn_acks += per[i].syn_acks;
		t->rsp.responses += per[i].responses;
		t->rsp.data_acks += per[i].data_acks;
		t->rsp.fin_acks += per[i].fin_acks;
		t->rsp.absorbed += per[i].absorbed;
		t->rsp.not_tcp += per[i].not_tcp;
		t->rsp.no_room += per[i].no_room;
	}
out:
	free(per);
	return err;
}

int read_totals(struct count_bpf *skel, struct count_totals *t)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xr_count_stats *per;
	__u32 key = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.count_stats), &key, per)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < ncpu; i++) {
		t->seen += per[i].seen;
		t->matched += per[i].matched;
		t->bytes += per[i].matched_bytes;
		t->passed += per[i].passed;
		t->dropped += per[i].dropped;
		if (per[i].first_ns && (!t->first_ns || per[i].first_ns < t->first_ns))
			t->first_ns = per[i].first_ns;
		if (per[i].last_ns > t->last_ns)
			t->last_ns = per[i].last_ns;
	}
	t->respond = skel->rodata->cfg.respond;
	if (t->respond)
		err = read_respond(skel, t);
out:
	free(per);
	return err;
}

/* Sums the per-flow sequence state; prints up to max_list flows into j when given. */
void read_seq(struct count_bpf *skel, struct seq_totals *st, struct json *j, int max_list)
{
	int fd = bpf_map__fd(skel->maps.flows);
	struct xr_flow_key key, next;
	struct xr_flow_state v;
	void *prev = NULL;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

	memset(st, 0, sizeof(*st));
	st->untracked = skel->bss->seq_untracked;
	if (j)
		json_open(j, "flows", '[');
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem_flags(fd, &key, &v, BPF_F_LOCK))
			continue;
		st->flows++;
		st->received += v.received;
		st->lost += v.lost;
		st->dup += v.dup;
		st->reordered += v.reordered;
		st->too_late += v.too_late;
		if (j && (int)st->flows <= max_list) {
			json_open(j, NULL, '{');
			json_str(j, "src", inet_ntop(AF_INET, &key.saddr, a, sizeof(a)));
			json_str(j, "dst", inet_ntop(AF_INET, &key.daddr, b, sizeof(b)));
			json_u64(j, "proto", key.proto);
			json_u64(j, "sport", ntohs(key.sport));
			json_u64(j, "dport", ntohs(key.dport));
			json_u64(j, "received", v.received);
			json_u64(j, "lost", v.lost);
			json_u64(j, "duplicated", v.dup);
			json_u64(j, "reordered", v.reordered);
			json_close(j, '}');
		}
	}
	if (j)
		json_close(j, ']');
}

/* Frames per second since the first one, summed over CPUs; returns how many seconds have data. */
int read_series(struct count_bpf *skel, uint64_t *out, int max)
{
	int ncpu = libbpf_num_possible_cpus(), last = -1;
	__u64 *per = calloc(ncpu, sizeof(__u64));

	if (!per)
		return 0;
	for (int i = 0; i < max; i++) {
		__u32 key = i;

		out[i] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.series), &key, per))
			break;
		for (int c = 0; c < ncpu; c++)
			out[i] += per[c];
		if (out[i])
			last = i;
	}
	free(per);
	return last + 1;
}
