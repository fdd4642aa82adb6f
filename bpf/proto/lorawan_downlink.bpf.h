/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN's answers, read by the reply program (included by
 * bpf/proto/registry.bpf.h after lorawan.bpf.h, the uplinks): PUSH_ACKs
 * matched to their uplink by token, PULL_RESP downlinks read from their JSON,
 * decoded and MIC-checked, join-accepts, the MAC commands of confirmed
 * downlinks, and the TX_ACKs a gateway owes.
 */
#ifndef __XR_PROTO_LORAWAN_DOWNLINK_BPF_H
#define __XR_PROTO_LORAWAN_DOWNLINK_BPF_H

#include "proto/lorawan.bpf.h"

/*
 * The gateway a downlink was sent to, by its address and port (the inverse of
 * lw_fleet_gateway_addrs: the server sends a gateway's downlinks where its
 * PULL_DATA came from). Without addresses of their own, only a fleet of one
 * gateway says which. 0 or -1.
 */
static __always_inline int lora_gw_of(const struct iphdr *iph, const struct udphdr *uh, __u32 *gw)
{
	__u32 a, port;

	if (!lora_cfg.gw_addrs) {
		*gw = 0;
		return lora_cfg.ngw == 1 ? 0 : -1;
	}
	/* from_server_to_us has checked both are in range */
	a = bpf_ntohl(iph->daddr) - cfg.rpl.src_base;
	port = bpf_ntohs(uh->dest) - cfg.rpl.sport_base;
	*gw = a + port * cfg.rpl.src_count;
	return *gw < lora_cfg.ngw ? 0 : -1;
}

/*
 * Whether an answer for gateway gw reached that gateway's address and port
 * (with lora_cfg.gw_addrs; otherwise all gateways share one), counting it
 * against the gateway when it did not.
 */
static __always_inline bool lora_to_gateway(struct xr_lora_gw_ctr *ctr, __u32 gw,
					    const struct iphdr *iph, const struct udphdr *uh)
{
	__u32 at;

	if (!lora_cfg.gw_addrs || (!lora_gw_of(iph, uh, &at) && at == gw))
		return true;
	__sync_fetch_and_add(&ctr->misdirected, 1);
	return false;
}

static __always_inline void lora_dl_count(enum xr_lora_dl_ctr which)
{
	__u32 key = which;
	__u64 *v = bpf_map_lookup_elem(&lora_dl_ctr, &key);

	if (v)
		(*v)++;
}

/* A base64 character's 6 bits, or 64 when it is none. */
static __always_inline __u32 b64_value(__u8 c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return 64;
}

/*
 * Where the value of the txpk's "data" key may start in a PULL_RESP: the
 * offset just past "data" from the JSON's start (frame offset
 * XR_LORA_PUSH_DATA_OFF + 4), or -1 when it is not in the first
 * XR_LORA_DL_SCAN bytes. A global function: the verifier checks it once and
 * its caller receives an offset it does not know. A static one would hand
 * each of the loop's exits on with its own constant, and the rest of the
 * downlink code would be verified once per exit (E2BIG).
 */
__noinline int lora_dl_data_at(struct xdp_md *ctx)
{
	/* the 6 bytes "data" as the low bytes of a little-endian load */
	const __u64 key = 0x226174616422ULL, mask = 0xffffffffffffULL;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *json = (void *)(long)ctx->data + XR_LORA_PUSH_DATA_OFF + 4;

	for (int i = 0; i < XR_LORA_DL_SCAN; i++) {
		__u8 *q = json + i;

		if ((void *)(q + 8) > data_end)
			return -1;
		if ((*(__u64 *)q & mask) == key)
			return i + 6;
	}
	return -1;
}

/*
 * The first XR_LORA_DL_PHY bytes of the PHYPayload in the txpk's "data":
 * "..." (12 base64 characters): 0, or -1 when there is none. JSON may have
 * white space around the colon (ChirpStack writes none, Python's json module
 * one space).
 */
