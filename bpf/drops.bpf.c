// SPDX-License-Identifier: GPL-2.0
/*
 * The server's kernel drops by reason: skb:kfree_skb (with its enum
 * skb_drop_reason), for the skbs of the counter's
 * network namespace whose IPv4 headers match its filter, inbound (to the
 * counted address) and outbound (the server's answers). Loaded by
 * xdpreplay count beside its XDP counter; see bpf/shared/drops.h.
 *
 * The other side of the books, from tracepoints alone (this kernel lets no
 * program trace a function: fentry fails with EPERM):
 * - UDP: datagrams the application read (sock:sock_recv_length on a
 *   matching socket: one datagram per recvmsg, also inside recvmmsg), and at
 *   the end what its sockets still hold (iter/udp);
 * - TCP: segments an established socket took (tcp:tcp_probe); outside
 *   ESTABLISHED, the segment being worked on when its socket changes state
 *   (the handshake's ACK, a closing socket's ACK or FIN), is reset by it, or
 *   answers it with a SYN-ACK (a listener); less the ones freed as a drop
 *   after that. A SYN a listener refused is freed as consumed; the kernel's
 *   ListenDrops counter tells those (user side).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "xdpreplay.h"

/* recvmsg flags (include/linux/socket.h), which vmlinux.h does not carry */
#define MSG_PEEK 0x2
#define MSG_ERRQUEUE 0x2000

const volatile struct xr_drops_cfg dcfg = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_drops_stats);
} drop_stats SEC(".maps");

/* Where the unspecific reasons (NOT_SPECIFIED and a subsystem's) were taken, for the report. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DROP_LOCATIONS);
	__type(key, struct xr_drop_loc);
	__type(value, __u64);
} drop_locs SEC(".maps");

/*
 * Inbound TCP skbs counted as taken, by address: a drop of one later is
 * undone from the delivered count. An entry is cleared when its
 * address arrives again as a new skb (net:netif_receive_skb), or pushed out
 * by newer ones.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u32); /* segments */
} tcp_taken SEC(".maps");

/* The peer's end of a matching skb: its address, port (network order) and the IP protocol. */
struct peer {
	__u32 addr;
	__u16 port;
	__u8 proto;
	__u8 pad;
};

/*
 * The inbound TCP segments on their way up, by peer (address and port), until
 * an event takes them. Not one slot per CPU: the stack works on skbs in lists
 * (netif_receive_skb_list), every skb of a list passing the device layer
 * before the first one reaches TCP. A peer's newer segment replaces its older.
 */
struct tcp_pending {
	__u64 skb;
	__u32 segs;
	/* the segment's sequence range and acknowledgment, to tell it inside a coalesced skb */
	__u32 seq, end_seq, ack;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct peer);
	__type(value, struct tcp_pending);
} tcp_pending SEC(".maps");

/* count --seq: the sequence numbers of dropped frames, in buckets, by peer and reason */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_SEQ_DROP_BUCKETS);
	__type(key, struct xr_seq_drop_key);
	__type(value, __u64);
} seq_drops SEC(".maps");

/* count --seq's buckets that found the map full */
__u64 seq_drops_lost;

/* iter/udp's answer: datagrams still in the matching sockets' queues */
__u64 udp_queued;

/* The skb's namespace: its device's, or its socket's once it has left the device. */
/*
 * Struct fields are read directly, not with BPF_CORE_READ: the tracepoints'
 * arguments are BTF pointers, whose loads the verifier turns into fault-safe
 * ones (PROBE_MEM) at the cost of a load, where each bpf_probe_read_kernel is
 * a helper call. Only packet bytes, behind an unsigned char *, take the helper.
 */
static __always_inline __u32 skb_netns(const struct sk_buff *skb, const struct sock *sk)
{
	const struct net_device *dev = skb->dev;

	if (dev)
		return dev->nd_net.net->ns.inum;
	if (!sk)
		sk = skb->sk;
	if (sk)
		return sk->__sk_common.skc_net.net->ns.inum;
	return 0;
}

/*
 * The direction of a matching skb (XR_DROP_IN or XR_DROP_OUT), or -1 when it
 * is not one of the counter's; with peer, the peer's end (ports only for UDP
 * and TCP).
 */
