// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel engine. Userspace runs xr_gen with BPF_PROG_RUN in live-frames mode
 * (BPF_F_TEST_XDP_LIVE_FRAMES): each iteration builds frame n mod N of the
 * frame set in a page-pool page and returns XDP_TX, which the kernel turns
 * into a redirect out of the ingress device (ndo_xdp_xmit).
 *
 * Pages are recycled without being reset, so a frame is always copied whole
 * from the frame set; nothing is modified in place.
 *
 * What varies per packet is the plan (bpf/plan.bpf.h) and the protocol's
 * hook (bpf/proto/registry.bpf.h); replies go to the protocol's handler.
 *
 * Accounting: the program counts what it hands to XDP_TX; two tracepoint
 * programs count what the driver then took or refused, so that
 * tx == xmit_sent + xmit_drops + redirect_err holds after every run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "xdpreplay.h"

const volatile struct xr_gen_cfg cfg = {};

/* Set after load: the kernel's id of xr_gen, to match redirect errors. */
__u32 gen_prog_id = 0;
/*
 * Set after load: our process. The driver's flush runs inside our own
 * BPF_PROG_RUN call (bottom halves off, so nothing interleaves), so a flush
 * seen from another process is another sender's on the same interface:
 * each run accounts for its own frames alone.
 */
__u32 owner_tgid = 0;

/* Per-CPU engine state; see struct xr_gen_slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XR_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct xr_gen_slot);
} slots SEC(".maps");

/* Frame descriptors, one per frame; sized by userspace before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_frame);
} frames SEC(".maps");

/* Frame bytes in chunks of XR_CHUNK_VALUE; sized by userspace before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, XR_CHUNK_VALUE);
} frame_data SEC(".maps");

static __always_inline __u64 seq_of(const struct xr_gen_slot *s, __u64 k)
{
	return xr_seq(cfg.first_n, k * cfg.nthreads + s->thread, cfg.shard, cfg.shards,
		      cfg.frame_div);
}

static __always_inline __u64 due_ns(const struct xr_gen_slot *s, __u64 k)
{
	__u64 n, nb, f, fb, ct, ctb, d;
	struct xr_frame *fd, *fdb;
	__u32 fi, fbi;

	/*
	 * The run's j-th frame leaves at j * num / den (engine/pacer.c), exactly
	 * in 64 bits: with num = q * den + r and j = a * den + b, that is a * num
	 * + b * q + b * r / den, and b * r < 2^64 as both are below den < 2^32
	 */
	if (cfg.pace == XR_PACE_RATE) {
		__u64 j = (k - s->k_base) * cfg.nthreads + s->thread, a, b;

		if (!s->per_den)
			return s->t0_ns;
		a = j / s->per_den;
		b = j % s->per_den;
		return s->t0_ns + a * s->per_num + b * s->per_q + b * s->per_r / s->per_den;
	}

	/* XR_PACE_PCAP: capture time of n, scaled by the multiplier */
	n = seq_of(s, k);
	nb = seq_of(s, s->k_base);
	f = n % cfg.nframes;
	fb = nb % cfg.nframes;
	fi = f;
	fbi = fb;
	fd = bpf_map_lookup_elem(&frames, &fi);
	fdb = bpf_map_lookup_elem(&frames, &fbi);
	if (!fd || !fdb)
		return 0;
	ct = (n / cfg.nframes) * cfg.span_ns + fd->ts_ns;
	ctb = (nb / cfg.nframes) * cfg.span_ns + fdb->ts_ns;
	/* (d * 1000) / m without the product: d * 1000 wraps 64 bits past 213 days of capture */
	d = ct - ctb;
	return s->t0_ns + d / cfg.mult_milli * 1000 + d % cfg.mult_milli * 1000 / cfg.mult_milli;
}

