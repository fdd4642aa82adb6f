/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gen program's session, whichever engine sends: the skeleton loaded with
 * the frame set and the plan, the protocol's maps, the reply counter on the
 * interface, and what they hold at the end. The kernel engine runs xr_gen with
 * live frames; the xsk engine builds frames with the same plan and hook and
 * sends them through AF_XDP. Both leave the server's answers to the reply program.
 */
#ifndef __XR_ENGINE_SESSION_H
#define __XR_ENGINE_SESSION_H

#include <stdatomic.h>
#include "engine/engine.h"

struct gen_bpf;
struct bpf_link;

/* How the program is to be run. */
enum session_use {
	SESSION_LIVE, /* live frames: xr_gen paces and transmits (the kernel engine) */
	SESSION_BUILD, /* test mode: xr_build builds one frame per call (the xsk engine's hooks, selftest) */
	/*
	 * the frames built in userspace (the xsk engine without a hook): the
	 * maps and the reply program alone, so that a kernel whose verifier
	 * refuses the frame builder (5.10: no bpf_xdp_store_bytes) still sends
	 */
	SESSION_MAPS,
};

struct gen_session {
	struct gen_bpf *skel;
	uint64_t live_replies_next; /* when --listen's reply counters are read again */
	/* the reply counters at the end of each whole second so far (engine_replies.at_sec) */
	struct xr_replies_stats *at_sec;
	unsigned int nsec_st, cap_st;
	struct bpf_link *links[2]; /* the transmit tracepoints (SESSION_LIVE) */
	struct bpf_link *hold; /* keeps xr_gen in the XDP dispatcher (kengine.c) */
	struct bpf_program *gen_prog; /* xr_gen (SESSION_LIVE), xr_build (SESSION_BUILD), or NULL */
	struct bpf_program *replies_prog; /* the run's reply program (XR_REPLY_PROGS), or NULL */
	struct bpf_link *replies; /* replies_prog on the interface */
	int hold_netns_fd;
	struct xr_gen_slot *slots;
	struct xr_frame *frames;
	uint8_t *data;
	struct xr_send_ts *send_ts; /* mapped: the xsk engine stamps its frames here */
	size_t slots_sz, frames_sz, data_sz, send_ts_sz;
	const struct engine_proto *proto; /* NULL for the probe */
	uint64_t nframes;
	uint8_t *tmpl;
	uint32_t tmpl_len;
	int ifindex;
	/*
	 * --concurrency: frames the senders took leave to send (less those not
	 * sent), the most sessions seen open at once, and the times a sender
	 * found none may start
	 */
	_Atomic uint64_t admitted;
	_Atomic uint64_t open_peak, gate_waits;
	unsigned int nthreads;
	const int *cpus;
};

/*
 * Loads xr_gen for a frame set (or for a single template frame when fs is
 * NULL), lays the frames out in the maps, runs the protocol's before_load and
 * after_load. 0 or -errno, printed.
 */
int session_open(struct gen_session *k, const struct iface *ifc, const struct frameset *fs,
		 const uint8_t *tmpl, uint32_t tmpl_len, const struct engine_opts *o,
		 enum session_use use);
void session_close(struct gen_session *k);

/* Whether this process may load no BPF program at all (EPERM: Docker's default capabilities). */
bool session_bpf_refused(void);

/* Thread i's slot: its place in the sequence and its running plan values. */
void session_slots_init(struct gen_session *k, const struct engine_opts *o);
void slot_ops_init(struct xr_gen_slot *s, const struct xr_op *ops, unsigned int nops, uint64_t n,
		   uint64_t stride);

/* The reply program on the interface when the run has a reply kind. 0 or -errno, printed. */
int session_replies_attach(struct gen_session *k, const struct engine_opts *o);

/*
 * --concurrency: how many of want frames may go now, from what the closed loop
 * leaves; lost: frames taken that started no session (refused, not built).
 */
uint64_t session_gate_take(struct gen_session *k, const struct engine_opts *o, uint64_t want,
			   uint64_t lost);

/*
 * Called often while the run sends and waits: the reply counters kept at the
 * end of each second, and for --listen as they are now (ten times a second).
 */
void session_replies_tick(struct gen_session *k, const struct engine_opts *o);

/*
 * After the last frame (sent: how many): the protocol's helpers stopped, the
 * answers waited for (--wait, or until the protocol has settled), the reply
 * counter detached and read into res.
 */
void session_end(struct gen_session *k, const struct engine_opts *o, struct engine_result *res,
		 bool proto_started, uint64_t sent);

#endif