static __always_inline int skb_flow_at(const struct sk_buff *skb, const struct sock *sk,
				       struct peer *peer, __u16 nh)
{
	unsigned char *head = skb->head;
	struct iphdr iph;
	__u16 ports[2];
	__u32 ns;
	int dir;

	if (dcfg.proto == 255) {
		ns = skb_netns(skb, sk);
		return ns == dcfg.netns_ino ? XR_DROP_IN : -1;
	}
	/* the cheap tests first: most skbs a tracepoint sees are not the counter's */
	/* an skb dropped before its network header was set is not one we can tell */
	if (skb->protocol != bpf_htons(0x0800) || nh == (__u16)~0U ||
	    bpf_probe_read_kernel(&iph, sizeof(iph), head + nh) || iph.version != 4)
		return -1;
	if (!dcfg.local_addr || iph.daddr == dcfg.local_addr)
		dir = XR_DROP_IN;
	else if (iph.saddr == dcfg.local_addr)
		dir = XR_DROP_OUT;
	else
		return -1;
	if (dcfg.proto && iph.protocol != dcfg.proto)
		return -1;
	if (dcfg.peer_addr && (dir == XR_DROP_IN ? iph.saddr : iph.daddr) != dcfg.peer_addr)
		return -1;
	ns = skb_netns(skb, sk);
	/*
	 * A UDP datagram read by its socket has neither device nor socket left
	 * (UDP accounts its memory without skb->sk): such an skb counts when its
	 * addresses are the counted interface's, as tested above.
	 */
	if (ns != dcfg.netns_ino && (ns || !dcfg.local_addr))
		return -1;
	if (peer) {
		peer->addr = dir == XR_DROP_IN ? iph.saddr : iph.daddr;
		peer->proto = iph.protocol;
	}
	/* without port filters, a protocol without ports still counts (its peer port 0) */
	if (!dcfg.port && !dcfg.peer_port &&
	    (!peer || (iph.protocol != IPPROTO_UDP && iph.protocol != IPPROTO_TCP)))
		return dir;
	if ((iph.protocol != IPPROTO_UDP && iph.protocol != IPPROTO_TCP) ||
	    bpf_probe_read_kernel(ports, sizeof(ports), head + nh + iph.ihl * 4))
		return -1;
	if (peer)
		peer->port = ports[dir == XR_DROP_IN ? 0 : 1];
	/* inbound: to the server's port from the peer's; outbound: the other way */
	if (dcfg.port && ports[dir == XR_DROP_IN ? 1 : 0] != dcfg.port)
		return -1;
	if (dcfg.peer_port && ports[dir == XR_DROP_IN ? 0 : 1] != dcfg.peer_port)
		return -1;
	return dir;
}

static __always_inline int skb_flow(const struct sk_buff *skb, const struct sock *sk,
				    struct peer *peer)
{
	return skb_flow_at(skb, sk, peer, skb->network_header);
}

/* How many wire frames the skb holds: GRO merges a flow's TCP segments into one. */
static __always_inline __u32 skb_segs(const struct sk_buff *skb)
{
	const struct skb_shared_info *shi = (const void *)(skb->head + skb->end);
	__u16 segs = 0;

	bpf_probe_read_kernel(&segs, sizeof(segs), &shi->gso_segs);
	return segs ? segs : 1;
}

static __always_inline struct xr_drops_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&drop_stats, &zero);
}

/*
 * Per-CPU, yet atomic: these tracepoints also fire in process context with
 * softirqs enabled (a socket's backlog in release_sock, a send, a close), and
 * NET_RX can run the same programs on the same CPU between a load and its
 * store: a plain += would lose that count.
 */
static __always_inline void stat_add(__u64 *counter, __u64 n)
{
	__sync_fetch_and_add(counter, n);
}