/* Copies frame n's bytes into the page; *unplanned: the plan's ops skip it (--misfit send). */
static __always_inline int build_frame(struct xdp_md *ctx, __u64 n, bool *unplanned)
{
	struct xr_frame *fd;
	__u32 fi, ci, off, len;
	void *chunk;
	int delta;

	fi = (cfg.frame_div > 1 ? n / cfg.frame_div : n) % cfg.nframes;
	fd = bpf_map_lookup_elem(&frames, &fi);
	if (!fd)
		return -1;
	ci = fd->chunk;
	chunk = bpf_map_lookup_elem(&frame_data, &ci);
	if (!chunk)
		return -1;
	off = fd->off;
	len = fd->len;
	*unplanned = fd->flags & XR_FRAME_UNPLANNED;
	/* bounds the verifier needs to see chunk + off + len inside the value */
	if (off >= XR_CHUNK_SIZE || len < XR_MIN_FRAME || len > XR_MAX_FRAME)
		return -1;
	delta = (int)len - (int)(ctx->data_end - ctx->data);
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return -1;
	if (bpf_xdp_store_bytes(ctx, 0, chunk + off, len))
		return -1;
	return 0;
}

/* the run's replies come over IPv6 (read-only: the verifier follows one branch) */
#define REPLY_V6 (cfg.rpl.ipv6 != 0)

#include "lib/csum.bpf.h"
#include "lib/parse.bpf.h"
#include "lib/tcp.bpf.h"
#include "lib/replies.bpf.h"
#include "plan.bpf.h"
#include "proto/registry.bpf.h"

/*
 * The driver refused frames (a full ring): a sender that goes on hammering it
 * only makes more frames it must count as not sent. Two ways to wait:
 *
 * Spin in the program on the clock, touching nothing shared, and then a little
 * less after each flush the driver took, so that the sender settles near the
 * receiver's pace. This works while the receiver drains on another CPU (a veth
 * peer's threaded NAPI), where skipping iterations contends with the receiver
 * for the lock of the call's page pool: each skipped iteration takes a page
 * and gives it back through that lock, as the receiver does for every frame
 * (docs/benchmarks.md, "Waiting out a full ring", has what each way gave).
 *
 * Skip iterations (~70 ns each), doubling the skip while refusals go on and
 * halving it once a look finds none. The call's batches then end, so that a
 * receiver that needs this CPU (softirq NAPI, a NIC's completions, a NAPI
 * thread on this core) runs between them: spinning, with preemption off,
 * keeps it out: far fewer frames refused at the same rate.
 *
 * With cfg.backoff XR_BACKOFF_SPIN (userspace found a veth peer whose NAPI
 * runs in threads), spinning comes first; when the longest spin is refused
 * again, the receiver did not drain meanwhile, and the next refusals skip,
 * twice as many after each such failed try. Otherwise only skipping: where
 * the receiver needs this CPU, each doubling spin lets one more flush be
 * refused before that fall-back (a NIC, softirq NAPI).
 */
#define XR_BACKOFF_MIN 64
#define XR_BACKOFF_MAX 65536
#define XR_SPIN_MIN_NS 500
#define XR_SPIN_MAX_NS 256000
#define XR_SPIN_RETRY_MIN 64 /* refusals that skip after a failed spin */
#define XR_SPIN_RETRY_MAX 65536

static long spin_step(__u64 i, void *until)
{
	return bpf_ktime_get_ns() >= *(__u64 *)until;
}

static __always_inline void spin(struct xr_gen_slot *s)
{
	__u64 until = bpf_ktime_get_ns() + s->spin_ns;

	/* a step reads the clock (~25 ns): 2^20 steps outlast XR_SPIN_MAX_NS */
	bpf_loop(1 << 20, spin_step, &until, 0);
	s->spun_ns += s->spin_ns;
}

