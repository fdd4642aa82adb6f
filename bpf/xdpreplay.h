/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header shared by bpf/ and user/: sizes, the frame set layout, the
 * per-CPU state of the kernel engine and the server counter's records.
 * Only __u* types here, so that both vmlinux.h and <linux/types.h> users can
 * include it.
 */
#ifndef __XDPREPLAY_H
#define __XDPREPLAY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif

#ifndef XR_MAX_CPUS
#define XR_MAX_CPUS 256
#endif

/*
 * A live-frames page is 4096 bytes, less 256 of XDP headroom and 320 of
 * skb_shared_info: 3520 bytes of frame at most. Round down.
 */
#define XR_MAX_FRAME 3072
#define XR_MIN_FRAME 14

/*
 * Frame bytes live packed in chunks of an mmapable BPF array. A frame starts
 * below XR_CHUNK_SIZE and may run into the XR_MAX_FRAME bytes of slack after
 * it: that is what lets the verifier prove every copy stays inside the value.
 */
#define XR_CHUNK_SIZE (1U << 20)
#define XR_CHUNK_VALUE (XR_CHUNK_SIZE + XR_MAX_FRAME)

/* One per frame of the frame set: where its bytes are and when it was seen. */
struct xr_frame {
	__u32 chunk;
	__u32 off;
	__u16 len;
	__u16 flags;
	__u32 pad;
	__u64 ts_ns; /* capture time relative to the first frame */
};

/*
 * Rewrite plan: what changes per packet, as a pure function of the sequence
 * number n (pages are recycled without reset, so nothing is incremented in
 * place). bpf/gen.bpf.c applies it in the kernel, user/frames/rewrite.c is the
 * reference the tests hold it against byte for byte.
 */
#define XR_MAX_OPS 4

enum xr_op_kind {
	XR_OP_NONE = 0,
	/*
	 * value = base + ((n / divisor) * step) mod modulus, wrapped to the
	 * field's width, written at off; base is the captured value with
	 * XR_OPF_RELATIVE. The divisor gives a per-source sequence when sources
	 * take turns (ip.src=A/23 with ip.id=seq/512).
	 * Counters, sequence stamps, address and port ranges are all this op.
	 */
	XR_OP_COUNTER = 1,
};

enum xr_op_flags {
	XR_OPF_BIG_ENDIAN = 1,
	XR_OPF_RELATIVE = 2,
};

/*
 * Checksums are fixed incrementally (RFC 1624) over the 16-bit words the
 * field touches, counted from even frame offsets: every region a checksum
 * covers (IPv4 header, pseudo-header addresses, UDP/TCP segment) starts at
 * an even offset in the frames a plan accepts.
 */
struct xr_op {
	__u8 kind;        /* enum xr_op_kind */
	__u8 width;       /* bytes: 1, 2, 4 or 8 */
	__u8 flags;       /* enum xr_op_flags */
	__u8 pad;
	__u16 off;        /* from the start of the frame */
	/* checksums covering the field; 0 = none */
	__u16 ip_csum_off;
	__u16 l4_csum_off;
	__u16 l4_proto;   /* IPPROTO_UDP: a zero checksum means none and stays zero */
	__u32 pad2;
	__u64 base, step;
	__u64 modulus;    /* 0: none (the value wraps at the field's width) */
	__u64 divisor;    /* 0 or 1: none */
	/*
	 * Single-frame sets skip the copy: the template's bytes are known, so each
	 * op writes its words and the checksums absolutely from them (orig, and
	 * xr_nocopy's checksums), never from what a recycled page holds.
	 */
	__u8 orig[10];    /* the template's 16-bit words the field touches */
	__u8 nc_len;      /* how many of them lie inside the frame */
	__u8 pad3[5];
};

/* Single-frame sets: the template's checksums, which the ops update in turn. */
struct xr_nocopy {
	__u16 csum_off[2];  /* IPv4 header, UDP/TCP; 0 = none */
	__u16 csum_orig[2]; /* as the template holds them (memory order) */
	__u8 udp;           /* csum_off[1] is UDP's: zero means none and stays zero */
	__u8 pad[7];
};

