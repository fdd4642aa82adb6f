/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN fleets: devices (LoRaWAN 1.0.x, ABP or OTAA) and the gateways that hear
 * them, generated from a seed or loaded from CSV; the PUSH_DATA frame of each
 * device; the per-device records of the BPF rewriter (bpf/lorawan.bpf.h);
 * and the reference implementation of that rewriter on OpenSSL, which the
 * tests hold the BPF code against.
 */
#ifndef __XR_LORAWAN_H
#define __XR_LORAWAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xdpreplay.h"

#define LW_DEFAULT_PORT 1700

struct lw_gateway {
	uint8_t eui[8];
	uint32_t saddr; /* with lw_fleet.gw_addrs: its source address (network order) */
	uint16_t sport; /* and port (host order) */
};

struct lw_device {
	uint8_t dev_eui[8];
	/* the session: set for ABP, and for OTAA once joined (has_session) */
	uint32_t dev_addr; /* as written (MSB first); LE on air */
	/* 1.0.x: NwkSKey; 1.1: FNwkSIntKey (the MIC's B0 half), with the two keys below */
	uint8_t nwk_s_key[16], app_s_key[16];
	uint8_t s_nwk_s_int_key[16]; /* 1.1: the MIC's B1 half */
	uint8_t nwk_s_enc_key[16]; /* 1.1: FPort 0's FRMPayload (and FOpts) */
	bool v11; /* a LoRaWAN 1.1 session (mac_version 1.1.0) */
	bool adr; /* FCtrl's ADR bit (the published 1.1 vectors set it) */
	bool has_session;
	/*
	 * OTAA: the root keys and the DevNonce of the next JoinRequest. 1.0.x: AppKey;
	 * 1.1 (join11): NwkKey signs the JoinRequest and makes the network's keys, AppKey AppSKey
	 */
	bool otaa, join11;
	uint8_t join_eui[8], app_key[16], nwk_key[16];
	uint16_t dev_nonce;
	uint32_t fcnt_start; /* the 32-bit FCnt of round 0 */
	uint32_t freq_hz;
	uint8_t fport;
	uint8_t confirmed;
	uint8_t payload_len;
	/* MAC commands its uplinks carry in FOpts (lorawan send --mac), and what they ask */
	uint8_t fopts_len;
	uint8_t fopts[15];
	uint8_t mac_asks; /* XR_LORA_ASK_* */
	uint8_t sf; /* datr SF<sf>BW<bw_khz> */
	uint16_t bw_khz;
	uint8_t codr; /* index into lw_codr_names */
	uint8_t chan; /* IF channel of freq in its region's plan */
	int16_t rssi;
	int16_t lsnr10; /* SNR x 10 */
	uint16_t b64_off, tmst_off; /* set when its frame is built */
	uint16_t csum_rest; /* also set then: struct xr_lora_dev's */
	uint16_t gw[XR_LORA_MAX_HEARD];
	uint8_t payload[XR_LORA_MAX_FRM];
};

struct lw_fleet {
	struct lw_device *dev;
	size_t ndev;
	struct lw_gateway *gw;
	size_t ngw;
	unsigned int heard_by; /* every device is heard by this many gateways */
	bool gw_addrs; /* each gateway sends from its own address and port (lw_fleet_gateway_addrs) */
	bool joining; /* its frames are JoinRequests with each device's dev_nonce (lorawan send --join) */
};

struct lw_gen_opts {
	uint64_t devices, gateways, seed;
	unsigned int heard_by;
	const char *region; /* eu868 or us915 */
	uint8_t sf;
	uint16_t bw_khz;
	unsigned int payload_min, payload_max;
	uint8_t fport;
	bool confirmed;
	bool fcnt_random; /* a random 32-bit start below 2^31 */
	uint32_t fcnt_start;
	bool otaa; /* devices join (AppKey, JoinEUI, DevNonce) instead of an ABP session */
	bool v11; /* LoRaWAN 1.1 sessions: four session keys, two MICs */
};

/* Where the frames go: addresses in network order, ports in host order. */
struct lw_net {
	uint8_t src_mac[6], dst_mac[6];
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};

void lw_fleet_free(struct lw_fleet *f);

/*
 * Gives gateway g the address base + g mod naddr (host order) and port
 * port_lo + g / naddr, so that no two gateways share both: 0, or -ERANGE
 * when naddr x nports pairs are fewer than the gateways.
 */
int lw_fleet_gateway_addrs(struct lw_fleet *f, uint32_t base, uint64_t naddr, uint16_t port_lo,
			   uint32_t nports);

