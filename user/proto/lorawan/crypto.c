// SPDX-License-Identifier: GPL-2.0
/*
 * LoRaWAN 1.0.x crypto: the reference implementation (OpenSSL) that the BPF
 * rewriter is held against, and what the BPF code needs precomputed (AES
 * tables, round keys, CMAC subkeys). MIC over B0 | msg, FRMPayload xor AES(A_i).
 * The join (JoinRequest, JoinAccept, session keys) runs here only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "proto/lorawan/lorawan.h"

static uint8_t xtime(uint8_t x)
{
	return (x << 1) ^ (x & 0x80 ? 0x1b : 0);
}

static uint8_t rotl8(uint8_t x, int s)
{
	return (x << s) | (x >> (8 - s));
}

void lw_aes_tables(struct xr_aes_tables *t)
{
	uint8_t p = 1, q = 1;

	/* the S-box (FIPS-197 §5.1.1): walk GF(2^8)* by 3 and its inverse by 1/3, then the affine map */
	do {
		p = p ^ xtime(p);
		q ^= q << 1;
		q ^= q << 2;
		q ^= q << 4;
		if (q & 0x80)
			q ^= 0x09;
		t->sbox[p] = (q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4)) ^ 0x63;
	} while (p != 1);
	t->sbox[0] = 0x63;
	/* T-tables: SubBytes and MixColumns of one byte, as four rotations of one column */
	for (int x = 0; x < 256; x++) {
		uint8_t s = t->sbox[x];
		uint32_t w = (uint32_t)xtime(s) << 24 | (uint32_t)s << 16 | (uint32_t)s << 8 |
			     (xtime(s) ^ s);

		t->te[0][x] = w;
		t->te[1][x] = w >> 8 | w << 24;
		t->te[2][x] = w >> 16 | w << 16;
		t->te[3][x] = w >> 24 | w << 8;
	}
}

void lw_aes_expand(const struct xr_aes_tables *t, const uint8_t key[16], uint32_t rk[44])
{
	uint8_t rcon = 1;

	for (int i = 0; i < 4; i++)
		rk[i] = (uint32_t)key[4 * i] << 24 | key[4 * i + 1] << 16 | key[4 * i + 2] << 8 |
			key[4 * i + 3];
	for (int i = 4; i < 44; i++) {
		uint32_t w = rk[i - 1];

		if (i % 4 == 0) {
			w = w << 8 | w >> 24;
			w = (uint32_t)t->sbox[w >> 24] << 24 |
			    (uint32_t)t->sbox[(w >> 16) & 0xff] << 16 |
			    (uint32_t)t->sbox[(w >> 8) & 0xff] << 8 | t->sbox[w & 0xff];
			w ^= (uint32_t)rcon << 24;
			rcon = xtime(rcon);
		}
		rk[i] = rk[i - 4] ^ w;
	}
}

struct lw_crypto {
	EVP_CIPHER_CTX *ecb;
	EVP_MAC *mac;
	EVP_MAC_CTX *cmac;
};

struct lw_crypto *lw_crypto_new(void)
{
	struct lw_crypto *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ecb = EVP_CIPHER_CTX_new();
	c->mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	c->cmac = c->mac ? EVP_MAC_CTX_new(c->mac) : NULL;
	if (!c->ecb || !c->cmac) {
		lw_crypto_free(c);
		return NULL;
	}
	return c;
}

void lw_crypto_free(struct lw_crypto *c)
{
	if (!c)
		return;
	EVP_CIPHER_CTX_free(c->ecb);
	EVP_MAC_CTX_free(c->cmac);
	EVP_MAC_free(c->mac);
	free(c);
}