enum xr_pace {
	XR_PACE_NONE = 0, /* top speed */
	XR_PACE_RATE = 1, /* fixed interval between packets */
	XR_PACE_PCAP = 2, /* capture timestamps divided by a multiplier */
};

/*
 * Replies (bpf/gen.bpf.c, xr_replies on the sender's interface): SYN-ACKs and
 * RSTs to the SYNs the kernel engine sent, matched to their sequence number n
 * through the ISN (isn = isn_base + n * isn_step, isn_step odd, so
 * n = (isn - isn_base) * isn_inv mod 2^32), and their round trips.
 */
#define XR_TS_RING (1U << 20)    /* send times of the last 2^20 frames */
#define XR_RTT_BUCKETS 512       /* 16 per octave of ns: about 4% wide */
#define XR_RTT_SECS 64           /* per-second histograms, a ring of seconds */

struct xr_send_ts {
	__u64 ts_ns;
	__u32 n32;     /* low 32 bits of n: the entry is n's, not an older one's */
	__u16 answered; /* XR_ANSWERED_*: which of n's answers came (LoRaWAN: 1 = its PUSH_ACK) */
	__u16 gw;      /* LoRaWAN: the gateway that sent n */
};

#define XR_ANSWERED_SYNACK 1
#define XR_ANSWERED_FIN 2

struct xr_replies_cfg {
	__u32 server_addr;   /* network order */
	__u16 server_port;   /* network order */
	__u8 complete;       /* answer SYN-ACKs with an ACK, FINs with a RST */
	__u8 pad;
	__u32 src_base;      /* host order: our source addresses */
	__u32 src_count;
	__u16 sport_base;    /* host order: our source ports */
	__u16 pad2;
	__u32 sport_count;
	__u32 isn_base, isn_inv;
};

struct xr_replies_stats {
	__u64 syn_acks;      /* first SYN-ACK for a SYN we sent */
	__u64 retransmits;   /* further SYN-ACKs for it */
	__u64 rsts;
	__u64 acks_sent;     /* --complete: handshakes we completed */
	__u64 fins;          /* --complete: closes we answered with a RST */
	__u64 unmatched;     /* to our addresses but not from a frame of this run */
	__u64 push_acks;     /* LoRaWAN: first PUSH_ACK for a PUSH_DATA we sent */
	__u64 push_ack_dups; /* LoRaWAN: further PUSH_ACKs for it */
};

/*
 * LoRaWAN 1.0.x uplinks in Semtech UDP PUSH_DATA (bpf/lorawan.bpf.h). The
 * frame set holds one PUSH_DATA per device; sequence number n is copy
 * k = n mod heard_by of uplink u = n / heard_by, from device d = u mod ndev
 * in round r = u / ndev, with FCnt = fcnt0 + r. The program writes the
 * token (n mod 2^16), the gateway's EUI, tmst, the PHYPayload's FCnt,
 * FRMPayload (encrypted) and MIC as base64 characters, and the UDP checksum.
 */
#define XR_LORA_MAX_PHY 128   /* PHYPayload bytes: MHDR 1, FHDR 7..22, FPort 1, FRMPayload, MIC 4 */
#define XR_LORA_MAX_FRM 96    /* FRMPayload bytes */
#define XR_LORA_MAX_HEARD 8   /* gateways that hear one uplink */
#define XR_LORA_TOKENS 65536  /* PUSH_ACKs are matched to n through its 16-bit token */
#define XR_LORA_PUSH_DATA_OFF 42 /* Ethernet + IPv4 (no options) + UDP */
#define XR_LORA_B64_MAX 176   /* base64 characters of XR_LORA_MAX_PHY bytes, rounded up */

