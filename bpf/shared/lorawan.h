/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LoRaWAN's records, shared by bpf/proto/lorawan.bpf.h and user/proto/lorawan/.
 */
#ifndef __XR_SHARED_LORAWAN_H
#define __XR_SHARED_LORAWAN_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif

/*
 * LoRaWAN 1.0.x uplinks in Semtech UDP PUSH_DATA (bpf/proto/lorawan.bpf.h). The
 * frame set holds one PUSH_DATA per device; sequence number n is copy
 * k = n mod heard_by of uplink u = n / heard_by, from device d = u mod ndev
 * in round r = u / ndev, with FCnt = fcnt0 + r. The program writes the
 * token (n mod 2^16), the gateway's EUI, tmst, the PHYPayload's FCnt,
 * FRMPayload (encrypted) and MIC as base64 characters, and the UDP checksum.
 */
#define XR_LORA_MAX_PHY 128 /* PHYPayload bytes: MHDR 1, FHDR 7..22, FPort 1, FRMPayload, MIC 4 */
#define XR_LORA_MAX_FRM 96 /* FRMPayload bytes */
#define XR_LORA_MAX_HEARD 8 /* gateways that hear one uplink */
#define XR_LORA_TOKENS 65536 /* PUSH_ACKs are matched to n through its 16-bit token */
#define XR_LORA_PUSH_DATA_OFF 42 /* Ethernet + IPv4 (no options) + UDP */
#define XR_LORA_B64_MAX 176 /* base64 characters of XR_LORA_MAX_PHY bytes, rounded up */

/* One per device, in a BPF array indexed by d. */
struct xr_lora_dev {
	__u32 nwk_rk[44]; /* NwkSKey's AES-128 round keys (big-endian words as integers) */
	__u32 enc_rk[44]; /* FRMPayload's key: AppSKey, or NwkSKey for FPort 0 */
	__u32 k1[4], k2[4]; /* CMAC subkeys of NwkSKey, words in memory order; K2 right after K1 */
	__u8 phy[XR_LORA_MAX_PHY]; /* the PHYPayload with FRMPayload in plaintext */
	__u32 fcnt0; /* 32-bit FCnt of round 0 */
	__u8 phy_len;
	__u8 frm_off; /* FRMPayload's offset in phy */
	__u8 frm_len;
	__u8 v11; /* a LoRaWAN 1.1 session: the MIC's other half in lora_devs11 */
	__u16 b64_off; /* frame offset of the PHYPayload's base64 in "data" */
	__u16 tmst_off; /* frame offset of tmst's 10 digits */
	__u16 gw[XR_LORA_MAX_HEARD]; /* indices of the gateways that hear it */
	__u16 csum_rest; /* its frame's UDP sum without what the program writes (below) */
	__u16 pad1;
	__u32 pad2[2]; /* a multiple of 8 bytes: the mmapped array's stride */
};

/*
 * What a LoRaWAN 1.1 session adds (lora_devs11, by device, sized only for a
 * fleet with 1.1 devices): the MIC is cmacS[0..1] | cmacF[0..1], cmacF as a
 * 1.0 MIC with FNwkSIntKey (struct xr_lora_dev's nwk_rk), cmacS with
 * SNwkSIntKey over B1 | msg, B1 being B0 with ConfFCnt (0: an uplink without
 * the ACK bit), TxDr and TxCh in bytes 1-4 (LoRaWAN 1.1 §4.4).
 */
struct xr_lora_dev11 {
	__u32 s_rk[44]; /* SNwkSIntKey's round keys */
	__u32 s_k1[4], s_k2[4]; /* its CMAC subkeys, K2 right after K1 */
	__u32 e_rk[44]; /* NwkSEncKey's: FOpts, and FPort 0's FRMPayload both ways */
	__u8 tx_dr, tx_ch; /* the data rate and channel index the server derives from the rxpk */
	__u8 pad[6];
};

/*
 * 1.1 encrypts FOpts (LoRaWAN 1.1 §4.3.1.6 as its errata fix it, and as
 * ChirpStack does): FOpts xor AES(NwkSEncKey, A), A = 01 | 00 00 00 | a4 |
 * Dir | DevAddr | FCnt (32 bits, LE) | 00 | 01, a4 = 1 for an uplink's
 * FCntUp and a downlink's NFCntDown, 2 for AFCntDown (a downlink on FPort > 0).
 */