static __always_inline bool ring_full_backoff(struct xr_gen_slot *s)
{
	__u64 drops = s->xmit_drops, sent;

	if (s->backoff_left) {
		s->backoff_left--;
		s->backoff_skipped++;
		return true;
	}
	if (drops != s->drops_seen) {
		s->drops_seen = drops;
		s->sent_seen = s->xmit_sent;
		if (cfg.backoff != XR_BACKOFF_SPIN) {
			/* skip only */
		} else if (s->spin_skips) {
			s->spin_skips--;
		} else if (s->spin_ns < XR_SPIN_MAX_NS) {
			s->spin_ns = !s->spin_ns		     ? XR_SPIN_MIN_NS :
				     s->spin_ns < XR_SPIN_MAX_NS / 2 ? s->spin_ns * 2 :
								       XR_SPIN_MAX_NS;
			spin(s);
			return false;
		} else {
			s->spin_ns = 0;
			s->spin_retry = s->spin_retry ? (s->spin_retry < XR_SPIN_RETRY_MAX ?
								 s->spin_retry * 2 :
								 s->spin_retry) :
							XR_SPIN_RETRY_MIN;
			s->spin_skips = s->spin_retry;
		}
		s->backoff = s->backoff ?
				     (s->backoff < XR_BACKOFF_MAX ? s->backoff * 2 : s->backoff) :
				     XR_BACKOFF_MIN;
		s->backoff_left = s->backoff;
		return true;
	}
	/* no store per frame while nothing is refused: the slot's line stays clean */
	if (cfg.backoff != XR_BACKOFF_SPIN || !s->spin_ns) {
		if (s->backoff)
			s->backoff >>= 1;
		return false;
	}
	sent = s->xmit_sent;
	if (sent == s->sent_seen)
		return false;
	/* the driver took a flush while the sender paces itself by spins */
	s->sent_seen = sent;
	s->spin_ns -= (s->spin_ns >> 4) + 1;
	spin(s);
	return false;
}

/*
 * Paced: frame k leaves once its departure has come. A frame due before the
 * last clock reading is due now, so the clock (bpf_ktime_get_ns, ~25 ns here)
 * is read only when k is not known to be due: once per burst of frames that
 * fell due together, not once per frame. A paced run at 90% of top speed fell
 * behind its schedule by 14% when every frame read the clock.
 */
static __always_inline bool frame_is_due(struct xr_gen_slot *s, __u64 k)
{
	__u64 due = due_ns(s, k);

	if (due <= s->clock_ns)
		return true;
	s->clock_ns = bpf_ktime_get_ns();
	return due <= s->clock_ns;
}

/* Frame k of this CPU's slot; live: a live-frames run's, which waits out a full ring. */
static __always_inline int gen_frame(struct xdp_md *ctx, const bool live)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct xr_gen_slot *s;
	bool unplanned = false;
	__u16 tag = 0;
	__u64 k, n;

	/* attached to a private loopback only to hold the dispatcher (kengine.c) */
	if (ctx->ingress_ifindex != cfg.ifindex)
		return XDP_PASS;
	s = bpf_map_lookup_elem(&slots, &cpu);
	if (!s)
		return XDP_ABORTED;
	k = s->k_next;
	/* done, or not yet due: burn the iteration, not a sequence number */
	if (k >= s->k_end)
		return XDP_DROP;
	if (cfg.pace != XR_PACE_NONE && !frame_is_due(s, k))
		return XDP_DROP;
	if (live && ring_full_backoff(s))
		return XDP_DROP;
	s->k_next = k + 1;

	n = seq_of(s, k);
	if (cfg.copy && build_frame(ctx, n, &unplanned))
		goto bad;
	if (!cfg.copy && cfg.nops && apply_ops_nocopy(ctx, s, n))
		goto bad;
	for (int i = 0; i < XR_MAX_OPS; i++) {
		if (i >= cfg.nops || !cfg.copy || unplanned)
			break;
		if (apply_op(ctx, i, op_value(&cfg.ops[i], s, i, n)))
			goto bad;
	}
	if (cfg.hook && proto_hook(ctx, s, n, &tag))
		goto bad;
	if (cfg.nops)
		op_advance(s);
	if (cfg.stamp) {
		__u32 i = n & cfg.ts_mask;
		struct xr_send_ts *t = bpf_map_lookup_elem(&send_ts, &i);

		if (t) {
			t->ts_ns = bpf_ktime_get_ns();
			t->n32 = n;
			t->answered = 0;
			t->tag = tag;
		}
	}
	s->tx++;
	s->tx_bytes += ctx->data_end - ctx->data;
	return XDP_TX;
bad:
	/* the sequence number is used up either way: the running values move on too */
	if (cfg.nops)
		op_advance(s);
	s->bad_frame++;
	return XDP_DROP;
}

