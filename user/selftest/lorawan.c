// SPDX-License-Identifier: GPL-2.0
/*
 * selftest, LoRaWAN part (downlinks: lorawan_downlink.c): the BPF AES-128 and AES-CMAC against RFC 4493's
 * vectors and OpenSSL; the BPF uplink rewriter against published LoRaWAN
 * uplinks (PROTOCOLS.md §4.2) and, byte for byte, against the reference
 * (user/proto/lorawan/fleet.c on OpenSSL) over random fleets, payload sizes and FCnt
 * values, 16-bit wrap included.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <openssl/evp.h>
#include <json-c/json.h>
#include "engine/engine.h"
#include "engine/xbuild.h"
#include "frames/frameset.h"
#include "util/log.h"
#include "proto/lorawan/aesni.h"
#include "proto/lorawan/kernel.h"
#include "proto/lorawan/lorawan.h"
#include "selftest/selftest.h"
#include "selftest/lorawan.h"

#define LW_NS 24

int lw_unhex(const char *s, uint8_t *out)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = v;
	}
	return n;
}

void lw_mismatch(uint64_t *mismatches, const char *what, const char *why)
{
	(*mismatches)++;
	if (*mismatches <= 5)
		fprintf(stderr, "selftest lorawan: %s: %s\n", what, why);
}

/* The BPF code's CMAC input: the message, then 0x80 and zeros to a whole block (bpf/proto/lorawan.bpf.h). */
static void bpf_cmac_input(struct xr_aes_test *t, const uint8_t *msg, size_t len)
{
	memset(t->cm, 0, sizeof(t->cm));
	memcpy(t->cm, msg, len);
	if (len % 16 || !len)
		t->cm[len] = 0x80;
	t->len = len;
}

static int aes_checks(struct lw_crypto *c, const struct xr_aes_tables *tab, uint64_t *checked,
		      uint64_t *mismatches)
{
	/* RFC 4493 §4 */
	static const char *key = "2b7e151628aed2a6abf7158809cf4f3c",
			  *k1 = "fbeed618357133667c85e08f7236a8de",
			  *k2 = "f7ddac306ae266ccf90bc11ee46d513b",
			  *msg = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
				 "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
	static const struct {
		size_t len;
		const char *mac;
	} ex[] = {
		{ 0, "bb1d6929e95937287fa37d129b756746" },
		{ 16, "070a16b46b4d4144f79bdd9dd04a287c" },
		{ 40, "dfa66747de9ae63030ca32611497c827" },
		{ 64, "51f0bebf7e3b9d92fc49741779363cfe" },
	};
	uint8_t kb[16], m[64], want[16], got1[16], got2[16], ecb0[16];
	struct xr_aes_test t;
	char what[64];
	int err;

	lw_unhex(key, kb);
	lw_unhex(msg, m);
	lw_unhex(k1, want);
	if (lw_cmac_subkeys(c, kb, got1, got2))
		return -EIO;
	(*checked)++;
	if (memcmp(got1, want, 16))
		lw_mismatch(mismatches, "RFC 4493 K1", "differs");
	lw_unhex(k2, want);
	(*checked)++;
	if (memcmp(got2, want, 16))
		lw_mismatch(mismatches, "RFC 4493 K2", "differs");
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		memset(&t, 0, sizeof(t));
		lw_aes_expand(tab, kb, t.rk);
		memcpy(t.k1, got1, 16);
		memcpy(t.k2, got2, 16);
		bpf_cmac_input(&t, m, ex[i].len);
		err = lw_kernel_aes_test(&t);
		if (err)
			return err;
		lw_unhex(ex[i].mac, want);
		snprintf(what, sizeof(what), "RFC 4493 example %zu (len %zu)", i + 1, ex[i].len);
		(*checked)++;
		if (memcmp(t.mac, want, 16))
			lw_mismatch(mismatches, what, "the BPF CMAC differs");
		(*checked)++;
		if (lw_cmac(c, kb, m, ex[i].len, got1) || memcmp(got1, want, 16))
			lw_mismatch(mismatches, what, "OpenSSL's CMAC differs");
		lw_cmac_subkeys(c, kb, got1, got2);
	}
	/* AES-128(K, 0) = 7df76b0c1ab899b33e42f047b91b546f (PROTOCOLS.md §4.1) */
	memset(&t, 0, sizeof(t));
	lw_aes_expand(tab, kb, t.rk);
	err = lw_kernel_aes_test(&t);
	if (err)
		return err;
	lw_unhex("7df76b0c1ab899b33e42f047b91b546f", ecb0);
	(*checked)++;
	if (memcmp(t.block, ecb0, 16))
		lw_mismatch(mismatches, "AES-128(RFC 4493 key, 0)", "the BPF AES differs");
	return 0;
}

