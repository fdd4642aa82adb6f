/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AES-128 encryption and AES-CMAC (RFC 4493) in BPF, for protocols whose
 * packets carry a MAC or ciphertext that changes per packet (LoRaWAN).
 *
 * AES-128 is the T-table form (FIPS-197 §5.2 rounds merged into four table
 * lookups per column, as rijndael-alg-fst.c does); round keys and CMAC
 * subkeys are computed in userspace. Held byte for byte against OpenSSL and
 * the published vectors by xdpreplay selftest (xr_aes_test).
 */
#ifndef __XR_LIB_AES_BPF_H
#define __XR_LIB_AES_BPF_H

/* The longest message aes_cmac takes, padded: LoRaWAN's B0 | PHYPayload | padding. */
#define XR_CMAC_MAX_BYTES 160

/* Filled by userspace before load: read-only, so the verifier sees its bounds. */
const volatile struct xr_aes_tables aes = {};

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
#define SB(x, sh) ((__u32)sb[(x)&0xff] << (sh))
	blk[0] = bpf_htonl((SB(s0 >> 24, 24) | SB(s1 >> 16, 16) | SB(s2 >> 8, 8) | SB(s3, 0)) ^
			   rk[40]);
	blk[1] = bpf_htonl((SB(s1 >> 24, 24) | SB(s2 >> 16, 16) | SB(s3 >> 8, 8) | SB(s0, 0)) ^
			   rk[41]);
	blk[2] = bpf_htonl((SB(s2 >> 24, 24) | SB(s3 >> 16, 16) | SB(s0 >> 8, 8) | SB(s1, 0)) ^
			   rk[42]);
	blk[3] = bpf_htonl((SB(s3 >> 24, 24) | SB(s0 >> 16, 16) | SB(s1 >> 8, 8) | SB(s2, 0)) ^
			   rk[43]);
#undef SB
	return 0;
}

/*
 * AES-CMAC (RFC 4493) of the len bytes in cm, which the caller has padded
 * (0x80, zeros) to a whole block when len is not one; the result in x.
 * sub holds the subkeys K1 then K2 (BPF calls take at most five arguments).
 */
static __noinline int aes_cmac(const __u32 *rk, const __u32 *sub, const __u8 *cm, __u32 len,
			       __u32 *x)
{
	__u32 nb = len ? (len + 15) / 16 : 1;
	const __u32 *k = (len && !(len & 15)) ? sub : sub + 4;

	x[0] = x[1] = x[2] = x[3] = 0;
	for (int i = 0; i < XR_CMAC_MAX_BYTES / 16; i++) {
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

#endif /* __XR_LIB_AES_BPF_H */