static __always_inline __u8 *lora_dl_b64(struct xdp_md *ctx)
{
	int at = lora_dl_data_at(ctx);
	void *data_end = (void *)(long)ctx->data_end;
	bool colon = false;
	__u8 *p;

	if (at < 0 || at > XR_LORA_DL_SCAN + 6)
		return NULL;
	p = (void *)(long)ctx->data + XR_LORA_PUSH_DATA_OFF + 4 + at;
	for (int j = 0; j < 8; j++, p++) {
		__u8 c;

		if ((void *)(p + 1) > data_end)
			return NULL;
		c = *p;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == ':' && !colon) {
			colon = true;
			continue;
		}
		if (c != '"' || !colon)
			return NULL;
		return p + 1;
	}
	return NULL;
}

static __always_inline int lora_dl_phy(struct xdp_md *ctx, __u8 *phy)
{
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *p = lora_dl_b64(ctx);

	if (!p || (void *)(p + 12) > data_end)
		return -1;
	for (int g = 0; g < 3; g++) {
		__u32 c0 = b64_value(p[g * 4]), c1 = b64_value(p[g * 4 + 1]),
		      c2 = b64_value(p[g * 4 + 2]), c3 = b64_value(p[g * 4 + 3]), v;

		if ((c0 | c1 | c2 | c3) & 64)
			return -1;
		v = c0 << 18 | c1 << 12 | c2 << 6 | c3;
		phy[g * 3] = v >> 16;
		phy[g * 3 + 1] = v >> 8;
		phy[g * 3 + 2] = v;
	}
	return 0;
}

/*
 * The whole PHYPayload of the txpk's "data" into sc->phy: its length, or -1
 * when the base64 is not one (or longer than XR_LORA_MAX_PHY + 1 bytes). A
 * global function, so that its loop's many exits do not multiply the
 * caller's states.
 */
__noinline int lora_dl_decode(struct xdp_md *ctx, struct xr_lora_dl_scratch *sc)
{
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *p = lora_dl_b64(ctx);

	if (!p || !sc)
		return -1;
	for (int i = 0; i < (XR_LORA_MAX_PHY + 8) / 8; i++)
		((__u64 *)sc->phy)[i] = 0;
	for (int g = 0; g < XR_LORA_MAX_PHY / 3 + 1; g++) {
		__u8 *q = p + g * 4, *o = sc->phy + g * 3;
		__u32 c0, c1, c2, c3, v;

		if ((void *)(q + 1) > data_end)
			return -1;
		if (q[0] == '"')
			return g * 3;
		if ((void *)(q + 5) > data_end)
			return -1;
		c0 = b64_value(q[0]);
		c1 = b64_value(q[1]);
		if ((c0 | c1) & 64)
			return -1;
		v = c0 << 18 | c1 << 12;
		o[0] = v >> 16;
		if (q[2] == '=')
			return q[3] == '=' && q[4] == '"' ? g * 3 + 1 : -1;
		c2 = b64_value(q[2]);
		if (c2 & 64)
			return -1;
		v |= c2 << 6;
		o[1] = v >> 8;
		if (q[3] == '=')
			return q[4] == '"' ? g * 3 + 2 : -1;
		c3 = b64_value(q[3]);
		if (c3 & 64)
			return -1;
		o[2] = v | c3;
	}
	return -1;
}

/*
 * 1 when the downlink in sc->phy (len bytes, zeros after) carries the MIC
 * of the device's NwkSKey: AES-CMAC over B0 (Dir 1, DevAddr, the 32-bit
 * FCntDown) | msg (LoRaWAN 1.0.3 §4.4), as a device checks it before it
 * takes the ACK. A global function: verified once, not in each state of
 * the reply path (which AES would take past the verifier's limit, E2BIG).
 */
/* B0 | msg of a downlink (len bytes in sc->phy) in sc->cm, padded for CMAC; msg's length. */
static __always_inline __u32 lora_dl_cm(struct xr_lora_dl_scratch *sc, __u32 len, __u32 fcnt)
{
	__u32 msg = len - 4;
	__u64 *dst;

	/*
	 * Callers hold len to 12..XR_LORA_MAX_PHY, but 6.1's verifier loses
	 * that bound across the copy below ("R2 unbounded memory access"): the
	 * clamp, kept by barrier_var, gives it one it can see.
	 */
	barrier_var(msg);
	if (msg > XR_LORA_MAX_PHY - 4)
		msg = XR_LORA_MAX_PHY - 4;
	lora_b0(sc->cm, 1, sc->phy + 1, fcnt, msg);
	/* msg, then CMAC's padding (0x80 and zeros: the MIC's bytes cleared) to the block's end */
	dst = (__u64 *)(sc->cm + 16);
	for (int i = 0; i < XR_LORA_MAX_PHY / 8; i++)
		dst[i] = ((const __u64 *)sc->phy)[i];
	__builtin_memset(sc->cm + 16 + msg, 0, 4);
	if (msg & 15)
		sc->cm[16 + msg] = 0x80;
	return msg;
}