/* Random keys, blocks and lengths: BPF AES and CMAC against OpenSSL. */
static int aes_random(struct lw_crypto *c, const struct xr_aes_tables *tab, uint64_t (*rnd)(void),
		      int cases, uint64_t *checked, uint64_t *mismatches)
{
	for (int i = 0; i < cases; i++) {
		uint8_t key[16], msg[16 + XR_LORA_MAX_PHY], blk[16], want[16];
		size_t len = rnd() % (sizeof(msg) + 1);
		struct xr_aes_test t;
		int err;

		for (int b = 0; b < 16; b++)
			key[b] = rnd();
		for (size_t b = 0; b < sizeof(msg); b++)
			msg[b] = rnd();
		memset(&t, 0, sizeof(t));
		lw_aes_expand(tab, key, t.rk);
		if (lw_cmac_subkeys(c, key, (uint8_t *)t.k1, (uint8_t *)t.k2))
			return -EIO;
		memcpy(blk, msg, 16);
		memcpy(t.block, blk, 16);
		bpf_cmac_input(&t, msg, len);
		err = lw_kernel_aes_test(&t);
		if (err)
			return err;
		*checked += 2;
		if (lw_aes128(c, key, blk, want) || memcmp(t.block, want, 16))
			lw_mismatch(mismatches, "random AES-128 block", "BPF and OpenSSL differ");
		if (aesni_available()) {
			uint8_t ni[16];

			(*checked)++;
			aesni_encrypt(t.rk, blk, ni);
			if (memcmp(ni, want, 16))
				lw_mismatch(mismatches, "random AES-128 block",
					    "AES-NI and OpenSSL differ");
		}
		if (lw_cmac(c, key, msg, len, want) || memcmp(t.mac, want, 16)) {
			char what[48];

			snprintf(what, sizeof(what), "random AES-CMAC of %zu bytes", len);
			lw_mismatch(mismatches, what, "BPF and OpenSSL differ");
		}
	}
	return 0;
}

/* Every device's frame into fs, addressed within 198.18.0.0/15; a joining fleet's are JoinRequests. */
static int fleet_frames(struct lw_fleet *f, struct lw_crypto *c, struct frameset *fs)
{
	struct lw_net net = { .src_mac = { 2, 0, 0xc6, 0x12, 0, 1 },
			      .dst_mac = { 2, 0, 0xc6, 0x12, 0, 2 },
			      .saddr = htonl(0xc6120001),
			      .daddr = htonl(0xc6120002),
			      .sport = 1700,
			      .dport = LW_DEFAULT_PORT };
	uint8_t buf[XR_MAX_FRAME], join[LW_JOIN_REQUEST_LEN];

	frameset_init(fs);
	for (size_t d = 0; d < f->ndev; d++) {
		int len;

		if (f->joining && lw_join_request(c, &f->dev[d], f->dev[d].dev_nonce, join))
			return -EIO;
		len = lw_build_frame(f, d, &net, f->joining ? join : NULL, buf, sizeof(buf));

		if (len < 0 || frameset_add(fs, buf, len, len, 0))
			return len < 0 ? len : -ENOMEM;
	}
	frameset_finish(fs);
	return 0;
}