int lw_aes128(struct lw_crypto *c, const uint8_t key[16], const uint8_t in[16], uint8_t out[16])
{
	int l;

	if (!EVP_EncryptInit_ex(c->ecb, EVP_aes_128_ecb(), NULL, key, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(c->ecb, 0) || !EVP_EncryptUpdate(c->ecb, out, &l, in, 16) ||
	    l != 16)
		return -EIO;
	return 0;
}

int lw_cmac(struct lw_crypto *c, const uint8_t key[16], const uint8_t *msg, size_t len,
	    uint8_t out[16])
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, "AES-128-CBC", 0),
		OSSL_PARAM_construct_end(),
	};
	size_t ol = 0;

	if (!EVP_MAC_init(c->cmac, key, 16, params) || !EVP_MAC_update(c->cmac, msg, len) ||
	    !EVP_MAC_final(c->cmac, out, &ol, 16) || ol != 16)
		return -EIO;
	return 0;
}

static void shift1(const uint8_t in[16], uint8_t out[16])
{
	uint8_t msb = in[0] & 0x80;

	for (int i = 0; i < 15; i++)
		out[i] = in[i] << 1 | in[i + 1] >> 7;
	out[15] = in[15] << 1;
	if (msb)
		out[15] ^= 0x87;
}

int lw_cmac_subkeys(struct lw_crypto *c, const uint8_t key[16], uint8_t k1[16], uint8_t k2[16])
{
	uint8_t zero[16] = {}, l[16];

	if (lw_aes128(c, key, zero, l))
		return -EIO;
	shift1(l, k1);
	shift1(k1, k2);
	return 0;
}

int lw_bpf_device(const struct lw_fleet *f, size_t di, const struct xr_aes_tables *t,
		  struct lw_crypto *c, struct xr_lora_dev *out)
{
	const struct lw_device *d = &f->dev[di];

	memset(out, 0, sizeof(*out));
	lw_aes_expand(t, d->nwk_s_key, out->nwk_rk);
	/* FPort 0 carries MAC commands, encrypted with NwkSKey (LoRaWAN 1.0.3 Table 4; 1.1: NwkSEncKey) */
	lw_aes_expand(t,
		      d->fport ? d->app_s_key :
		      d->v11   ? d->nwk_s_enc_key :
				 d->nwk_s_key,
		      out->enc_rk);
	out->v11 = d->v11;
	if (lw_cmac_subkeys(c, d->nwk_s_key, (uint8_t *)out->k1, (uint8_t *)out->k2))
		return -EIO;
	out->phy_len = lw_phy_template(d, out->phy);
	/* the program writes FCnt and MIC: the template's bytes there must be the same for every round */
	out->phy[6] = out->phy[7] = 0;
	out->frm_off = 9 + d->fopts_len;
	out->frm_len = d->payload_len;
	out->fcnt0 = d->fcnt_start;
	out->b64_off = d->b64_off;
	out->tmst_off = d->tmst_off;
	out->csum_rest = d->csum_rest;
	for (unsigned int k = 0; k < XR_LORA_MAX_HEARD; k++)
		out->gw[k] = k < f->heard_by ? d->gw[k] : 0;
	return 0;
}

int lw_bpf_device11(const struct lw_device *d, const struct xr_aes_tables *t, struct lw_crypto *c,
		    struct xr_lora_dev11 *out)
{
	memset(out, 0, sizeof(*out));
	lw_aes_expand(t, d->s_nwk_s_int_key, out->s_rk);
	lw_aes_expand(t, d->nwk_s_enc_key, out->e_rk);
	out->tx_dr = lw_tx_dr(d->freq_hz, d->sf, d->bw_khz);
	out->tx_ch = lw_tx_ch(d->freq_hz);
	return lw_cmac_subkeys(c, d->s_nwk_s_int_key, (uint8_t *)out->s_k1, (uint8_t *)out->s_k2) ?
		       -EIO :
		       0;
}

/* JoinEUI or DevEUI as on air: little-endian (the CSV writes EUIs MSB first) */
static void eui_le(uint8_t *out, const uint8_t eui[8])
{
	for (int i = 0; i < 8; i++)
		out[i] = eui[7 - i];
}

/* The key of the JoinRequest's MIC and of the JoinAccept: 1.0.x's AppKey, 1.1's NwkKey */
static const uint8_t *join_root_key(const struct lw_device *dev)
{
	return dev->join11 ? dev->nwk_key : dev->app_key;
}