/* A socket of the counter's: its namespace, protocol and local address and port; the peer when it has one. */
static __always_inline bool sock_matches(const struct sock *sk, __u8 proto)
{
	__u32 raddr = sk->__sk_common.skc_daddr, laddr = sk->__sk_common.skc_rcv_saddr;
	__u16 rport = sk->__sk_common.skc_dport;

	if (sk->sk_protocol != proto || (dcfg.proto && dcfg.proto != proto) ||
	    sk->__sk_common.skc_net.net->ns.inum != dcfg.netns_ino)
		return false;
	if (dcfg.local_addr && laddr != dcfg.local_addr && laddr != 0)
		return false;
	/*
	 * A socket on its way to CLOSE has given its port back (inet_num 0);
	 * inet_sport keeps it (past struct sock: the verifier lets a helper read it)
	 */
	if (dcfg.port && bpf_htons(sk->__sk_common.skc_num) != dcfg.port &&
	    BPF_CORE_READ((const struct inet_sock *)sk, inet_sport) != dcfg.port)
		return false;
	/* an unconnected socket takes any peer's: the filter's peer cannot be told there */
	if (dcfg.peer_addr && raddr && raddr != dcfg.peer_addr)
		return false;
	if (dcfg.peer_port && rport && rport != dcfg.peer_port)
		return false;
	return true;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(xr_udp_read, struct sock *sk, int ret, int flags)
{
	struct xr_drops_stats *st;

	/* a peek reads the datagram again later; the error queue holds no datagram of the peer's */
	if (ret < 0 || (flags & (MSG_PEEK | MSG_ERRQUEUE)) || !sock_matches(sk, IPPROTO_UDP))
		return 0;
	st = stats();
	if (st)
		stat_add(&st->delivered[XR_DELIVERED_UDP], 1);
	return 0;
}

SEC("iter/udp")
int xr_udp_queue(struct bpf_iter__udp *ctx)
{
	struct udp_sock *up = ctx->udp_sk;
	struct sock *sk = (struct sock *)up;

	if (!up || !sock_matches(sk, IPPROTO_UDP))
		return 0;
	/* udp_recvmsg splices sk_receive_queue into reader_queue: a datagram waits in one of them */
	__sync_fetch_and_add(&udp_queued, sk->sk_receive_queue.qlen + up->reader_queue.qlen);
	return 0;
}

/* Counts a TCP skb as taken, and remembers it: a drop of it later undoes the count. */
static __always_inline void tcp_take(__u64 skb, __u32 segs)
{
	struct xr_drops_stats *st = stats();

	if (!st)
		return;
	stat_add(&st->delivered[XR_DELIVERED_TCP], segs);
	bpf_map_update_elem(&tcp_taken, &skb, &segs, BPF_ANY);
}

/*
 * The event came from the socket's peer's segment on its way up: that segment
 * is taken, once. A second state change for the same segment, or a timer's,
 * finds nothing pending.
 */
static __always_inline void tcp_take_pending(__u32 peer, __u16 peer_port)
{
	struct peer key = { .addr = peer, .port = peer_port, .proto = IPPROTO_TCP };
	struct tcp_pending *c = bpf_map_lookup_elem(&tcp_pending, &key);

	if (!c)
		return;
	tcp_take(c->skb, c->segs);
	bpf_map_delete_elem(&tcp_pending, &key);
}

static __always_inline void tcp_take_current(const struct sock *sk)
{
	tcp_take_pending(sk->__sk_common.skc_daddr, sk->__sk_common.skc_dport);
}

/* The skb (from peer p) is accounted for (taken by its socket, or dropped): no event is its any more. */
static __always_inline void tcp_settled(const struct sk_buff *skb, struct peer *p)
{
	struct tcp_pending *c = bpf_map_lookup_elem(&tcp_pending, p);

	if (c && c->skb == (__u64)skb)
		bpf_map_delete_elem(&tcp_pending, p);
}

/*
 * The segment's sequence range (SYN and FIN count one each) and its
 * acknowledgment, read from its headers at nh (the IP header's).
 */
static __always_inline int tcp_seg_range(const struct sk_buff *skb, __u16 nh, struct tcp_pending *v)
{
	unsigned char *head = skb->head;
	__u8 ip[4], th[10];
	__u32 ihl, len;

	if (bpf_probe_read_kernel(ip, sizeof(ip), head + nh))
		return -1;
	ihl = (ip[0] & 15) * 4;
	/* bytes 4 to 13 of the TCP header: seq, ack_seq, data offset, flags */
	if (bpf_probe_read_kernel(th, sizeof(th), head + nh + ihl + 4))
		return -1;
	len = (__u32)ip[2] << 8 | ip[3];
	len -= ihl + (th[8] >> 4) * 4;
	v->seq = (__u32)th[0] << 24 | (__u32)th[1] << 16 | (__u32)th[2] << 8 | th[3];
	v->ack = (__u32)th[4] << 24 | (__u32)th[5] << 16 | (__u32)th[6] << 8 | th[7];
	v->end_seq = v->seq + len + !!(th[9] & 0x02) + !!(th[9] & 0x01);
	return 0;
}

/* Each inbound skb at the device layer, after GRO. */
SEC("tp_btf/netif_receive_skb")
int BPF_PROG(xr_skb_arrives, struct sk_buff *skb)
{
	struct tcp_pending v = { .skb = (__u64)skb };
	__u16 nh = skb->data - skb->head;
	struct peer p = {};

	/* the tracepoint comes before __netif_receive_skb_core sets the network header: data is there */
	if (skb_flow_at(skb, NULL, &p, nh) != XR_DROP_IN || p.proto != IPPROTO_TCP ||
	    tcp_seg_range(skb, nh, &v))
		return 0;
	/* a new skb at an address a freed one had: what was remembered of that one is stale */
	bpf_map_delete_elem(&tcp_taken, &v.skb);
	v.segs = skb_segs(skb);
	bpf_map_update_elem(&tcp_pending, &p, &v, BPF_ANY);
	return 0;
}

static __always_inline bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/*
 * A segment that arrived while its socket was owned may have been coalesced
 * into the backlog's tail skb (tcp_add_backlog: gso_segs added, the skb freed
 * with no tracepoint). The tail's count covers it, so its pending entry, left
 * behind, must go: a later state change (the server's close from CLOSE_WAIT)
 * would count it again. It is the one whose sequence range lies inside the
 * tail's; an empty one (an ACK, at the tail's end) when its acknowledgment
 * is the one the tail took over.
 */
static __always_inline void tcp_coalesced(const struct sk_buff *skb, struct peer *p)
{
	struct tcp_pending *c = bpf_map_lookup_elem(&tcp_pending, p);
	struct tcp_skb_cb cb;

	if (!c || c->skb == (__u64)skb || bpf_probe_read_kernel(&cb, sizeof(cb), skb->cb))
		return;
	if (seq_before(c->seq, cb.seq) || seq_before(cb.end_seq, c->end_seq))
		return;
	if (c->seq == c->end_seq && c->seq == cb.end_seq && c->ack != cb.ack_seq)
		return;
	bpf_map_delete_elem(&tcp_pending, p);
}

/* Every segment an established socket takes, also from its backlog: by the skb itself. */
SEC("tp_btf/tcp_probe")
int BPF_PROG(xr_tcp_taken, struct sock *sk, const struct sk_buff *skb)
{
	struct peer p = {};

	if (skb_flow(skb, sk, &p) != XR_DROP_IN)
		return 0;
	tcp_settled(skb, &p);
	tcp_coalesced(skb, &p);
	tcp_take((__u64)skb, skb_segs(skb));
	return 0;
}

/*
 * Outside ESTABLISHED a segment is seen by what it does: the handshake's ACK
 * (SYN_RECV -> ESTABLISHED), an ACK or FIN of a closing socket (FIN_WAIT1,
 * FIN_WAIT2, CLOSING, LAST_ACK onwards), a RST (tcp_receive_reset).
 * ESTABLISHED's own changes (a FIN, a RST) were counted by tcp_probe, which
 * settled the segment.
 */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(xr_tcp_state, const struct sock *sk, const int oldstate, const int newstate)
{
	if (oldstate == TCP_ESTABLISHED || oldstate == TCP_LISTEN || oldstate == TCP_CLOSE ||
	    !sock_matches(sk, IPPROTO_TCP))
		return 0;
	tcp_take_current(sk);
	return 0;
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(xr_tcp_reset, struct sock *sk)
{
	if (sock_matches(sk, IPPROTO_TCP))
		tcp_take_current(sk);
	return 0;
}

/*
 * A segment freed as consumed while still pending was taken by the stack
 * without any of the events above: a TIME_WAIT socket's (a repeated FIN,
 * answered with an ACK) and the like. A SYN is not: one consumed unanswered
 * is a listener's refusal, counted from ListenDrops.
 *
 * The pending skb may have been freed without a tracepoint (coalesced into
 * the backlog's tail, which counts it) and its address taken by the flow's
 * next frame, which veth consumes when it copies it for XDP
 * (skb_pp_cow_data), before the stack sees it: that one is not the pending
 * segment, as its sequence range or acknowledgment tells.
 */
SEC("tp_btf/consume_skb")
int BPF_PROG(xr_tcp_consumed, struct sk_buff *skb, void *location)
{
	unsigned char *head = skb->head;
	__u16 nh = skb->network_header;
	struct tcp_pending *c, seg;
	struct peer p = {};
	__u8 ihl, flags;

	if (skb_flow(skb, NULL, &p) != XR_DROP_IN || p.proto != IPPROTO_TCP)
		return 0;
	c = bpf_map_lookup_elem(&tcp_pending, &p);
	if (!c || c->skb != (__u64)skb || tcp_seg_range(skb, nh, &seg) || seg.seq != c->seq ||
	    seg.end_seq != c->end_seq || seg.ack != c->ack)
		return 0;
	if (bpf_probe_read_kernel(&ihl, 1, head + nh) ||
	    bpf_probe_read_kernel(&flags, 1, head + nh + (ihl & 15) * 4 + 13) || (flags & 0x02))
		return 0;
	tcp_take(c->skb, c->segs);
	bpf_map_delete_elem(&tcp_pending, &p);
	return 0;
}

/*
 * A SYN a listener answered: its SYN-ACK leaves while the SYN is pending. A
 * retransmission (a timer's) finds nothing pending.
 */
SEC("tp_btf/net_dev_queue")
int BPF_PROG(xr_out, struct sk_buff *skb)
{
	unsigned char *head = skb->head;
	__u16 nh = skb->network_header;
	struct peer p = {};
	__u8 ihl, flags;

	if (skb_flow(skb, NULL, &p) != XR_DROP_OUT || p.proto != IPPROTO_TCP)
		return 0;
	/* byte 13 of the TCP header: the flags; SYN and ACK, without RST or FIN */
	if (bpf_probe_read_kernel(&ihl, 1, head + nh) ||
	    bpf_probe_read_kernel(&flags, 1, head + nh + (ihl & 15) * 4 + 13) ||
	    (flags & 0x17) != 0x12)
		return 0;
	tcp_take_pending(p.addr, p.port);
	return 0;
}

/*
 * The sequence field count's --seq names, read from the dropped skb's linear
 * part (what lies in pages past it is not read: such a frame has no number).
 */
static __always_inline bool skb_seq(const struct sk_buff *skb, __u64 *seq)
{
	unsigned char *head = skb->head;
	__u32 at = skb->network_header, tail = skb->tail;
	__u8 b[8] = {}, doff;
	struct iphdr iph;

	if (bpf_probe_read_kernel(&iph, sizeof(iph), head + at))
		return false;
	if (dcfg.seq_kind == XR_SEQ_IP_ID) {
		*seq = bpf_ntohs(iph.id);
		return true;
	}
	at += iph.ihl * 4;
	if (iph.protocol == IPPROTO_UDP) {
		at += 8;
	} else if (iph.protocol == IPPROTO_TCP) {
		if (bpf_probe_read_kernel(&doff, 1, head + at + 12))
			return false;
		at += (doff >> 4) * 4;
	} else {
		return false;
	}
	at += dcfg.seq_off;
	if (at + dcfg.seq_width > tail || bpf_probe_read_kernel(b, dcfg.seq_width & 15, head + at))
		return false;
	*seq = 0;
	/* big-endian, 2, 4 or 8 bytes: a bounded loop the verifier unrolls */
	for (int i = 0; i < 8; i++)
		if (i < dcfg.seq_width)
			*seq = *seq << 8 | b[i];
	return true;
}

static __always_inline void seq_drop(const struct sk_buff *skb, const struct peer *p, __u32 reason,
				     __u32 segs)
{
	struct xr_seq_drop_key key = { .reason = reason };
	__u64 seq, n = segs, *v;

	if (!skb_seq(skb, &seq))
		return;
	key.peer = p->addr;
	key.peer_port = p->port;
	key.proto = p->proto;
	key.bucket = seq / (dcfg.seq_bucket ? dcfg.seq_bucket : 1);
	v = bpf_map_lookup_elem(&seq_drops, &key);
	if (v)
		__sync_fetch_and_add(v, n);
	else if (bpf_map_update_elem(&seq_drops, &key, &n, BPF_NOEXIST))
		__sync_fetch_and_add(&seq_drops_lost, n);
}

static __always_inline int kfree_skb_count(struct sk_buff *skb, void *location,
					   enum skb_drop_reason reason, struct sock *rx_sk)
{
	struct xr_drops_stats *st;
	struct peer p = {};
	__u32 r = reason, segs;
	/* the peer only when something needs it: reading the ports is a helper call */
	int dir = skb_flow(skb, rx_sk, dcfg.books_tcp || dcfg.seq_kind ? &p : NULL);

	if (dir < 0)
		return 0;
	st = stats();
	if (!st)
		return 0;
	if (dir == XR_DROP_IN && (__u64)location >= dcfg.pre_xdp_lo &&
	    (__u64)location < dcfg.pre_xdp_hi) {
		/* never passed to the stack: the interface's own drop counters have it */
		stat_add(&st->pre_xdp, skb_segs(skb));
		return 0;
	}
	if (dir == XR_DROP_IN && dcfg.books_tcp && p.proto == IPPROTO_TCP) {
		__u64 key = (__u64)skb;
		__u32 *taken = bpf_map_lookup_elem(&tcp_taken, &key);

		/* taken by its socket, then dropped: a drop, not a delivery */
		if (taken) {
			stat_add(&st->delivered[XR_DELIVERED_TCP], -(__u64)*taken);
			bpf_map_delete_elem(&tcp_taken, &key);
		}
		/* and a dropped segment is not the one a later state change is about */
		tcp_settled(skb, &p);
	}
	segs = skb_segs(skb);
	if (dir == XR_DROP_IN && (__u64)location >= dcfg.cookie_lo &&
	    (__u64)location < dcfg.cookie_hi)
		stat_add(&st->cookie_drops, segs);
	if (r >= XR_DROP_REASONS)
		r = XR_DROP_SUBSYS;
	/* clang drops the mask as redundant after the clamp; the verifier needs it on the index register */
	barrier_var(r);
	r &= XR_DROP_REASONS - 1;
	stat_add(&st->dropped[dir & 1][r], segs);
	if (dcfg.seq_kind && dir == XR_DROP_IN)
		seq_drop(skb, &p, reason, segs);
	if (r == XR_DROP_NOT_SPECIFIED || r == XR_DROP_SUBSYS) {
		struct xr_drop_loc key = { .location = (__u64)location,
					   .reason = reason,
					   .dir = dir };
		__u64 n = segs, *v = bpf_map_lookup_elem(&drop_locs, &key);

		if (v)
			__sync_fetch_and_add(v, n);
		else
			bpf_map_update_elem(&drop_locs, &key, &n, BPF_NOEXIST);
	}
	return 0;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(xr_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason,
	     struct sock *rx_sk)
{
	return kfree_skb_count(skb, location, reason, rx_sk);
}

/*
 * The tracepoint before it gained rx_sk (6.1 has three arguments): a program
 * reading a fourth is refused there, so drops.c loads this one instead, as
 * the kernel's BTF (btf_trace_kfree_skb) says.
 */
SEC("?tp_btf/kfree_skb")
int BPF_PROG(xr_kfree_skb_no_sk, struct sk_buff *skb, void *location, enum skb_drop_reason reason)
{
	return kfree_skb_count(skb, location, reason, NULL);
}

char LICENSE[] SEC("license") = "GPL";