/* Each built frame of ns (out, out_len) against the reference, with the tmst it carries. */
static int frames_against_ref(struct lw_crypto *c, struct lw_fleet *f, const struct frameset *fs,
			      const uint64_t *ns, size_t count, const uint8_t *out,
			      const uint32_t *out_len, const char *label, uint64_t *checked,
			      uint64_t *mismatches)
{
	uint8_t ref[XR_MAX_FRAME];

	for (size_t i = 0; i < count; i++) {
		const struct fs_frame *fr = &fs->frames[(ns[i] / f->heard_by) % f->ndev];
		const uint8_t *got = out + i * XR_MAX_FRAME;
		const struct lw_device *d = &f->dev[(ns[i] / f->heard_by) % f->ndev];
		char what[112], digits[11];
		uint32_t tmst;

		snprintf(what, sizeof(what), "%s, n=%llu", label, (unsigned long long)ns[i]);
		(*checked)++;
		if (out_len[i] != fr->len) {
			lw_mismatch(mismatches, what,
				    out_len[i] ? "another length" : "the frame was refused");
			continue;
		}
		/* the program's tmst is the clock's: take it from its frame, the reference renders it again */
		memcpy(digits, got + d->tmst_off, 10);
		digits[10] = 0;
		tmst = strtoul(digits, NULL, 10);
		if (tmst < 1000000000U) {
			lw_mismatch(mismatches, what, "tmst is not 10 digits");
			continue;
		}
		memcpy(ref, fs->bytes + fr->off, fr->len);
		if (lw_ref_frame(c, f, ns[i], tmst, ref, fr->len))
			return -EIO;
		if (memcmp(got, ref, fr->len)) {
			char why[96];
			size_t at = 0;

			while (got[at] == ref[at])
				at++;
			snprintf(why, sizeof(why),
				 "bytes differ from the reference from offset %zu (b64 at %u)", at,
				 d->b64_off);
			lw_mismatch(mismatches, what, why);
		}
	}
	return 0;
}

/* Every uplink of ns that fits a ring slot: how many (as aesni.c counts a slot's characters). */
static uint64_t ring_fits(const struct lw_fleet *f, const uint64_t *ns, size_t count)
{
	uint64_t fit = 0;

	for (size_t i = 0; i < count; i++) {
		const struct lw_device *d = &f->dev[(ns[i] / f->heard_by) % f->ndev];
		/* the whole PHYPayload, FOpts too */
		size_t len = 13 + d->fopts_len + d->payload_len;

		fit += (len + 2) / 3 * 4 - (3 - len % 3) % 3 - 8 <= XR_LORA_RING_CHARS;
	}
	return fit;
}

/* The JoinRequests of ns whose copy a device's record names a gateway for (lw_xsk_build's). */
static uint64_t joins_held(const struct lw_fleet *f, const uint64_t *ns, size_t count)
{
	uint64_t held = 0;

	for (size_t i = 0; i < count; i++)
		held += ns[i] % f->heard_by < XR_LORA_MAX_HEARD;
	return held;
}

/* Whether a device of f sends confirmed uplinks or asks for MAC answers. */
static bool fleet_confirms(const struct lw_fleet *f)
{
	for (size_t d = 0; d < f->ndev; d++)
		if (f->dev[d].confirmed || f->dev[d].mac_asks)
			return true;
	return false;
}

/*
 * Builds the frames of ns with the BPF rewriter (test mode) and, with the
 * ring or JoinRequests, as the xsk engine does (the ring's uplinks and the
 * JoinRequests finished in userspace, lw_xsk_build), and compares each with
 * the reference.
 */
