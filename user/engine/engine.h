/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every engine is asked and what it answers. The answer accounts for
 * every frame asked for: sent, or not sent with a reason.
 */
#ifndef __XR_ENGINE_H
#define __XR_ENGINE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "frames/frameset.h"
#include "engine/iface.h"
#include "xdpreplay.h"

struct json;
struct prom;

#define XR_FOREVER UINT64_MAX

struct gen_bpf;
struct bpf_map;
struct bpf_object;
struct engine_opts;

/*
 * A protocol's part in a kernel-engine run (user/proto/X/): what it sets
 * before the program loads (rodata, map sizes), fills after, runs beside the
 * senders, and reads at the end. Each hook is optional; each returning int
 * returns 0 or -errno, having printed why.
 */
struct engine_proto {
	void *ctx;
	int (*before_load)(void *ctx, struct gen_bpf *skel, const struct engine_opts *o);
	int (*after_load)(void *ctx, struct gen_bpf *skel, const struct engine_opts *o);
	/* before the departure times are fixed; slots[o->cpus[i]] is thread i's */
	int (*start)(void *ctx, const struct xr_gen_slot *slots, const struct engine_opts *o);
	void (*stop)(void *ctx);
	/* kengine_run_frames: get ready to build the frame of sequence number n */
	void (*frame)(void *ctx, uint64_t n);
	/*
	 * The xsk engine: the per-packet hook's work in userspace. Frame n (the
	 * frame set's bytes, the plan applied) finished in place by the thread
	 * whose slot is s, *tag what the reply handler gets back with n's answer:
	 * 0; -EAGAIN to leave this frame to the program run in test mode; any
	 * other -errno: it cannot be built. NULL: the program builds every frame.
	 */
	int (*build)(void *ctx, struct xr_gen_slot *s, uint64_t n, uint8_t *frame, uint32_t len,
		     uint16_t *tag);
	/*
	 * Before load, for a kernel without the helpers of the full programs
	 * (engine/session.c): whether build finishes every frame by itself,
	 * given time (no frame builder in BPF: -EAGAIN then means "not yet"),
	 * and whether the run can do without the server's answers read in full
	 * (the reply kind's lighter program, XR_REPLY_PROGS_LITE). NULL: no.
	 */
	bool (*builds_every_frame)(void *ctx);
	bool (*answers_unread_ok)(void *ctx);
	/* after the last frame: whether nothing more is to come (ends --wait early); sent: frames sent */
	bool (*settled)(void *ctx, uint64_t sent);
	/*
	 * after the last frame: when --wait ends, once the protocol knows better
	 * than "after the last frame" (paced requests: after their schedule's
	 * end); 0: not yet
	 */
	uint64_t (*wait_until)(void *ctx);
	/* the run is over (replies read): take what the maps hold */
	void (*finish)(void *ctx, struct gen_bpf *skel);
	/* the program is about to be unloaded: unmap what after_load mapped */
	void (*close)(void *ctx);
	/*
	 * --concurrency: the sessions that ended so far (answered or given up),
	 * of those whose first frame was sent; called by the sender threads
	 */
	uint64_t (*ended)(void *ctx);
	/*
	 * The run means something without the gen program, its answers left
	 * uncounted (a SYN or query load): where no BPF may be loaded, the xsk
	 * engine still sends it. Unset: the protocol needs its maps, helpers
	 * or reply handler (sessions answered in XDP, a per-packet hook).
	 */
	bool program_optional;
	/*
	 * --listen: the protocol's live figures from a snapshot of the reply
	 * counters, as JSON members and Prometheus families (the sender's
	 * labels already common to every sample); the HTTP thread's calls
	 */
	void (*live_json)(void *ctx, const struct xr_replies_stats *r, struct json *j);
	void (*live_metrics)(void *ctx, const struct xr_replies_stats *r, struct prom *p);
};

/*
 * The figures of a run while it runs, for a sender's --listen (read from the
 * HTTP server's thread, under lock).
 */
struct engine_live {
	pthread_mutex_t lock;
	uint64_t sent, failed, bytes, total; /* total: frames planned, XR_FOREVER when unknown */
	uint64_t start_ns, now_ns;
	bool running;
	/* with a reply kind: its counters, summed over CPUs, also while the run waits for answers */
	bool have_replies;
	struct xr_replies_stats replies;
	/* with round trips: the rtt_hist map, dup'ed for the HTTP thread (-1 before; its owner closes it) */
	int rtt_fd;
};