/* The CMAC in sc->x against the downlink's MIC (msg's length in). */
static __always_inline int lora_dl_mic_same(struct xr_lora_dl_scratch *sc, __u32 msg)
{
	__u8 *mac = (__u8 *)sc->x;

	return mac[0] == sc->phy[msg] && mac[1] == sc->phy[msg + 1] && mac[2] == sc->phy[msg + 2] &&
	       mac[3] == sc->phy[msg + 3];
}

__noinline int lora_dl_mic_ok(const struct xr_lora_dev *dev, struct xr_lora_dl_scratch *sc,
			      __u32 len, __u32 fcnt)
{
	__u32 msg;

	if (!dev || !sc || len < 12 || len > XR_LORA_MAX_PHY)
		return 0;
	msg = lora_dl_cm(sc, len, fcnt);
	aes_cmac(dev->nwk_rk, dev->k1, sc->cm, msg + 16, sc->x);
	return lora_dl_mic_same(sc, msg);
}

/*
 * The same for a LoRaWAN 1.1 session (LoRaWAN 1.1 §4.4): AES-CMAC with
 * SNwkSIntKey over B0 whose bytes 1-2 are ConfFCnt, the 16 low bits of the
 * FCnt of the confirmed uplink an ACK acknowledges (sc->conf_fcnt; 0 without
 * the ACK bit).
 */
__noinline int lora_dl_mic11_ok(const struct xr_lora_dev11 *d11, struct xr_lora_dl_scratch *sc,
				__u32 len, __u32 fcnt)
{
	__u32 msg;

	if (!d11 || !sc || len < 12 || len > XR_LORA_MAX_PHY)
		return 0;
	msg = lora_dl_cm(sc, len, fcnt);
	sc->cm[1] = sc->conf_fcnt;
	sc->cm[2] = sc->conf_fcnt >> 8;
	aes_cmac(d11->s_rk, d11->s_k1, sc->cm, msg + 16, sc->x);
	return lora_dl_mic_same(sc, msg);
}

/*
 * A downlink's MAC commands opened in place (sc->phy, len bytes, its MIC
 * right): with FOpts, a 1.1 session's (d11 not NULL) decrypted with
 * NwkSEncKey (NFCntDown's block, AFCntDown's when an FPort > 0 follows);
 * with none there and FPort 0, the FRMPayload decrypted with NwkSKey (1.1:
 * NwkSEncKey; A_i: Dir 1, the 32-bit FCntDown; LoRaWAN 1.0.3 §4.3.3), and
 * sc->mac.in_frm set. 0, or -1 when the frame is too short for what FCtrl
 * says. A global function (verified once, like lora_dl_mic_ok), apart from
 * the reading: with the keys' two cases in it, the reading's states took
 * the verifier past its million instructions (E2BIG).
 */
__noinline int lora_dl_mac_open(const struct xr_lora_dev *dev, const struct xr_lora_dev11 *d11,
				struct xr_lora_dl_scratch *sc, __u32 len, __u32 fcnt)
{
	const __u32 *rk;
	__u32 end, fopts;
	__u8 *a;