/* EUIs (as 64-bit numbers) to indices, sorted: gateways by the CSV loader, devices by count --webhook. */
struct lw_eui_index {
	uint64_t eui;
	uint32_t idx;
};
uint64_t lw_eui64(const uint8_t b[8]);
/* Sorts n entries; returns 0, or -EEXIST with *dup set when an EUI is there twice. */
int lw_eui_sort(struct lw_eui_index *ix, size_t n, uint64_t *dup);
const struct lw_eui_index *lw_eui_find(const struct lw_eui_index *ix, size_t n, uint64_t eui);
/* 0 or -errno after a one-line message (bad option combinations are -EINVAL). */
int lw_fleet_generate(const struct lw_gen_opts *o, struct lw_fleet *f);
int lw_fleet_save(const struct lw_fleet *f, const char *dir);
int lw_fleet_load(const char *dir, struct lw_fleet *f);

/* Largest FRMPayload for a data rate at a frequency (LoRaWAN Regional Parameters "N"); 0 if unknown. */
unsigned int lw_max_payload(uint32_t freq_hz, uint8_t sf, uint16_t bw_khz);

/*
 * Builds device d's PUSH_DATA frame into out; returns its length, or -E2BIG.
 * Sets d's offsets. Without join, a data uplink (round 0's FCnt, MIC zero:
 * the program writes both); with it, that JoinRequest PHYPayload
 * (LW_JOIN_REQUEST_LEN bytes), which the program sends as it is.
 */
int lw_build_frame(struct lw_fleet *f, size_t d, const struct lw_net *net, const uint8_t *join,
		   uint8_t *out, size_t cap);

/* AES T-tables and S-box for the BPF code; the AES-128 key schedule. */
void lw_aes_tables(struct xr_aes_tables *t);
void lw_aes_expand(const struct xr_aes_tables *t, const uint8_t key[16], uint32_t rk[44]);

struct lw_crypto;
struct lw_crypto *lw_crypto_new(void);
void lw_crypto_free(struct lw_crypto *c);
/* AES-128 of one block and AES-CMAC, by OpenSSL. */
int lw_aes128(struct lw_crypto *c, const uint8_t key[16], const uint8_t in[16], uint8_t out[16]);
int lw_cmac(struct lw_crypto *c, const uint8_t key[16], const uint8_t *msg, size_t len,
	    uint8_t out[16]);
/* CMAC subkeys K1, K2 of key (RFC 4493 §2.3). */
int lw_cmac_subkeys(struct lw_crypto *c, const uint8_t key[16], uint8_t k1[16], uint8_t k2[16]);

/* Device d's record for the BPF rewriter (its frame must be built). 0 or -EIO. */
int lw_bpf_device(const struct lw_fleet *f, size_t d, const struct xr_aes_tables *t,
		  struct lw_crypto *c, struct xr_lora_dev *out);
/* What a 1.1 device's record adds (lora_devs11). 0 or -EIO. */
int lw_bpf_device11(const struct lw_device *d, const struct xr_aes_tables *t, struct lw_crypto *c,
		    struct xr_lora_dev11 *out);

/* LoRaWAN join (1.0.x §6.2; 1.1 §6.2 with NwkKey, OptNeg and JSIntKey), by OpenSSL. */
#define LW_JOIN_REQUEST_LEN 23 /* MHDR, JoinEUI, DevEUI, DevNonce, MIC */
/*
 * Device dev's JoinRequest with DevNonce nonce into phy (LW_JOIN_REQUEST_LEN
 * bytes), its MIC by AppKey (1.0.x) or NwkKey (1.1). 0 or -EIO.
 */
int lw_join_request(struct lw_crypto *c, const struct lw_device *dev, uint16_t nonce, uint8_t *phy);

struct lw_join_accept {
	uint32_t app_nonce, net_id; /* 24 bits each (AppNonce is 1.1's JoinNonce) */
	uint32_t dev_addr; /* as a number (MSB first) */
	uint8_t dl_settings, rx_delay;
	bool opt_neg; /* a 1.1 device's accept from a 1.1 server: DLSettings bit 7 */
	bool has_cflist;
	uint8_t cflist[16];
};
/*
 * Opens the JoinAccept PHYPayload phy (17 or 33 bytes) for device dev, whose
 * JoinRequest had DevNonce dev_nonce: decrypts it (AES encrypt, §6.2.5) with
 * AppKey (1.0.x) or NwkKey (1.1) and checks its MIC: by that key, or with
 * OptNeg by JSIntKey over JoinReqType | JoinEUI | DevNonce first. 0 with *ja
 * set; -EBADMSG when the MIC does not match (another device's, or corrupt);
 * -EINVAL for a length or MHDR that is no JoinAccept; -EIO if OpenSSL fails.
 */
int lw_join_accept_open(struct lw_crypto *c, const struct lw_device *dev, uint16_t dev_nonce,
			const uint8_t *phy, size_t len, struct lw_join_accept *ja);

/* A joined session's keys; without v11, nwk_s_key is NwkSKey and the other two are unset. */
struct lw_keys {
	uint8_t nwk_s_key[16], app_s_key[16]; /* 1.1: nwk_s_key is FNwkSIntKey */
	uint8_t s_nwk_s_int_key[16], nwk_s_enc_key[16];
	bool v11;
};
/*
 * The session keys of device dev from its JoinAccept and the JoinRequest's
 * DevNonce: 1.0.x's two from AppKey; a 1.1 device's four (OptNeg), or with a
 * 1.0 server's accept (no OptNeg) a 1.0 session's two from NwkKey. 0 or -EIO.
 */
