// SPDX-License-Identifier: GPL-2.0
/*
 * selftest, LoRaWAN downlinks: the BPF downlink reader and decoder against
 * json-c and OpenSSL over random PULL_RESPs, and a published 1.1 downlink.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <json-c/json.h>
#include "engine/engine.h"
#include "util/log.h"
#include "proto/lorawan/kernel.h"
#include "proto/lorawan/lorawan.h"
#include "selftest/lorawan.h"

/*
 * Downlinks: random PULL_RESPs, as a network server may write them (the txpk's
 * keys in any order, white space around the colons, "data" anywhere, invalid
 * base64, no "data", frames cut short), read by the BPF downlink reader and
 * by json-c and OpenSSL's base64. The reader finds the first "data" key in
 * the first XR_LORA_DL_SCAN bytes of the JSON and needs 12 characters of its
 * value; a string value "data" would fool it, and is not generated. Half the
 * values are whole downlinks (12 to 128 bytes, a third with a bit changed):
 * the BPF decoder of the whole PHYPayload and its MIC check (NwkSKey, B0
 * with the 32-bit FCntDown) against OpenSSL's base64 and CMAC.
 */
#define DL_FRAME 2048
#define DL_MAX 8192 /* downlinks in one selftest run */

static const char dl_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct dl_case {
	uint32_t len, full_len; /* the frame as sent, and before a cut */
	int value_at; /* offset of the "data" value in the frame; -1: none */
	uint32_t fcnt; /* the FCntDown its MIC is checked at */
	bool v11; /* its MIC is a 1.1 session's: SNwkSIntKey, ConfFCnt */
	uint16_t conf; /* that ConfFCnt */
};

/*
 * A downlink's MIC (OpenSSL's CMAC over B0 with Dir 1 | msg; in 1.1, B0's
 * bytes 1-2 are ConfFCnt, 0 in 1.0) into mac: 0 or -EIO.
 */
static int dl_mic(struct lw_crypto *c, const uint8_t key[16], uint16_t conf, const uint8_t *phy,
		  int len, uint32_t fcnt, uint8_t mac[16])
{
	uint8_t cm[16 + XR_LORA_MAX_PHY];
	int msg = len - 4;

	memcpy(cm, (uint8_t[]){ 0x49, conf, conf >> 8, 0, 0, 1 }, 6);
	memcpy(cm + 6, phy + 1, 4);
	memcpy(cm + 10, (uint8_t[]){ fcnt, fcnt >> 8, fcnt >> 16, fcnt >> 24, 0, msg }, 6);
	memcpy(cm + 16, phy, msg);
	return lw_cmac(c, key, cm, 16 + msg, mac) ? -EIO : 0;
}

/* Payload bytes of a downlink MAC command (LoRaWAN 1.1 §5, Class B of 1.0.3 §13); -1 unknown. */
static int ref_mac_len(uint8_t cid)
{
	switch (cid) {
	case 0x06: /* DevStatusReq */
	case 0x10: /* PingSlotInfoAns */ return 0;
	case 0x01: /* ResetConf */
	case 0x04: /* DutyCycleReq */
	case 0x08: /* RXTimingSetupReq */
	case 0x09: /* TxParamSetupReq */
	case 0x0b: /* RekeyConf */
	case 0x0c: /* ADRParamSetupReq */
	case 0x0f: /* RejoinParamSetupReq */ return 1;
	case 0x02: /* LinkCheckAns: Margin, GwCnt */
	case 0x0e: /* ForceRejoinReq */ return 2;
	case 0x12: /* BeaconTimingAns */
	case 0x13: /* BeaconFreqReq */ return 3;
	case 0x03: /* LinkADRReq */
	case 0x05: /* RXParamSetupReq */
	case 0x0a: /* DlChannelReq */
	case 0x11: /* PingSlotChannelReq */ return 4;
	case 0x07: /* NewChannelReq */
	case 0x0d: /* DeviceTimeAns: GPS seconds (4), fraction (1) */ return 5;
	}
	return -1;
}

