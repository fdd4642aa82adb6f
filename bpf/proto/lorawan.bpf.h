/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN 1.0.x data uplinks inside Semtech UDP PUSH_DATA, rewritten per
 * packet by the kernel engine (included by bpf/proto/registry.bpf.h; layout
 * and numbering in bpf/shared/lorawan.h, struct xr_lora_dev).
 *
 * For uplink u of device d in round r (FCnt = fcnt0 + r, 32 bits in the
 * crypto, 16 on air), in the order LoRaWAN 1.0.3 §4.3.3 and §4.4 give:
 * FRMPayload = plaintext xor AES(key, A_i), then MIC = AES-CMAC(NwkSKey,
 * B0 | msg)[0..3] over the ciphertext. The PHYPayload's base64 from byte 6
 * (the first 3-byte group holding FCnt) to the end is re-encoded. The copies
 * of an uplink heard by several gateways are identical apart from the token
 * and the gateway EUI, so the per-CPU scratch keeps the last uplink's result
 * for them.
 *
 * The UDP checksum is csum_rest (bpf/shared/lorawan.h) plus the sums of the
 * bytes written, never a pass over the datagram: that pass (five
 * bpf_csum_diff calls and a tail copy for a ~300-byte PUSH_DATA) was the
 * largest cost of a precomputed uplink over the static frame.
 *
 * AES-128 is the T-table form (FIPS-197 §5.2 rounds merged into four table
 * lookups per column, as rijndael-alg-fst.c does); the round keys and CMAC
 * subkeys are computed once per device in userspace.
 */
#ifndef __XR_PROTO_LORAWAN_BPF_H
#define __XR_PROTO_LORAWAN_BPF_H

#include "lib/aes.bpf.h"

_Static_assert(sizeof(((struct xr_lora_scratch *)0)->cm) <= XR_CMAC_MAX_BYTES,
	       "CMAC input longer than aes_cmac reads");

/* Set by userspace before load (user/proto/lorawan/): the fleet's shape and the ring. */
const volatile struct xr_lora_cfg lora_cfg = {};

static const signed char mac_down_len[32] = XR_LORA_MAC_DOWN_LENS;

/*
 * A downlink command's payload bytes, -1 for an unknown CID. The barrier
 * keeps the mask: without it clang folds it into the test, into a form
 * whose bound the verifier does not see.
 */
static __always_inline int lora_mac_down_len(__u32 cid)
{
	if (cid > XR_LORA_CID_DOWN_MAX)
		return -1;
	barrier_var(cid);
	return mac_down_len[cid & 31];
}

static const char b64_alphabet[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_scratch);
} lora_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dl_scratch);
} lora_dl_scratch SEC(".maps");

/* One per device; sized and filled by userspace before the run. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dev);
} lora_devs SEC(".maps");

/* LoRaWAN 1.1 sessions' second key, per device (struct xr_lora_dev11); sized with lora_cfg.v11. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dev11);
} lora_devs11 SEC(".maps");

/* The gateways (EUI, address); sized and filled by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_gw);
} lora_gws SEC(".maps");

/* Uplinks precomputed by userspace; sized by userspace (struct xr_lora_ring_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_ring_slot);
} lora_ring SEC(".maps");

/* Answers per gateway (lora_reply). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_gw_ctr);
} lora_gw_ctr SEC(".maps");

/* Confirmed uplinks and their ACKs per device (struct xr_lora_confirmed); sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_confirmed);
} lora_confirmed SEC(".maps");

/* DevAddr (as a number) of each confirmed device to its index; sized and filled by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lora_devaddr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_LORA_DL_CTRS);
	__type(key, __u32);
	__type(value, __u64);
} lora_dl_ctr SEC(".maps");

/* Confirmed uplink to its ACK downlink, per second, as rtt_hist. */
XR_HIST_MAP(lora_ack_hist);

/* An uplink that asked for MAC answers to the downlink that answered it, per second, as rtt_hist. */
XR_HIST_MAP(lora_mac_hist);

