/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Uplinks computed ahead in userspace with the CPU's AES instructions, for
 * the kernel engine's ring (struct xr_lora_ring_slot): the same result the
 * BPF rewriter computes (bpf/lorawan.bpf.h) from the same device record.
 */
#ifndef __XR_AESNI_H
#define __XR_AESNI_H

#include <stdbool.h>
#include <stdint.h>
#include "xdpreplay.h"

/* The CPU has AES-NI (and SSSE3). */
bool aesni_available(void);
/* AES-128 of one block with round keys in the BPF layout (big-endian words as integers). */
void aesni_encrypt(const uint32_t rk[44], const uint8_t in[16], uint8_t out[16]);
/*
 * Uplink fcnt of device dev (dev11: what its 1.1 session adds, or NULL):
 * the base64 characters from the PHYPayload's byte 6 on (without '='
 * padding) into b64; returns their number, or -1 if they do not fit
 * XR_LORA_RING_CHARS.
 */
int aesni_uplink_b64(const struct xr_lora_dev *dev, const struct xr_lora_dev11 *dev11,
		     uint32_t fcnt, uint8_t *b64);

#endif
