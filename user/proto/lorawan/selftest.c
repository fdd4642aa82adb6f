// SPDX-License-Identifier: GPL-2.0
/*
 * selftest, LoRaWAN part: the BPF AES-128 and AES-CMAC against RFC 4493's
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
#include "cmd/selftest.h"

#define LW_NS 24

static int unhex_s(const char *s, uint8_t *out)
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

static void report(uint64_t *mismatches, const char *what, const char *why)
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

	unhex_s(key, kb);
	unhex_s(msg, m);
	unhex_s(k1, want);
	if (lw_cmac_subkeys(c, kb, got1, got2))
		return -EIO;
	(*checked)++;
	if (memcmp(got1, want, 16))
		report(mismatches, "RFC 4493 K1", "differs");
	unhex_s(k2, want);
	(*checked)++;
	if (memcmp(got2, want, 16))
		report(mismatches, "RFC 4493 K2", "differs");
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		memset(&t, 0, sizeof(t));
		lw_aes_expand(tab, kb, t.rk);
		memcpy(t.k1, got1, 16);
		memcpy(t.k2, got2, 16);
		bpf_cmac_input(&t, m, ex[i].len);
		err = lw_kernel_aes_test(&t);
		if (err)
			return err;
		unhex_s(ex[i].mac, want);
		snprintf(what, sizeof(what), "RFC 4493 example %zu (len %zu)", i + 1, ex[i].len);
		(*checked)++;
		if (memcmp(t.mac, want, 16))
			report(mismatches, what, "the BPF CMAC differs");
		(*checked)++;
		if (lw_cmac(c, kb, m, ex[i].len, got1) || memcmp(got1, want, 16))
			report(mismatches, what, "OpenSSL's CMAC differs");
		lw_cmac_subkeys(c, kb, got1, got2);
	}
	/* AES-128(K, 0) = 7df76b0c1ab899b33e42f047b91b546f (PROTOCOLS.md §4.1) */
	memset(&t, 0, sizeof(t));
	lw_aes_expand(tab, kb, t.rk);
	err = lw_kernel_aes_test(&t);
	if (err)
		return err;
	unhex_s("7df76b0c1ab899b33e42f047b91b546f", ecb0);
	(*checked)++;
	if (memcmp(t.block, ecb0, 16))
		report(mismatches, "AES-128(RFC 4493 key, 0)", "the BPF AES differs");
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
			report(mismatches, "random AES-128 block", "BPF and OpenSSL differ");
		if (aesni_available()) {
			uint8_t ni[16];

			(*checked)++;
			aesni_encrypt(t.rk, blk, ni);
			if (memcmp(ni, want, 16))
				report(mismatches, "random AES-128 block",
				       "AES-NI and OpenSSL differ");
		}
		if (lw_cmac(c, key, msg, len, want) || memcmp(t.mac, want, 16)) {
			char what[48];

			snprintf(what, sizeof(what), "random AES-CMAC of %zu bytes", len);
			report(mismatches, what, "BPF and OpenSSL differ");
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
			report(mismatches, what,
			       out_len[i] ? "another length" : "the frame was refused");
			continue;
		}
		/* the program's tmst is the clock's: take it from its frame, the reference renders it again */
		memcpy(digits, got + d->tmst_off, 10);
		digits[10] = 0;
		tmst = strtoul(digits, NULL, 10);
		if (tmst < 1000000000U) {
			report(mismatches, what, "tmst is not 10 digits");
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
			report(mismatches, what, why);
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
 * ring, as the xsk engine does (the ring's uplinks finished in userspace,
 * lw_xsk_build), and compares each with the reference.
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
			report(mismatches, label, "the precomputed ring was never used");
	}
	if (!err)
		err = frames_against_ref(c, f, &fs, ns, count, out, out_len, label, checked,
					 mismatches);
	if (!err && precompute && !f->joining) {
		snprintf(xsk_label, sizeof(xsk_label), "%s, xsk engine", label);
		err = xbuild_run_frames(lo, &o, ns, count, out, out_len, &here);
		(*checked)++;
		/* confirmed devices' uplinks are stamped for their ACKs: the program's to build */
		if (!err && here != (fleet_confirms(f) ? 0 : ring_fits(f, ns, count)))
			report(mismatches, xsk_label,
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
		unhex_s(v[i].nwk, dev[i].nwk_s_key);
		unhex_s(v[i].app, dev[i].app_s_key);
		dev[i].payload_len = unhex_s(v[i].payload, dev[i].payload);
		dev[i].fcnt_start = v[i].fcnt;
		dev[i].fport = v[i].fport;
		dev[i].confirmed = v[i].confirmed;
		dev[i].fopts_len = v[i].fopts ? unhex_s(v[i].fopts, dev[i].fopts) : 0;
		dev[i].freq_hz = v[i].freq ? v[i].freq : 868100000;
		dev[i].sf = v[i].sf ? v[i].sf : 7;
		dev[i].v11 = dev[i].adr = v[i].s_nwk;
		if (v[i].s_nwk)
			unhex_s(v[i].s_nwk, dev[i].s_nwk_s_int_key);
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
		int wl = unhex_s(v[i].phy, want), pl;
		size_t bl;

		*checked += 2;
		pl = lw_ref_phy(c, &dev[i], v[i].fcnt, phy);
		if (pl != wl || memcmp(phy, want, wl))
			report(mismatches, v[i].name, "the reference (OpenSSL) differs");
		bl = EVP_EncodeBlock((unsigned char *)b64, want, wl);
		if (!out_len[i] || dev[i].b64_off + bl > out_len[i] ||
		    memcmp(out + i * XR_MAX_FRAME + dev[i].b64_off, b64, bl)) {
			char why[300];

			snprintf(why, sizeof(why),
				 "the BPF rewriter's base64 differs: %.*s, expected %s",
				 out_len[i] ? (int)bl : 0, out + i * XR_MAX_FRAME + dev[i].b64_off,
				 b64);
			report(mismatches, v[i].name, why);
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

	unhex_s("e163635133105cc690cb2d57ba9c31b9", f);
	unhex_s("05ec7c795b2f0b5bcdfa710db52b9d8f", s);
	len = unhex_s("40736310e080000000c86c", msg);
	unhex_s("36165131", want);
	*checked += 2;
	/* ConfFCnt 0, TxDr 0, TxCh 1, DevAddr as on air, FCnt 0 */
	if (lw_mic11(c, f, s, 0, 0, 1, msg + 1, 0, msg, len, mic))
		return -EIO;
	if (memcmp(mic, want, 4))
		report(mismatches, "lora-packet LoRaWAN 1.1 MIC", "lw_mic11 differs");
	msg[9] ^= 1;
	if (lw_mic11(c, f, s, 0, 0, 1, msg + 1, 0, msg, len, mic))
		return -EIO;
	if (!memcmp(mic, want, 4))
		report(mismatches, "lora-packet LoRaWAN 1.1 MIC", "a changed message kept its MIC");
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

	unhex_s("70b3d57ed00000dc", d.join_eui);
	unhex_s("00afee7cf5ed6f1e", d.dev_eui);
	unhex_s("b6b53f4a168a7a88bdf7ea135ce9cfca", d.app_key);
	unhex_s("00dc0000d07ed5b3701e6fedf57ceeaf0085cc587fe913", want);
	*checked += 4;
	if (lw_join_request(c, &d, d.dev_nonce, phy))
		return -EIO;
	if (memcmp(phy, want, sizeof(phy)))
		report(mismatches, name, "the JoinRequest differs");
	jl = unhex_s("204dd85ae608b87fc4889970b7d2042c9e72959b0057aed6094b16003df12de145", ja_phy);
	unhex_s("184f84e85684b85e84886684586e8400", cf);
	if (lw_join_accept_open(c, &d, d.dev_nonce, ja_phy, jl, &ja) || ja.app_nonce != 0xe5063a ||
	    ja.net_id != 0x000013 || ja.dev_addr != 0x26012e43 || ja.dl_settings != 0x03 ||
	    ja.rx_delay != 0x01 || !ja.has_cflist || memcmp(ja.cflist, cf, 16)) {
		report(mismatches, name, "the JoinAccept does not open to its published fields");
		return 0;
	}
	if (lw_session_keys(c, &d, &ja, d.dev_nonce, &keys))
		return -EIO;
	unhex_s("2c96f7028184bb0be8aa49275290d4fc", k);
	if (memcmp(keys.nwk_s_key, k, 16) || keys.v11)
		report(mismatches, name, "NwkSKey differs");
	unhex_s("f3a5c8f0232a38c144029c165865802c", k);
	if (memcmp(keys.app_s_key, k, 16))
		report(mismatches, name, "AppSKey differs");
	for (int bit = 8; bit < jl * 8; bit += 37) {
		ja_phy[bit / 8] ^= 1 << bit % 8;
		(*checked)++;
		if (lw_join_accept_open(c, &d, d.dev_nonce, ja_phy, jl, &ja) != -EBADMSG)
			report(mismatches, name, "a JoinAccept with a bit changed passed its MIC");
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

	unhex_s("0807060504030201", d.join_eui);
	unhex_s("0102030405060708", d.dev_eui);
	unhex_s("01020304050607080102030405060708", d.nwk_key);
	for (int opt_neg = 0; opt_neg < 2; opt_neg++) {
		const uint8_t *got[4] = { keys.nwk_s_key, keys.app_s_key, keys.s_nwk_s_int_key,
					  keys.nwk_s_enc_key };

		jl = unhex_s(accepts[opt_neg], ja_phy);
		*checked += 2;
		if (lw_join_accept_open(c, &d, d.dev_nonce, ja_phy, jl, &ja) ||
		    ja.opt_neg != opt_neg || ja.app_nonce != 65536 || ja.net_id != 0x010203 ||
		    ja.dev_addr != 0x01020304 || (ja.dl_settings & 0x7f) != 0x15 ||
		    ja.rx_delay != 1 || !ja.has_cflist) {
			report(mismatches, name, "a JoinAccept does not open to its fields");
			continue;
		}
		if (lw_session_keys(c, &d, &ja, d.dev_nonce, &keys))
			return -EIO;
		for (int i = 0; i < (opt_neg ? 4 : 2); i++) {
			unhex_s(want[opt_neg][i], k);
			if (memcmp(got[i], k, 16))
				report(mismatches, name, "a session key differs");
		}
		if (keys.v11 != opt_neg)
			report(mismatches, name, "the session's version is not the accept's");
		/* another DevNonce: the JSIntKey MIC covers it (OptNeg), NwkKey's does not */
		(*checked)++;
		if (lw_join_accept_open(c, &d, 259, ja_phy, jl, &ja) != (opt_neg ? -EBADMSG : 0))
			report(mismatches, name, "the MIC does not cover what it should");
	}
	return 0;
}

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
static int fopts11_vector(struct lw_crypto *c, uint64_t *checked, uint64_t *mismatches)
{
	static const char *const name = "ChirpStack's 1.1 downlink with encrypted FOpts";
	uint8_t phy[20], e[16], si[16], fopts[3] = { 0x02, 0x07, 0x01 }, mac[16];

	unhex_s("6004030201030000"
		"22ac0a01"
		"f0b468dd"
		"aa5ed13a",
		phy);
	unhex_s("01010101010101010101010101010200", e);
	unhex_s("01010101010101010101010101010100", si);
	*checked += 3;
	if (lw_fopts11(c, e, XR_LORA_FOPTS_A4_AFCNT, 1, phy + 1, 0, fopts, 3))
		return -EIO;
	if (memcmp(fopts, phy + 8, 3))
		report(mismatches, name, "lw_fopts11 encrypts to other bytes");
	if (dl_mic(c, si, 0, phy, sizeof(phy), 0, mac))
		return -EIO;
	if (memcmp(mac, phy + 16, 4))
		report(mismatches, name, "its MIC differs");
	if (lw_fopts11(c, e, XR_LORA_FOPTS_A4_AFCNT, 1, phy + 1, 0, fopts, 3))
		return -EIO;
	if (fopts[0] != 0x02 || fopts[1] != 0x07 || fopts[2] != 0x01)
		report(mismatches, name, "lw_fopts11 does not decrypt what it encrypted");
	return 0;
}

/* One load of the program for all of them: loading costs more than a thousand runs. */
static int downlinks(struct lw_crypto *c, const struct xr_aes_tables *tab, uint64_t cases,
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
			report(mismatches, what,
			       ret ? "BPF read a PHYPayload the reference does not" :
				     "BPF did not read the reference's PHYPayload");
		else if (!ret && memcmp(got[i].phy, want, XR_LORA_DL_PHY))
			report(mismatches, what, "BPF read other bytes");
		(*checked)++;
		if (got[i].len != len) {
			report(mismatches, what, "BPF decoded a PHYPayload of another length");
			continue;
		}
		if (len > 0 && memcmp(got[i].full, full, len))
			report(mismatches, what, "BPF decoded other bytes");
		mic = len < 0 ? 0 :
				dl_reference_mic(c, dc[i].v11 ? skey : key, dc[i].conf, full, len,
						 dc[i].fcnt);
		(*checked)++;
		if (mic < 0)
			err = -EIO;
		else if (got[i].mic_ok != mic)
			report(mismatches, what,
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
				report(mismatches, what,
				       mr ? "BPF read MAC commands past the PHYPayload" :
					    "BPF refused a downlink's MAC commands");
			else if (!mr && memcmp(&got[i].mac, &m, sizeof(m)))
				report(mismatches, what, "BPF read other MAC commands");
		}
	}
	free(frames);
	free(got);
	free(dc);
	free(lens);
	return err;
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
		err = fopts11_vector(c, checked, mismatches);
	if (!err)
		err = downlinks(c, &tab, cases * 20, rnd, checked, mismatches);
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
