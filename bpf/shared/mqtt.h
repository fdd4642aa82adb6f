/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt: MQTT publishers carried on gen tcp's sessions (bpf/shared/tcp.h).
 * Session c's byte stream is CONNECT (request 0, its client id holding c in
 * ten digits), then K bursts (requests 1..K) of B PUBLISH packets each, and
 * DISCONNECT riding on our FIN. A QoS-1 burst is answered by B PUBACKs (packet
 * ids 1..B, so a burst's bytes are the same for every k but its stamps); a
 * QoS-0 burst ends with a PINGREQ whose PINGRESP says the broker read it all,
 * since a broker answers QoS 0 with nothing and a socket-less client must be
 * told its bytes were taken without waiting for a delayed ACK.
 *
 * Each message of at least XR_MQTT_STAMP bytes of payload starts with a stamp:
 * publisher (c, 4 bytes), its sequence number among c's messages (4 bytes),
 * when its burst went out (CLOCK_MONOTONIC ns, 8 bytes), all big-endian.
 *
 * Subscribers (gen mqtt --subscribe): session c's stream is CONNECT and
 * SUBSCRIBE (QoS 0, packet id 1) in one request, answered by CONNACK, SUBACK
 * and the deliveries it waits for (sub_expect); each delivery's stamp is
 * booked per (subscriber, publisher) pair in mqtt_recv, its latency from the
 * stamp's send time in mqtt_deliver_hist. Then DISCONNECT on our FIN.
 *
 * A QoS-1 subscription (sub_qos 1): each QoS-1 delivery is answered with a
 * PUBACK of its packet id. Those 4-byte PUBACKs follow request 0 in our
 * stream (PUBACK j at offset first_len + 4 j), and since the broker chose
 * their ids, the ids of the last XR_MQTT_REPLY_RING are kept per session
 * (mqtt_pubacks) so that userspace can send again what the broker did not
 * acknowledge. The DISCONNECT and FIN come after the last PUBACK.
 *
 * A responder (--subscribe F --answer T): a QoS-0 subscriber that answers each
 * stamped delivery with a QoS-0 PUBLISH of ans_len bytes to topic T, {c} there
 * the caller (the stamp's publisher), its payload the delivery's stamp. Its
 * answers follow request 0 as a QoS-1 subscriber's PUBACKs do (answer j at
 * offset first_len + ans_len j), their stamps kept in mqtt_answers. PUBACKs
 * and answers are a subscriber's replies: one per delivery, of a fixed length.
 *
 * Callers (publishers with --await T): request 0 is CONNECT and SUBSCRIBE
 * to T ({c} their own number) at QoS 0; each burst of B QoS-0 requests, with
 * no PINGREQ, is answered by the B deliveries on T whose stamps are the
 * caller's own (a responder's answers): booked in mqtt_recv[c], each timed
 * from its request's send (the call's round trip).
 */
#ifndef __XR_SHARED_MQTT_H
#define __XR_SHARED_MQTT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define XR_MQTT_STAMP 16
#define XR_MQTT_DIGITS 10 /* {c} in a client id or topic: the session number, zero-padded */
#define XR_MQTT_BATCH_MAX 64 /* messages in one burst (the PUBACK bitmap's bits) */
#define XR_MQTT_NONE 0xffff /* no such field */
#define XR_MQTT_ANSWER_MAX 64 /* bytes of a responder's answer */

struct xr_mqtt_cfg {
	__u32 msg_len; /* bytes of one PUBLISH packet */
	__u16 batch; /* messages per burst */
	__u16 cid_off; /* where {c}'s digits are in the CONNECT, or XR_MQTT_NONE */
	__u16 topic_off; /* where {c}'s digits are in each PUBLISH, or XR_MQTT_NONE */
	__u16 stamp_off; /* where the stamp is in each PUBLISH, or XR_MQTT_NONE */
	__u8 qos;
	__u8 version; /* 4: 3.1.1, 5: 5.0 */
	__u8 subscriber; /* the sessions subscribe and read deliveries */
	__u8 sub_qos; /* the subscription's QoS: 1, QoS-1 deliveries are PUBACKed */
	__u8 responder; /* a QoS-0 subscriber that answers each stamped delivery */
	__u8 ans_len; /* bytes of an answer */
	__u16 ans_digits_off; /* where the caller's digits are in an answer, or XR_MQTT_NONE */
	__u8 caller; /* publishers that subscribe to their answers and wait for them (calls) */
	__u8 pad;
	__u8 ans[XR_MQTT_ANSWER_MAX]; /* an answer: PUBLISH, topic, stamp (its last 16 bytes) */
	__u16 sub_off; /* where {c}'s digits are in request 0's SUBSCRIBE, or XR_MQTT_NONE */
	/*
	 * subscribers: deliveries each waits for, publishers (stamps pub_base..
	 * pub_base + pubs - 1: a search trial's are numbered from its first), subscribers
	 */
	__u32 sub_expect, pubs, subs, pub_base;
};