	if (!dev || !sc || len < 12 || len > XR_LORA_MAX_PHY)
		return -1;
	rk = dev->nwk_rk;
	if (d11) {
		/* else clang adds e_rk's offset before the NULL check (a select): refused */
		barrier_var(d11);
		rk = d11->e_rk;
	}
	__builtin_memset(&sc->mac, 0, sizeof(sc->mac));
	a = (__u8 *)sc->a;
	fopts = sc->phy[5] & 15;
	end = 8 + fopts;
	if (end > len - 4)
		return -1;
	if (fopts) {
		if (!d11)
			return 0;
		lora_fopts_a(a,
			     end < len - 4 && sc->phy[end & 127] ? XR_LORA_FOPTS_A4_AFCNT :
								   XR_LORA_FOPTS_A4_UP_NFCNT,
			     1, sc->phy + 1, fcnt);
		aes_encrypt(rk, sc->a);
		lora_fopts_xor(sc->phy, a, fopts);
		return 0;
	}
	/* FPort 0 and an FRMPayload: MAC commands, encrypted */
	if (len < 8 + 1 + 1 + 4 || sc->phy[8])
		return 0;
	sc->mac.in_frm = 1;
	end = len - 4;
	for (int i = 0; i < XR_LORA_MAX_PHY / 16; i++) {
		if (9 + i * 16 >= end)
			break;
		lora_b0(a, 1, sc->phy + 1, fcnt, i + 1);
		a[0] = 0x01;
		aes_encrypt(rk, sc->a);
		for (int j = 0; j < 16; j++) {
			__u32 p = 9 + i * 16 + j;

			if (p >= end || p >= XR_LORA_MAX_PHY)
				break;
			sc->phy[p] ^= a[j];
		}
	}
	return 0;
}

/*
 * The MAC commands lora_dl_mac_open opened (sc->phy, len bytes) read into
 * sc->mac: those in FOpts, or (sc->mac.in_frm) those of FPort 0's
 * FRMPayload. Always 0. A global function.
 */
__noinline int lora_dl_mac_read(struct xr_lora_dl_scratch *sc, __u32 len)
{
	__u32 off = 8, end;

	if (!sc || len < 12 || len > XR_LORA_MAX_PHY)
		return -1;
	end = 8 + (sc->phy[5] & 15);
	if (sc->mac.in_frm) {
		off = 9;
		end = len - 4;
	}
	for (int i = 0; i < XR_LORA_MAC_MAX_CMDS; i++) {
		__u32 cid, n;
		int cl;

		if (off >= end)
			break;
		cid = sc->phy[off & 127];
		cl = lora_mac_down_len(cid);
		if (cl < 0 || off + 1 + cl > end) {
			sc->mac.unknown = 1;
			break;
		}
		/* the command ends before end (checked): the masks are for the verifier */
		n = off + 1;
		if (cid == XR_LORA_CID_LINK_CHECK) {
			sc->mac.found |= XR_LORA_ASK_LINK_CHECK;
			sc->mac.margin = sc->phy[n & 127];
			sc->mac.gw_cnt = sc->phy[(n + 1) & 127];
		} else if (cid == XR_LORA_CID_DEVICE_TIME) {
			sc->mac.found |= XR_LORA_ASK_DEVICE_TIME;
			sc->mac.device_time =
				((__u64)sc->phy[n & 127] | (__u64)sc->phy[(n + 1) & 127] << 8 |
				 (__u64)sc->phy[(n + 2) & 127] << 16 |
				 (__u64)sc->phy[(n + 3) & 127] << 24)
					<< 8 |
				sc->phy[(n + 4) & 127];
		} else {
			sc->mac.other++;
		}
		off = n + cl;
	}
	/* more commands than a device reads: the rest unread, as after an unknown CID */
	if (off < end)
		sc->mac.unknown = 1;
	return 0;
}

/* A downlink's MAC commands (its MIC right) opened and read into sc->mac: 0, or -1. */
static __always_inline int lora_dl_mac(const struct xr_lora_dev *dev,
				       const struct xr_lora_dev11 *d11,
				       struct xr_lora_dl_scratch *sc, __u32 len, __u32 fcnt)
{
	if (lora_dl_mac_open(dev, d11, sc, len, fcnt))
		return -1;
	return lora_dl_mac_read(sc, len);
}

/*
 * A downlink's MAC answers counted for the device's last asking uplink,
 * once per uplink, with the time since it left.
 */