static int fleet_check(const struct iface *lo, struct lw_crypto *c, struct lw_fleet *f,
		       const uint64_t *ns, size_t count, bool precompute, const char *label,
		       uint64_t *checked, uint64_t *mismatches)
{
	struct engine_opts o = { .threads = 1 };
	struct lw_kernel lk;
	uint64_t hits = 0, here = 0;
	uint8_t *out = malloc(count * XR_MAX_FRAME);
	uint32_t out_len[LW_NS];
	char xsk_label[112];
	struct frameset fs;
	int err;

	if (!out || count > LW_NS) {
		free(out);
		return -ENOMEM;
	}
	lw_kernel_init(&lk, f, true, precompute, &o);
	err = fleet_frames(f, c, &fs);
	if (!err) {
		o.fs = &fs;
		err = kengine_run_frames(lo, &o, ns, count, out, out_len, &hits);
	}
	/* with the ring, every uplink that fits a slot must have come from it */
	if (!err && precompute) {
		(*checked)++;
		if (hits < 1 && ring_fits(f, ns, count))
			lw_mismatch(mismatches, label, "the precomputed ring was never used");
	}
	if (!err)
		err = frames_against_ref(c, f, &fs, ns, count, out, out_len, label, checked,
					 mismatches);
	if (!err && (precompute || f->joining)) {
		snprintf(xsk_label, sizeof(xsk_label), "%s, xsk engine", label);
		err = xbuild_run_frames(lo, &o, ns, count, out, out_len, &here);
		(*checked)++;
		/* confirmed devices' uplinks are stamped for their ACKs: the program's to build */
		if (!err && f->joining && here != joins_held(f, ns, count))
			lw_mismatch(mismatches, xsk_label,
				    "userspace did not finish every JoinRequest");
		else if (!err && !f->joining &&
			 here != (fleet_confirms(f) ? 0 : ring_fits(f, ns, count)))
			lw_mismatch(mismatches, xsk_label,
				    "userspace did not finish every uplink of the ring");
		if (!err)
			err = frames_against_ref(c, f, &fs, ns, count, out, out_len, xsk_label,
						 checked, mismatches);
	}
	lw_kernel_free(&lk);
	frameset_free(&fs);
	free(out);
	return err;
}

/* Published uplinks (PROTOCOLS.md §4.2, U1, U2 and U4) out of the BPF rewriter. */
static int vectors(const struct iface *lo, struct lw_crypto *c, uint64_t *checked,
		   uint64_t *mismatches)
{
	static const struct {
		const char *name, *nwk, *app, *payload, *phy;
		uint32_t addr, fcnt;
		uint8_t fport;
		const char *fopts;
		uint8_t confirmed;
		const char *s_nwk; /* a 1.1 session: nwk is FNwkSIntKey, this SNwkSIntKey; ADR set */
		uint32_t freq; /* 0: 868.1 MHz */
		uint8_t sf; /* 0: SF7 */
	} v[] = {
		{ "U1 (lora-packet, FCnt 2)", "44024241ed4ce9a68c6a8bc055233fd3",
		  "ec925802ae430ca77fd3dd73cb2cc588", "74657374",
		  "40f17dbe4900020001954378762b11ff0d", 0x49be7df1, 2, 1 },
		{ "U2 (lora-packet, 3 blocks)", "44024241ed4ce9a68c6a8bc055233fd3",
		  "ec925802ae430ca77fd3dd73cb2cc588",
		  "54686520717569636b2062726f776e20666f78206a756d7073206f76657220746865206c617a7920646f672e",
		  "40f17dbe490004000155332de41a11adc072553544429ce7787707d1c316e027e7e5e334263376affb8aa17ad300752"
		  "93f28dea8a20af3c5e7",
		  0x49be7df1, 4, 1 },
		{ "U4 (lora-packet, FPort 0)", "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4",
		  "00000000000000000000000000000000", "02", "40d4c3b2a1001000002712a3f9c9",
		  0xa1b2c3d4, 16, 0 },
		{ "U3 (brocaar/lorawan, confirmed, FOpts DevStatusAns)",
		  "0102030405060708090a0b0c0d0e0f10", "100f0e0d0c0b0a090807060504030201",
		  "01020304", "80040302010300000673070ae264d4f7e117d2c0", 0x01020304, 0, 10,
		  "067307", 1 },
		/* TxDr 2 = SF10BW125 and TxCh 3 = 867.1 MHz in EU868 */
		{ "lora-packet's Lorawan11 (brocaar), LoRaWAN 1.1",
		  "02020202020202020202020202020203", "01010101010101010101010101010101",
		  "68656c6c6f", "400403020180010001a6946426157612366a", 0x01020304, 1, 1, NULL, 0,
		  "02020202020202020202020202020202", 867100000, 10 },
	};
	const size_t nv = sizeof(v) / sizeof(v[0]);
	struct lw_device dev[5] = {};
	struct lw_gateway gw = { { 1, 2, 3, 4, 5, 6, 7, 8 } };
	struct lw_fleet f = { .dev = dev, .ndev = nv, .gw = &gw, .ngw = 1, .heard_by = 1 };
	struct engine_opts o = { .threads = 1 };
	struct lw_kernel lk;
	uint8_t *out = malloc(nv * XR_MAX_FRAME), phy[XR_LORA_MAX_PHY], want[XR_LORA_MAX_PHY];
	char b64[XR_LORA_B64_MAX + 4];
	uint32_t out_len[5];
	uint64_t ns[5] = { 0, 1, 2, 3, 4 };
	struct frameset fs;
	int err;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < nv; i++) {
		dev[i].dev_addr = v[i].addr;
		lw_unhex(v[i].nwk, dev[i].nwk_s_key);
		lw_unhex(v[i].app, dev[i].app_s_key);
		dev[i].payload_len = lw_unhex(v[i].payload, dev[i].payload);
		dev[i].fcnt_start = v[i].fcnt;
		dev[i].fport = v[i].fport;
		dev[i].confirmed = v[i].confirmed;
		dev[i].fopts_len = v[i].fopts ? lw_unhex(v[i].fopts, dev[i].fopts) : 0;
		dev[i].freq_hz = v[i].freq ? v[i].freq : 868100000;
		dev[i].sf = v[i].sf ? v[i].sf : 7;
		dev[i].v11 = dev[i].adr = v[i].s_nwk;
		if (v[i].s_nwk)
			lw_unhex(v[i].s_nwk, dev[i].s_nwk_s_int_key);
		dev[i].bw_khz = 125;
	}
	lw_kernel_init(&lk, &f, true, false, &o);
	err = fleet_frames(&f, c, &fs);
	if (!err) {
		o.fs = &fs;
		err = kengine_run_frames(lo, &o, ns, nv, out, out_len, NULL);
	}
	lw_kernel_free(&lk);
	for (size_t i = 0; i < nv && !err; i++) {
		int wl = lw_unhex(v[i].phy, want), pl;
		size_t bl;

		*checked += 2;
		pl = lw_ref_phy(c, &dev[i], v[i].fcnt, phy);
		if (pl != wl || memcmp(phy, want, wl))
			lw_mismatch(mismatches, v[i].name, "the reference (OpenSSL) differs");
		bl = EVP_EncodeBlock((unsigned char *)b64, want, wl);
		if (!out_len[i] || dev[i].b64_off + bl > out_len[i] ||
		    memcmp(out + i * XR_MAX_FRAME + dev[i].b64_off, b64, bl)) {
			char why[300];

			snprintf(why, sizeof(why),
				 "the BPF rewriter's base64 differs: %.*s, expected %s",
				 out_len[i] ? (int)bl : 0, out + i * XR_MAX_FRAME + dev[i].b64_off,
				 b64);
			lw_mismatch(mismatches, v[i].name, why);
		}
	}
	frameset_free(&fs);
	free(out);
	return err;
}