int lw_join_request(struct lw_crypto *c, const struct lw_device *d, uint16_t nonce, uint8_t *phy)
{
	uint8_t mac[16];

	/* MHDR 00 | JoinEUI | DevEUI | DevNonce, each little-endian on air */
	phy[0] = 0x00;
	eui_le(phy + 1, d->join_eui);
	eui_le(phy + 9, d->dev_eui);
	phy[17] = nonce;
	phy[18] = nonce >> 8;
	if (lw_cmac(c, join_root_key(d), phy, 19, mac))
		return -EIO;
	memcpy(phy + 19, mac, 4);
	return 0;
}

static uint32_t le24(const uint8_t *b)
{
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

/* 1.1's JSIntKey = aes128(NwkKey, 0x06 | DevEUI | pad16) */
static int js_int_key(struct lw_crypto *c, const struct lw_device *dev, uint8_t key[16])
{
	uint8_t b[16] = { 0x06 };

	eui_le(b + 1, dev->dev_eui);
	return lw_aes128(c, dev->nwk_key, b, key) ? -EIO : 0;
}

int lw_join_accept_open(struct lw_crypto *c, const struct lw_device *dev, uint16_t dev_nonce,
			const uint8_t *phy, size_t len, struct lw_join_accept *ja)
{
	const uint8_t *root = join_root_key(dev);
	/* 1.1 with OptNeg: JoinReqType 0xff | JoinEUI | DevNonce ahead of the accept */
	uint8_t signed_msg[11 + 33], *plain = signed_msg + 11, mac[16], key[16];
	bool opt_neg;

	if ((len != 17 && len != 33) || phy[0] != 0x20)
		return -EINVAL;
	/* the server encrypts with AES decrypt, so that a device needs only AES encrypt to read it */
	plain[0] = phy[0];
	for (size_t i = 1; i < len; i += 16)
		if (lw_aes128(c, root, phy + i, plain + i))
			return -EIO;
	/* MIC = CMAC(key, [JoinReqType | JoinEUI | DevNonce |] MHDR | AppNonce | NetID | DevAddr | DLSettings | RxDelay | CFList) */
	opt_neg = dev->join11 && (plain[11] & 0x80);
	if (opt_neg) {
		signed_msg[0] = 0xff;
		eui_le(signed_msg + 1, dev->join_eui);
		signed_msg[9] = dev_nonce;
		signed_msg[10] = dev_nonce >> 8;
		if (js_int_key(c, dev, key) || lw_cmac(c, key, signed_msg, 11 + len - 4, mac))
			return -EIO;
	} else if (lw_cmac(c, root, plain, len - 4, mac)) {
		return -EIO;
	}
	if (memcmp(mac, plain + len - 4, 4))
		return -EBADMSG;
	memset(ja, 0, sizeof(*ja));
	ja->app_nonce = le24(plain + 1);
	ja->net_id = le24(plain + 4);
	ja->dev_addr = le24(plain + 7) | (uint32_t)plain[10] << 24;
	ja->dl_settings = plain[11];
	ja->rx_delay = plain[12];
	ja->opt_neg = opt_neg;
	ja->has_cflist = len == 33;
	if (ja->has_cflist)
		memcpy(ja->cflist, plain + 13, 16);
	return 0;
}

int lw_session_keys(struct lw_crypto *c, const struct lw_device *dev,
		    const struct lw_join_accept *ja, uint16_t dev_nonce, struct lw_keys *k)
{
	/*
	 * type | AppNonce | NetID | DevNonce | pad16 (1.0.x, and 1.1 without OptNeg), or
	 * type | JoinNonce | JoinEUI | DevNonce | pad16 (1.1 with OptNeg); little-endian fields
	 */
	uint8_t b[16] = { 0x01, ja->app_nonce, ja->app_nonce >> 8, ja->app_nonce >> 16 };
	const uint8_t *root = join_root_key(dev);

	memset(k, 0, sizeof(*k));
	if (!ja->opt_neg) {
		b[4] = ja->net_id;
		b[5] = ja->net_id >> 8;
		b[6] = ja->net_id >> 16;
		b[7] = dev_nonce;
		b[8] = dev_nonce >> 8;
		if (lw_aes128(c, root, b, k->nwk_s_key))
			return -EIO;
		b[0] = 0x02;
		return lw_aes128(c, root, b, k->app_s_key) ? -EIO : 0;
	}
	eui_le(b + 4, dev->join_eui);
	b[12] = dev_nonce;
	b[13] = dev_nonce >> 8;
	k->v11 = true;
	/* FNwkSIntKey 0x01, SNwkSIntKey 0x03, NwkSEncKey 0x04 from NwkKey; AppSKey 0x02 from AppKey */
	if (lw_aes128(c, dev->nwk_key, b, k->nwk_s_key))
		return -EIO;
	b[0] = 0x03;
	if (lw_aes128(c, dev->nwk_key, b, k->s_nwk_s_int_key))
		return -EIO;
	b[0] = 0x04;
	if (lw_aes128(c, dev->nwk_key, b, k->nwk_s_enc_key))
		return -EIO;
	b[0] = 0x02;
	return lw_aes128(c, dev->app_key, b, k->app_s_key) ? -EIO : 0;
}

/* A_i and B0 of an uplink (Dir 0): first | 4 x 00 | 00 | DevAddr (as on air) | FCnt (32 bits LE) | 00 | last */
static void uplink_block(uint8_t b[16], uint8_t first, const uint8_t *devaddr, uint32_t fcnt,
			 uint8_t last)
{
	memset(b, 0, 16);
	b[0] = first;
	memcpy(b + 6, devaddr, 4);
	b[10] = fcnt;
	b[11] = fcnt >> 8;
	b[12] = fcnt >> 16;
	b[13] = fcnt >> 24;
	b[15] = last;
}

int lw_fopts11(struct lw_crypto *c, const uint8_t key[16], uint8_t a4, uint8_t dir,
	       const uint8_t dev_addr[4], uint32_t fcnt, uint8_t *fopts, size_t n)
{
	uint8_t a[16], s[16];

	if (n > 15)
		return -EINVAL;
	/* 01 | 00 00 00 | a4 | Dir | DevAddr | FCnt | 00 | 01 */
	uplink_block(a, 0x01, dev_addr, fcnt, 0x01);
	a[4] = a4;
	a[5] = dir;
	if (lw_aes128(c, key, a, s))
		return -EIO;
	for (size_t i = 0; i < n; i++)
		fopts[i] ^= s[i];
	return 0;
}

int lw_mic11(struct lw_crypto *c, const uint8_t f_key[16], const uint8_t s_key[16],
	     uint16_t conf_fcnt, uint8_t tx_dr, uint8_t tx_ch, const uint8_t dev_addr[4],
	     uint32_t fcnt, const uint8_t *msg, size_t len, uint8_t mic[4])
{
	uint8_t cm[16 + XR_LORA_MAX_PHY], f[16], s[16];

	if (len > XR_LORA_MAX_PHY)
		return -EIO;
	uplink_block(cm, 0x49, dev_addr, fcnt, len);
	memcpy(cm + 16, msg, len);
	if (lw_cmac(c, f_key, cm, 16 + len, f))
		return -EIO;
	/* B1: 49 | ConfFCnt (2, LE) | TxDr | TxCh | Dir 0 | DevAddr | FCnt | 00 | len(msg) */
	cm[1] = conf_fcnt;
	cm[2] = conf_fcnt >> 8;
	cm[3] = tx_dr;
	cm[4] = tx_ch;
	if (lw_cmac(c, s_key, cm, 16 + len, s))
		return -EIO;
	memcpy(mic, s, 2);
	memcpy(mic + 2, f, 2);
	return 0;
}

int lw_ref_phy(struct lw_crypto *c, const struct lw_device *d, uint32_t fcnt, uint8_t *phy)
{
	uint8_t blk[16], s[16], cm[16 + XR_LORA_MAX_PHY], mac[16];
	int len = lw_phy_template(d, phy), msg = len - 4;
	/* FPort 0: the network's key (1.1: NwkSEncKey; 1.0: NwkSKey) */
	const uint8_t *key = d->fport ? d->app_s_key : d->v11 ? d->nwk_s_enc_key : d->nwk_s_key;

	phy[6] = fcnt;
	phy[7] = fcnt >> 8;
	/* A_i: 01 | 4 x 00 | Dir | DevAddr | FCnt (32 bits) | 00 | i */
	for (int i = 0; i * 16 < d->payload_len; i++) {
		uplink_block(blk, 0x01, phy + 1, fcnt, i + 1);
		if (lw_aes128(c, key, blk, s))
			return -EIO;
		for (int j = 0; j < 16 && i * 16 + j < d->payload_len; j++)
			phy[9 + d->fopts_len + i * 16 + j] ^= s[j];
	}
	/* 1.1: FOpts encrypted with NwkSEncKey, FCntUp's block */
	if (d->v11 && d->fopts_len &&
	    lw_fopts11(c, d->nwk_s_enc_key, XR_LORA_FOPTS_A4_UP_NFCNT, 0, phy + 1, fcnt, phy + 8,
		       d->fopts_len))
		return -EIO;
	/* 1.1: no ACK bit, so ConfFCnt 0; TxDr and TxCh as the server derives them from the rxpk */
	if (d->v11)
		return lw_mic11(c, d->nwk_s_key, d->s_nwk_s_int_key, 0,
				lw_tx_dr(d->freq_hz, d->sf, d->bw_khz), lw_tx_ch(d->freq_hz),
				phy + 1, fcnt, phy, msg, phy + msg) ?
			       -EIO :
			       len;
	/* B0: 49 | 4 x 00 | Dir | DevAddr | FCnt | 00 | len(msg) */
	uplink_block(cm, 0x49, phy + 1, fcnt, msg);
	memcpy(cm + 16, phy, msg);
	if (lw_cmac(c, d->nwk_s_key, cm, 16 + msg, mac))
		return -EIO;
	memcpy(phy + msg, mac, 4);
	return len;
}

int lw_ref_frame(struct lw_crypto *c, const struct lw_fleet *f, uint64_t n, uint32_t tmst,
		 uint8_t *frame, uint32_t len)
{
	uint8_t phy[XR_LORA_MAX_PHY], *pd = frame + XR_LORA_PUSH_DATA_OFF;
	char b64[XR_LORA_B64_MAX + 4], digits[16];
	const struct lw_device *d;
	unsigned int k;
	uint32_t fcnt;
	size_t di;
	int plen;

	lw_of_n(f, n, &di, &k, &fcnt);
	d = &f->dev[di];
	if (f->joining)
		plen = lw_join_request(c, d, d->dev_nonce, phy) ? -EIO : LW_JOIN_REQUEST_LEN;
	else
		plen = lw_ref_phy(c, d, fcnt, phy);
	if (plen < 0)
		return plen;
	pd[1] = n;
	pd[2] = n >> 8;
	memcpy(pd + 4, f->gw[d->gw[k]].eui, 8);
	if (f->gw_addrs) {
		const struct lw_gateway *g = &f->gw[d->gw[k]];

		memcpy(frame + 26, &g->saddr, 4);
		frame[34] = g->sport >> 8;
		frame[35] = g->sport;
		lw_ip4_csum_fill(frame);
	}
	snprintf(digits, sizeof(digits), "%010u", tmst);
	memcpy(frame + d->tmst_off, digits, 10);
	EVP_EncodeBlock((unsigned char *)b64, phy, plen);
	if (d->b64_off + strlen(b64) > len)
		return -EINVAL;
	memcpy(frame + d->b64_off, b64, strlen(b64));
	lw_udp4_csum_fill(frame, len);
	return 0;
}