static __always_inline void lora_dl_answers(struct xr_lora_confirmed *c,
					    const struct xr_lora_dl_mac *m)
{
	__u64 last = c->last_u;

	if (m->unknown)
		lora_dl_count(XR_LORA_DL_MAC_UNKNOWN);
	if (m->other)
		lora_dl_count(XR_LORA_DL_MAC_OTHER);
	if (m->found & XR_LORA_ASK_LINK_CHECK) {
		__sync_fetch_and_add(&c->link_check_ans, 1);
		__sync_fetch_and_add(&c->gw_cnt_sum, m->gw_cnt);
	}
	if (m->found & XR_LORA_ASK_DEVICE_TIME) {
		__sync_fetch_and_add(&c->device_time_ans, 1);
		c->device_time = m->device_time;
		c->device_time_sent_ns = c->sent_ns;
	}
	if (!(m->found & c->mac_asks) || !last)
		return;
	if (c->mac_answered_u == last) {
		__sync_fetch_and_add(&c->mac_dup, 1);
		return;
	}
	c->mac_answered_u = last;
	__sync_fetch_and_add(&c->mac_answered, 1);
	record_hist(&lora_mac_hist, c->sent_ns);
}

/*
 * len bytes of the frame from off into dst by direct loads, a byte at a time:
 * before 5.18 XDP has no bpf_xdp_load_bytes. The verifier walks each of the
 * XR_LORA_JA_JSON rounds once (~10 instructions each).
 */
static __always_inline int lora_copy_direct(struct xdp_md *ctx, __u32 off, __u8 *dst, __u32 len)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u8 *p = data + off;

	for (__u32 i = 0; i < XR_LORA_JA_JSON; i++) {
		if (i >= len)
			break;
		if ((void *)(p + i + 1) > data_end)
			return -1;
		dst[i] = p[i];
	}
	return 0;
}

/*
 * A JoinAccept's PULL_RESP (its JSON from byte 4) handed to userspace, which
 * finds its device (struct xr_lora_join). The JSON is copied as it is: a
 * JoinAccept is 17 or 33 bytes, all of which userspace decrypts. With direct
 * (a kernel before 5.18) by lora_copy_direct, the constant leaving
 * bpf_xdp_load_bytes out of the program.
 */
static __always_inline void lora_join_accept(struct xdp_md *ctx, __u32 gw, const bool direct)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xr_lora_join_accept *ja;
	__s64 full = data_end - data - (XR_LORA_PUSH_DATA_OFF + 4);
	__u32 len;

	if (!lora_cfg.join) {
		lora_dl_count(XR_LORA_DL_JOIN_UNASKED);
		return;
	}
	/* lora_dl_phy found the data, so there is JSON; the bound is for the verifier */
	if (full < 1 || full > 0xffff) {
		lora_dl_count(XR_LORA_DL_MALFORMED);
		return;
	}
	len = full > XR_LORA_JA_JSON ? XR_LORA_JA_JSON : full;
	ja = bpf_ringbuf_reserve(&lora_join_accepts, sizeof(*ja), 0);
	if (!ja) {
		lora_dl_count(XR_LORA_DL_JOIN_LOST);
		return;
	}
	ja->rx_ns = bpf_ktime_get_ns();
	ja->gw = gw;
	ja->len = len;
	ja->full_len = full;
	ja->pad = 0;
	if (direct ? lora_copy_direct(ctx, XR_LORA_PUSH_DATA_OFF + 4, ja->json, len) :
		     bpf_xdp_load_bytes(ctx, XR_LORA_PUSH_DATA_OFF + 4, ja->json, len)) {
		bpf_ringbuf_discard(ja, 0);
		lora_dl_count(XR_LORA_DL_MALFORMED);
		return;
	}
	bpf_ringbuf_submit(ja, 0);
	lora_dl_count(XR_LORA_DL_JOIN_ACCEPT);
}

/*
 * A downlink's ACK matched to the confirmed uplink it answers: a data
 * downlink (MType 3 or 5) with FCtrl's ACK bit acknowledges the device's
 * last uplink (LoRaWAN 1.0.3 §4.3.1.2), counted once with the time since it
 * left, once its MIC is the device's (a device drops a downlink whose MIC is
 * not). FCntDown's upper 16 bits follow from the device's last downlink
 * (1.1: the last of the same counter, AFCntDown or NFCntDown).
 * To a device that asks for MAC answers, the downlink's commands are read
 * and its answers counted (lora_dl_answers).
 */
