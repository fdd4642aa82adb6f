/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdpreplay selftest's LoRaWAN programs (user/selftest/lorawan*.c, through
 * proto/lorawan/kernel.c), never attached: AES-128 and AES-CMAC as the uplink
 * rewrite runs them, and the downlink reader with its MIC check, on inputs
 * from their maps. Not loaded unless asked for ("?xdp"): a run would pay for
 * their verification in its start-up.
 */
#ifndef __XR_PROTO_LORAWAN_TEST_BPF_H
#define __XR_PROTO_LORAWAN_TEST_BPF_H

#include "proto/lorawan_downlink.bpf.h"

/* selftest only: AES-128 and AES-CMAC as the LoRaWAN rewrite runs them, on aes_test's inputs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_aes_test);
} aes_test SEC(".maps");

SEC("?xdp")
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

/* selftest only: the downlink reader on the frame it is given. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dl_test);
} lora_dl_test SEC(".maps");

/* selftest only: the device whose NwkSKey the downlink MIC check uses. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dev);
} lora_dl_test_dev SEC(".maps");

/* selftest only: the 1.1 device whose SNwkSIntKey the MIC check uses with t->v11. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_lora_dev11);
} lora_dl_test_dev11 SEC(".maps");

SEC("?xdp")
int xr_lora_dl_test(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xr_lora_dl_test *t = bpf_map_lookup_elem(&lora_dl_test, &zero);
	struct xr_lora_dl_scratch *sc = bpf_map_lookup_elem(&lora_dl_scratch, &zero);
	struct xr_lora_dev *dev = bpf_map_lookup_elem(&lora_dl_test_dev, &zero);
	struct xr_lora_dev11 *d11 = NULL;

	if (!t || !sc || !dev)
		return XDP_ABORTED;
	t->ret = lora_dl_phy(ctx, t->phy);
	t->len = lora_dl_decode(ctx, sc);
	t->mic_ok = 0;
	if (t->len < 0)
		return XDP_PASS;
	for (int i = 0; i < (XR_LORA_MAX_PHY + 8) / 8; i++)
		((__u64 *)t->full)[i] = ((__u64 *)sc->phy)[i];
	if (t->v11) {
		d11 = bpf_map_lookup_elem(&lora_dl_test_dev11, &zero);
		sc->conf_fcnt = t->conf_fcnt;
		t->mic_ok = lora_dl_mic11_ok(d11, sc, t->len, t->fcnt);
	} else {
		t->mic_ok = lora_dl_mic_ok(dev, sc, t->len, t->fcnt);
	}
	t->mac_ret = -2;
	if (!t->mic_ok)
		return XDP_PASS;
	t->mac_ret = lora_dl_mac(dev, d11, sc, t->len, t->fcnt);
	t->mac = sc->mac;
	return XDP_PASS;
}

#endif /* __XR_PROTO_LORAWAN_TEST_BPF_H */