/*
 * lora-packet's LoRaWAN 1.1 MIC example (mic_test.ts): a frame whose keys but
 * not plaintext are published, so the MIC alone (lw_mic11), and with one
 * bit of the message changed.
 */
static int mic11_vector(struct lw_crypto *c, uint64_t *checked, uint64_t *mismatches)
{
	uint8_t f[16], s[16], msg[16], want[4], mic[4];
	int len;

	lw_unhex("e163635133105cc690cb2d57ba9c31b9", f);
	lw_unhex("05ec7c795b2f0b5bcdfa710db52b9d8f", s);
	len = lw_unhex("40736310e080000000c86c", msg);
	lw_unhex("36165131", want);
	*checked += 2;
	/* ConfFCnt 0, TxDr 0, TxCh 1, DevAddr as on air, FCnt 0 */
	if (lw_mic11(c, f, s, 0, 0, 1, msg + 1, 0, msg, len, mic))
		return -EIO;
	if (memcmp(mic, want, 4))
		lw_mismatch(mismatches, "lora-packet LoRaWAN 1.1 MIC", "lw_mic11 differs");
	msg[9] ^= 1;
	if (lw_mic11(c, f, s, 0, 0, 1, msg + 1, 0, msg, len, mic))
		return -EIO;
	if (!memcmp(mic, want, 4))
		lw_mismatch(mismatches, "lora-packet LoRaWAN 1.1 MIC",
			    "a changed message kept its MIC");
	return 0;
}

