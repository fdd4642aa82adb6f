// SPDX-License-Identifier: GPL-2.0
/*
 * Server-side counter. Attached to the server's interface; counts every frame
 * and the frames that match a filter (protocol, addresses, ports), per CPU,
 * and passes them on to the stack (or drops them with --drop, as a sink).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdpreplay.h"
#include "lib/csum.bpf.h"
#include "lib/parse.bpf.h"
#include "lib/tcp.bpf.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8

const volatile struct xr_count_cfg cfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_count_stats);
} count_stats SEC(".maps");

/* Frames matched in each second after the first matched frame (per CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_SERIES_MAX);
	__type(key, __u32);
	__type(value, __u64);
} series SEC(".maps");

/* Arrival of the first matched frame on any CPU: the origin of the series. */
__u64 series_origin_ns = 0;

/* --respond: what the stateless server answered (per CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_respond_stats);
} respond_stats SEC(".maps");

/* --respond: the answer to a request (resp_len bytes), and 64 bytes of checksum scratch. */
struct respond_buf {
	__u8 body[2048];
	__u8 tail[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct respond_buf);
} respond_body SEC(".maps");

/* Per-flow sequence state; shared by CPUs, so each update holds the entry's lock. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_MAX_FLOWS);
	__type(key, struct xr_flow_key);
	__type(value, struct xr_flow_state);
} flows SEC(".maps");

/* Frames whose flow did not fit in the table, or too short to hold the field. */
__u64 seq_untracked = 0;

struct l4ports {
	__u16 sport;
	__u16 dport;
};

struct parsed {
	struct iphdr *iph; /* NULL unless IPv4 */
	void *l4h;
	__u8 l4;
};

/* Returns true when the frame passes the filter of cfg; fills p for IPv4. */
static __always_inline bool match(void *data, void *data_end, struct parsed *p)
{
	struct ethhdr *eth = data;
	struct l4ports *ports;
	__u16 proto;
	__u8 l4;
	void *l4h;

	if (cfg.proto == XR_PROTO_ANY_FRAME)
		return true;
	if ((void *)(eth + 1) > data_end)
		return false;
	proto = eth->h_proto;
	l4h = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_hdr *vh = l4h;

		if ((void *)(vh + 1) > data_end)
			return false;
		proto = vh->h_vlan_encapsulated_proto;
		l4h = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = l4h;

		if ((void *)(iph + 1) > data_end || iph->ihl < 5)
			return false;
		if (cfg.daddr && iph->daddr != cfg.daddr)
			return false;
		if (cfg.saddr && iph->saddr != cfg.saddr)
			return false;
		l4 = iph->protocol;
		l4h = (void *)iph + iph->ihl * 4;
		p->iph = iph;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = l4h;

		/* an IPv4 address filter never matches IPv6 */
		if ((void *)(ip6h + 1) > data_end || cfg.daddr || cfg.saddr)
			return false;
		l4 = ip6h->nexthdr;
		l4h = ip6h + 1;
	} else {
		return false;
	}
	p->l4h = l4h;
	p->l4 = l4;
	if (cfg.proto && l4 != cfg.proto)
		return false;
	if (!cfg.sport && !cfg.dport)
		return true;
	if (l4 != IPPROTO_UDP && l4 != IPPROTO_TCP)
		return false;
	ports = l4h;
	if ((void *)(ports + 1) > data_end)
		return false;
	if (cfg.dport && ports->dport != cfg.dport)
		return false;
	if (cfg.sport && ports->sport != cfg.sport)
		return false;
	return true;
}

/* Reads the sequence field of a matched IPv4 frame; false when it has none. */
static __always_inline bool read_seq(const struct parsed *p, void *data_end, __u64 *seq)
{
	void *at;

	if (cfg.seq_kind == XR_SEQ_IP_ID) {
		*seq = bpf_ntohs(p->iph->id);
		return true;
	}
	if (p->l4 == IPPROTO_UDP) {
		at = p->l4h + sizeof(struct udphdr);
	} else if (p->l4 == IPPROTO_TCP) {
		struct tcphdr *th = p->l4h;

		if ((void *)(th + 1) > data_end)
			return false;
		at = p->l4h + th->doff * 4;
	} else {
		return false;
	}
	at += cfg.seq_off;
	if (cfg.seq_width == 2) {
		if (at + 2 > data_end)
			return false;
		*seq = bpf_ntohs(*(__u16 *)at);
	} else if (cfg.seq_width == 4) {
		if (at + 4 > data_end)
			return false;
		*seq = bpf_ntohl(*(__u32 *)at);
	} else {
		if (at + 8 > data_end)
			return false;
		*seq = bpf_be64_to_cpu(*(__u64 *)at);
	}
	return true;
}