/* One per device, in a BPF array indexed by d. */
struct xr_lora_dev {
	__u32 nwk_rk[44];     /* NwkSKey's AES-128 round keys (big-endian words as integers) */
	__u32 enc_rk[44];     /* FRMPayload's key: AppSKey, or NwkSKey for FPort 0 */
	__u32 k1[4], k2[4];   /* CMAC subkeys of NwkSKey, words in memory order; K2 right after K1 */
	__u8 phy[XR_LORA_MAX_PHY]; /* the PHYPayload with FRMPayload in plaintext */
	__u32 fcnt0;          /* 32-bit FCnt of round 0 */
	__u8 phy_len;
	__u8 frm_off;         /* FRMPayload's offset in phy */
	__u8 frm_len;
	__u8 pad;
	__u16 b64_off;        /* frame offset of the PHYPayload's base64 in "data" */
	__u16 tmst_off;       /* frame offset of tmst's 10 digits */
	__u16 gw[XR_LORA_MAX_HEARD]; /* indices of the gateways that hear it */
	__u32 pad2[3];        /* a multiple of 8 bytes: the mmapped array's stride */
};

struct xr_lora_cfg {
	__u32 on;
	__u32 ndev;
	__u32 heard_by;
	__u32 ngw;
	__u32 ring;           /* slots of lora_ring (a power of 2); 0: no precomputed uplinks */
	__u32 pad;
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
	__u8 chars;               /* base64 characters in b64 */
	__u8 pad[3];
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
	__u64 u;              /* uplink whose result b64 holds */
	__u32 valid;
	__u32 tmst;
	__u32 x[4];           /* CMAC chain / AES block */
	__u32 a[4];           /* counter block of the FRMPayload encryption */
	__u8 phy[XR_LORA_MAX_PHY + 16];
	__u8 cm[16 + XR_LORA_MAX_PHY + 16]; /* B0 | msg, padded to whole blocks */
	__u8 b64[XR_LORA_B64_MAX];
	__u32 b64_len;        /* characters to write from the PHYPayload's byte 6 on */
	__u16 b64_off, tmst_off; /* the uplink's device's (struct xr_lora_dev) */
	__u16 gw[XR_LORA_MAX_HEARD];
	__u8 tail[64];        /* the last bytes of the UDP checksum */
	__u8 digits[16];
};

/* selftest: AES-128 and AES-CMAC of the BPF code on given inputs (xr_aes_test). */
struct xr_aes_test {
	__u32 rk[44];
	__u32 k1[4], k2[4];
	__u32 len;            /* CMAC message length */
	__u32 pad;
	__u8 cm[16 + XR_LORA_MAX_PHY + 16]; /* padded as the LoRaWAN code pads it */
	__u32 block[4];       /* encrypted in place */
	__u32 mac[4];
};

/* Read-only configuration of the kernel engine (rodata). */
struct xr_gen_cfg {
	__u64 nframes;
	__u32 ifindex;
	__u32 netns_ino;  /* tracepoints fire for every netns: match ours */
	__u32 copy;       /* 0: the template in data_in is the only frame */
	__u32 pace;       /* enum xr_pace */
	__u32 nthreads;   /* sequence numbers are interleaved across threads */
	__u32 pad;
	__u64 span_ns;    /* XR_PACE_PCAP: capture duration of one round */
	__u64 mult_milli; /* XR_PACE_PCAP: speed multiplier x 1000 */
	__u32 nops;
	__u32 stamp;      /* record send times in send_ts for reply round trips */
	__u64 first_n;    /* sequence numbers start here (successive runs need not repeat them) */
	__u64 frame_div;  /* frame of n: (n / frame_div) mod nframes; 0 or 1: n mod nframes */
	__u32 ts_mask;    /* send_ts slot of n: n & ts_mask */
	__u32 pad3;
	struct xr_lora_cfg lora;
	struct xr_op ops[XR_MAX_OPS];
	struct xr_nocopy nc;
	struct xr_replies_cfg rpl;
};

/*
 * Per-CPU state of the kernel engine, one cache line each, indexed by CPU id
 * in an mmapable array: each sender thread is pinned to its CPU, so only that
 * CPU's program and tracepoints write a slot and userspace reads it live.
 * Thread t sends sequence numbers n = k * nthreads + t for k in [k, k_end).
 */