/* A_i of a downlink (Dir 1) xor FRMPayload bytes from..to of phy, in place, by OpenSSL. */
static int ref_dl_decrypt(struct lw_crypto *c, const uint8_t key[16], uint8_t *phy, int from,
			  int to, uint32_t fcnt)
{
	for (int i = 0; from + 16 * i < to; i++) {
		uint8_t a[16] = { 1,	      0,	  0,	  0,	  0,	1,
				  phy[1],     phy[2],	  phy[3], phy[4], fcnt, fcnt >> 8,
				  fcnt >> 16, fcnt >> 24, 0,	  i + 1 },
			s[16];

		if (lw_aes128(c, key, a, s))
			return -EIO;
		for (int j = 0; j < 16 && from + 16 * i + j < to; j++)
			phy[from + 16 * i + j] ^= s[j];
	}
	return 0;
}

/*
 * The MAC commands a device reads in a downlink (len bytes, its MIC right):
 * FOpts, or the FRMPayload on FPort 0 decrypted. 0 with m set; 1 when FCtrl
 * says more FOpts than there are bytes; -EIO.
 */
static int dl_reference_mac(struct lw_crypto *c, const uint8_t key[16], bool v11, const uint8_t *in,
			    int len, uint32_t fcnt, struct xr_lora_dl_mac *m)
{
	uint8_t phy[XR_LORA_MAX_PHY];
	int fopts = in[5] & 15, at, end, cmds = 0;

	memset(m, 0, sizeof(*m));
	memcpy(phy, in, len);
	if (8 + fopts > len - 4)
		return 1;
	at = 8;
	end = 8 + fopts;
	/* 1.1: FOpts under NwkSEncKey (key), AFCntDown's block when an FPort > 0 follows */
	if (v11 && fopts &&
	    lw_fopts11(c, key,
		       end < len - 4 && phy[end] ? XR_LORA_FOPTS_A4_AFCNT :
						   XR_LORA_FOPTS_A4_UP_NFCNT,
		       1, phy + 1, fcnt, phy + 8, fopts))
		return -EIO;
	if (!fopts) {
		if (len < 14 || phy[8] != 0)
			return 0;
		at = 9;
		end = len - 4;
		m->in_frm = 1;
		if (ref_dl_decrypt(c, key, phy, at, end, fcnt))
			return -EIO;
	}
	while (at < end) {
		int l = ref_mac_len(phy[at]);

		if (cmds++ == XR_LORA_MAC_MAX_CMDS || l < 0 || at + 1 + l > end) {
			m->unknown = 1;
			break;
		}
		if (phy[at] == XR_LORA_CID_LINK_CHECK) {
			m->found |= XR_LORA_ASK_LINK_CHECK;
			m->margin = phy[at + 1];
			m->gw_cnt = phy[at + 2];
		} else if (phy[at] == XR_LORA_CID_DEVICE_TIME) {
			m->found |= XR_LORA_ASK_DEVICE_TIME;
			m->device_time = (uint64_t)(phy[at + 1] | phy[at + 2] << 8 |
						    phy[at + 3] << 16 | (uint32_t)phy[at + 4] << 24)
						 << 8 |
					 phy[at + 5];
		} else {
			m->other++;
		}
		at += 1 + l;
	}
	return 0;
}

/*
 * A downlink whose MAC commands mean something: known commands (LinkCheckAns
 * and DeviceTimeAns often), now and then an unknown CID, in FOpts or
 * encrypted in an FRMPayload on FPort 0; its length.
 */