/*
 * The join of a published example (avbentem's "Deciphering a LoRaWAN OTAA
 * Join Accept", also lora-packet's and several stacks' tests): its
 * JoinRequest built, its JoinAccept opened and its session keys derived by
 * the OpenSSL code, and the JoinAccept refused with one bit changed.
 */
static int join_vectors(struct lw_crypto *c, uint64_t *checked, uint64_t *mismatches)
{
	static const char *const name = "join (AppKey b6b53f4a...)";
	struct lw_device d = { .dev_nonce = 0xcc85 };
	uint8_t phy[LW_JOIN_REQUEST_LEN], want[64], ja_phy[40], k[16], cf[16];
	struct lw_join_accept ja;
	struct lw_keys keys;
	int jl;

	lw_unhex("70b3d57ed00000dc", d.join_eui);
	lw_unhex("00afee7cf5ed6f1e", d.dev_eui);
	lw_unhex("b6b53f4a168a7a88bdf7ea135ce9cfca", d.app_key);
	lw_unhex("00dc0000d07ed5b3701e6fedf57ceeaf0085cc587fe913", want);
	*checked += 4;
	if (lw_join_request(c, &d, d.dev_nonce, phy))
		return -EIO;
	if (memcmp(phy, want, sizeof(phy)))
		lw_mismatch(mismatches, name, "the JoinRequest differs");
	jl = lw_unhex("204dd85ae608b87fc4889970b7d2042c9e72959b0057aed6094b16003df12de145", ja_phy);
	lw_unhex("184f84e85684b85e84886684586e8400", cf);
	if (lw_join_accept_open(c, &d, d.dev_nonce, ja_phy, jl, &ja) || ja.app_nonce != 0xe5063a ||
	    ja.net_id != 0x000013 || ja.dev_addr != 0x26012e43 || ja.dl_settings != 0x03 ||
	    ja.rx_delay != 0x01 || !ja.has_cflist || memcmp(ja.cflist, cf, 16)) {
		lw_mismatch(mismatches, name,
			    "the JoinAccept does not open to its published fields");
		return 0;
	}
	if (lw_session_keys(c, &d, &ja, d.dev_nonce, &keys))
		return -EIO;
	lw_unhex("2c96f7028184bb0be8aa49275290d4fc", k);
	if (memcmp(keys.nwk_s_key, k, 16) || keys.v11)
		lw_mismatch(mismatches, name, "NwkSKey differs");
	lw_unhex("f3a5c8f0232a38c144029c165865802c", k);
	if (memcmp(keys.app_s_key, k, 16))
		lw_mismatch(mismatches, name, "AppSKey differs");
	for (int bit = 8; bit < jl * 8; bit += 37) {
		ja_phy[bit / 8] ^= 1 << bit % 8;
		(*checked)++;
		if (lw_join_accept_open(c, &d, d.dev_nonce, ja_phy, jl, &ja) != -EBADMSG)
			lw_mismatch(mismatches, name,
				    "a JoinAccept with a bit changed passed its MIC");
		ja_phy[bit / 8] ^= 1 << bit % 8;
	}
	return 0;
}

/*
 * A LoRaWAN 1.1 join: the session keys of the published example in
 * brocaar/lorawan's join server tests (NwkKey 0102..08 twice, AppKey zero,
 * JoinNonce 65536, NetID 010203, JoinEUI 0807060504030201, DevNonce 258,
 * DevEUI 0102030405060708), with OptNeg (four keys) and without (a 1.0
 * session's two, from NwkKey). Its two JoinAccepts (DevAddr 01020304,
 * DLSettings RX1DROffset 1 RX2DR 5, RxDelay 1, CFList 868.7 and 868.9 MHz)
 * were made by tests/lorawan_check.py's independent code: with OptNeg
 * signed by JSIntKey over JoinReqType | JoinEUI | DevNonce, without by NwkKey.
 */