struct engine_opts {
	const struct iface *ifc;
	struct frameset *fs;
	unsigned int threads;
	int cpus[XR_MAX_CPUS]; /* CPU of each thread */
	uint64_t count; /* frames to send; XR_FOREVER = until duration or signal */
	uint64_t duration_ns; /* 0 = no limit */
	enum xr_pace pace;
	double pps; /* XR_PACE_RATE: all threads together */
	double multiplier; /* XR_PACE_PCAP */
	unsigned int batch; /* live-frames batch size */
	enum xr_backoff backoff; /* how the kernel engine waits out a full ring */
	bool progress; /* live line on stderr */
	struct engine_live *live; /* NULL, or updated while the run runs */
	/* called once the first departure time is fixed (CLOCK_MONOTONIC), before anything is sent */
	void (*on_start)(void *ctx, uint64_t start_ns);
	void *on_start_ctx;
	struct xr_op ops[XR_MAX_OPS]; /* rewrite plan, the same for every frame */
	unsigned int nops;
	uint64_t first_n; /* the first sequence number (default 0) */
	/*
	 * --shard I/N: this run is shard I of `shards` (0 or 1: the whole run);
	 * `shard` is I's place in the rotation from first_n's unit, (I - first_n /
	 * unit) mod N, so that I always owns the units u with u mod N = I. count
	 * and pps are this shard's own (send_run divides them).
	 */
	unsigned int shard, shards;
	uint64_t start_unix_ns; /* --start-at: the first departure, CLOCK_REALTIME (0: at once) */
	bool frames_are_devices; /* each frame of the set is one device's: shards take whole ones */
	/* the server's answers: counted by xr_replies on ifc unless XR_REPLY_NONE (replies_uncounted) */
	enum xr_reply_kind reply_kind;
	struct xr_reply_match rpl;
	uint64_t reply_wait_ns; /* after the last frame, how long answers may take */
	int ready_fd; /* a run that is another's other end: told there once its sessions are ready (0: none) */
	/* what the reply handler sends by XDP_TX, for a warning where it would wait (NULL: nothing) */
	const char *xdp_tx_answers;
	uint32_t ts_mask; /* send_ts slot of n: n & ts_mask (0: the whole ring) */
	/* the protocol's share (kernel engine) */
	enum xr_hook hook; /* its per-packet rewrite after the plan */
	bool copy_always; /* the hook writes into the frame: copy it whole even for one frame */
	bool quiet_load; /* a gen program that fails to load is the caller's to tell (probe, fallbacks) */
	uint64_t frame_div; /* frame of n: (n / frame_div) mod N (0 or 1: n mod N) */
	const struct engine_proto *proto;
	uint64_t umem_limit; /* xsk: refuse a UMEM larger than this (0: no limit) */
	/*
	 * A closed loop (gen tcp --concurrency): at most this many frames sent
	 * whose session has not ended (proto->ended), so that a new session
	 * starts as another ends; 0: an open loop, as the pace says
	 */
	uint64_t concurrency;
};

/* The server's answers to a run's frames and their round trips (bpf/shared/replies.h). */
struct engine_replies {
	struct xr_replies_stats st; /* summed over CPUs */
	uint64_t *hist; /* XR_RTT_SECS x XR_RTT_BUCKETS, summed over CPUs */
	unsigned int seconds; /* seconds of the run that the histograms cover */
	/*
	 * the counters as they stood at the end of each second of the run and
	 * its wait, the last row at the end (malloc'ed, nsec_st of them); its
	 * length last_span_s
	 */
	struct xr_replies_stats *at_sec;
	unsigned int nsec_st;
	double last_span_s;
};

/* Why frames asked for were not sent. */
struct engine_unsent {
	uint64_t ring_full; /* the driver refused them (xmit drops) */
	uint64_t redirect; /* refused before the driver (MTU, link down) */
	uint64_t bad_frame; /* the program could not build them */
	uint64_t interrupted; /* SIGINT/SIGTERM came first */
	uint64_t duration; /* --duration came first (top speed, or --count beyond the duration) */
	uint64_t behind; /* due before --duration's end, not sent: the sender fell behind */
	uint64_t device_error; /* the device failed (link down, device gone) before they were sent */
	uint64_t unaccounted; /* handed to the driver, outcome unknown: a bug if ever non-zero */
};

struct engine_result {
	uint64_t asked; /* count, or what was attempted when running until stopped */
	uint64_t sent;
	uint64_t sent_bytes;
	struct engine_unsent unsent;
	int xmit_err, redirect_errno;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	bool interrupted; /* SIGINT/SIGTERM stopped the run */
	uint64_t *per_sec; /* frames sent in each second of the run (malloc'ed), nsec of them */
	unsigned int nsec;
	const char *engine;
	struct engine_replies replies; /* with a reply kind; hist is malloc'ed */
	/* CPU time the replies' XDP program ran (kernel.bpf_stats_enabled=1; else 0) */
	uint64_t replies_run_ns, replies_run_cnt;
	uint64_t hook_ctr[2]; /* the protocol hook's counters, summed over threads */
	/* --concurrency: the most sessions open at once that a sender saw, and its waits for one to end */
	uint64_t open_peak, gate_waits;
	/* the kernel engine's waits while the driver refused frames (gen.bpf.c: ring_full_backoff) */
	uint64_t backoff_skipped, spun_ns;
	/* sent without the gen program (BPF refused here): the reply kind's answers went uncounted */
	bool replies_uncounted;
};

