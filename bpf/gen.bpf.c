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

#define ETH_P_IP 0x0800
#define ETH_ALEN 6

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

/* Send times of recent sequence numbers (written by senders, read by xr_replies). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
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

/* Round trips: XR_RTT_SECS seconds x XR_RTT_BUCKETS buckets, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_RTT_SECS * XR_RTT_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} rtt_hist SEC(".maps");

/* Set by userspace at the first departure: second 0 of the histograms. */
__u64 replies_origin_ns = 0;

static __always_inline __u64 due_ns(const struct xr_gen_slot *s, __u64 k)
{
	__u64 n, nb, f, fb, ct, ctb, d;
	struct xr_frame *fd, *fdb;
	__u32 fi, fbi;

	/* (dk * ps) / 1000 without the product, which wraps 64 bits after 213 days of a run */
	if (cfg.pace == XR_PACE_RATE)
		return s->t0_ns + (k - s->k_base) * (s->interval_ps / 1000) +
		       (k - s->k_base) * (s->interval_ps % 1000) / 1000;

	/* XR_PACE_PCAP: capture time of n, scaled by the multiplier */
	n = cfg.first_n + k * cfg.nthreads + s->thread;
	nb = cfg.first_n + s->k_base * cfg.nthreads + s->thread;
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

static __always_inline int build_frame(struct xdp_md *ctx, __u64 n)
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

/* Folds a 32-bit one's-complement sum to 16 bits and complements it. */
static __always_inline __u16 fold_csum(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* One's-complement update of a checksum for one 16-bit word (RFC 1624, eqn. 3). */
static __always_inline __u16 csum_replace(__u16 csum, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~csum + (__u16)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

#include "lorawan.bpf.h"

/* Updates the checksum at csum_off for the 16-bit words that changed from old to new. */
static __always_inline int fix_csum(struct xdp_md *ctx, __u16 csum_off, const __u16 *old, const __u16 *new,
				    int words, bool udp)
{
	__u16 c;

	if (bpf_xdp_load_bytes(ctx, csum_off, &c, 2))
		return -1;
	/* a UDP checksum of zero means "none": it stays none */
	if (udp && !c)
		return 0;
	for (int i = 0; i < 5; i++)
		if (i < words)
			c = csum_replace(c, old[i], new[i]);
	if (udp && !c)
		c = 0xffff;
	return bpf_xdp_store_bytes(ctx, csum_off, &c, 2);
}

/* Applies op i of the plan to the frame of sequence number n. */
/* ((n / divisor) * step) mod modulus: from the slot's running value where it keeps one */
static __always_inline __u64 op_value(const volatile struct xr_op *op, const struct xr_gen_slot *s, int i, __u64 n)
{
	__u64 v;

	if (op->divisor <= 1 && i < XR_MAX_OPS)
		return s->op_val[i];
	v = n / op->divisor;
	if (!op->modulus)
		return v * op->step;
	/* exact: the plan allows a modulus above 2^32 only with step 1 */
	return (v % op->modulus) * (op->step % op->modulus) % op->modulus;
}

/* Moves the running values on to this thread's next n. */
static __always_inline void op_advance(struct xr_gen_slot *s)
{
	for (int i = 0; i < XR_MAX_OPS; i++) {
		__u64 m = cfg.ops[i].modulus, v;

		if (i >= cfg.nops)
			break;
		v = s->op_val[i] + s->op_inc[i];
		/* both terms are below m: one subtraction brings the sum back */
		if (m && (v >= m || v < s->op_val[i]))
			v -= m;
		s->op_val[i] = v;
	}
}

/*
 * The op's field inside the words it touches: `old` holds them as they were,
 * `new` receives them with the field set to pre (((n / div) * step) mod m)
 * plus the base (the captured value for XR_OPF_RELATIVE). rel is the field's
 * offset in the words (0 or 1).
 */
static __always_inline void set_field(const volatile struct xr_op *op, const __u8 *old, __u8 *new, __u32 rel,
				      __u64 pre)
{
	__u32 width = op->width;
	__u64 base = 0, v;

	if (op->flags & XR_OPF_RELATIVE) {
		for (int b = 0; b < 8; b++) {
			if (b >= width)
				break;
			/* most significant byte first */
			base = base << 8 | old[rel + ((op->flags & XR_OPF_BIG_ENDIAN) ? b : width - 1 - b)];
		}
	} else {
		base = op->base;
	}
	v = pre + base;
	for (int b = 0; b < 8; b++) {
		if (b >= width)
			break;
		/* byte b of the value, least significant first */
		new[rel + ((op->flags & XR_OPF_BIG_ENDIAN) ? width - 1 - b : b)] = v >> (8 * b);
	}
}

static __always_inline int apply_op(struct xdp_md *ctx, int i, __u64 pre)
{
	const volatile struct xr_op *op = &cfg.ops[i];
	/* the 16-bit words the field touches: up to 10 bytes for 8 at an odd offset */
	union { __u16 w[6]; __u8 b[12]; } old = {}, new = {};
	__u32 width = op->width, at = op->off & ~1U, rel = op->off & 1U;
	__u32 span = (rel + width + 1) & ~1U, flen = ctx->data_end - ctx->data, load = span;

	if (op->kind != XR_OP_COUNTER || width < 1 || width > 8 || span > 10)
		return -1;
	/* a field ending an odd-length frame: its last word is padded with zero */
	if (at + span > flen)
		load = span - 1;
	if (load < 1 || load > 10 || at + load > flen)
		return -1;
	if (bpf_xdp_load_bytes(ctx, at, &old, load))
		return -1;
	new = old;
	set_field(op, old.b, new.b, rel, pre);
	if (bpf_xdp_store_bytes(ctx, at, &new, load))
		return -1;
	if (op->ip_csum_off && fix_csum(ctx, op->ip_csum_off, old.w, new.w, span / 2, false))
		return -1;
	if (op->l4_csum_off && fix_csum(ctx, op->l4_csum_off, old.w, new.w, span / 2,
					op->l4_proto == IPPROTO_UDP))
		return -1;
	return 0;
}

/*
 * The plan on a single-frame set, without copying the frame: every op writes
 * the words it touches from the template's (op->orig), and the checksums are
 * carried from the template's values through each op and written at the end:
 * absolute values, whatever a recycled page held before.
 */
static __always_inline int apply_ops_nocopy(struct xdp_md *ctx, const struct xr_gen_slot *s, __u64 n)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	/* RFC 1624: HC' = ~(~HC + sum of (~m + m')) over the changed words; folded once at the end */
	__u32 d0 = (__u16)~cfg.nc.csum_orig[0], d1 = (__u16)~cfg.nc.csum_orig[1];
	__u16 *w, c;

	for (int i = 0; i < XR_MAX_OPS; i++) {
		const volatile struct xr_op *op = &cfg.ops[i];
		union { __u16 w[5]; __u8 b[10]; } old = {}, new = {};
		__u32 width = op->width, at = op->off & ~1U, rel = op->off & 1U, len = op->nc_len;
		__u64 base = 0, v;
		__u8 *p = data + at;

		if (i >= cfg.nops)
			break;
		/*
		 * The common case (ports, addresses, IDs: 2 or 4 bytes, big-endian, at
		 * an even offset) in a few instructions: one store, a word or two of
		 * checksum arithmetic.
		 */
		if (!rel && (op->flags & XR_OPF_BIG_ENDIAN) && (width == 2 || width == 4)) {
			union { __u8 b[4]; __u16 w[2]; } o = {
				.b = { op->orig[0], op->orig[1], op->orig[2], op->orig[3] } };
			__u16 o0 = o.w[0], o1 = o.w[1], n0, n1;
			__u32 dd;

			if ((void *)(p + width) > data_end)
				return -1;
			if (op->flags & XR_OPF_RELATIVE)
				base = width == 2 ? bpf_ntohs(o0) : (__u32)bpf_ntohs(o0) << 16 | bpf_ntohs(o1);
			else
				base = op->base;
			v = op_value(op, s, i, n) + base;
			if (width == 2) {
				n0 = bpf_htons(v);
				*(__u16 *)p = n0;
				dd = (__u16)~o0 + n0;
			} else {
				__u32 nv = bpf_htonl(v);

				*(__u32 *)p = nv;
				/* the two words as they lie in memory */
				n0 = ((__u16 *)&nv)[0];
				n1 = ((__u16 *)&nv)[1];
				dd = (__u16)~o0 + n0 + (__u16)~o1 + n1;
			}
			/* the same words change in every checksum that covers them */
			if (op->ip_csum_off)
				d0 += dd;
			if (op->l4_csum_off)
				d1 += dd;
			continue;
		}
		if (width < 1 || width > 8 || len > 10 || (void *)(p + len) > data_end)
			return -1;
		for (int b = 0; b < 10; b++)
			old.b[b] = op->orig[b];
		new = old;
		set_field(op, old.b, new.b, rel, op_value(op, s, i, n));
		for (int b = 0; b < 10; b++) {
			/* the verifier checked p + len against data_end above */
			if (b < len && (void *)(p + b + 1) <= data_end)
				p[b] = new.b[b];
		}
		for (int j = 0; j < 5; j++) {
			if (j * 2 >= (rel + width + 1) / 2 * 2)
				break;
			if (op->ip_csum_off)
				d0 += (__u16)~old.w[j] + new.w[j];
			if (op->l4_csum_off)
				d1 += (__u16)~old.w[j] + new.w[j];
		}
	}
	if (cfg.nc.csum_off[0]) {
		w = data + cfg.nc.csum_off[0];
		if ((void *)(w + 1) > data_end)
			return -1;
		*w = fold_csum(d0);
	}
	/* a UDP checksum of zero means "none": it stays none */
	if (cfg.nc.csum_off[1] && !(cfg.nc.udp && !cfg.nc.csum_orig[1])) {
		w = data + cfg.nc.csum_off[1];
		if ((void *)(w + 1) > data_end)
			return -1;
		c = fold_csum(d1);
		*w = cfg.nc.udp && !c ? 0xffff : c;
	}
	return 0;
}

SEC("xdp")
int xr_gen(struct xdp_md *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct xr_gen_slot *s;
	__u16 gw = 0;
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
	if (cfg.pace != XR_PACE_NONE && bpf_ktime_get_ns() < due_ns(s, k))
		return XDP_DROP;
	s->k_next = k + 1;

	n = cfg.first_n + k * cfg.nthreads + s->thread;
	if (cfg.copy && build_frame(ctx, n))
		goto bad;
	if (!cfg.copy && cfg.nops && apply_ops_nocopy(ctx, s, n))
		goto bad;
	for (int i = 0; i < XR_MAX_OPS; i++) {
		if (i >= cfg.nops || !cfg.copy)
			break;
		if (apply_op(ctx, i, op_value(&cfg.ops[i], s, i, n)))
			goto bad;
	}
	if (cfg.lora.on && lora_rewrite(ctx, s, n, &gw))
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
			t->gw = gw;
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

/* Bucket of a round trip: exact below 16 ns, then 16 per octave. */
static __always_inline __u32 rtt_bucket(__u64 v)
{
	__u32 e = 0;
	__u64 x = v;

	if (v < 16)
		return v;
	/* floor(log2(v)) without a loop: BPF has no count-leading-zeros */
	if (x >> 32) { e += 32; x >>= 32; }
	if (x >> 16) { e += 16; x >>= 16; }
	if (x >> 8) { e += 8; x >>= 8; }
	if (x >> 4) { e += 4; x >>= 4; }
	if (x >> 2) { e += 2; x >>= 2; }
	if (x >> 1) { e += 1; }
	e = (e - 3) * 16 + ((v >> (e - 4)) & 15);
	return e < XR_RTT_BUCKETS ? e : XR_RTT_BUCKETS - 1;
}

/* Counts a round trip that ended now in the current second's histogram. */
static __always_inline void record_rtt(__u64 sent_ns)
{
	__u64 now = bpf_ktime_get_ns(), sec;
	__u64 *bin;
	__u32 hk;

	sec = now > replies_origin_ns ? (now - replies_origin_ns) / 1000000000ULL : 0;
	hk = (sec % XR_RTT_SECS) * XR_RTT_BUCKETS + rtt_bucket(now - sent_ns);
	bin = bpf_map_lookup_elem(&rtt_hist, &hk);
	if (bin)
		(*bin)++;
}

/*
 * PUSH_ACKs (02, token, 01) from the server to our port: matched to n by
 * the token (n's low 16 bits; send_ts holds the last 65,536 sequence
 * numbers) and counted per gateway; dropped, as nothing listens on the port.
 */
static __always_inline int lora_replies(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct xr_replies_stats *st;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	struct udphdr *uh = (void *)(iph + 1);
	__u8 *p = (void *)(uh + 1);
	struct xr_send_ts *t;
	__u32 key = 0, tok;
	__u64 *acks;

	if ((void *)(p + 4) > data_end || ((struct ethhdr *)data)->h_proto != bpf_htons(ETH_P_IP) ||
	    iph->protocol != IPPROTO_UDP || iph->ihl != 5 || iph->saddr != cfg.rpl.server_addr ||
	    uh->source != cfg.rpl.server_port || bpf_ntohs(uh->dest) != cfg.rpl.sport_base)
		return XDP_PASS;
	st = bpf_map_lookup_elem(&replies_stats, &key);
	if (!st)
		return XDP_DROP;
	if (bpf_ntohs(uh->len) != 12 || p[0] != 2 || p[3] != 1) {
		st->unmatched++;
		return XDP_DROP;
	}
	tok = p[1] | (__u32)p[2] << 8;
	t = bpf_map_lookup_elem(&send_ts, &tok);
	if (!t || !t->ts_ns || (t->n32 & 0xffff) != tok) {
		st->unmatched++;
	} else if (t->answered) {
		st->push_ack_dups++;
	} else {
		__u32 gw = t->gw;

		t->answered = 1;
		st->push_acks++;
		record_rtt(t->ts_ns);
		acks = bpf_map_lookup_elem(&lora_gw_acks, &gw);
		if (acks)
			__sync_fetch_and_add(acks, 1);
	}
	return XDP_DROP;
}

/*
 * Turns the TCP segment in place into a bare reply (20-byte header, no data)
 * with the given flags, seq and ack, addressed back to its sender.
 */
static __always_inline int make_reply(struct xdp_md *ctx, __u8 flags, __u32 seq, __u32 ack)
{
	void *data, *data_end;
	struct ethhdr *eth;
	struct iphdr *iph;
	struct tcphdr *th;
	__u8 mac[ETH_ALEN];
	__u32 sum = 0, a;
	__u16 p, *w;
	int len;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	len = data_end - data;
	if (len < 54 || bpf_xdp_adjust_tail(ctx, 54 - len))
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	iph = (void *)(eth + 1);
	th = (void *)(iph + 1);
	if ((void *)(th + 1) > data_end)
		return -1;
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	a = iph->saddr;
	iph->saddr = iph->daddr;
	iph->daddr = a;
	iph->ihl = 5;
	iph->tot_len = bpf_htons(40);
	iph->ttl = 64;
	iph->check = 0;
	w = (__u16 *)iph;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	iph->check = fold_csum(sum);
	p = th->source;
	th->source = th->dest;
	th->dest = p;
	th->seq = bpf_htonl(seq);
	th->ack_seq = bpf_htonl(ack);
	((__u8 *)th)[12] = 5 << 4;
	((__u8 *)th)[13] = flags;
	th->window = bpf_htons(flags & 0x04 ? 0 : 64240);
	th->check = 0;
	th->urg_ptr = 0;
	/* pseudo-header, then the 20-byte header */
	sum = (iph->saddr & 0xffff) + (iph->saddr >> 16) + (iph->daddr & 0xffff) + (iph->daddr >> 16) +
	      bpf_htons(IPPROTO_TCP) + bpf_htons(20);
	w = (__u16 *)th;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	th->check = fold_csum(sum);
	return 0;
}

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

/*
 * On the sender's interface: counts the server's answers to our SYNs and
 * drops them, so that our own kernel never answers a SYN-ACK with a RST (which
 * would empty the server's SYN queue). With --complete it answers a SYN-ACK
 * with the handshake's ACK and the server's FIN with a RST, statelessly.
 */
SEC("xdp")
int xr_replies(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct xr_replies_stats *st;
	struct ethhdr *eth = data;
	struct iphdr *iph;
	struct tcphdr *th;
	__u32 key = 0, daddr, flags, n32, seq, ack;
	struct xr_send_ts *t;
	__u16 dport;
	bool ours, first;

	if (cfg.lora.on)
		return lora_replies(ctx);
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    iph->protocol != IPPROTO_TCP || iph->ihl != 5)
		return XDP_PASS;
	th = (void *)(iph + 1);
	if ((void *)(th + 1) > data_end)
		return XDP_PASS;
	if (iph->saddr != cfg.rpl.server_addr || th->source != cfg.rpl.server_port)
		return XDP_PASS;
	daddr = bpf_ntohl(iph->daddr);
	dport = bpf_ntohs(th->dest);
	if (daddr - cfg.rpl.src_base >= cfg.rpl.src_count ||
	    (__u32)(dport - cfg.rpl.sport_base) >= cfg.rpl.sport_count)
		return XDP_PASS;
	st = bpf_map_lookup_elem(&replies_stats, &key);
	if (!st)
		return XDP_DROP;
	flags = ((__u8 *)th)[13];
	seq = bpf_ntohl(th->seq);
	ack = bpf_ntohl(th->ack_seq);
	/* both a SYN-ACK and a FIN acknowledge our ISN + 1 (we send no data): n comes back from it */
	n32 = (ack - 1 - cfg.rpl.isn_base) * cfg.rpl.isn_inv;
	t = bpf_map_lookup_elem(&send_ts, &(__u32){ n32 & (XR_TS_RING - 1) });
	ours = t && t->n32 == n32 && t->ts_ns;
	if ((flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK)) {
		if (!ours) {
			/* an earlier run's, or nobody's: never completed or counted as ours */
			st->unmatched++;
			if (cfg.rpl.complete && !make_reply(ctx, TCP_RST, ack, 0))
				return XDP_TX;
			return XDP_DROP;
		}
		first = !(t->answered & XR_ANSWERED_SYNACK);
		if (first) {
			t->answered |= XR_ANSWERED_SYNACK;
			st->syn_acks++;
			record_rtt(t->ts_ns);
		} else {
			/* the server did not get our ACK (or we sent none): it asks again */
			st->retransmits++;
		}
		if (cfg.rpl.complete && !make_reply(ctx, TCP_ACK, ack, seq + 1)) {
			/* a handshake completes once, however often the server asked */
			if (first)
				st->acks_sent++;
			return XDP_TX;
		}
		return XDP_DROP;
	}
	if (flags & TCP_RST) {
		st->rsts++;
		return XDP_DROP;
	}
	if ((flags & TCP_FIN) && cfg.rpl.complete) {
		/* the server closed: we never keep state, so a RST ends it */
		if (!make_reply(ctx, TCP_RST, ack, 0)) {
			/* a connection closes once, however often its FIN comes */
			if (!ours)
				st->unmatched++;
			else if (!(t->answered & XR_ANSWERED_FIN))
				st->fins++;
			if (ours)
				t->answered |= XR_ANSWERED_FIN;
			return XDP_TX;
		}
	}
	return XDP_DROP;
}

/* selftest only: AES-128 and AES-CMAC as the LoRaWAN rewrite runs them, on aes_test's inputs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_aes_test);
} aes_test SEC(".maps");

SEC("xdp")
int xr_aes_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_aes_test *t = bpf_map_lookup_elem(&aes_test, &zero);

	if (!t || t->len > 16 + XR_LORA_MAX_PHY)
		return XDP_ABORTED;
	aes_encrypt(t->rk, t->block);
	aes_cmac(t->rk, t->k1, t->cm, t->len, t->mac);
	return XDP_PASS;
}

static __always_inline bool our_dev(const struct net_device *dev)
{
	return BPF_CORE_READ(dev, ifindex) == cfg.ifindex &&
	       BPF_CORE_READ(dev, nd_net.net, ns.inum) == cfg.netns_ino;
}

/* Fires once per bulk flush (up to 16 frames) with what the driver took. */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(xr_xmit, const struct net_device *from_dev,
	     const struct net_device *to_dev, int sent, int drops, int err)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct xr_gen_slot *s;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != owner_tgid || !our_dev(from_dev) || !our_dev(to_dev))
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
int BPF_PROG(xr_redirect_err, const struct net_device *dev,
	     const struct bpf_prog *xdp, const void *tgt, int err)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct xr_gen_slot *s;

	if (BPF_CORE_READ(xdp, aux, id) != gen_prog_id || !our_dev(dev))
		return 0;
	s = bpf_map_lookup_elem(&slots, &cpu);
	if (!s || !s->active)
		return 0;
	s->redirect_err++;
	s->redirect_errno = err;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