static int join11_vectors(struct lw_crypto *c, uint64_t *checked, uint64_t *mismatches)
{
	static const char *const name = "1.1 join (NwkKey 01020304...)";
	static const char *const accepts[2] = {
		"2026f4b247f0a5d7e46a720e61c8bccbc5179f4566e185ed6889589bb1a9c68cc0",
		"20a4c899795a42f5d16067a822c21b379af8aaa301a90d1c60d4cb792cb8eeb0a3",
	};
	static const char *const want[2][4] = {
		/* NwkSKey, AppSKey (1.0 mode) */
		{ "df53c35f3034ccced0ff354c70de04df", "927b9c911183cffe4cb2ff4b75545f6d" },
		/* FNwkSIntKey, AppSKey, SNwkSIntKey, NwkSEncKey */
		{ "537f8aae896c79e015d102d06286354e", "01621215d1ca08febf0c602cc2ad90fa",
		  "589498993092cfdb5fd2e02ac7510bf1", "9898283c4f66eb6c6fd5165882046c40" },
	};
	struct lw_device d = { .otaa = true, .join11 = true, .dev_nonce = 258 };
	uint8_t ja_phy[40], k[16];
	struct lw_join_accept ja;
	struct lw_keys keys;
	int jl;

	lw_unhex("0807060504030201", d.join_eui);
	lw_unhex("0102030405060708", d.dev_eui);
	lw_unhex("01020304050607080102030405060708", d.nwk_key);
	for (int opt_neg = 0; opt_neg < 2; opt_neg++) {
		const uint8_t *got[4] = { keys.nwk_s_key, keys.app_s_key, keys.s_nwk_s_int_key,
					  keys.nwk_s_enc_key };

		jl = lw_unhex(accepts[opt_neg], ja_phy);
		*checked += 2;
		if (lw_join_accept_open(c, &d, d.dev_nonce, ja_phy, jl, &ja) ||
		    ja.opt_neg != opt_neg || ja.app_nonce != 65536 || ja.net_id != 0x010203 ||
		    ja.dev_addr != 0x01020304 || (ja.dl_settings & 0x7f) != 0x15 ||
		    ja.rx_delay != 1 || !ja.has_cflist) {
			lw_mismatch(mismatches, name, "a JoinAccept does not open to its fields");
			continue;
		}
		if (lw_session_keys(c, &d, &ja, d.dev_nonce, &keys))
			return -EIO;
		for (int i = 0; i < (opt_neg ? 4 : 2); i++) {
			lw_unhex(want[opt_neg][i], k);
			if (memcmp(got[i], k, 16))
				lw_mismatch(mismatches, name, "a session key differs");
		}
		if (keys.v11 != opt_neg)
			lw_mismatch(mismatches, name, "the session's version is not the accept's");
		/* another DevNonce: the JSIntKey MIC covers it (OptNeg), NwkKey's does not */
		(*checked)++;
		if (lw_join_accept_open(c, &d, 259, ja_phy, jl, &ja) != (opt_neg ? -EBADMSG : 0))
			lw_mismatch(mismatches, name, "the MIC does not cover what it should");
	}
	return 0;
}