/*
 * One frame of a flow with sequence number seq (seq_width bytes, wrapping):
 * in order, ahead (a gap: lost), behind within the window (late: fills a
 * gap, or a duplicate), or behind beyond it (late, cannot tell).
 */
static __always_inline void track(struct xr_flow_state *f, __u64 seq)
{
	__u64 mask = cfg.seq_width == 8 ? ~0ULL : (1ULL << (cfg.seq_width * 8)) - 1;
	__u64 half = mask / 2 + 1, diff, back, gap;

	bpf_spin_lock(&f->lock);
	if (!f->started) {
		f->started = 1;
		f->next = seq + 1;
		f->window = 1;
		f->received = 1;
		goto out;
	}
	diff = (seq - f->next) & mask;
	if (diff < half) {
		/* at or ahead of the expected one: diff frames never came (yet) */
		gap = diff;
		f->lost += gap;
		f->window = gap + 1 >= XR_SEQ_WINDOW ? 1 : (f->window << (gap + 1)) | 1;
		f->next += gap + 1;
		f->received++;
		goto out;
	}
	back = (f->next & mask) - 1 - seq;
	back &= mask;
	if (back < XR_SEQ_WINDOW) {
		if (f->window & (1ULL << back)) {
			f->dup++;
		} else {
			f->window |= 1ULL << back;
			f->reordered++;
			f->received++;
			if (f->lost)
				f->lost--;
		}
	} else {
		f->too_late++;
		f->reordered++;
		f->received++;
		if (f->lost)
			f->lost--;
	}
out:
	bpf_spin_unlock(&f->lock);
}

static __always_inline void seq_frame(const struct parsed *p, void *data_end)
{
	struct xr_flow_state *f, zero = {};
	struct xr_flow_key key = {};
	struct l4ports *ports;
	__u64 seq;

	if (!p->iph || !read_seq(p, data_end, &seq)) {
		__sync_fetch_and_add(&seq_untracked, 1);
		return;
	}
	key.saddr = p->iph->saddr;
	key.daddr = p->iph->daddr;
	key.proto = p->l4;
	ports = p->l4h;
	if ((p->l4 == IPPROTO_UDP || p->l4 == IPPROTO_TCP) && (void *)(ports + 1) <= data_end) {
		key.sport = ports->sport;
		key.dport = ports->dport;
	}
	f = bpf_map_lookup_elem(&flows, &key);
	if (!f) {
		bpf_map_update_elem(&flows, &key, &zero, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&flows, &key);
		if (!f) {
			__sync_fetch_and_add(&seq_untracked, 1);
			return;
		}
	}
	track(f, seq);
}

/*
 * --respond: answers a matched TCP segment in place (bpf/shared/count.h).
 * Each answer follows from the segment alone: a SYN-ACK's ISN is a hash
 * of the client's address, port and ISN, and every later segment of ours
 * takes the sequence number the client acknowledges.
 */
