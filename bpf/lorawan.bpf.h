/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN 1.0.x data uplinks inside Semtech UDP PUSH_DATA, rewritten per
 * packet by the kernel engine (included by gen.bpf.c; layout and numbering
 * in xdpreplay.h, struct xr_lora_dev).
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
 * AES-128 is the T-table form (FIPS-197 §5.2 rounds merged into four table
 * lookups per column, as rijndael-alg-fst.c does); the round keys and CMAC
 * subkeys are computed once per device in userspace.
 */
#ifndef __XR_LORAWAN_BPF_H
#define __XR_LORAWAN_BPF_H

/* Filled by userspace before load (user/proto/lorawan/fleet.c): read-only, so the verifier sees its bounds. */
const volatile struct xr_aes_tables aes = {};

static const char b64_alphabet[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_scratch);
} lora_scratch SEC(".maps");

/* One per device; sized and filled by userspace before the run. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dev);
} lora_devs SEC(".maps");

/* Gateway EUIs, 8 bytes as on the wire; sized and filled by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lora_gws SEC(".maps");

/* Uplinks precomputed by userspace; sized by userspace (struct xr_lora_ring_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_ring_slot);
} lora_ring SEC(".maps");

/* PUSH_ACKs per gateway (xr_replies). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lora_gw_acks SEC(".maps");

/*
 * Table lookups as byte offsets: one shift and one mask give 4 * byte, so a
 * lookup is five instructions, and the tables are read through one base
 * pointer with constant displacements (reading the volatile rodata directly
 * made clang reload the map address and spill for every lookup: 1,460
 * instructions per block instead of ~850).
 */
#define T0(b, x) (*(const __u32 *)((b) + (((x) >> 22) & 0x3fc)))
#define T1(b, x) (*(const __u32 *)((b) + 1024 + (((x) >> 14) & 0x3fc)))
#define T2(b, x) (*(const __u32 *)((b) + 2048 + (((x) >> 6) & 0x3fc)))
#define T3(b, x) (*(const __u32 *)((b) + 3072 + (((x) << 2) & 0x3fc)))

/*
 * Encrypts the 16-byte block blk (4 words in memory order) in place with the
 * round keys rk. A subprogram: one copy of its instructions serves every
 * call. Returns 0 (a subprogram taking pointers must return a value).
 */