/* Join storms: each device's last JoinRequest (struct xr_lora_join); sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_join);
} lora_join SEC(".maps");

/*
 * Stat messages in flight: their token to the gateway that sent them (plus
 * 1), put here by userspace before each is sent. A stat's PUSH_ACK echoes a
 * 16-bit token as an uplink's does: the sender picks one half the token space
 * away from the uplinks in flight, and the entry is taken by the first
 * PUSH_ACK with that token that reaches the gateway's address.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries,
	       1); /* XR_LORA_STAT_TOKENS with lora_cfg.stat (a hash map is preallocated) */
	__type(key, __u32);
	__type(value, __u32);
} lora_stat_tok SEC(".maps");

/* JoinAccepts to userspace (struct xr_lora_join_accept); sized by userspace for a join storm. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} lora_join_accepts SEC(".maps");

/* The MIC's block B0 (LoRaWAN 1.0.3 §4.4): direction (0 up, 1 down), DevAddr as on air, FCnt, length. */
static __always_inline void lora_b0(__u8 *b0, __u8 dir, const __u8 *devaddr, __u32 fcnt, __u32 msg)
{
	b0[0] = 0x49;
	b0[1] = b0[2] = b0[3] = b0[4] = 0;
	b0[5] = dir;
	b0[6] = devaddr[0];
	b0[7] = devaddr[1];
	b0[8] = devaddr[2];
	b0[9] = devaddr[3];
	b0[10] = fcnt;
	b0[11] = fcnt >> 8;
	b0[12] = fcnt >> 16;
	b0[13] = fcnt >> 24;
	b0[14] = 0;
	b0[15] = msg;
}

/* FRMPayload of sc->phy xor the key stream of A_1..A_k (LoRaWAN 1.0.3 §4.3.3), uplink. */
static __noinline int lora_encrypt(const struct xr_lora_dev *dev, struct xr_lora_scratch *sc,
				   __u32 fcnt)
{
	__u8 *a = (__u8 *)sc->a;
	__u32 n = dev->frm_len, off = dev->frm_off;

	for (int i = 0; i < XR_LORA_MAX_FRM / 16; i++) {
		if (i * 16 >= n)
			break;
		sc->a[0] = bpf_htonl(0x01000000);
		sc->a[1] = 0; /* a[5] = Dir: 0 for an uplink */
		a[6] = dev->phy[1];
		a[7] = dev->phy[2];
		a[8] = dev->phy[3];
		a[9] = dev->phy[4];
		a[10] = fcnt;
		a[11] = fcnt >> 8;
		a[12] = fcnt >> 16;
		a[13] = fcnt >> 24;
		a[14] = 0;
		a[15] = i + 1;
		aes_encrypt(dev->enc_rk, sc->a);
		for (int j = 0; j < 16; j++) {
			__u32 p = off + i * 16 + j;

			if (i * 16 + j >= n || p >= XR_LORA_MAX_PHY)
				break;
			sc->phy[p] ^= a[j];
		}
	}
	return 0;
}

/* The 1.1 FOpts key stream block (bpf/shared/lorawan.h) in a, from DevAddr as on air at devaddr. */
static __always_inline void lora_fopts_a(__u8 *a, __u8 a4, __u8 dir, const __u8 *devaddr,
					 __u32 fcnt)
{
	lora_b0(a, dir, devaddr, fcnt, 1);
	a[0] = 0x01;
	a[4] = a4;
}

/* FOptsLen (n, at most 15) bytes of phy from 8 on xor the key stream block ks. */
static __always_inline void lora_fopts_xor(__u8 *phy, const __u8 *ks, __u32 n)
{
	for (__u32 i = 0; i < 15; i++) {
		if (i >= n)
			break;
		phy[8 + i] ^= ks[i];
	}
}