int lw_session_keys(struct lw_crypto *c, const struct lw_device *dev,
		    const struct lw_join_accept *ja, uint16_t dev_nonce, struct lw_keys *k);

/* The PHYPayload of device dev's uplink with 32-bit FCnt fcnt, by OpenSSL; its length, or -EIO. */
int lw_ref_phy(struct lw_crypto *c, const struct lw_device *dev, uint32_t fcnt, uint8_t *phy);

/*
 * The reference rewrite: frame (device d's built frame, len bytes) as
 * sequence number n must leave the program, given the tmst it used.
 */
int lw_ref_frame(struct lw_crypto *c, const struct lw_fleet *f, uint64_t n, uint32_t tmst,
		 uint8_t *frame, uint32_t len);

/*
 * The devices each gateway hears, by gateway (their indices ascending from
 * dev + start[g] to dev + start[g + 1]): how many copies a gateway received
 * up to a sequence number, without counting them as they leave.
 */
struct lw_gw_index {
	uint32_t *start; /* ngw + 1 */
	uint32_t *dev; /* ndev x heard_by */
};
int lw_gw_index_build(const struct lw_fleet *f, struct lw_gw_index *ix); /* 0 or -ENOMEM */
void lw_gw_index_free(struct lw_gw_index *ix);
/* The copies (PUSH_DATA) of gateway g among sequence numbers 0 .. n - 1. */
uint64_t lw_gw_copies(const struct lw_fleet *f, const struct lw_gw_index *ix, size_t g, uint64_t n);

/* Which device, gateway copy and FCnt sequence number n carries. */
static inline void lw_of_n(const struct lw_fleet *f, uint64_t n, size_t *d, unsigned int *k,
			   uint32_t *fcnt)
{
	uint64_t u = n / f->heard_by;

	*k = n % f->heard_by;
	*d = u % f->ndev;
	*fcnt = f->dev[*d].fcnt_start + (uint32_t)(u / f->ndev);
}

/*
 * 1.1's FOpts (n <= 15 bytes) encrypted or decrypted in place with NwkSEncKey
 * key: a4 XR_LORA_FOPTS_A4_* (bpf/shared/lorawan.h), dir 0 up / 1 down,
 * dev_addr as on air, fcnt the 32-bit counter. 0, -EINVAL or -EIO.
 */
int lw_fopts11(struct lw_crypto *c, const uint8_t key[16], uint8_t a4, uint8_t dir,
	       const uint8_t dev_addr[4], uint32_t fcnt, uint8_t *fopts, size_t n);

/*
 * A 1.1 uplink's MIC (LoRaWAN 1.1 §4.4): cmacS[0..1] | cmacF[0..1], cmacF
 * with FNwkSIntKey over B0 | msg, cmacS with SNwkSIntKey over B1 | msg
 * (B1: ConfFCnt, TxDr, TxCh). dev_addr as on air. 0 or -EIO.
 */
int lw_mic11(struct lw_crypto *c, const uint8_t f_key[16], const uint8_t s_key[16],
	     uint16_t conf_fcnt, uint8_t tx_dr, uint8_t tx_ch, const uint8_t dev_addr[4],
	     uint32_t fcnt, const uint8_t *msg, size_t len, uint8_t mic[4]);
/* The data rate index and channel index of an uplink in its region (the TxDr and TxCh of B1). */
int lw_tx_dr(uint32_t freq_hz, uint8_t sf, uint16_t bw_khz);
int lw_tx_ch(uint32_t freq_hz);

/* SF<5..12>BW<125|250|500>, the whole string: 0 or -EINVAL. */
int lw_parse_datr(const char *s, uint8_t *sf, uint16_t *bw_khz);

/* DIR/NAME into buf with one slash between them, whatever DIR ends with; returns buf. */
char *lw_path(char *buf, size_t len, const char *dir, const char *name);

/* Shared by the fleet's files (fleet.c, csv.c, semtech.c, crypto.c). */
extern const char *const lw_codr_names[4];
int lw_chan_of(uint32_t hz);
int lw_check_device(const struct lw_fleet *f, const struct lw_device *d, char *why, size_t wl);
/* Ethernet, IPv4 and UDP headers of a frame of len bytes from saddr (network order):sport to net's server. */
void lw_udp4_headers(uint8_t *out, const struct lw_net *net, uint32_t saddr, uint16_t sport,
		     uint32_t len);
void lw_ip4_csum_fill(uint8_t *frame);
void lw_udp4_csum_fill(uint8_t *frame, uint32_t len);
int lw_phy_template(const struct lw_device *d, uint8_t *phy);

#endif