static __noinline int aes_encrypt(const __u32 *rk, __u32 *blk)
{
	const __u8 *te = (const __u8 *)aes.te, *sb = (const __u8 *)aes.sbox;
	__u32 s0, s1, s2, s3, t0, t1, t2, t3;

	s0 = bpf_ntohl(blk[0]) ^ rk[0];
	s1 = bpf_ntohl(blk[1]) ^ rk[1];
	s2 = bpf_ntohl(blk[2]) ^ rk[2];
	s3 = bpf_ntohl(blk[3]) ^ rk[3];
#pragma unroll
	for (int r = 1; r < 10; r++) {
		t0 = T0(te, s0) ^ T1(te, s1) ^ T2(te, s2) ^ T3(te, s3) ^ rk[4 * r];
		t1 = T0(te, s1) ^ T1(te, s2) ^ T2(te, s3) ^ T3(te, s0) ^ rk[4 * r + 1];
		t2 = T0(te, s2) ^ T1(te, s3) ^ T2(te, s0) ^ T3(te, s1) ^ rk[4 * r + 2];
		t3 = T0(te, s3) ^ T1(te, s0) ^ T2(te, s1) ^ T3(te, s2) ^ rk[4 * r + 3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
#define SB(x, sh) ((__u32)sb[(x) & 0xff] << (sh))
	blk[0] = bpf_htonl((SB(s0 >> 24, 24) | SB(s1 >> 16, 16) | SB(s2 >> 8, 8) | SB(s3, 0)) ^ rk[40]);
	blk[1] = bpf_htonl((SB(s1 >> 24, 24) | SB(s2 >> 16, 16) | SB(s3 >> 8, 8) | SB(s0, 0)) ^ rk[41]);
	blk[2] = bpf_htonl((SB(s2 >> 24, 24) | SB(s3 >> 16, 16) | SB(s0 >> 8, 8) | SB(s1, 0)) ^ rk[42]);
	blk[3] = bpf_htonl((SB(s3 >> 24, 24) | SB(s0 >> 16, 16) | SB(s1 >> 8, 8) | SB(s2, 0)) ^ rk[43]);
#undef SB
	return 0;
}

/*
 * AES-CMAC (RFC 4493) of the len bytes in cm, which the caller has padded
 * (0x80, zeros) to a whole block when len is not one; the result in x.
 * sub holds the subkeys K1 then K2 (BPF calls take at most five arguments).
 */
static __noinline int aes_cmac(const __u32 *rk, const __u32 *sub, const __u8 *cm, __u32 len, __u32 *x)
{
	__u32 nb = len ? (len + 15) / 16 : 1;
	const __u32 *k = (len && !(len & 15)) ? sub : sub + 4;

	x[0] = x[1] = x[2] = x[3] = 0;
	for (int i = 0; i < (16 + XR_LORA_MAX_PHY + 16) / 16; i++) {
		const __u32 *m = (const __u32 *)(cm + i * 16);

		if (i >= nb)
			break;
		x[0] ^= m[0];
		x[1] ^= m[1];
		x[2] ^= m[2];
		x[3] ^= m[3];
		if (i == nb - 1) {
			x[0] ^= k[0];
			x[1] ^= k[1];
			x[2] ^= k[2];
			x[3] ^= k[3];
		}
		aes_encrypt(rk, x);
	}
	return 0;
}

/* FRMPayload of sc->phy xor the key stream of A_1..A_k (LoRaWAN 1.0.3 §4.3.3), uplink. */
static __noinline int lora_encrypt(const struct xr_lora_dev *dev, struct xr_lora_scratch *sc, __u32 fcnt)
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

/* The PHYPayload of uplink fcnt in sc->phy, then its base64 from byte 6 on in sc->b64. */
static __noinline int lora_uplink(const struct xr_lora_dev *dev, struct xr_lora_scratch *sc, __u32 fcnt)
{
	__u32 len = dev->phy_len, msg, groups, pad;
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

	/* B0 | msg (LoRaWAN 1.0.3 §4.4); the zeros after msg are CMAC's padding but for 0x80 */
	msg = len - 4;
	sc->cm[0] = 0x49;
	sc->cm[1] = sc->cm[2] = sc->cm[3] = sc->cm[4] = 0;
	sc->cm[5] = 0; /* Dir: uplink */
	sc->cm[6] = dev->phy[1];
	sc->cm[7] = dev->phy[2];
	sc->cm[8] = dev->phy[3];
	sc->cm[9] = dev->phy[4];
	sc->cm[10] = fcnt;
	sc->cm[11] = fcnt >> 8;
	sc->cm[12] = fcnt >> 16;
	sc->cm[13] = fcnt >> 24;
	sc->cm[14] = 0;
	sc->cm[15] = msg;
	dst = (__u64 *)(sc->cm + 16);
	src = (const __u64 *)sc->phy;
	for (int i = 0; i < XR_LORA_MAX_PHY / 8; i++)
		dst[i] = src[i];
	/* the MIC's own bytes are zero in the template */
	if (((msg + 16) & 15) && msg + 16 < sizeof(sc->cm))
		sc->cm[msg + 16] = 0x80;
	aes_cmac(dev->nwk_rk, dev->k1, sc->cm, msg + 16, sc->x);
	if (msg > XR_LORA_MAX_PHY - 4)
		return -1;
	__builtin_memcpy(sc->phy + msg, sc->x, 4);

	/* base64 of bytes 6.. (group 2 on); the padding '=' of the template stays */
	groups = (len + 2) / 3;
	pad = (3 - len % 3) % 3;
	for (int g = 2; g < (XR_LORA_MAX_PHY + 2) / 3; g++) {
		__u32 v;
		__u8 *o = sc->b64 + (g - 2) * 4;

		if (g >= groups)
			break;
		v = (__u32)sc->phy[g * 3] << 16 | (__u32)sc->phy[g * 3 + 1] << 8 | sc->phy[g * 3 + 2];
		o[0] = b64_alphabet[(v >> 18) & 63];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = b64_alphabet[(v >> 6) & 63];
		o[3] = b64_alphabet[v & 63];
	}
	sc->b64_len = groups * 4 - pad - 8;
	return 0;
}

/*
 * tmst: a microsecond clock kept at 10 digits (JSON numbers have no leading
 * zeros): 10^9 + the clock mod 2^31 (a mask, not a division), which wraps
 * every 36 minutes as a gateway's 32-bit counter wraps every 72.
 */
static __always_inline void lora_tmst(struct xr_lora_scratch *sc)
{
	__u32 v = 1000000000U + (__u32)((bpf_ktime_get_ns() / 1000) & 0x7fffffff), q;

	sc->tmst = v;
	for (int i = 9; i >= 0; i--) {
		/* v / 10 as a multiply and a shift, exact for every 32-bit v: a division costs ~25 cycles */
		q = ((__u64)v * 0xCCCCCCCDULL) >> 35;
		sc->digits[i] = '0' + (v - q * 10);
		v = q;
	}
}

/* The UDP checksum of an IPv4 frame, recomputed from scratch (the frame is in the packet). */
static __always_inline int udp4_csum(struct xdp_md *ctx, struct xr_lora_scratch *sc)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	struct udphdr *uh = (void *)(iph + 1);
	void *p = uh;
	__u32 rest, ulen;
	__s64 sum;
	__u16 c;

	if ((void *)(uh + 1) > data_end)
		return -1;
	ulen = data_end - (void *)uh;
	uh->check = 0;
	/* pseudo-header as 32-bit words in memory order: addresses, then 0, protocol, length */
	sum = (__u64)iph->saddr + iph->daddr + bpf_htonl(IPPROTO_UDP << 16 | (ulen & 0xffff));
	/* the helper's seed is 32 bits: fold the carry in first */
	sum = (sum & 0xffffffff) + (sum >> 32);
	/* bpf_csum_diff takes at most 512 bytes and whole words: 64 at a time, the rest from a zeroed copy */
	for (int i = 0; i < XR_MAX_FRAME / 64; i++) {
		if (p + 64 > data_end)
			break;
		sum = bpf_csum_diff(NULL, 0, p, 64, sum);
		p += 64;
	}
	/* below 64 after the loop; the mask tells the verifier */
	rest = (__u32)(data_end - p) & 63;
	if (rest) {
		__u64 *t = (__u64 *)sc->tail;

		for (int i = 0; i < 8; i++)
			t[i] = 0;
		if (bpf_xdp_load_bytes(ctx, p - data, sc->tail, rest))
			return -1;
		sum = bpf_csum_diff(NULL, 0, (void *)sc->tail, 64, sum);
	}
	c = fold_csum(sum);
	/* a computed zero is sent as all ones: zero means "no checksum" */
	c = c ? c : 0xffff;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	uh = data + sizeof(struct ethhdr) + sizeof(struct iphdr);
	if ((void *)(uh + 1) > data_end)
		return -1;
	uh->check = c;
	return 0;
}

/*
 * Uplink u from the ring into the scratch, when userspace has it: the tag
 * before and after the copy says no write overlapped it (userspace clears the
 * tag, writes, then sets it; x86 keeps loads in order).
 */
static __always_inline int lora_ring_fetch(struct xr_lora_scratch *sc, __u64 u)
{
	__u32 ri = u & (cfg.lora.ring - 1);
	struct xr_lora_ring_slot *rs;
	__u64 *dst = (__u64 *)sc->b64;
	volatile __u64 *tag;

	rs = bpf_map_lookup_elem(&lora_ring, &ri);
	if (!rs)
		return -1;
	tag = &rs->tag;
	if (*tag != u + 1)
		return -1;
	asm volatile("" ::: "memory");
	for (int i = 0; i < XR_LORA_RING_CHARS / 8; i++)
		dst[i] = ((const __u64 *)rs->b64)[i];
	sc->b64_len = rs->chars;
	sc->b64_off = rs->b64_off;
	sc->tmst_off = rs->tmst_off;
	__builtin_memcpy(sc->gw, rs->gw, sizeof(sc->gw));
	asm volatile("" ::: "memory");
	return *tag == u + 1 ? 0 : -1;
}

/* What the rest of the rewrite needs of device dev, for an uplink computed here. */
static __always_inline void lora_dev_meta(struct xr_lora_scratch *sc, const struct xr_lora_dev *dev)
{
	sc->b64_off = dev->b64_off;
	sc->tmst_off = dev->tmst_off;
	__builtin_memcpy(sc->gw, dev->gw, sizeof(sc->gw));
}

/* Rewrites the PUSH_DATA of device d (copied from the frame set) for sequence number n. */
static __always_inline int lora_rewrite(struct xdp_md *ctx, struct xr_gen_slot *s, __u64 n, __u16 *gw_out)
{
	__u64 u = n / cfg.lora.heard_by, *eui;
	__u32 k = n - u * cfg.lora.heard_by, zero = 0, gw, len;
	struct xr_lora_scratch *sc;
	void *data, *data_end;
	__u8 *p;

	sc = bpf_map_lookup_elem(&lora_scratch, &zero);
	if (!sc || k >= XR_LORA_MAX_HEARD)
		return -1;
	if (!sc->valid || sc->u != u) {
		sc->valid = 0;
		if (cfg.lora.ring && !lora_ring_fetch(sc, u)) {
			s->lora_ring_hits++;
		} else {
			__u32 d = u % cfg.lora.ndev;
			struct xr_lora_dev *dev = bpf_map_lookup_elem(&lora_devs, &d);

			if (!dev || lora_uplink(dev, sc, dev->fcnt0 + (__u32)(u / cfg.lora.ndev)))
				return -1;
			lora_dev_meta(sc, dev);
			s->lora_computed++;
		}
		lora_tmst(sc);
		sc->u = u;
		sc->valid = 1;
	}
	gw = sc->gw[k];
	eui = bpf_map_lookup_elem(&lora_gws, &gw);
	if (!eui)
		return -1;
	*gw_out = gw;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	p = data + XR_LORA_PUSH_DATA_OFF;
	if ((void *)(p + 12) > data_end)
		return -1;
	/* the token: n's low 16 bits, which the PUSH_ACK echoes */
	p[1] = n;
	p[2] = n >> 8;
	__builtin_memcpy(p + 4, eui, 8);
	if (bpf_xdp_store_bytes(ctx, sc->tmst_off, sc->digits, 10))
		return -1;
	len = sc->b64_len;
	if (len < 1 || len > XR_LORA_B64_MAX)
		return -1;
	if (bpf_xdp_store_bytes(ctx, sc->b64_off + 8, sc->b64, len))
		return -1;
	return udp4_csum(ctx, sc);
}

#endif /* __XR_LORAWAN_BPF_H */
