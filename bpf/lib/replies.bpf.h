/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every reply handler shares: the send times of recent sequence numbers
 * (written by xr_gen, read by the handlers), the counters, the round-trip
 * histograms. Layout in bpf/shared/replies.h.
 */
#ifndef __XR_LIB_REPLIES_BPF_H
#define __XR_LIB_REPLIES_BPF_H

/* Send times of recent sequence numbers (written by senders, read by xr_replies; gen tcp's SYN timer reads them mapped). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XR_TS_RING);
	__type(key, __u32);
	__type(value, struct xr_send_ts);
} send_ts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_replies_stats);
} replies_stats SEC(".maps");

/*
 * A histogram map: XR_RTT_SECS seconds x XR_RTT_BUCKETS buckets for each CPU,
 * CPU c's cells from c x XR_RTT_CELLS, in one array that userspace sizes to
 * the possible CPUs before load (engine_hists_size). Not a per-CPU array: the
 * kernel allocates one of those a cell at a time, and six of 32,768 cells made
 * most of a run's start-up (docs/benchmark-notes.md).
 */
#define XR_HIST_MAP(name)                          \
	struct {                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);  \
		__uint(map_flags, BPF_F_MMAPABLE); \
		__uint(max_entries, XR_RTT_CELLS); \
		__type(key, __u32);                \
		__type(value, __u64);              \
	} name SEC(".maps")

/* Round trips. */
XR_HIST_MAP(rtt_hist);

/* Set by userspace at the first departure: second 0 of the histograms. */
__u64 replies_origin_ns = 0;

/* Bucket of a round trip: exact below 16 ns, then 16 per octave. */
static __always_inline __u32 rtt_bucket(__u64 v)
{
	__u32 e = 0;
	__u64 x = v;

	if (v < 16)
		return v;
	/* floor(log2(v)) without a loop: BPF has no count-leading-zeros */
	if (x >> 32) {
		e += 32;
		x >>= 32;
	}
	if (x >> 16) {
		e += 16;
		x >>= 16;
	}
	if (x >> 8) {
		e += 8;
		x >>= 8;
	}
	if (x >> 4) {
		e += 4;
		x >>= 4;
	}
	if (x >> 2) {
		e += 2;
		x >>= 2;
	}
	if (x >> 1) {
		e += 1;
	}
	e = (e - 3) * 16 + ((v >> (e - 4)) & 15);
	return e < XR_RTT_BUCKETS ? e : XR_RTT_BUCKETS - 1;
}

/* Counts a time that ended now in the current second's histogram of hist (laid out as rtt_hist). */
static __always_inline void record_hist(void *hist, __u64 since_ns)
{
	__u64 now = bpf_ktime_get_ns(), sec;
	__u64 *bin;
	__u32 hk;

	sec = now > replies_origin_ns ? (now - replies_origin_ns) / 1000000000ULL : 0;
	hk = bpf_get_smp_processor_id() * XR_RTT_CELLS + (sec % XR_RTT_SECS) * XR_RTT_BUCKETS +
	     rtt_bucket(now - since_ns);
	bin = bpf_map_lookup_elem(hist, &hk);
	/* this CPU's own cell, as a per-CPU array's would be: no other writer */
	if (bin)
		(*bin)++;
}

/* Counts a round trip that ended now. */
static __always_inline void record_rtt(__u64 sent_ns)
{
	record_hist(&rtt_hist, sent_ns);
}

static __always_inline struct xr_replies_stats *reply_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&replies_stats, &zero);
}

/*
 * The send record of the frame whose identity came back in an answer: slot is
 * n & ts_mask as far as the answer tells it; id_mask the bits of n it
 * carries (a 16-bit token, or all 32). NULL unless a frame of this run
 * stamped that slot with that identity.
 */
static __always_inline struct xr_send_ts *sent_frame(__u32 slot, __u32 id, __u32 id_mask)
{
	struct xr_send_ts *t = bpf_map_lookup_elem(&send_ts, &slot);

	if (!t || !t->ts_ns || (t->n32 & id_mask) != id)
		return NULL;
	return t;
}

/*
 * The common case of a reply: n's first answer is counted with its round
 * trip, later ones as repeats; unmatched when no frame of ours asked.
 * Returns true for n's first answer.
 */
static __always_inline bool count_answer(struct xr_replies_stats *st, struct xr_send_ts *t)
{
	if (!t) {
		st->unmatched++;
		return false;
	}
	if (t->answered & XR_ANSWERED_FIRST) {
		st->repeated++;
		return false;
	}
	t->answered |= XR_ANSWERED_FIRST;
	st->answered++;
	record_rtt(t->ts_ns);
	return true;
}

#endif /* __XR_LIB_REPLIES_BPF_H */