SEC("xdp")
int xr_gen(struct xdp_md *ctx)
{
	return gen_frame(ctx, true);
}

/*
 * The same frames in test mode, one per BPF_PROG_RUN (the xsk engine, the
 * selftest), loaded instead of xr_gen there: without the ring's back-off,
 * whose bpf_loop (5.17) a 5.10 verifier refuses in the whole program.
 */
SEC("?xdp")
int xr_build(struct xdp_md *ctx)
{
	return gen_frame(ctx, false);
}

/*
 * On the sender's interface: the server's answers go to the protocol's
 * reply handler, which counts them, answers some (a handshake's ACK, say) and
 * drops the rest, so that this host's stack never sees (and never answers)
 * traffic meant for the sockets we do not have.
 *
 * One program per reply kind (XR_REPLY_PROGS), loaded only by the run that
 * answers that kind (SEC("?xdp"), engine/session.c): a verifier before 6.8
 * checks every global function a program calls, reachable or not, so one
 * switch over all kinds let LoRaWAN's downlink code stop a gen syn on 6.1.
 */
SEC("?xdp")
int xr_replies_syn(struct xdp_md *ctx)
{
	return syn_reply(ctx);
}

SEC("?xdp")
int xr_replies_lora(struct xdp_md *ctx)
{
	return lora_reply(ctx, true);
}

/* PUSH_ACKs, PULL_ACKs and JoinAccepts, for kernels before 5.18: data downlinks counted, not read */
SEC("?xdp")
int xr_replies_lora_acks(struct xdp_md *ctx)
{
	return lora_reply(ctx, false);
}

SEC("?xdp")
int xr_replies_dns(struct xdp_md *ctx)
{
	return dns_reply(ctx);
}

SEC("?xdp")
int xr_replies_tcp(struct xdp_md *ctx)
{
	return tcp_session_reply(ctx);
}

/* selftest only: due_ns of due_test's k for its slot (xdpreplay selftest holds them against user/engine/pacer.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_due_test);
} due_test SEC(".maps");

SEC("xdp")
int xr_due_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_due_test *t = bpf_map_lookup_elem(&due_test, &zero);

	if (!t)
		return XDP_ABORTED;
	for (int i = 0; i < XR_DUE_TEST_K; i++) {
		if (i >= t->n)
			break;
		t->due[i] = due_ns(&t->slot, t->k[i]);
	}
	return XDP_PASS;
}

/*
 * Direct loads through the tracepoints' BTF pointers (fault-safe, as in
 * drops.bpf.c), not BPF_CORE_READ: four bpf_probe_read_kernel calls per bulk
 * flush cost a fast run measurable CPU.
 */
static __always_inline bool our_dev(const struct net_device *dev)
{
	return dev->ifindex == cfg.ifindex && dev->nd_net.net->ns.inum == cfg.netns_ino;
}

/* Fires once per bulk flush (up to 16 frames) with what the driver took. */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(xr_xmit, const struct net_device *from_dev, const struct net_device *to_dev, int sent,
	     int drops, int err)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct xr_gen_slot *s;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != owner_tgid || !our_dev(from_dev) ||
	    !our_dev(to_dev))
		return 0;
	s = bpf_map_lookup_elem(&slots, &cpu);
	if (!s || !s->active)
		return 0;
	s->xmit_sent += sent;
	s->xmit_drops += drops;
	if (err)
		s->xmit_err = err;
	return 0;
}

/* Fires per frame that could not be queued for the driver at all. */
SEC("tp_btf/xdp_redirect_err")
int BPF_PROG(xr_redirect_err, const struct net_device *dev, const struct bpf_prog *xdp,
	     const void *tgt, int err)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct xr_gen_slot *s;

	if (xdp->aux->id != gen_prog_id || !our_dev(dev))
		return 0;
	s = bpf_map_lookup_elem(&slots, &cpu);
	if (!s || !s->active)
		return 0;
	s->redirect_err++;
	s->redirect_errno = err;
	return 0;
}

/* selftest's LoRaWAN programs, loaded only when it asks */
#include "proto/lorawan_test.bpf.h"

char LICENSE[] SEC("license") = "GPL";
