// SPDX-License-Identifier: GPL-2.0
/*
 * AES-128 with AES-NI for precomputing uplinks: FRMPayload xor AES(A_i),
 * then AES-CMAC (RFC 4493) over B0 | msg, as LoRaWAN 1.0.3 §4.3.3 and §4.4
 * give them (1.1 §4.4: and over B1 | msg with the second key). Built with -maes -mssse3 (Makefile); used only when the CPU
 * says it has them. Held against OpenSSL and the BPF code by selftest.
 */
#include <string.h>
#include <immintrin.h>
#include <openssl/evp.h>
#include "proto/lorawan/aesni.h"

bool aesni_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("aes") && __builtin_cpu_supports("ssse3");
}

/* Round key r in memory order: the BPF layout holds big-endian words as integers. */
static inline __m128i round_key(const uint32_t *rk, int r)
{
	const __m128i bswap32 = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);

	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(rk + 4 * r)), bswap32);
}

static inline __m128i encrypt(const uint32_t *rk, __m128i b)
{
	b = _mm_xor_si128(b, round_key(rk, 0));
	for (int r = 1; r < 10; r++)
		b = _mm_aesenc_si128(b, round_key(rk, r));
	return _mm_aesenclast_si128(b, round_key(rk, 10));
}

void aesni_encrypt(const uint32_t rk[44], const uint8_t in[16], uint8_t out[16])
{
	_mm_storeu_si128((__m128i *)out, encrypt(rk, _mm_loadu_si128((const __m128i *)in)));
}

/* A_i (first 0x01, last i) and B0 (0x49, len(msg)) of an uplink: Dir 0, DevAddr, 32-bit FCnt */
static void block(uint8_t b[16], uint8_t first, const struct xr_lora_dev *dev, uint32_t fcnt,
		  uint8_t last)
{
	memset(b, 0, 16);
	b[0] = first;
	memcpy(b + 6, dev->phy + 1, 4);
	b[10] = fcnt;
	b[11] = fcnt >> 8;
	b[12] = fcnt >> 16;
	b[13] = fcnt >> 24;
	b[15] = last;
}

/* AES-CMAC of cm (nb blocks, padded by the caller; the last one whole when whole) with rk and K1, K2. */
static __m128i cmac(const uint32_t *rk, const uint32_t *k1, const uint32_t *k2, const uint8_t *cm,
		    unsigned int nb, bool whole)
{
	__m128i x = _mm_setzero_si128();

	for (unsigned int i = 0; i < nb; i++) {
		x = _mm_xor_si128(x, _mm_loadu_si128((const __m128i *)(cm + 16 * i)));
		if (i == nb - 1)
			x = _mm_xor_si128(x, _mm_loadu_si128((const __m128i *)(whole ? k1 : k2)));
		x = encrypt(rk, x);
	}
	return x;
}

int aesni_uplink_b64(const struct xr_lora_dev *dev, const struct xr_lora_dev11 *dev11,
		     uint32_t fcnt, uint8_t *b64)
{
	uint8_t phy[XR_LORA_MAX_PHY + 16], cm[16 + XR_LORA_MAX_PHY + 16] = {}, blk[16];
	unsigned int len = dev->phy_len, msg = len - 4, nb;
	char full[XR_LORA_B64_MAX + 8];
	int chars;
	__m128i x;

	if (len < 13 || len > XR_LORA_MAX_PHY)
		return -1;
	memcpy(phy, dev->phy, XR_LORA_MAX_PHY);
	phy[6] = fcnt;
	phy[7] = fcnt >> 8;
	for (unsigned int i = 0; i * 16 < dev->frm_len; i++) {
		block(blk, 0x01, dev, fcnt, i + 1);
		aesni_encrypt(dev->enc_rk, blk, blk);
		for (unsigned int j = 0; j < 16 && i * 16 + j < dev->frm_len; j++)
			phy[dev->frm_off + i * 16 + j] ^= blk[j];
	}
	if (dev->v11 && dev11 && (phy[5] & 15)) {
		/* 1.1: FOpts too, with NwkSEncKey (bpf/shared/lorawan.h) */
		block(blk, 0x01, dev, fcnt, 1);
		blk[4] = XR_LORA_FOPTS_A4_UP_NFCNT;
		aesni_encrypt(dev11->e_rk, blk, blk);
		for (unsigned int j = 0; j < (phy[5] & 15u); j++)
			phy[8 + j] ^= blk[j];
	}
	block(cm, 0x49, dev, fcnt, msg);
	memcpy(cm + 16, phy, msg);
	nb = (16 + msg + 15) / 16;
	if ((16 + msg) % 16)
		cm[16 + msg] = 0x80;
	x = cmac(dev->nwk_rk, dev->k1, dev->k2, cm, nb, !((16 + msg) % 16));
	_mm_storeu_si128((__m128i *)blk, x);
	memcpy(phy + msg, blk, 4);
	if (dev->v11 && dev11) {
		/* 1.1: B1 (ConfFCnt 0, TxDr, TxCh), cmacS[0..1] | cmacF[0..1] */
		cm[3] = dev11->tx_dr;
		cm[4] = dev11->tx_ch;
		x = cmac(dev11->s_rk, dev11->s_k1, dev11->s_k2, cm, nb, !((16 + msg) % 16));
		_mm_storeu_si128((__m128i *)blk, x);
		phy[msg + 2] = phy[msg];
		phy[msg + 3] = phy[msg + 1];
		memcpy(phy + msg, blk, 2);
	}
	EVP_EncodeBlock((unsigned char *)full, phy, len);
	/* the characters the program writes: from byte 6 (group 2) on, without the '=' padding */
	chars = (len + 2) / 3 * 4 - (3 - len % 3) % 3 - 8;
	if (chars > XR_LORA_RING_CHARS)
		return -1;
	memcpy(b64, full + 8, chars);
	return chars;
}