/* An uplink's FOpts (1.1) in sc->phy encrypted with device d's NwkSEncKey. */
static __always_inline int lora_fopts11_up(struct xr_lora_scratch *sc, __u32 d, __u32 fcnt)
{
	struct xr_lora_dev11 *d11 = bpf_map_lookup_elem(&lora_devs11, &d);
	__u8 *a = (__u8 *)sc->a;
	__u32 n = sc->phy[5] & 15;

	if (!d11)
		return -1;
	lora_fopts_a(a, XR_LORA_FOPTS_A4_UP_NFCNT, 0, sc->phy + 1, fcnt);
	aes_encrypt(d11->e_rk, sc->a);
	lora_fopts_xor(sc->phy, a, n);
	return 0;
}

/*
 * A 1.1 MIC (struct xr_lora_dev11) in sc->x from cmacF there and cm's B0 | msg:
 * B0 turned into B1, cmacS, then cmacS[0..1] | cmacF[0..1].
 */
static __always_inline int lora_mic11(struct xr_lora_scratch *sc, __u32 d, __u32 msg)
{
	struct xr_lora_dev11 *d11 = bpf_map_lookup_elem(&lora_devs11, &d);
	__u8 *x = (__u8 *)sc->x, f0 = x[0], f1 = x[1];

	if (!d11)
		return -1;
	sc->cm[1] = 0; /* ConfFCnt: 0, the uplink has no ACK bit */
	sc->cm[2] = 0;
	sc->cm[3] = d11->tx_dr;
	sc->cm[4] = d11->tx_ch;
	aes_cmac(d11->s_rk, d11->s_k1, sc->cm, msg + 16, sc->x);
	x[2] = f0;
	x[3] = f1;
	return 0;
}

/*
 * The PHYPayload of uplink fcnt of device d in sc->phy, then its base64
 * from byte 6 on in sc->b64, and in sc->csum the device's csum_rest plus
 * those characters' sum.
 */
static __noinline int lora_uplink(const struct xr_lora_dev *dev, struct xr_lora_scratch *sc,
				  __u32 fcnt, __u32 d)
{
	__u32 len = dev->phy_len, msg, groups, even = 0, odd = 0, chars;
	__u64 *dst = (__u64 *)sc->phy;
	const __u64 *src = (const __u64 *)dev->phy;

	if (len < 13 || len > XR_LORA_MAX_PHY)
		return -1;
	/* the template: FRMPayload in plaintext, MIC and everything after it zero */
	for (int i = 0; i < XR_LORA_MAX_PHY / 8; i++)
		dst[i] = src[i];
	sc->phy[6] = fcnt;
	sc->phy[7] = fcnt >> 8;
	lora_encrypt(dev, sc, fcnt);
	/* 1.1 encrypts FOpts too (rodata: a 1.0 fleet's program has none of it) */
	if (lora_cfg.v11 && dev->v11 && (sc->phy[5] & 15) && lora_fopts11_up(sc, d, fcnt))
		return -1;

	/* B0 | msg (LoRaWAN 1.0.3 §4.4); the zeros after msg are CMAC's padding but for 0x80 */
	msg = len - 4;
	lora_b0(sc->cm, 0, dev->phy + 1, fcnt, msg);
	dst = (__u64 *)(sc->cm + 16);
	src = (const __u64 *)sc->phy;
	for (int i = 0; i < XR_LORA_MAX_PHY / 8; i++)
		dst[i] = src[i];
	/* the MIC's own bytes are zero in the template */
	if (((msg + 16) & 15) && msg + 16 < sizeof(sc->cm))
		sc->cm[msg + 16] = 0x80;
	aes_cmac(dev->nwk_rk, dev->k1, sc->cm, msg + 16, sc->x);
	/* rodata: a 1.0 fleet's program has no second CMAC to verify */
	if (lora_cfg.v11 && dev->v11 && lora_mic11(sc, d, msg))
		return -1;
	if (msg > XR_LORA_MAX_PHY - 4)
		return -1;
	__builtin_memcpy(sc->phy + msg, sc->x, 4);

	/* base64 of bytes 6.. (group 2 on); the padding '=' of the template stays */
	groups = (len + 2) / 3;
	for (int g = 2; g < (XR_LORA_MAX_PHY + 2) / 3; g++) {
		__u32 v;
		__u8 *o = sc->b64 + (g - 2) * 4;

		if (g >= groups)
			break;
		v = (__u32)sc->phy[g * 3] << 16 | (__u32)sc->phy[g * 3 + 1] << 8 |
		    sc->phy[g * 3 + 2];
		o[0] = b64_alphabet[(v >> 18) & 63];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = b64_alphabet[(v >> 6) & 63];
		o[3] = b64_alphabet[v & 63];
		even += o[0] + o[2];
		odd += o[1] + o[3];
	}
	chars = xr_lora_b64_chars(len);
	/* the last group's characters past the '=' padding are not written: out of the sum */
	for (int j = 0; j < 2; j++) {
		__u32 i = chars + j;

		if (i >= groups * 4 - 8)
			break;
		/*
		 * 6.1's verifier loses the bound of an index spilled to the
		 * stack ("R3 unbounded memory access"): checked again next to
		 * its use, barrier_var keeping clang from merging the checks
		 */
		barrier_var(i);
		if (i >= XR_LORA_B64_MAX)
			break;
		if (i & 1)
			odd -= sc->b64[i];
		else
			even -= sc->b64[i];
	}
	sc->b64_len = chars;
	/* b64[0] goes to b64_off + 8: an even index is a high byte when b64_off is even */
	if (dev->b64_off & 1)
		sc->csum = xr_lora_csum_fold(dev->csum_rest + (odd << 8) + even);
	else
		sc->csum = xr_lora_csum_fold(dev->csum_rest + (even << 8) + odd);
	return 0;
}