/* mqtt_recv[] (subscriber i, publisher p at i * pubs + p): one pair's deliveries */
struct xr_mqtt_recv {
	__u32 next; /* one past the highest sequence number delivered */
	__u32 got; /* distinct sequence numbers delivered */
	__u32 dup; /* delivered again */
	__u32 late; /* delivered after a higher one (reordered) */
	__u64 window; /* bit i: next - 1 - i delivered */
};
/* The most (subscriber, publisher) pairs booked: 96 MiB */
#define XR_MQTT_PAIRS_MAX (4U << 20)

/*
 * mqtt_pubacks[] (a session's table slot): the packet ids of its PUBACKs
 * j (at pid[j % XR_MQTT_REPLY_RING]) that the broker may not have
 * acknowledged yet. A segment of deliveries that could bring more PUBACKs
 * than the ring has room for is not taken (XR_MQTT_HELD): the broker sends it
 * again when its timer fires, a timer that doubles each time it is not
 * answered. 4 KiB a slot: with 512 ids, Mosquitto's QoS-1 deliveries filled
 * the ring behind a lost PUBACK and the held segments' backed-off timers left
 * deliveries 6-13 s late (one segment in 30 lost); with 2048, 0.7-0.8 s.
 */
#define XR_MQTT_REPLY_RING 2048
/* The most replies in one segment of ours (a PUBACK's 4 bytes each in a 2048-byte buffer) */
#define XR_MQTT_SEG_REPLIES 512
struct xr_mqtt_pubacks {
	__u16 pid[XR_MQTT_REPLY_RING];
};
/* mqtt_answers[] (a responder's table slot): the stamps its answers j echo, as mqtt_pubacks (32 KiB) */
struct xr_mqtt_answers {
	__u8 stamp[XR_MQTT_REPLY_RING][XR_MQTT_STAMP];
};
/*
 * A QoS-1 subscriber's unacknowledged PUBACKs go again (as many as a
 * segment takes) before the timeout on two duplicate ACKs,
 * not TCP's three (the broker's inflight window, Mosquitto's 20 messages,
 * stops its deliveries and with them its duplicate ACKs soon after a PUBACK
 * is lost), or on 16 segments of deliveries whose ACK stayed at the lost one.
 */
/* The fewest bytes of a QoS-1 delivery: fixed header 2, topic length 2, a 1-byte topic, packet id 2. */
#define XR_MQTT_QOS1_MIN 7
/* The fewest bytes of a stamped delivery: fixed header 2, topic length 2, a 1-byte topic, the stamp. */
#define XR_MQTT_STAMPED_MIN 21

/* xr_replies_stats.ctr[] past gen tcp's (bpf/shared/tcp.h) */
enum xr_mqtt_ctr {
	XR_MQTT_CONNECTS = 18, /* CONNECTs acknowledged whole by the broker's TCP */
	XR_MQTT_CONNACKED = 19, /* CONNACKs that accepted */
	XR_MQTT_REFUSED = 20, /* CONNACKs that refused (by reason: xr_mqtt_reasons) */
	XR_MQTT_ACKED =
		21, /* messages the broker took: PUBACKs that accept (QoS 1), bursts * B (QoS 0) */
	XR_MQTT_NACKED = 22, /* PUBACKs that refuse, 5.0 (by reason) */
	XR_MQTT_PROTOCOL = 23, /* sessions ended on a packet we did not ask for (by type) */
	/* 24-26: gen tcp's */
	XR_MQTT_SUBACKED = 27, /* SUBACKs that granted */
	XR_MQTT_SUB_REFUSED = 28, /* SUBACKs that refused (by reason: XR_MQTT_WHY_SUBACK) */
	XR_MQTT_DELIVERED = 29, /* PUBLISH packets delivered to our subscribers */
	XR_MQTT_UNSTAMPED = 30, /* deliveries without a stamp (payload under 16 bytes) */
	XR_MQTT_FOREIGN = 31, /* deliveries stamped by a publisher outside 0..pubs - 1 */
	XR_MQTT_REPLIES = 32, /* PUBACKs or a responder's answers sent (first transmissions) */
	XR_MQTT_HELD =
		33, /* segments of deliveries not taken: their replies would overrun the ring */
	/* 34-35: gen tcp's */
	XR_MQTT_PINGS_ANSWERED = 36, /* PINGRESPs to a paced publisher's keep-alive PINGREQs */
};

/* mqtt_reasons[]: what the broker said, by packet and reason code */
#define XR_MQTT_WHY_CONNACK 0 /* + the CONNACK's return (3.1.1) or reason code (5.0) */
#define XR_MQTT_WHY_PUBACK 256 /* + the PUBACK's reason code */
#define XR_MQTT_WHY_DISCONNECT 512 /* + a DISCONNECT's from the broker (5.0) */
#define XR_MQTT_WHY_TYPE 768 /* + the type of a packet we did not expect */
#define XR_MQTT_WHY_SUBACK 784 /* + a SUBACK's return or reason code */
#define XR_MQTT_WHY_CELLS 1040

#endif /* __XR_SHARED_MQTT_H */
