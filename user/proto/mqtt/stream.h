/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen mqtt's client byte stream (bpf/shared/mqtt.h): the CONNECT, one burst of
 * PUBLISH packets (the template of every burst) and what changes per session
 * and burst, written by userspace for retransmissions as bpf/proto/mqtt.bpf.h
 * writes it in XDP.
 */
#ifndef __XR_PROTO_MQTT_STREAM_H
#define __XR_PROTO_MQTT_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "xdpreplay.h"

struct mqtt_stream_opts {
	const char *client_id; /* holds {c} */
	const char *username, *password; /* NULL: none */
	const char *topic; /* may hold {c} */
	const char *subscribe; /* a subscriber's topic filter (NULL: a publisher) */
	const char *answer; /* a responder's answers' topic, {c} the caller (NULL: not one) */
	const char *await; /* a caller's answers' topic filter, {c} its own (NULL: not one) */
	uint8_t version; /* 4 or 5 */
	uint8_t qos; /* 0 or 1 */
	bool retain;
	uint16_t keepalive_s;
	uint32_t payload; /* bytes of each message's payload */
	uint32_t burst; /* messages per burst */
};

/* The most bytes of a CONNECT or a burst (what one request of gen tcp holds). */
#define XR_MQTT_REQUEST_MAX XR_TCP_REQUEST_MAX
/* The largest --payload: the 64 KiB (MQTT allows 256 MiB; one request holds this). */
#define XR_MQTT_PAYLOAD_MAX (64U << 10)

/*
 * The CONNECT into *connect and a burst into *burst (malloc'ed), the offsets
 * of what changes into cfg; a subscriber's CONNECT and SUBSCRIBE into
 * *connect, and no burst (NULL). 0, or -EINVAL after a one-line message naming
 * what is too long, -ENOMEM.
 */
int mqtt_stream_build(const struct mqtt_stream_opts *o, uint8_t **connect, size_t *connect_len,
		      uint8_t **burst, size_t *burst_len, struct xr_mqtt_cfg *cfg);

/*
 * A subscriber's reply of cfg (bpf/shared/mqtt.h) into out: a responder's
 * answer echoing stamp, or a PUBACK of packet id pid. Its length.
 */
size_t mqtt_reply_write(const struct xr_mqtt_cfg *cfg, const uint8_t *stamp, uint16_t pid,
			uint8_t *out);

/* v as MQTT's Variable Byte Integer into out (4 bytes of room): its length, or 0 over 4 bytes. */
size_t mqtt_varint_write(uint8_t *out, uint32_t v);

/* An MQTT packet of type (its first byte) and body into out: its length, or 0 over cap bytes. */
size_t mqtt_packet_write(uint8_t *out, size_t cap, uint8_t type, const uint8_t *body, uint32_t n);

/* Bytes of each PUBLISH of the burst. */
size_t mqtt_message_len(const struct mqtt_stream_opts *o);

/* Bytes [off, off + len) of request s->k of session s, the template's in buf, made s's own. */
void mqtt_stream_patch(const void *cfg, const struct xr_tcp_session *s, uint8_t *buf, uint32_t off,
		       uint32_t len);

#endif /* __XR_PROTO_MQTT_STREAM_H */