/*
 * tmst: a microsecond clock kept at 10 digits (JSON numbers have no leading
 * zeros): 10^9 + the clock mod 2^31 (a mask, not a division), which wraps
 * every 36 minutes as a gateway's 32-bit counter wraps every 72.
 *
 * The clock: the pacer's reading when it has read the clock since
 * (gen.bpf.c: frame_is_due; at low rates, for every frame), else a reading
 * of our own every XR_LORA_TMST_EVERY uplinks: at top speed, or behind the
 * schedule, a few microseconds. Reading it and rendering the digits for every
 * uplink cost more than the rest of a precomputed uplink's rewrite.
 */
#define XR_LORA_TMST_EVERY 16
static __always_inline void lora_tmst(struct xr_gen_slot *s, struct xr_lora_scratch *sc)
{
	__u32 v, q, even = 0, odd = 0;
	__u64 now;

	if (cfg.pace != XR_PACE_NONE && s->clock_ns != sc->tmst_clock) {
		now = s->clock_ns;
		sc->tmst_clock = now;
	} else {
		if (sc->tmst && ++sc->tmst_age < XR_LORA_TMST_EVERY)
			return;
		now = bpf_ktime_get_ns();
	}
	sc->tmst_age = 0;
	v = 1000000000U + (__u32)((now / 1000) & 0x7fffffff);
	if (v == sc->tmst)
		return;
	sc->tmst = v;
	for (int i = 9; i >= 0; i--) {
		/* v / 10 as a multiply and a shift, exact for every 32-bit v: a division costs ~25 cycles */
		q = ((__u64)v * 0xCCCCCCCDULL) >> 35;
		sc->digits[i] = '0' + (v - q * 10);
		if (i & 1)
			odd += sc->digits[i];
		else
			even += sc->digits[i];
		v = q;
	}
	sc->tmst_even = even;
	sc->tmst_odd = odd;
}

/*
 * Uplink u's ring slot when userspace has written u there (tag u + 1), with
 * what the rest of the rewrite needs copied into the scratch; else NULL.
 * Userspace clears the tag, writes, then sets it (x86 keeps loads in order),
 * so a caller that reads the characters checks the tag again after them.
 */