static int dl_mac_phy(struct lw_crypto *c, const uint8_t key[16], bool v11, uint32_t fcnt,
		      uint8_t *phy, uint64_t (*rnd)(void))
{
	bool in_frm = rnd() % 2;
	int max = in_frm ? XR_LORA_MAX_PHY - 13 : 15, n = 0;
	uint8_t cmds[XR_LORA_MAX_PHY];

	while (n < max && rnd() % 6) {
		uint8_t cid =
			rnd() % 3 ? (rnd() % 2 ? XR_LORA_CID_LINK_CHECK : XR_LORA_CID_DEVICE_TIME) :
				    rnd() % 24;
		int l = ref_mac_len(cid);

		if (n + 1 + (l < 0 ? 0 : l) > max)
			break;
		cmds[n++] = cid;
		for (int i = 0; i < l; i++)
			cmds[n++] = rnd();
	}
	phy[5] = in_frm ? 0 : n;
	if (!in_frm) {
		memcpy(phy + 8, cmds, n);
		/* 1.1: under NwkSEncKey, NFCntDown's block (no FPort follows) */
		if (v11 &&
		    lw_fopts11(c, key, XR_LORA_FOPTS_A4_UP_NFCNT, 1, phy + 1, fcnt, phy + 8, n))
			return -EIO;
		return 12 + n;
	}
	phy[8] = 0;
	memcpy(phy + 9, cmds, n);
	if (ref_dl_decrypt(c, key, phy, 9, 9 + n, fcnt))
		return -EIO;
	return 13 + n;
}

/*
 * A downlink to the test device: random bytes, or (one in 3) MAC commands;
 * its MIC (a third of them then with a bit changed). Its length (len for
 * random bytes), or -EIO.
 */
static int dl_phy(struct lw_crypto *c, const uint8_t key[16], const uint8_t enc_key[16], bool v11,
		  uint16_t conf, uint32_t fcnt, uint8_t *phy, int len, uint64_t (*rnd)(void))
{
	uint8_t mac[16];

	for (int i = 0; i < len; i++)
		phy[i] = rnd();
	phy[0] = 0x60; /* unconfirmed data down */
	phy[6] = fcnt;
	phy[7] = fcnt >> 8;
	if (rnd() % 3 == 0) {
		len = dl_mac_phy(c, enc_key, v11, fcnt, phy, rnd);
		if (len < 0)
			return len;
	}
	if (dl_mic(c, key, conf, phy, len, fcnt, mac))
		return -EIO;
	memcpy(phy + len - 4, mac, 4);
	if (rnd() % 3 == 0) {
		int bit = rnd() % (8 * len);

		phy[bit / 8] ^= 1 << bit % 8;
	}
	return len;
}