static __always_inline void lora_dl_match(struct xdp_md *ctx, __u32 gw)
{
	struct xr_lora_dl_scratch *sc;
	struct xr_lora_confirmed *c;
	struct xr_lora_dev *dev;
	__u8 phy[XR_LORA_DL_PHY];
	__u32 addr, *d, zero = 0, fcnt, ack, *tracker;
	__u64 last;
	int len;

	if (lora_dl_phy(ctx, phy)) {
		lora_dl_count(XR_LORA_DL_MALFORMED);
		return;
	}
	if (phy[0] >> 5 == 1) {
		lora_join_accept(ctx, gw, false);
		return;
	}
	if (phy[0] >> 5 != 3 && phy[0] >> 5 != 5) {
		lora_dl_count(XR_LORA_DL_MALFORMED);
		return;
	}
	ack = phy[5] & 0x20;
	/* on air little-endian, as userspace keys it by its number */
	addr = phy[1] | (__u32)phy[2] << 8 | (__u32)phy[3] << 16 | (__u32)phy[4] << 24;
	d = bpf_map_lookup_elem(&lora_devaddr, &addr);
	c = d ? bpf_map_lookup_elem(&lora_confirmed, d) : NULL;
	if (!ack && !(c && c->mac_asks)) {
		lora_dl_count(XR_LORA_DL_NOT_ACK);
		return;
	}
	if (!c) {
		lora_dl_count(XR_LORA_DL_UNKNOWN_DEV);
		return;
	}
	dev = bpf_map_lookup_elem(&lora_devs, d);
	sc = bpf_map_lookup_elem(&lora_dl_scratch, &zero);
	len = lora_dl_decode(ctx, sc);
	if (!dev || !sc || len < 12 || len > XR_LORA_MAX_PHY) {
		lora_dl_count(XR_LORA_DL_MALFORMED);
		return;
	}
	tracker = &c->fcnt_down;
	if (lora_cfg.v11 && dev->v11) {
		__u32 end = 8 + (sc->phy[5] & 15);

		/* an FPort > 0 follows FOpts: AFCntDown's */
		if (end < len - 4 && sc->phy[end & 127])
			tracker = &c->afcnt_down;
	}
	fcnt = (*tracker & 0xffff0000) | phy[6] | (__u32)phy[7] << 8;
	if (fcnt < *tracker)
		fcnt += 0x10000;
	/* 1.1 (rodata: a 1.0 fleet's program has no second check) */
	if (lora_cfg.v11 && dev->v11) {
		struct xr_lora_dev11 *d11 = bpf_map_lookup_elem(&lora_devs11, d);
		__u64 u = c->last_u - 1;

		/* ConfFCnt: an ACK's uplink's FCnt (the uplink u it answers: the device's last) */
		sc->conf_fcnt = ack && c->last_u ? dev->fcnt0 + (__u32)(u / lora_cfg.ndev) : 0;
		if (!lora_dl_mic11_ok(d11, sc, len, fcnt)) {
			lora_dl_count(XR_LORA_DL_BAD_MIC);
			return;
		}
	} else if (!lora_dl_mic_ok(dev, sc, len, fcnt)) {
		lora_dl_count(XR_LORA_DL_BAD_MIC);
		return;
	}
	*tracker = fcnt;
	if (c->mac_asks) {
		struct xr_lora_dev11 *d11 = NULL;

		if (lora_cfg.v11 && dev->v11)
			d11 = bpf_map_lookup_elem(&lora_devs11, d);
		if (lora_cfg.v11 && dev->v11 && !d11) {
			lora_dl_count(XR_LORA_DL_MALFORMED);
			return;
		}
		if (lora_dl_mac(dev, d11, sc, len, fcnt)) {
			lora_dl_count(XR_LORA_DL_MALFORMED);
			return;
		}
		lora_dl_answers(c, &sc->mac);
		if (!ack && !(sc->mac.found & c->mac_asks))
			lora_dl_count(XR_LORA_DL_NOT_ACK);
	}
	if (!ack)
		return;
	if (!c->is_confirmed) {
		lora_dl_count(XR_LORA_DL_UNKNOWN_DEV);
		return;
	}
	last = c->last_u;
	if (!last) {
		lora_dl_count(XR_LORA_DL_NO_UPLINK);
		return;
	}
	if (c->acked_u == last) {
		__sync_fetch_and_add(&c->dup_acks, 1);
		return;
	}
	c->acked_u = last;
	__sync_fetch_and_add(&c->acked, 1);
	record_hist(&lora_ack_hist, c->sent_ns);
}