static __always_inline const struct xr_lora_ring_slot *lora_ring_slot(struct xr_lora_scratch *sc,
								      __u64 u)
{
	/* a shard's uplinks are every N-th: u / N numbers them without gaps */
	__u32 ri = (cfg.shards > 1 ? u / cfg.shards : u) & (lora_cfg.ring - 1);
	const struct xr_lora_ring_slot *rs = bpf_map_lookup_elem(&lora_ring, &ri);

	if (!rs || *(volatile const __u64 *)&rs->tag != u + 1)
		return NULL;
	asm volatile("" ::: "memory");
	sc->b64_len = rs->chars;
	sc->b64_off = rs->b64_off;
	sc->tmst_off = rs->tmst_off;
	sc->csum = rs->csum;
	__builtin_memcpy(sc->gw, rs->gw, sizeof(sc->gw));
	return rs;
}

/* The tag of slot rs still says u: no write overlapped what was read of it. */
static __always_inline bool lora_ring_unchanged(const struct xr_lora_ring_slot *rs, __u64 u)
{
	asm volatile("" ::: "memory");
	return *(volatile const __u64 *)&rs->tag == u + 1;
}

/* Uplink u from the ring into the scratch, when userspace has it, for its copies to share. */
static __always_inline int lora_ring_fetch(struct xr_lora_scratch *sc, __u64 u)
{
	const struct xr_lora_ring_slot *rs = lora_ring_slot(sc, u);
	__u64 *dst = (__u64 *)sc->b64;

	if (!rs)
		return -1;
	for (int i = 0; i < XR_LORA_RING_CHARS / 8; i++)
		dst[i] = ((const __u64 *)rs->b64)[i];
	return lora_ring_unchanged(rs, u) ? 0 : -1;
}

/* What the rest of the rewrite needs of device dev, for an uplink computed here. */
static __always_inline void lora_dev_meta(struct xr_lora_scratch *sc, const struct xr_lora_dev *dev)
{
	sc->b64_off = dev->b64_off;
	sc->tmst_off = dev->tmst_off;
	__builtin_memcpy(sc->gw, dev->gw, sizeof(sc->gw));
}

/*
 * The gateway's source address and port into the frame (its first 54 bytes
 * checked by the caller), with the IPv4 checksum updated from the address
 * the frame had (RFC 1624: HC' = ~(~HC + ~m + m')). Returns what the UDP
 * sum gains (the pseudo-header's address and the port), in the big-endian
 * word form of csum_rest. One's-complement sums come out the same in either
 * byte order, so the 16-bit loads are summed as they are and the result is
 * swapped once.
 */
static __always_inline __u32 lora_gw_address(void *data, const struct xr_lora_gw *gwr)
{
	struct iphdr *iph = data + sizeof(struct ethhdr);
	struct udphdr *uh = (void *)(iph + 1);
	__u16 *old = (__u16 *)&iph->saddr, *new = (__u16 *)&gwr->saddr;
	__u32 d;

	d = (__u16)~old[0] + (__u16)~old[1] + new[0] + new[1];
	iph->check = ~xr_lora_csum_fold((__u16)~iph->check + d);
	d += (__u16)~uh->source + gwr->sport;
	iph->saddr = gwr->saddr;
	uh->source = gwr->sport;
	d = xr_lora_csum_fold(d);
	return (d >> 8 | d << 8) & 0xffff;
}

/*
 * Uplink u's device, when it sends confirmed uplinks or asks for MAC
 * answers, is now waiting for u's ACK or answers.
 */
static __always_inline void lora_stamp_confirmed(__u64 u)
{
	__u32 d = u % lora_cfg.ndev;
	struct xr_lora_confirmed *c = bpf_map_lookup_elem(&lora_confirmed, &d);

	if (!c || !(c->is_confirmed || c->mac_asks))
		return;
	c->sent_ns = bpf_ktime_get_ns();
	c->last_u = u + 1;
	if (c->is_confirmed)
		__sync_fetch_and_add(&c->uplinks, 1);
	if (c->mac_asks)
		__sync_fetch_and_add(&c->mac_uplinks, 1);
}

