// SPDX-License-Identifier: GPL-2.0
/* Semtech UDP (v2) PUSH_DATA: one frame per device, as the kernel engine's template (PROTOCOLS.md §1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include "frames/csum.h"
#include "proto/lorawan/lorawan.h"

void lw_ip4_csum_fill(uint8_t *frame)
{
	uint8_t *ip = frame + 14;
	uint16_t c;

	ip[10] = ip[11] = 0;
	c = csum_fold(csum_add(ip, 20, 0));
	ip[10] = c >> 8;
	ip[11] = c;
}

void lw_udp4_headers(uint8_t *out, const struct lw_net *net, uint32_t saddr, uint16_t sport,
		     uint32_t len)
{
	uint8_t *ip = out + 14, *udp = ip + 20;
	uint32_t ulen = len - 34;

	memcpy(out, net->dst_mac, 6);
	memcpy(out + 6, net->src_mac, 6);
	out[12] = 0x08;
	out[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (len - 14) >> 8;
	ip[3] = (len - 14) & 0xff;
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &saddr, 4);
	memcpy(ip + 16, &net->daddr, 4);
	lw_ip4_csum_fill(out);
	udp[0] = sport >> 8;
	udp[1] = sport;
	udp[2] = net->dport >> 8;
	udp[3] = net->dport;
	udp[4] = ulen >> 8;
	udp[5] = ulen;
}

void lw_udp4_csum_fill(uint8_t *frame, uint32_t len)
{
	uint8_t *ip = frame + 14, *udp = ip + 20;
	uint32_t ulen = len - 34, sum = csum_add(ip + 12, 8, 0) + IPPROTO_UDP + ulen;
	uint16_t c;

	udp[6] = udp[7] = 0;
	c = csum_fold(csum_add(udp, ulen, sum));
	/* a computed zero is sent as all ones: zero means "no checksum" */
	if (!c)
		c = 0xffff;
	udp[6] = c >> 8;
	udp[7] = c;
}

/*
 * The frame's UDP sum without the bytes the program writes (bpf/shared/lorawan.h):
 * the whole sum, less the token, tmst and base64 bytes, the checksum field and,
 * when the program writes it (heard by more than one gateway), the gateway EUI,
 * each at its own offset's place in a word.
 */
static uint16_t csum_rest(const uint8_t *frame, uint32_t len, const struct lw_device *d,
			  uint32_t chars, bool eui_written)
{
	const uint8_t *pd = frame + XR_LORA_PUSH_DATA_OFF;
	uint32_t sum, out = 0;

	sum = csum_add(frame + 26, 8, 0) + IPPROTO_UDP + (len - 34);
	sum = csum_add(frame + 34, len - 34, sum);
	out = csum_add(frame + XR_LORA_UDP_CHECK_OFF, 2, 0) +
	      (eui_written ? csum_add(pd + 4, 8, 0) : 0);
	out += xr_lora_csum_byte(pd[1], XR_LORA_PUSH_DATA_OFF + 1) +
	       xr_lora_csum_byte(pd[2], XR_LORA_PUSH_DATA_OFF + 2);
	for (uint32_t i = 0; i < 10; i++)
		out += xr_lora_csum_byte(frame[d->tmst_off + i], d->tmst_off + i);
	for (uint32_t i = 0; i < chars; i++)
		out += xr_lora_csum_byte(frame[d->b64_off + 8 + i], d->b64_off + 8 + i);
	/* one's-complement subtraction: add the complement */
	return xr_lora_csum_fold(xr_lora_csum_fold(sum) + (uint16_t)~xr_lora_csum_fold(out));
}

/*
 * The PHYPayload template: FCnt's low 16 bits of round 0, FOpts (plaintext in
 * LoRaWAN 1.0.x), FRMPayload in plaintext, MIC zero.
 */
int lw_phy_template(const struct lw_device *d, uint8_t *phy)
{
	memset(phy, 0, XR_LORA_MAX_PHY);
	phy[0] = d->confirmed ? 0x80 : 0x40; /* Confirmed / Unconfirmed Data Up, LoRaWAN R1 */
	phy[1] = d->dev_addr;
	phy[2] = d->dev_addr >> 8;
	phy[3] = d->dev_addr >> 16;
	phy[4] = d->dev_addr >> 24;
	phy[5] = (d->adr ? 0x80 : 0) | d->fopts_len; /* FCtrl: ADR, FOptsLen */
	phy[6] = d->fcnt_start;
	phy[7] = d->fcnt_start >> 8;
	memcpy(phy + 8, d->fopts, d->fopts_len);
	phy[8 + d->fopts_len] = d->fport;
	memcpy(phy + 9 + d->fopts_len, d->payload, d->payload_len);
	return 13 + d->fopts_len + d->payload_len;
}

int lw_build_frame(struct lw_fleet *f, size_t di, const struct lw_net *net, const uint8_t *join,
		   uint8_t *out, size_t cap)
{
	struct lw_device *d = &f->dev[di];
	/* the frame leaves as its first gateway's (the program rewrites the others' copies) */
	const struct lw_gateway *first = &f->gw[d->gw[0]];
	uint16_t sport = f->gw_addrs ? first->sport : net->sport;
	uint8_t phy[XR_LORA_MAX_PHY], *pd = out + XR_LORA_PUSH_DATA_OFF;
	char js[512], b64[XR_LORA_B64_MAX + 4];
	int plen, n, pre;
	uint32_t len;

	if (join) {
		plen = LW_JOIN_REQUEST_LEN;
		memcpy(phy, join, plen);
	} else {
		plen = lw_phy_template(d, phy);
	}

	EVP_EncodeBlock((unsigned char *)b64, phy, plen);
	pre = snprintf(js, sizeof(js), "{\"rxpk\":[{\"tmst\":");
	n = snprintf(
		js + pre, sizeof(js) - pre,
		"1000000000,\"chan\":%u,\"rfch\":0,\"freq\":%u.%06u,\"stat\":1,\"modu\":\"LORA\","
		"\"datr\":\"SF%uBW%u\",\"codr\":\"%s\",\"rssi\":%d,\"lsnr\":%s%d.%d,\"size\":%d,\"data\":\"",
		d->chan, d->freq_hz / 1000000, d->freq_hz % 1000000, d->sf, d->bw_khz,
		lw_codr_names[d->codr], d->rssi, d->lsnr10 < 0 ? "-" : "", abs(d->lsnr10) / 10,
		abs(d->lsnr10) % 10, plen);
	d->tmst_off = XR_LORA_PUSH_DATA_OFF + 12 + pre;
	d->b64_off = XR_LORA_PUSH_DATA_OFF + 12 + pre + n;
	n = pre + n;
	n += snprintf(js + n, sizeof(js) - n, "%s\"}]}", b64);
	len = XR_LORA_PUSH_DATA_OFF + 12 + n;
	if (len > cap || len > XR_MAX_FRAME)
		return -E2BIG;

	lw_udp4_headers(out, net, f->gw_addrs ? first->saddr : net->saddr, sport, len);
	/* Semtech UDP v2 PUSH_DATA: version, token, identifier 0, gateway EUI, JSON */
	pd[0] = 2;
	pd[1] = pd[2] = 0;
	pd[3] = 0;
	memcpy(pd + 4, f->gw[d->gw[0]].eui, 8);
	memcpy(pd + 12, js, n);
	lw_udp4_csum_fill(out, len);
	/* a JoinRequest is sent as built: its base64 is part of the rest */
	d->csum_rest = csum_rest(out, len, d, join ? 0 : xr_lora_b64_chars(plen), f->heard_by > 1);
	return len;
}