static __always_inline int respond(struct xdp_md *ctx, const struct parsed *p, void *data_end)
{
	struct xr_respond_stats *rs;
	struct respond_buf *rb;
	struct tcphdr *th = p->l4h;
	__u32 key = 0, seq, ack, plen, isn;
	__u8 flags;

	rs = bpf_map_lookup_elem(&respond_stats, &key);
	rb = bpf_map_lookup_elem(&respond_body, &key);
	if (!rs || !rb)
		return XDP_DROP;
	if (!p->iph || p->l4 != IPPROTO_TCP || p->iph->ihl != 5 || (void *)(th + 1) > data_end) {
		rs->not_tcp++;
		return XDP_DROP;
	}
	flags = ((__u8 *)th)[13];
	seq = bpf_ntohl(th->seq);
	ack = bpf_ntohl(th->ack_seq);
	plen = bpf_ntohs(p->iph->tot_len) - 20 - th->doff * 4;
	if (bpf_ntohs(p->iph->tot_len) < 20 + th->doff * 4)
		plen = 0;
	if (flags & TCP_RST) {
		rs->absorbed++;
		return XDP_DROP;
	}
	if ((flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
		isn = (p->iph->saddr ^ ((__u32)th->source << 16) ^ seq) * 2654435761u;
		if (tcp_reply(ctx, false, TCP_SYN | TCP_ACK, isn, seq + 1))
			goto no_room;
		rs->syn_acks++;
		return XDP_TX;
	}
	if (flags & TCP_FIN) {
		/* after --respond-close's FIN, the client's is only acknowledged */
		if (tcp_reply(ctx, false,
			      cfg.respond == XR_RESPOND_CLOSE ? TCP_ACK : TCP_FIN | TCP_ACK, ack,
			      seq + plen + 1))
			goto no_room;
		rs->fin_acks++;
		return XDP_TX;
	}
	if (!plen) {
		rs->absorbed++;
		return XDP_DROP;
	}
	if (!(flags & TCP_PSH)) {
		if (tcp_reply(ctx, false, TCP_ACK, ack, seq + plen))
			goto no_room;
		rs->data_acks++;
		return XDP_TX;
	}
	if (tcp_reply_data(ctx, false,
			   cfg.respond == XR_RESPOND_CLOSE ? TCP_FIN | TCP_ACK | TCP_PSH :
							     TCP_ACK | TCP_PSH,
			   ack, seq + plen, rb->body,
			   cfg.resp_len > XR_RESPOND_MAX ? XR_RESPOND_MAX : cfg.resp_len, rb->tail))
		goto no_room;
	rs->responses++;
	return XDP_TX;
no_room:
	rs->no_room++;
	return XDP_DROP;
}

/* The frame at now in its second of the series, this CPU's bin. */
static __always_inline void count_series(struct xr_count_stats *st, __u64 now)
{
	__u64 *bin;

	/*
	 * A plain store, not a compare-and-swap: kernels before 5.12 refuse the
	 * whole program for one atomic exchange. CPUs whose first frames race
	 * here differ by the time between those frames, and only in where a
	 * second's boundary falls; every frame is still counted once.
	 */
	if (!series_origin_ns)
		series_origin_ns = now;
	if (now < series_origin_ns)
		return;
	/* a division per frame costs more than the comparison that spares it */
	if (now >= st->bin_end_ns) {
		st->bin_sec = (now - series_origin_ns) / 1000000000ULL;
		st->bin_end_ns = series_origin_ns + (st->bin_sec + 1) * 1000000000ULL;
	}
	bin = bpf_map_lookup_elem(&series, &st->bin_sec);
	if (bin)
		(*bin)++;
}

SEC("xdp")
int xr_count(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct parsed p = {};
	struct xr_count_stats *st;
	__u32 key = 0;
	__u64 now;

	st = bpf_map_lookup_elem(&count_stats, &key);
	if (!st)
		return XDP_PASS;
	st->seen++;
	if (!match(data, data_end, &p))
		return XDP_PASS;
	if (cfg.seq_kind)
		seq_frame(&p, data_end);
	/*
	 * Every frame reads the clock (~19 ns here). One reading shared among
	 * the frames of a fast stream was tried: with nothing cheap to tell a
	 * gap within a tick, a paced sender's next burst took the last burst's
	 * reading, and a 10 kpps run's rate read 0.0146% high.
	 */
	now = bpf_ktime_get_ns();
	if (!st->first_ns)
		st->first_ns = now;
	count_series(st, now);
	st->last_ns = now;
	st->matched++;
	st->matched_bytes += data_end - data;
	if (cfg.respond) {
		/* the stack never sees them: dropped as far as its books go */
		st->dropped++;
		return respond(ctx, &p, data_end);
	}
	if (cfg.drop) {
		st->dropped++;
		return XDP_DROP;
	}
	st->passed++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