/*
 * A downlink where XDP cannot read the JSON's bytes (a kernel before 5.18):
 * in a join storm a JoinAccept is still handed on; anything else is counted
 * as not read. Whether it was handed on (and is to be answered).
 */
static __always_inline bool lora_dl_join_only(struct xdp_md *ctx, __u32 gw)
{
	__u8 phy[XR_LORA_DL_PHY];

	if (!lora_cfg.join) {
		lora_dl_count(XR_LORA_DL_UNREAD);
		return false;
	}
	if (lora_dl_phy(ctx, phy)) {
		lora_dl_count(XR_LORA_DL_MALFORMED);
		return false;
	}
	if (phy[0] >> 5 != 1) {
		lora_dl_count(XR_LORA_DL_UNREAD);
		return false;
	}
	lora_join_accept(ctx, gw, true);
	return true;
}

/*
 * The PULL_RESP turned in place into the gateway's TX_ACK (02, its token,
 * 05, the gateway's EUI, no JSON: no error), addressed back to the server.
 * 0, or -1 when the frame cannot be one.
 */
static __always_inline int lora_tx_ack(struct xdp_md *ctx, __u64 eui)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	int len = data_end - data;
	struct ethhdr *eth;
	struct iphdr *iph;
	struct udphdr *uh;
	__u32 sum;
	__u16 *w;
	__u8 *b;

	/* a PULL_RESP carries JSON: it only shrinks, which needs no room */
	if (len < XR_LORA_PUSH_DATA_OFF + 12 ||
	    bpf_xdp_adjust_tail(ctx, XR_LORA_PUSH_DATA_OFF + 12 - len))
		return -1;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	iph = (void *)(eth + 1);
	uh = (void *)(iph + 1);
	b = (void *)(uh + 1);
	if ((void *)(b + 12) > data_end)
		return -1;
	ip4_turn_around(eth, iph, &uh->source, sizeof(*iph) + sizeof(*uh) + 12);
	uh->len = bpf_htons(sizeof(*uh) + 12);
	uh->check = 0;
	b[3] = XR_LORA_TX_ACK;
	__builtin_memcpy(b + 4, &eui, 8);
	sum = (iph->saddr & 0xffff) + (iph->saddr >> 16) + (iph->daddr & 0xffff) +
	      (iph->daddr >> 16) + bpf_htons(IPPROTO_UDP) + bpf_htons(sizeof(*uh) + 12);
	w = (__u16 *)uh;
	for (int i = 0; i < 10; i++)
		sum += w[i];
	uh->check = fold_csum(sum);
	/* a computed zero is sent as all ones: zero means "no checksum" */
	if (!uh->check)
		uh->check = 0xffff;
	return 0;
}

/*
 * A downlink (PULL_RESP) to one of our gateways: its ACK matched to the
 * confirmed uplink it answers, and a TX_ACK sent back from the gateway's
 * address, as the gateway's packet forwarder would once it has the frame.
 * Without read (a kernel before 5.18, whose XDP cannot load the JSON's
 * bytes): a join storm's JoinAccepts handed on and answered, any other
 * downlink counted as not read and dropped; the constant false leaves the
 * rest of the reading out of the program altogether, helpers and all.
 */
static __always_inline int lora_downlink(struct xdp_md *ctx, struct pkt4 *p, const bool read)
{
	struct udphdr *uh = p->l4;
	struct xr_lora_gw_ctr *ctr;
	struct xr_lora_gw *gwr;
	__u32 gw;

	if (lora_gw_of(p->iph, uh, &gw)) {
		lora_dl_count(XR_LORA_DL_UNKNOWN_GW);
		return XDP_DROP;
	}
	ctr = bpf_map_lookup_elem(&lora_gw_ctr, &gw);
	gwr = bpf_map_lookup_elem(&lora_gws, &gw);
	if (!ctr || !gwr) {
		lora_dl_count(XR_LORA_DL_UNKNOWN_GW);
		return XDP_DROP;
	}
	__sync_fetch_and_add(&ctr->pull_resps, 1);
	if (read)
		lora_dl_match(ctx, gw);
	else if (!lora_dl_join_only(ctx, gw))
		return XDP_DROP;
	if (lora_tx_ack(ctx, gwr->eui)) {
		lora_dl_count(XR_LORA_DL_TX_ACK_FAILED);
		return XDP_DROP;
	}
	__sync_fetch_and_add(&ctr->tx_acks, 1);
	/*
	 * XDP_TX, as every reply: a redirect would wake a veth peer that has no
	 * XDP program (XDP_TX leaves the frame in its ring until the next one
	 * arrives there, docs/connection-rate.md, "gen tcp"), but its xdp_devmap_xmit event, fired
	 * in the sender thread's softirq, would count the TX_ACK as a frame sent.
	 */
	return XDP_TX;
}