struct xr_gen_slot {
	/* set by userspace before a run */
	__u64 k_next;    /* next k to send (advanced by the program) */
	__u64 k_end;     /* k at which this thread stops */
	__u64 k_base;    /* pacing origin: k_base departs at t0_ns */
	__u64 t0_ns;
	__u64 interval_ps; /* XR_PACE_RATE */
	__u32 thread;
	__u32 active;
	/* counted by the program and the tracepoints */
	__u64 tx;          /* frames the program handed to XDP_TX */
	__u64 bad_frame;   /* frames the program could not build */
	__u64 xmit_sent;   /* frames the driver took (xdp_devmap_xmit) */
	__u64 xmit_drops;  /* frames the driver refused (ring full, no NAPI) */
	__u64 redirect_err; /* frames refused before the driver (MTU, down) */
	__s32 xmit_err;    /* last error the driver gave */
	__s32 redirect_errno;
	__u64 tx_bytes;
	/*
	 * Plan ops without a divisor: (n * step) mod modulus for the next n, and
	 * what it grows by from one n of this thread to the next (nthreads * step
	 * mod modulus): the same pure function of n, without a division per packet.
	 * Set by userspace with k_next; ops with a divisor divide.
	 */
	__u64 op_val[XR_MAX_OPS];
	__u64 op_inc[XR_MAX_OPS];
	/* LoRaWAN: uplinks taken from the precomputed ring, and computed in the program */
	__u64 lora_ring_hits;
	__u64 lora_computed;
} __attribute__((aligned(64)));

enum xr_seq_kind {
	XR_SEQ_NONE = 0,
	XR_SEQ_IP_ID = 1,   /* the IPv4 identification field */
	XR_SEQ_PAYLOAD = 2, /* big-endian field at seq_off in the UDP/TCP payload */
};

/* Server counter: what it counts, set in rodata. */
struct xr_count_cfg {
	__u32 drop;       /* XDP_DROP matched packets instead of XDP_PASS */
	__u8 seq_kind;    /* enum xr_seq_kind */
	__u8 seq_width;   /* bytes: 2, 4 or 8 */
	__u16 seq_off;
	__u8 proto;       /* IPPROTO_*; 0 = any IP; 255 = any frame */
	__u8 pad[3];
	__u32 daddr;      /* IPv4, network order; 0 = any */
	__u16 dport;      /* network order; 0 = any */
	__u16 sport;      /* network order; 0 = any */
	__u32 saddr;      /* IPv4, network order; 0 = any */
	__u32 pad2;
};

/* Server counter: frames matched per second since the first one, for rate spreads. */
#define XR_SERIES_MAX 3600

/* Server counter: per-flow sequence tracking (IPv4 5-tuple). */
#define XR_MAX_FLOWS 65536
#define XR_SEQ_WINDOW 64 /* late frames this far back are told from duplicates */

struct xr_flow_key {
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u8 proto;
	__u8 pad[3];
};

struct xr_flow_state {
	struct bpf_spin_lock lock;
	__u32 started;
	__u64 next;       /* the sequence number expected next (unwrapped) */
	__u64 window;     /* bit i: next - 1 - i has been received */
	__u64 received;
	__u64 lost;       /* gaps not (yet) filled by late frames */
	__u64 dup;
	__u64 reordered;  /* arrived after a later one: filled a gap */
	__u64 too_late;   /* older than the window: counted as reordered too */
};

/* Server counter: one per CPU (a PERCPU_ARRAY of one entry). */
struct xr_count_stats {
	__u64 seen;       /* every frame the XDP program ran on */
	__u64 matched;    /* frames that passed the filter */
	__u64 matched_bytes; /* their bytes, Ethernet header included */
	__u64 passed;
	__u64 dropped;
	__u64 first_ns;   /* arrival of the first and last matched frame */
	__u64 last_ns;
	__u64 pad;
};

#endif /* __XDPREPLAY_H */
