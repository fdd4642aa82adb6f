/* SPDX-License-Identifier: GPL-2.0 */
/* What selftest's LoRaWAN files share (lorawan.c, lorawan_downlink.c). */
#ifndef __XR_SELFTEST_LORAWAN_H
#define __XR_SELFTEST_LORAWAN_H

#include <stdint.h>

struct lw_crypto;
struct xr_aes_tables;

/* Hex s into out: its bytes, or -1 */
int lw_unhex(const char *s, uint8_t *out);

/* A mismatch counted, the first five said on stderr */
void lw_mismatch(uint64_t *mismatches, const char *what, const char *why);

/* ChirpStack's 1.1 downlink with encrypted FOpts: its bytes, MIC and decryption. 0 or -errno */
int lw_fopts11_vector(struct lw_crypto *c, uint64_t *checked, uint64_t *mismatches);

/* cases random PULL_RESPs through the BPF downlink reader and decoder, one load. 0 or -errno */
int lw_selftest_downlinks(struct lw_crypto *c, const struct xr_aes_tables *tab, uint64_t cases,
			  uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches);

#endif