#define XR_LORA_FOPTS_A4_UP_NFCNT 1
#define XR_LORA_FOPTS_A4_AFCNT 2

/*
 * The UDP checksum of a PUSH_DATA without reading it: the program writes the
 * token, the gateway EUI, tmst's digits and the base64 from byte 6 on, and the
 * rest of the frame never changes. Heard by one gateway, the frame is that
 * gateway's as built (EUI and address), and the program leaves the EUI be.
 * csum_rest is the one's-complement sum (folded to 16 bits, not complemented)
 * of the pseudo-header and the datagram with the bytes the program writes and
 * the checksum field zero; the program adds the sums of what it writes. Words
 * are big-endian from the UDP header on, which starts at an even offset: a
 * byte at an even frame offset is a word's high byte.
 */
#define XR_LORA_UDP_CHECK_OFF 40 /* Ethernet 14 + IPv4 20 + 6 */

/* Base64 characters the program writes for a PHYPayload of len bytes: from byte 6 (group 2) on, no '=' */
static inline __u32 xr_lora_b64_chars(__u32 len)
{
	return (len + 2) / 3 * 4 - (3 - len % 3) % 3 - 8;
}

/* One's-complement sum of a byte written at frame offset off (see above). */
static inline __u32 xr_lora_csum_byte(__u8 b, __u32 off)
{
	return off & 1 ? b : (__u32)b << 8;
}

static inline __u16 xr_lora_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* rodata of bpf/proto/lorawan.bpf.h (lora_cfg) */
struct xr_lora_cfg {
	__u32 ndev;
	__u32 heard_by;
	__u32 ngw;
	__u32 ring; /* slots of lora_ring (a power of 2); 0: no precomputed uplinks */
	__u32 gw_addrs; /* 1: each gateway sends from its own address and port (struct xr_lora_gw) */
	__u32 confirmed; /* 1: the fleet has confirmed devices (struct xr_lora_confirmed) */
	__u32 join; /* 1: the frames are JoinRequests (struct xr_lora_join) */
	__u32 stat; /* 1: gateways send stat PUSH_DATA, their tokens in lora_stat_tok */
	__u32 v11; /* 1: the fleet has LoRaWAN 1.1 devices (lora_devs11) */
};

/*
 * A join storm (lora_cfg.join): each device's frame holds its whole
 * JoinRequest, built by userspace, and the program writes only what any copy
 * gets (token, gateway, tmst, checksum). It stamps each request's departure
 * (lora_join, per device) and hands every JoinAccept (a PULL_RESP whose
 * PHYPayload has MType 001) to userspace through the lora_join_accepts ring:
 * which device it is for, its MIC and the session keys take the device's
 * AppKey, which a trial decryption finds, as a device in the radio window does.
 */
struct xr_lora_join {
	__u64 sent_ns; /* when the first copy of its last JoinRequest was rewritten */
	__u32 tmst; /* the tmst it carried (a JoinAccept's txpk.tmst is 5 or 6 s later) */
	__u32 requests;
};
#define XR_LORA_JA_JSON 1024 /* bytes of a JoinAccept's PULL_RESP JSON handed on */
struct xr_lora_join_accept {
	__u64 rx_ns;
	__u32 gw; /* the gateway whose address it reached */
	__u32 len; /* JSON bytes in json (the PULL_RESP's from byte 4, at most XR_LORA_JA_JSON) */
	__u32 full_len; /* the JSON's whole length */
	__u32 pad;
	__u8 json[XR_LORA_JA_JSON];
};

/*
 * A gateway as the program knows it, in lora_gws indexed by its number. With
 * lora_cfg.gw_addrs its copies leave from saddr:sport: the program writes
 * both and updates the IPv4 and UDP checksums from the frame's own address
 * and port, which it reads before (RFC 1624), so a frame may be built with
 * any gateway's address.
 */
struct xr_lora_gw {
	__u64 eui; /* 8 bytes as on the wire */
	__u32 saddr; /* network order */
	__u16 sport; /* network order */
	__u16 pad;
};