/* maps.c: an mmapable array map mapped whole; *sz is the mapped size. NULL on failure. */
void *engine_map_mmap(struct bpf_map *map, size_t *sz);

/* The replies_stats map's per-CPU counters summed into sum. 0 or -errno. */
int engine_replies_sum(int fd, struct xr_replies_stats *sum);

/*
 * The histogram maps of a BPF object (XR_HIST_MAP) sized to a region per
 * possible CPU; before load. 0 or -errno.
 */
int engine_hists_size(struct bpf_object *obj);
/* A histogram map's XR_RTT_CELLS cells summed over CPUs into sum. 0 or -errno. */
int engine_hist_sum(int fd, uint64_t *sum);
/* A histogram map summed into r (hist allocated when NULL). 0 or -errno. */
int engine_hist_read(int fd, struct engine_replies *r);

/* maps.c: cells 0..cells-1 of a per-CPU array of u64, each summed over CPUs, into sum. 0 or -errno. */
int engine_percpu_sum(int fd, uint32_t cells, uint64_t *sum);

/* Lower bound in ns of round-trip bucket b (the inverse of rtt_bucket() in gen.bpf.c). */
uint64_t rtt_bucket_floor(unsigned int b);

static inline uint64_t engine_unsent_total(const struct engine_unsent *u)
{
	return u->ring_full + u->redirect + u->bad_frame + u->interrupted + u->duration +
	       u->behind + u->device_error + u->unaccounted;
}

/* The sequence number thread `thread` sends as its k-th frame (bpf/shared/engine.h: xr_seq). */
static inline uint64_t engine_seq(const struct engine_opts *o, unsigned int thread, uint64_t k)
{
	return xr_seq(o->first_n, k * o->threads + thread, o->shard, o->shards, o->frame_div);
}

/*
 * Frames of a whole run of `count` that shard `shard` of `shards` sends, with
 * `unit` consecutive sequence numbers to a shard (XR_FOREVER stays so).
 */
uint64_t engine_shard_count(uint64_t count, unsigned int shard, unsigned int shards, uint64_t unit);

/*
 * The place of shard I of N in a run from first_n (a multiple of unit): the
 * shard owns the units u = n / unit with u mod N = I in every run.
 */
static inline unsigned int engine_shard_place(unsigned int shard, unsigned int shards,
					      uint64_t first_n, uint64_t unit)
{
	return (shard + shards - first_n / unit % shards) % shards;
}

/*
 * Frames that vary per packet or expect answers: the xsk engine builds them
 * from the gen program's session rather than sending the frame set as it is.
 */
static inline bool engine_builds_frames(const struct engine_opts *o)
{
	return o->nops || o->hook != XR_HOOK_NONE || o->reply_kind != XR_REPLY_NONE || o->proto;
}

/* Frames that vary can be built without the gen program (no hook, no protocol state in BPF). */
static inline bool engine_program_optional(const struct engine_opts *o)
{
	return o->hook == XR_HOOK_NONE && (!o->proto || o->proto->program_optional);
}

/* Set from a signal handler: stop sending and report. */
extern volatile sig_atomic_t xr_stop;

int kengine_run(const struct engine_opts *o, struct engine_result *res);
int xengine_run(const struct engine_opts *o, struct engine_result *res);

/*
 * Runs xr_gen once with live frames: with send_frame, a single test frame
 * goes out and the report says what the driver did; without, the program
 * drops it (nothing leaves) and only whether live frames work is known.
 */
struct kengine_probe {
	bool loaded; /* the program loaded (BTF, live frames flag known) */
	bool ran; /* BPF_PROG_RUN with live frames worked */
	bool xmit_ok; /* the driver took the frame */
	int err; /* errno of the failing step */
	int xmit_err; /* the driver's error */
	const char *step;
};
int kengine_probe(const struct iface *ifc, bool send_frame, struct kengine_probe *p);

/*
 * Runs xr_gen once per sequence number in ns (not live: nothing is sent) and
 * returns each frame it built in out (XR_MAX_FRAME bytes apart); a length of
 * 0 means the program refused the frame. For the tests.
 */
/*
 * The program's departure times (due_ns) of ks for thread `thread` of o's
 * run starting at t0, into due: what the selftest holds against pacer_due.
 */
int kengine_due_test(const struct iface *ifc, const struct engine_opts *o, unsigned int thread,
		     uint64_t t0, const uint64_t *ks, size_t n, uint64_t *due);

int kengine_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns,
		       size_t count, uint8_t *out, uint32_t *out_len, uint64_t *ring_hits);

#endif