static int dl_frame(uint8_t *f, struct dl_case *dc, uint64_t (*rnd)(void), struct lw_crypto *c,
		    const uint8_t key[16], const uint8_t enc_key[16])
{
	static const char *const ws[] = { "", " ", "  ", "\t", "\n", " \n " };
	static const char *const keys[] = { "imme", "tmst", "freq", "rfch", "powe", "modu",
					    "datr", "codr", "ipol", "size", "data" };
	char *js = (char *)f + XR_LORA_PUSH_DATA_OFF + 4, *end = (char *)f + DL_FRAME - 1;
	int order[11], nk = rnd() % 8 ? 11 : 10; /* one in 8 without "data" */
	char *p = js;

	memset(f, 0, XR_LORA_PUSH_DATA_OFF + 4);
	f[XR_LORA_PUSH_DATA_OFF] = 2;
	f[XR_LORA_PUSH_DATA_OFF + 3] = XR_LORA_PULL_RESP;
	for (int i = 0; i < 11; i++)
		order[i] = i;
	for (int i = 10; i > 0; i--) {
		int j = rnd() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	dc->value_at = -1;
	p += snprintf(p, end - p, "{\"txpk\":{");
	/* one in 6: a long string first, which may push "data" past the scanned bytes */
	if (rnd() % 6 == 0) {
		int n = 300 + rnd() % 400;

		p += snprintf(p, end - p, "\"pad\":\"");
		memset(p, 'x', n);
		p += n;
		p += snprintf(p, end - p, "\",");
	}
	for (int i = 0, first = 1; i < 11; i++) {
		if (order[i] == 10 && nk == 10)
			continue;
		if (!first)
			*p++ = ',';
		first = 0;
		if (order[i] == 10) {
			int n = rnd() % 40;

			p += snprintf(p, end - p, "\"data\"%s:%s\"", ws[rnd() % 6], ws[rnd() % 6]);
			dc->value_at = (uint8_t *)p - f;
			dc->fcnt = rnd();
			if (rnd() % 2) {
				uint8_t phy[XR_LORA_MAX_PHY];
				int len = 12 + rnd() % (XR_LORA_MAX_PHY - 11);

				len = dl_phy(c, key, enc_key, dc->v11, dc->conf, dc->fcnt, phy, len,
					     rnd);
				if (len < 0)
					return -EIO;
				p += EVP_EncodeBlock((unsigned char *)p, phy, len);
				*p++ = '"';
				continue;
			}
			for (int k = 0; k < n; k++)
				*p++ = dl_b64[rnd() % 64];
			/* one in 5: a character that is not base64 among the first 12 */
			if (n >= 12 && rnd() % 5 == 0)
				p[-n + (int)(rnd() % 12)] = "-.=! "[rnd() % 5];
			*p++ = '"';
			continue;
		}
		p += snprintf(p, end - p, "\"%s\"%s:%s", keys[order[i]], ws[rnd() % 6],
			      ws[rnd() % 6]);
		if (order[i] == 5)
			p += snprintf(p, end - p, "\"LORA\"");
		else if (order[i] == 6)
			p += snprintf(p, end - p, "\"SF%uBW125\"", 7 + (unsigned int)(rnd() % 6));
		else if (order[i] == 7)
			p += snprintf(p, end - p, "\"4/5\"");
		else if (order[i] == 0 || order[i] == 8)
			p += snprintf(p, end - p, rnd() % 2 ? "true" : "false");
		else
			p += snprintf(p, end - p, "%llu",
				      (unsigned long long)(rnd() % 4000000000ULL));
	}
	p += snprintf(p, end - p, "}}");
	dc->full_len = dc->len = (uint8_t *)p - f;
	/* one in 4: cut short anywhere after the header */
	if (rnd() % 4 == 0)
		dc->len = XR_LORA_PUSH_DATA_OFF + 4 +
			  rnd() % (dc->full_len - XR_LORA_PUSH_DATA_OFF - 4);
	return 0;
}

/*
 * The txpk's "data" string as json-c reads the whole frame, into v (DL_FRAME
 * bytes), when the first "data" key is within the bytes the reader scans:
 * its length, or -1.
 */
static int dl_value(const uint8_t *f, const struct dl_case *dc, char *v)
{
	size_t jl = dc->full_len - XR_LORA_PUSH_DATA_OFF - 4;
	char *text = strndup((const char *)f + XR_LORA_PUSH_DATA_OFF + 4, jl), *first;
	json_object *root = text ? json_tokener_parse(text) : NULL, *txpk, *data;
	int n = -1;

	first = text ? strstr(text, "\"data\"") : NULL;
	if (root && json_object_object_get_ex(root, "txpk", &txpk) &&
	    json_object_object_get_ex(txpk, "data", &data) &&
	    json_object_is_type(data, json_type_string) && first && first - text < XR_LORA_DL_SCAN)
		n = snprintf(v, DL_FRAME, "%s", json_object_get_string(data));
	json_object_put(root);
	free(text);
	return n;
}

/*
 * What the whole-PHYPayload decoder must find: its length and bytes, or -1
 * when the value is not strict base64 (whole groups, '=' only as padding),
 * decodes to more than XR_LORA_MAX_PHY bytes, or its closing quote is cut off.
 */
static int dl_reference_full(const uint8_t *f, const struct dl_case *dc, uint8_t *phy)
{
	uint8_t out[XR_LORA_B64_MAX];
	char v[DL_FRAME];
	int n = dl_value(f, dc, v), pad;

	if (n < 0 || dc->value_at < 0 || (uint32_t)(dc->value_at + n) >= dc->len)
		return -1;
	pad = n >= 1 && v[n - 1] == '=' ? (n >= 2 && v[n - 2] == '=' ? 2 : 1) : 0;
	if (n % 4 || (int)strspn(v, dl_b64) != n - pad || n / 4 * 3 - pad > XR_LORA_MAX_PHY ||
	    EVP_DecodeBlock(out, (const unsigned char *)v, n) < 0)
		return -1;
	memcpy(phy, out, n / 4 * 3 - pad);
	return n / 4 * 3 - pad;
}

/* Whether phy (len bytes) carries key's MIC at fcnt, by OpenSSL's CMAC; -1 when it cannot say. */
static int dl_reference_mic(struct lw_crypto *c, const uint8_t key[16], uint16_t conf,
			    const uint8_t *phy, int len, uint32_t fcnt)
{
	uint8_t mac[16];

	if (len < 12 || len > XR_LORA_MAX_PHY)
		return 0;
	if (dl_mic(c, key, conf, phy, len, fcnt, mac))
		return -1;
	return !memcmp(mac, phy + len - 4, 4);
}

/* What the reader must find in the whole frame: 0 and phy, or -1 (json-c and OpenSSL). */
static int dl_reference(const uint8_t *f, const struct dl_case *dc, uint8_t *phy)
{
	uint8_t out[12];
	char v[DL_FRAME];
	int n = dl_value(f, dc, v);

	if (n < 12 || strspn(v, dl_b64) < 12 ||
	    EVP_DecodeBlock(out, (const unsigned char *)v, 12) != 9)
		return -1;
	memcpy(phy, out, XR_LORA_DL_PHY);
	return 0;
}

/*
 * ChirpStack's LoRaWAN 1.1 downlink with encrypted FOpts (lrwn's PhyPayload
 * documentation): LinkCheckAns 02 07 01 on FPort 1 (AFCntDown's block) is
 * 22 ac 0a under NwkSEncKey 01..0200; the frame's MIC (SNwkSIntKey 01..0100,
 * ConfFCnt 0) too; and the reference's decryption gives the command back.
 */
int lw_fopts11_vector(struct lw_crypto *c, uint64_t *checked, uint64_t *mismatches)
{
	static const char *const name = "ChirpStack's 1.1 downlink with encrypted FOpts";
	uint8_t phy[20], e[16], si[16], fopts[3] = { 0x02, 0x07, 0x01 }, mac[16];

	lw_unhex("6004030201030000"
		 "22ac0a01"
		 "f0b468dd"
		 "aa5ed13a",
		 phy);
	lw_unhex("01010101010101010101010101010200", e);
	lw_unhex("01010101010101010101010101010100", si);
	*checked += 3;
	if (lw_fopts11(c, e, XR_LORA_FOPTS_A4_AFCNT, 1, phy + 1, 0, fopts, 3))
		return -EIO;
	if (memcmp(fopts, phy + 8, 3))
		lw_mismatch(mismatches, name, "lw_fopts11 encrypts to other bytes");
	if (dl_mic(c, si, 0, phy, sizeof(phy), 0, mac))
		return -EIO;
	if (memcmp(mac, phy + 16, 4))
		lw_mismatch(mismatches, name, "its MIC differs");
	if (lw_fopts11(c, e, XR_LORA_FOPTS_A4_AFCNT, 1, phy + 1, 0, fopts, 3))
		return -EIO;
	if (fopts[0] != 0x02 || fopts[1] != 0x07 || fopts[2] != 0x01)
		lw_mismatch(mismatches, name, "lw_fopts11 does not decrypt what it encrypted");
	return 0;
}

/* One load of the program for all of them: loading costs more than a thousand runs. */
int lw_selftest_downlinks(struct lw_crypto *c, const struct xr_aes_tables *tab, uint64_t cases,
			  uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches)
{
	size_t n = cases < DL_MAX ? cases : DL_MAX;
	uint8_t *frames = malloc(n * DL_FRAME), key[16], skey[16], ekey[16];
	struct xr_lora_dl_test *got = calloc(n, sizeof(*got));
	struct dl_case *dc = calloc(n, sizeof(*dc));
	uint32_t *lens = calloc(n, sizeof(*lens));
	struct xr_lora_dev dev = {};
	struct xr_lora_dev11 dev11 = {};
	int err = frames && got && dc && lens ? 0 : -ENOMEM;

	/* the test device: a random NwkSKey, its round keys and CMAC subkeys as the fleet's are made */
	for (int i = 0; i < 16; i++)
		key[i] = rnd();
	lw_aes_expand(tab, key, dev.nwk_rk);
	if (!err && lw_cmac_subkeys(c, key, (uint8_t *)dev.k1, (uint8_t *)dev.k2))
		err = -EIO;
	/* and a 1.1 session's SNwkSIntKey: a quarter of the downlinks carry its MIC, with a ConfFCnt */
	for (int i = 0; i < 16; i++)
		skey[i] = rnd();
	lw_aes_expand(tab, skey, dev11.s_rk);
	if (!err && lw_cmac_subkeys(c, skey, (uint8_t *)dev11.s_k1, (uint8_t *)dev11.s_k2))
		err = -EIO;
	/* and its NwkSEncKey: its MAC commands' key, in FOpts and on FPort 0 */
	for (int i = 0; i < 16; i++)
		ekey[i] = rnd();
	lw_aes_expand(tab, ekey, dev11.e_rk);
	for (size_t i = 0; i < n && !err; i++) {
		dc[i].v11 = rnd() % 4 == 0;
		dc[i].conf = dc[i].v11 && rnd() % 2 ? rnd() : 0;
		err = dl_frame(frames + i * DL_FRAME, &dc[i], rnd, c, dc[i].v11 ? skey : key,
			       dc[i].v11 ? ekey : key);
		lens[i] = dc[i].len;
		got[i].fcnt = dc[i].fcnt;
		got[i].v11 = dc[i].v11;
		got[i].conf_fcnt = dc[i].conf;
	}
	if (!err)
		err = lw_kernel_dl_test(frames, DL_FRAME, lens, n, &dev, &dev11, got);
	for (size_t i = 0; i < n && !err; i++) {
		uint8_t want[XR_LORA_DL_PHY], full[XR_LORA_B64_MAX];
		int ret = dl_reference(frames + i * DL_FRAME, &dc[i], want),
		    len = dl_reference_full(frames + i * DL_FRAME, &dc[i], full), mic;
		char what[96];

		/* cut short: found only when its 12 characters are all there */
		if (!ret && dc[i].len < dc[i].full_len &&
		    (dc[i].value_at < 0 || (uint32_t)dc[i].value_at + 12 > dc[i].len))
			ret = -1;
		snprintf(what, sizeof(what),
			 "downlink %zu (%u of %u bytes, value at %d, PHYPayload %d)", i, dc[i].len,
			 dc[i].full_len, dc[i].value_at, len);
		(*checked)++;
		if ((got[i].ret == 0) != (ret == 0))
			lw_mismatch(mismatches, what,
				    ret ? "BPF read a PHYPayload the reference does not" :
					  "BPF did not read the reference's PHYPayload");
		else if (!ret && memcmp(got[i].phy, want, XR_LORA_DL_PHY))
			lw_mismatch(mismatches, what, "BPF read other bytes");
		(*checked)++;
		if (got[i].len != len) {
			lw_mismatch(mismatches, what, "BPF decoded a PHYPayload of another length");
			continue;
		}
		if (len > 0 && memcmp(got[i].full, full, len))
			lw_mismatch(mismatches, what, "BPF decoded other bytes");
		mic = len < 0 ? 0 :
				dl_reference_mic(c, dc[i].v11 ? skey : key, dc[i].conf, full, len,
						 dc[i].fcnt);
		(*checked)++;
		if (mic < 0)
			err = -EIO;
		else if (got[i].mic_ok != mic)
			lw_mismatch(mismatches, what,
				    mic ? "BPF refused a downlink's right MIC" :
					  "BPF took a downlink's wrong MIC");
		if (mic == 1 && got[i].mic_ok) {
			struct xr_lora_dl_mac m;
			int mr = dl_reference_mac(c, dc[i].v11 ? ekey : key, dc[i].v11, full, len,
						  dc[i].fcnt, &m);

			(*checked)++;
			if (mr < 0)
				err = -EIO;
			else if ((got[i].mac_ret != 0) != (mr != 0))
				lw_mismatch(mismatches, what,
					    mr ? "BPF read MAC commands past the PHYPayload" :
						 "BPF refused a downlink's MAC commands");
			else if (!mr && memcmp(&got[i].mac, &m, sizeof(m)))
				lw_mismatch(mismatches, what, "BPF read other MAC commands");
		}
	}
	free(frames);
	free(got);
	free(dc);
	free(lens);
	return err;
}