/*
 * Semtech UDP's answers per gateway (lora_gw_ctr). PULL_DATA keepalives carry
 * the gateway's number as their token, which the PULL_ACK echoes. An answer
 * to one gateway that reaches another gateway's address is misdirected: a
 * real gateway would never see it.
 */
struct xr_lora_gw_ctr {
	__u64 push_acks;
	__u64 pull_acks;
	__u64 misdirected;
	__u64 pull_resps; /* downlinks (PULL_RESP) to the gateway */
	__u64 tx_acks; /* TX_ACKs it answered them with (XDP_TX) */
	__u64 stat_acks; /* PUSH_ACKs of its stat messages */
	__u64 pad[2];
};
#define XR_LORA_PUSH_ACK 1 /* Semtech UDP identifiers (PROTOCOLS.md §1) */
#define XR_LORA_PULL_DATA 2
#define XR_LORA_PULL_RESP 3
#define XR_LORA_PULL_ACK 4
#define XR_LORA_STAT_TOKENS 65536 /* every 16-bit token: a stat in flight each */
#define XR_LORA_TX_ACK 5

/*
 * Confirmed uplinks and the ACK downlinks that answer them, per device (in
 * lora_confirmed, indexed by device; lora_devaddr maps a DevAddr to it).
 * The sender stamps a confirmed uplink's first copy; a downlink with the ACK
 * bit to the device (LoRaWAN 1.0.3 §4.3.1.2: it acknowledges the device's
 * last uplink) is matched to that uplink, once.
 */
struct xr_lora_confirmed {
	__u64 sent_ns; /* when its last confirmed (or asking) uplink's first copy was rewritten */
	__u64 last_u; /* that uplink's number u, plus 1 (0: none yet) */
	__u64 acked_u; /* the last uplink matched to an ACK, plus 1 */
	__u64 uplinks; /* confirmed uplinks of this device sent (their first copies) */
	__u64 acked; /* of them, ACKed */
	__u64 dup_acks; /* ACKs to an uplink already ACKed */
	__u64 is_confirmed; /* set by userspace: the device sends confirmed uplinks */
	/*
	 * the 32-bit FCntDown of its last downlink whose MIC was right; a 1.1 session
	 * keeps two (LoRaWAN 1.1 §4.3.1.5): AFCntDown for FPort > 0, NFCntDown for the rest
	 */
	__u32 fcnt_down, afcnt_down;
	__u32 mac_asks; /* set by userspace: what its uplinks ask in FOpts (XR_LORA_ASK_*) */
	__u32 pad;
	/* MAC commands: uplinks that asked, the answers that came (sent_ns and last_u stamp both) */
	__u64 mac_uplinks; /* uplinks sent with the requests (their first copies) */
	__u64 mac_answered_u; /* the last uplink whose requests were answered, plus 1 */
	__u64 mac_answered; /* uplinks answered (by a downlink with an answer to what they asked) */
	__u64 mac_dup; /* answers to an uplink already answered */
	__u64 link_check_ans, device_time_ans; /* answers of each kind */
	__u64 gw_cnt_sum; /* the LinkCheckAns' GwCnt (gateways that heard the request), summed */
	__u64 device_time; /* the last DeviceTimeAns: GPS seconds << 8 | 1/256 s */
	__u64 device_time_sent_ns; /* when the uplink it answered left */
};

/*
 * MAC commands (LoRaWAN 1.0.3 §5, 1.1 §5): an uplink may ask in FOpts for
 * LinkCheckReq and DeviceTimeReq; the server answers in a downlink's FOpts or
 * in its FRMPayload on FPort 0 (encrypted with NwkSKey). A downlink's other
 * commands are skipped by their length (XR_LORA_MAC_DOWN_LENS); an unknown
 * CID, or a command cut short, ends the reading, as a device would stop.
 */
#define XR_LORA_CID_LINK_CHECK 0x02
#define XR_LORA_CID_DEVICE_TIME 0x0d
#define XR_LORA_ASK_LINK_CHECK 1
#define XR_LORA_ASK_DEVICE_TIME 2
#define XR_LORA_CID_DOWN_MAX 0x13
#define XR_LORA_MAC_MAX_CMDS 16 /* commands of one downlink read (a verifier's bound) */