/*
 * Semtech UDP's answers from the server to our addresses, dropped (nothing
 * listens on them). PUSH_ACKs (02, token, 01) are matched to n by the token
 * (n's low 16 bits; send_ts holds the last 65,536 sequence numbers) and
 * counted per gateway; PULL_ACKs (02, token, 04) are counted per gateway,
 * whose number is their token; downlinks (02, token, 03, JSON) are answered
 * (lora_downlink), or only counted without read_downlinks.
 */
static __always_inline int lora_reply(struct xdp_md *ctx, const bool read_downlinks)
{
	struct xr_replies_stats *st;
	struct xr_lora_gw_ctr *ctr = NULL;
	struct xr_send_ts *t;
	struct udphdr *uh;
	struct pkt4 p;
	__u32 tok, gw;
	__u8 *b;

	if (parse_ip4(ctx, IPPROTO_UDP, sizeof(struct udphdr) + 4, &p))
		return XDP_PASS;
	uh = p.l4;
	b = (void *)(uh + 1);
	if (!from_server_to_us(&cfg.rpl, p.iph, uh->source, uh->dest))
		return XDP_PASS;
	st = reply_stats();
	if (!st)
		return XDP_DROP;
	tok = b[1] | (__u32)b[2] << 8;
	if (b[0] == 2 && b[3] == XR_LORA_PULL_RESP)
		return lora_downlink(ctx, &p, read_downlinks);
	if (bpf_ntohs(uh->len) != 12 || b[0] != 2 ||
	    (b[3] != XR_LORA_PUSH_ACK && b[3] != XR_LORA_PULL_ACK)) {
		st->unmatched++;
		return XDP_DROP;
	}
	if (b[3] == XR_LORA_PULL_ACK) {
		gw = tok;
		ctr = bpf_map_lookup_elem(&lora_gw_ctr, &gw);
		if (!ctr) {
			st->unmatched++;
			return XDP_DROP;
		}
		if (lora_to_gateway(ctr, gw, p.iph, uh))
			__sync_fetch_and_add(&ctr->pull_acks, 1);
		return XDP_DROP;
	}
	if (lora_cfg.stat) {
		__u32 *sg = bpf_map_lookup_elem(&lora_stat_tok, &tok), at;

		/*
		 * The stat's gateway's address (not counted as misdirected when it is
		 * another's: then the answer is an uplink's); the first answer to take
		 * the token counts, a second is an uplink's or a duplicate
		 */
		gw = sg ? *sg - 1 : 0;
		if (sg && *sg &&
		    (!lora_cfg.gw_addrs || (!lora_gw_of(p.iph, uh, &at) && at == gw)) &&
		    (ctr = bpf_map_lookup_elem(&lora_gw_ctr, &gw)) &&
		    !bpf_map_delete_elem(&lora_stat_tok, &tok)) {
			__sync_fetch_and_add(&ctr->stat_acks, 1);
			return XDP_DROP;
		}
		ctr = NULL;
	}
	t = sent_frame(tok, tok, 0xffff);
	if (t) {
		gw = t->tag;
		ctr = bpf_map_lookup_elem(&lora_gw_ctr, &gw);
		/* the token was another gateway's: its own would not have seen it */
		if (ctr && !lora_to_gateway(ctr, gw, p.iph, uh)) {
			st->unmatched++;
			return XDP_DROP;
		}
	}
	if (count_answer(st, t) && ctr)
		__sync_fetch_and_add(&ctr->push_acks, 1);
	return XDP_DROP;
}

#endif /* __XR_PROTO_LORAWAN_DOWNLINK_BPF_H */