/* A JoinRequest goes out as userspace built it: what the copies need of its device. */
static __always_inline int lora_join_request(struct xr_lora_scratch *sc, __u64 u)
{
	__u32 d = u % lora_cfg.ndev;
	struct xr_lora_dev *dev = bpf_map_lookup_elem(&lora_devs, &d);

	if (!dev)
		return -1;
	lora_dev_meta(sc, dev);
	sc->csum = dev->csum_rest;
	sc->b64_len = 0;
	return 0;
}

/* Uplink u's device has sent its JoinRequest: when, and with which tmst. */
static __always_inline void lora_stamp_join(__u64 u, __u32 tmst)
{
	__u32 d = u % lora_cfg.ndev;
	struct xr_lora_join *j = bpf_map_lookup_elem(&lora_join, &d);

	if (!j)
		return;
	j->tmst = tmst;
	j->sent_ns = bpf_ktime_get_ns();
	__sync_fetch_and_add(&j->requests, 1);
}

/*
 * len base64 characters (at most max, the size of b64) to p by direct stores
 * of 8 bytes, the last one ending where the characters end (overlapping the
 * one before): a bpf_xdp_store_bytes call costs more than the rest of a
 * copy's rewrite.
 */
static __always_inline int lora_b64_store(__u8 *p, void *data_end, const __u8 *b64, __u32 len,
					  const __u32 max)
{
	if (len < 8 || len > max)
		return -1;
	for (int i = 0; i < max / 8; i++) {
		if (i * 8 + 8 > len)
			break;
		if ((void *)(p + i * 8 + 8) > data_end)
			return -1;
		*(__u64 *)(p + i * 8) = *(__u64 *)(b64 + i * 8);
	}
	p += len - 8;
	if ((void *)(p + 8) > data_end)
		return -1;
	*(__u64 *)p = *(__u64 *)(b64 + len - 8);
	return 0;
}