/*
 * Payload bytes of a server-to-device command by CID, 0..31; -1 for none:
 * ResetConf, LinkCheckAns, LinkADRReq, DutyCycleReq, RXParamSetupReq,
 * DevStatusReq, NewChannelReq, RXTimingSetupReq, TxParamSetupReq,
 * DlChannelReq, RekeyConf, ADRParamSetupReq, DeviceTimeAns, ForceRejoinReq,
 * RejoinParamSetupReq, PingSlotInfoAns, PingSlotChannelReq,
 * BeaconTimingAns, BeaconFreqReq (CIDs 1 to XR_LORA_CID_DOWN_MAX).
 */
#define XR_LORA_MAC_DOWN_LENS                                                                    \
	{                                                                                        \
		-1, 1, 2, 4, 1, 4, 0, 5, 1, 1, 4, 1, 1, 5, 2, 1, 0, 4, 3, 3, -1, -1, -1, -1, -1, \
			-1, -1, -1, -1, -1, -1, -1                                               \
	}

/* A downlink's MAC commands as lora_dl_mac reads them. */
struct xr_lora_dl_mac {
	__u32 found; /* answers in it (XR_LORA_ASK_*) */
	__u32 gw_cnt, margin; /* LinkCheckAns */
	__u32 other; /* other commands (skipped) */
	__u32 unknown; /* 1: an unknown CID ended the reading */
	__u32 in_frm; /* 1: the commands were in an FRMPayload on FPort 0 */
	__u64 device_time; /* DeviceTimeAns: GPS seconds << 8 | 1/256 s */
};

/* A downlink's whole PHYPayload and its MIC's input (lora_dl_scratch, per CPU). */
struct xr_lora_dl_scratch {
	__u32 x[4]; /* the CMAC */
	__u8 phy[XR_LORA_MAX_PHY + 8]; /* zero after the PHYPayload */
	__u8 cm[16 + XR_LORA_MAX_PHY + 16]; /* B0 | msg, padded to whole blocks */
	__u32 a[4]; /* a key stream block of the FRMPayload's decryption */
	struct xr_lora_dl_mac mac;
	__u32 conf_fcnt; /* 1.1: the ConfFCnt of the downlink's MIC (lora_dl_mic11_ok) */
	__u32 pad;
};

/* Downlink counters (lora_dl_ctr, per CPU) */
enum xr_lora_dl_ctr {
	XR_LORA_DL_UNKNOWN_GW = 0, /* PULL_RESP to an address no gateway has (or shared by all) */
	XR_LORA_DL_MALFORMED, /* no "data" of a data-down PHYPayload in its JSON */
	XR_LORA_DL_NOT_ACK, /* a data downlink without the ACK bit */
	XR_LORA_DL_UNKNOWN_DEV, /* an ACK to a DevAddr of no confirmed device */
	XR_LORA_DL_NO_UPLINK, /* an ACK to a device that has sent no confirmed uplink yet */
	XR_LORA_DL_TX_ACK_FAILED, /* the frame could not be turned into a TX_ACK */
	XR_LORA_DL_JOIN_ACCEPT, /* JoinAccepts handed to userspace (lora_join_accepts) */
	XR_LORA_DL_JOIN_LOST, /* JoinAccepts not handed on: the ring was full */
	XR_LORA_DL_JOIN_UNASKED, /* JoinAccepts in a run that sent no JoinRequest */
	XR_LORA_DL_BAD_MIC, /* a downlink to a confirmed device whose MIC is not its NwkSKey's */
	XR_LORA_DL_MAC_UNKNOWN, /* a MAC command with a CID no LoRaWAN version has: the rest unread */
	XR_LORA_DL_MAC_OTHER, /* MAC commands other than the answers asked for (skipped) */
	XR_LORA_DL_UNREAD, /* PULL_RESPs counted, not read: xr_replies_lora_acks (before 5.18) */
	XR_LORA_DL_CTRS
};

/* xr_gen_slot.hook_ctr[] of the LoRaWAN hook */
enum xr_lora_ctr {
	XR_LORA_RING_HITS = 0, /* uplinks taken from the precomputed ring */
	XR_LORA_COMPUTED = 1, /* uplinks computed in the program */
};