int selftest_lorawan(const struct iface *lo, uint64_t cases, uint64_t (*rnd)(void),
		     uint64_t *checked, uint64_t *mismatches, uint64_t *frames)
{
	struct lw_crypto *c = lw_crypto_new();
	struct xr_aes_tables tab;
	int err;

	if (!c)
		return -ENOMEM;
	lw_aes_tables(&tab);
	err = aes_checks(c, &tab, checked, mismatches);
	if (!err)
		err = aes_random(c, &tab, rnd, 20, checked, mismatches);
	if (!err)
		err = vectors(lo, c, checked, mismatches);
	if (!err)
		err = join_vectors(c, checked, mismatches);
	if (!err)
		err = join11_vectors(c, checked, mismatches);
	if (!err)
		err = mic11_vector(c, checked, mismatches);
	if (!err)
		err = lw_fopts11_vector(c, checked, mismatches);
	if (!err)
		err = lw_selftest_downlinks(c, &tab, cases * 20, rnd, checked, mismatches);
	for (uint64_t i = 0; i < cases && !err; i++) {
		static const char *const sizes[] = { "1", "1-16", "15-17", "1-96", "31-33", "96" };
		struct lw_gen_opts g = { .devices = 1 + rnd() % 40,
					 .gateways = 1 + rnd() % 6,
					 .seed = rnd(),
					 .region = rnd() % 2 ? "eu868" : "us915",
					 .sf = 7,
					 .bw_khz = 125,
					 .fport = rnd() % 4 ? 1 + rnd() % 223 : 0,
					 .confirmed = rnd() % 2,
					 .otaa = rnd() % 4 == 0 };

		/*
		 * a third of the ABP unconfirmed fleets: LoRaWAN 1.1 (two MICs); half the OTAA
		 * fleets 1.1's (NwkKey's JoinRequests), by a bit of their seed so that no other
		 * case's draws move
		 */
		g.v11 = g.otaa ? g.seed & 1 : !g.confirmed && rnd() % 3 == 0;
		const char *sz = sizes[rnd() % 6];
		struct lw_fleet f;
		uint64_t ns[LW_NS];
		char label[112];
		int v;

		g.heard_by = 1 + rnd() % g.gateways;
		if (g.heard_by > XR_LORA_MAX_HEARD)
			g.heard_by = XR_LORA_MAX_HEARD;
		if (sscanf(sz, "%u-%u", &g.payload_min, &g.payload_max) != 2)
			g.payload_max = g.payload_min;
		/* near the 16-bit wrap, anywhere, or the start */
		switch (rnd() % 3) {
		case 0: g.fcnt_start = 65530; break;
		case 1: g.fcnt_random = true; break;
		default: g.fcnt_start = 0; break;
		}
		v = xr_verbosity;
		xr_verbosity = -1;
		err = lw_fleet_generate(&g, &f);
		xr_verbosity = v;
		if (err)
			break;
		/* an OTAA fleet sends its JoinRequests */
		f.joining = g.otaa;
		/*
		 * half the others, and every 1.1 fleet (which encrypts them): some
		 * devices with FOpts (lorawan send --mac), which move FPort
		 */
		for (size_t d = 0; d < f.ndev && g.fport && !f.joining && (i % 2 || g.v11); d++) {
			struct lw_device *dev = &f.dev[d];
			int room = XR_LORA_MAX_PHY - 13 - dev->payload_len;

			if (rnd() % 2)
				continue;
			dev->fopts_len = 1 + rnd() % (room < 15 ? room : 15);
			for (int k = 0; k < dev->fopts_len; k++)
				dev->fopts[k] = rnd();
		}
		/* half the fleets: gateways with their own addresses (the program rewrites them) */
		if (rnd() % 2) {
			uint64_t naddr = 1 + rnd() % 8;

			lw_fleet_gateway_addrs(&f, 0xc6124000 + rnd() % 1024, naddr,
					       1024 + rnd() % 60000,
					       (f.ngw + naddr - 1) / naddr + rnd() % 3);
		}
		/* runs of consecutive n (all copies of an uplink, then the next) and scattered ones */
		ns[0] = rnd() % (f.ndev * f.heard_by * 20);
		for (int j = 1; j < LW_NS; j++)
			ns[j] = j % 8 ? ns[j - 1] + 1 :
					rnd() % (f.ndev * f.heard_by * (uint64_t)70000);
		snprintf(label, sizeof(label), "fleet %llu (%zu devices, heard by %u, %s%s%s%s%s)",
			 (unsigned long long)i, f.ndev, f.heard_by,
			 f.joining ? "JoinRequests" : "payload ", f.joining ? "" : sz,
			 f.gw_addrs ? ", gateway addresses" : "",
			 g.fport && !f.joining && (i % 2 || g.v11) ? ", FOpts" : "",
			 g.v11 ? ", LoRaWAN 1.1" : "");
		/* the uplinks computed in BPF, then taken from the AES-NI ring */
		err = fleet_check(lo, c, &f, ns, LW_NS, false, label, checked, mismatches);
		*frames += LW_NS;
		if (!err && aesni_available() && !f.joining) {
			strncat(label, ", precomputed", sizeof(label) - strlen(label) - 1);
			err = fleet_check(lo, c, &f, ns, LW_NS, true, label, checked, mismatches);
			*frames += LW_NS;
		}
		lw_fleet_free(&f);
	}
	lw_crypto_free(c);
	return err;
}