/* Rewrites the PUSH_DATA of device d (copied from the frame set) for sequence number n. */
static __always_inline int lora_rewrite(struct xdp_md *ctx, struct xr_gen_slot *s, __u64 n,
					__u16 *tag)
{
	/* a 64-bit division costs more than a precomputed uplink's checksum: none for one gateway */
	__u64 u = lora_cfg.heard_by > 1 ? n / lora_cfg.heard_by : n, e;
	const struct xr_lora_ring_slot *rs = NULL;
	struct xr_lora_gw *gwr;
	__u32 k = n - u * lora_cfg.heard_by, zero = 0, gw, sum, sum2, off;
	__u16 c;
	struct xr_lora_scratch *sc;
	void *data, *data_end;
	__u8 *p;

	sc = bpf_map_lookup_elem(&lora_scratch, &zero);
	if (!sc || k >= XR_LORA_MAX_HEARD)
		return -1;
	if (!sc->valid || sc->u != u) {
		sc->valid = 0;
		if (lora_cfg.join) {
			if (lora_join_request(sc, u))
				return -1;
		} else if (lora_cfg.ring && lora_cfg.heard_by == 1 &&
			   (rs = lora_ring_slot(sc, u))) {
			/*
			 * Heard by one gateway, uplink u is written once: its
			 * characters go from the ring slot to the frame with no
			 * copy into the scratch in between (12 loads and stores
			 * of 8 bytes: ~4% of a precomputed uplink's cost)
			 */
			s->hook_ctr[XR_LORA_RING_HITS]++;
		} else if (lora_cfg.ring && !lora_ring_fetch(sc, u)) {
			s->hook_ctr[XR_LORA_RING_HITS]++;
		} else {
			__u32 d = u % lora_cfg.ndev;
			struct xr_lora_dev *dev = bpf_map_lookup_elem(&lora_devs, &d);

			if (!dev ||
			    lora_uplink(dev, sc, dev->fcnt0 + (__u32)(u / lora_cfg.ndev), d))
				return -1;
			lora_dev_meta(sc, dev);
			s->hook_ctr[XR_LORA_COMPUTED]++;
		}
		lora_tmst(s, sc);
		sc->u = u;
		/* the scratch holds the characters of an uplink it computed or copied */
		sc->valid = !rs;
	}
	/* the first copy stands for the uplink: one thread sends it, whatever the others send */
	if (lora_cfg.confirmed && !k)
		lora_stamp_confirmed(u);
	if (lora_cfg.join && !k)
		lora_stamp_join(u, sc->tmst);
	gw = sc->gw[k];
	*tag = gw;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	p = data + XR_LORA_PUSH_DATA_OFF;
	if ((void *)(p + 12) > data_end)
		return -1;
	/*
	 * The checksum: csum_rest and b64's sum (sc->csum), tmst's (digit 0 goes
	 * to tmst_off: the even digits are high bytes when tmst_off is even), the
	 * token's (frame offsets 43 and 44: n's low byte is a low byte, its next a
	 * high one) and, heard by more than one gateway, the gateway's. Heard by
	 * one, the frame is its gateway's as built: csum_rest has its EUI and
	 * address, and the program writes neither.
	 */
	sum = sc->tmst_off & 1 ? (sc->tmst_odd << 8) + sc->tmst_even :
				 (sc->tmst_even << 8) + sc->tmst_odd;
	if (lora_cfg.heard_by > 1) {
		gwr = bpf_map_lookup_elem(&lora_gws, &gw);
		if (!gwr)
			return -1;
		/*
		 * The EUI at offset 46: its bytes pair up as they are, so the
		 * sum of its 16-bit loads is the sum of big-endian words
		 * byte-swapped.
		 */
		e = gwr->eui;
		sum2 = (e & 0xffff) + (e >> 16 & 0xffff) + (e >> 32 & 0xffff) + (e >> 48);
		sum2 = xr_lora_csum_fold(sum2);
		sum += (sum2 >> 8 | sum2 << 8) & 0xffff;
		if (lora_cfg.gw_addrs)
			sum += lora_gw_address(data, gwr);
		__builtin_memcpy(p + 4, &e, 8);
	}
	c = ~xr_lora_csum_fold(sc->csum + (__u32)(n & 0xffff) + sum);
	/* a computed zero is sent as all ones: zero means "no checksum" */
	if (!c)
		c = 0xffff;
	/* the token: n's low 16 bits, which the PUSH_ACK echoes */
	p[1] = n;
	p[2] = n >> 8;
	p[XR_LORA_UDP_CHECK_OFF - XR_LORA_PUSH_DATA_OFF] = c >> 8;
	p[XR_LORA_UDP_CHECK_OFF - XR_LORA_PUSH_DATA_OFF + 1] = c;

	/* tmst and the base64 by direct stores, as lora_b64_store says why */
	off = sc->tmst_off;
	if (off > XR_MAX_FRAME)
		return -1;
	p = data + off;
	if ((void *)(p + 10) > data_end)
		return -1;
	*(__u64 *)p = *(__u64 *)sc->digits;
	*(__u16 *)(p + 8) = *(__u16 *)(sc->digits + 8);
	/* a JoinRequest's base64 is the frame's own */
	if (lora_cfg.join)
		return 0;
	off = sc->b64_off + 8;
	if (off > XR_MAX_FRAME)
		return -1;
	p = data + off;
	if (!rs)
		return lora_b64_store(p, data_end, sc->b64, sc->b64_len, XR_LORA_B64_MAX);
	if (lora_b64_store(p, data_end, rs->b64, sc->b64_len, XR_LORA_RING_CHARS))
		return -1;
	/*
	 * The producer (user/proto/lorawan/kernel.c) rewrites a slot only once the
	 * slowest sender is LORA_RING_MARGIN uplinks past it: a frame it tore
	 * anyway is counted bad, not sent
	 */
	return lora_ring_unchanged(rs, u) ? 0 : -1;
}

#endif /* __XR_PROTO_LORAWAN_BPF_H */