/*
 * Uplinks precomputed by userspace (AES-NI) ahead of the senders: slot
 * u mod ring holds the base64 characters from the PHYPayload's byte 6 on of
 * uplink u, tagged u + 1 once complete (0 while being written). The program
 * takes them when the tag matches before and after its copy, and computes
 * the uplink itself otherwise: every frame is valid either way.
 */
#define XR_LORA_RING_CHARS 96

/*
 * A slot also carries what the program needs of the device record, so that
 * an uplink taken from the ring never touches the (large, cold) device table.
 */
struct xr_lora_ring_slot {
	__u64 tag;
	__u16 b64_off, tmst_off; /* as in struct xr_lora_dev */
	__u16 csum; /* the device's csum_rest plus the sum of b64's characters where they go */
	__u8 chars; /* base64 characters in b64 */
	__u8 pad;
	__u16 gw[XR_LORA_MAX_HEARD];
	__u8 b64[XR_LORA_RING_CHARS];
};

/* AES-128 encryption tables (T-tables and S-box), filled by userspace before load. */
struct xr_aes_tables {
	__u32 te[4][256];
	__u8 sbox[256];
};

/* Per-CPU working memory of the LoRaWAN rewrite; the last uplink's result is reused by its copies. */
struct xr_lora_scratch {
	__u64 u; /* uplink whose result b64 holds */
	__u32 valid;
	__u32 tmst;
	__u32 x[4]; /* CMAC chain / AES block */
	__u32 a[4]; /* counter block of the FRMPayload encryption */
	__u8 phy[XR_LORA_MAX_PHY + 16];
	__u8 cm[16 + XR_LORA_MAX_PHY + 16]; /* B0 | msg, padded to whole blocks */
	__u8 b64[XR_LORA_B64_MAX];
	__u32 b64_len; /* characters to write from the PHYPayload's byte 6 on */
	__u16 b64_off, tmst_off; /* the uplink's device's (struct xr_lora_dev) */
	__u16 csum; /* as struct xr_lora_ring_slot's */
	__u16 tmst_even, tmst_odd; /* the sums of tmst's digits 0, 2, .. and 1, 3, .. */
	__u32 tmst_age; /* uplinks since the clock was read for tmst */
	__u64 tmst_clock; /* the pacer's reading tmst was last taken from */
	__u16 gw[XR_LORA_MAX_HEARD];
	__u8 digits[16];
};

/* selftest: AES-128 and AES-CMAC of the BPF code on given inputs (xr_aes_test). */
struct xr_aes_test {
	__u32 rk[44];
	__u32 k1[4], k2[4];
	__u32 len; /* CMAC message length */
	__u32 pad;
	__u8 cm[16 + XR_LORA_MAX_PHY + 16]; /* padded as the LoRaWAN code pads it */
	__u32 block[4]; /* encrypted in place */
	__u32 mac[4];
};

#define XR_LORA_DL_SCAN 512 /* bytes of a PULL_RESP's JSON searched for "data" */
#define XR_LORA_DL_PHY 9 /* PHYPayload bytes read: MHDR, DevAddr, FCtrl, FCnt and one more */

/* selftest: the downlink reader (lora_dl_phy) on a given PULL_RESP frame (xr_lora_dl_test). */
struct xr_lora_dl_test {
	__s32 ret; /* 0: phy holds the PHYPayload's first bytes; -1: no "data" found */
	__u8 phy[12]; /* XR_LORA_DL_PHY of them used */
	__s32 len; /* the whole PHYPayload's length (in full), or -1 */
	__s32 mic_ok; /* with len 12..XR_LORA_MAX_PHY: its MIC is lora_dl_test_dev's at fcnt */
	__u32 fcnt; /* set by the caller: the 32-bit FCntDown */
	__s32 mac_ret; /* with mic_ok: lora_dl_mac's return, its reading in mac */
	__u8 full[XR_LORA_MAX_PHY + 8];
	struct xr_lora_dl_mac mac;
	__u32 v11; /* set by the caller: the 1.1 check (lora_dl_test_dev11's key) */
	__u32 conf_fcnt; /* and its ConfFCnt */
};

/* Read-only configuration of the kernel engine (rodata). */

#endif /* __XR_SHARED_LORAWAN_H */
