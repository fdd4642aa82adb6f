// SPDX-License-Identifier: GPL-2.0
/* gen mqtt's byte stream: see stream.h. MQTT 3.1.1 and 5.0 (OASIS mqtt-v3.1.1-os, mqtt-v5.0-os). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proto/mqtt/stream.h"
#include "util/log.h"

/* A packet being written: its bytes so far, or the overflow noticed */
struct mq_buf {
	uint8_t *p;
	size_t len, cap;
	bool over;
};

static void put_bytes(struct mq_buf *b, const void *v, size_t n)
{
	if (b->len + n > b->cap) {
		b->over = true;
		return;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_u8(struct mq_buf *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

static void put_u16(struct mq_buf *b, uint16_t v)
{
	uint8_t x[2] = { v >> 8, v };

	put_bytes(b, x, 2);
}

/* Remaining Length: 7 bits a byte, least significant first */
static void put_varint(struct mq_buf *b, uint32_t v)
{
	do {
		uint8_t d = v & 0x7f;

		v >>= 7;
		put_u8(b, d | (v ? 0x80 : 0));
	} while (v);
}

size_t mqtt_varint_write(uint8_t *out, uint32_t v)
{
	struct mq_buf b = { .p = out, .cap = 4 };

	put_varint(&b, v);
	return b.over ? 0 : b.len;
}

size_t mqtt_packet_write(uint8_t *out, size_t cap, uint8_t type, const uint8_t *body, uint32_t n)
{
	struct mq_buf b = { .p = out, .cap = cap };

	put_u8(&b, type);
	put_varint(&b, n);
	put_bytes(&b, body, n);
	return b.over ? 0 : b.len;
}

/*
 * A string with {c} (at most once) as XR_MQTT_DIGITS zeros: the offset of its
 * digits from the string's first byte into *digits (XR_MQTT_NONE without {c}).
 */
static void put_template(struct mq_buf *b, const char *s, uint16_t *digits)
{
	const char *c = strstr(s, "{c}");
	size_t n = strlen(s) + (c ? XR_MQTT_DIGITS - 3 : 0);

	put_u16(b, n);
	*digits = XR_MQTT_NONE;
	if (!c) {
		put_bytes(b, s, strlen(s));
		return;
	}
	put_bytes(b, s, c - s);
	*digits = b->len;
	for (int i = 0; i < XR_MQTT_DIGITS; i++)
		put_u8(b, '0');
	put_bytes(b, c + 3, strlen(c + 3));
}

static size_t varint_len(uint32_t v)
{
	size_t n = 1;

	while (v >= 128) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Remaining Length of each PUBLISH: topic, packet id (QoS 1), 5.0's properties, payload. */
static size_t publish_rl(const struct mqtt_stream_opts *o)
{
	size_t tlen = strlen(o->topic) + (strstr(o->topic, "{c}") ? XR_MQTT_DIGITS - 3 : 0);

	return 2 + tlen + (o->qos ? 2 : 0) + (o->version == 5) + (size_t)o->payload;
}

size_t mqtt_message_len(const struct mqtt_stream_opts *o)
{
	size_t rl = publish_rl(o);

	return 1 + varint_len(rl) + rl;
}

static int mqtt_connect(const struct mqtt_stream_opts *o, struct mq_buf *b, struct xr_mqtt_cfg *cfg)
{
	size_t rl = 10 + (o->version == 5) + 2 + strlen(o->client_id) + XR_MQTT_DIGITS - 3;
	uint8_t flags = 0x02; /* clean session */
	uint16_t cid;

	if (o->username) {
		rl += 2 + strlen(o->username);
		flags |= 0x80;
	}
	if (o->password) {
		rl += 2 + strlen(o->password);
		flags |= 0x40;
	}
	put_u8(b, 0x10);
	put_varint(b, rl);
	put_bytes(b, "\0\4MQTT", 6);
	put_u8(b, o->version);
	put_u8(b, flags);
	put_u16(b, o->keepalive_s);
	if (o->version == 5)
		put_u8(b, 0); /* no properties */
	put_template(b, o->client_id, &cid);
	cfg->cid_off = cid;
	if (o->username) {
		put_u16(b, strlen(o->username));
		put_bytes(b, o->username, strlen(o->username));
	}
	if (o->password) {
		put_u16(b, strlen(o->password));
		put_bytes(b, o->password, strlen(o->password));
	}
	if (b->over) {
		pr_warn("the CONNECT would be more than the %u bytes a session's request holds\n",
			XR_MQTT_REQUEST_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * A subscriber's SUBSCRIBE (packet id 1) to filter at qos, after its
 * CONNECT; {c} in the filter (a caller's answers) into cfg->sub_off
 */
static int mqtt_subscribe(const struct mqtt_stream_opts *o, const char *filter, uint8_t qos,
			  struct mq_buf *b, struct xr_mqtt_cfg *cfg)
{
	size_t flen = strlen(filter) + (strstr(filter, "{c}") ? XR_MQTT_DIGITS - 3 : 0);

	put_u8(b, 0x82);
	put_varint(b, 2 + (o->version == 5) + 2 + flen + 1);
	put_u16(b, 1);
	if (o->version == 5)
		put_u8(b, 0); /* no properties */
	put_template(b, filter, &cfg->sub_off);
	put_u8(b, qos); /* the most QoS it takes: 1, its deliveries at QoS 1 want a PUBACK */
	if (b->over) {
		pr_warn("the CONNECT and SUBSCRIBE would be more than the %u bytes a session's "
			"request holds\n",
			XR_MQTT_REQUEST_MAX);
		return -EINVAL;
	}
	return 0;
}

/* Message i of the burst; its length into *len. */
static void mqtt_publish(const struct mqtt_stream_opts *o, uint32_t i, struct mq_buf *b,
			 struct xr_mqtt_cfg *cfg)
{
	size_t start = b->len;
	uint16_t topic;

	put_u8(b, 0x30 | o->qos << 1 | o->retain);
	put_varint(b, publish_rl(o));
	put_template(b, o->topic, &topic);
	if (topic != XR_MQTT_NONE)
		cfg->topic_off = topic - start;
	if (o->qos)
		put_u16(b, i + 1); /* packet ids 1..B: the burst before is acknowledged whole */
	if (o->version == 5)
		put_u8(b, 0);
	cfg->stamp_off = o->payload >= XR_MQTT_STAMP ? b->len - start : XR_MQTT_NONE;
	for (uint32_t j = 0; j < o->payload && !b->over; j++)
		put_u8(b, j < XR_MQTT_STAMP ? 0 : 'a' + j % 26);
}

/*
 * A responder's answer, the same for every request but its digits and stamp:
 * PUBLISH QoS 0 to the answer topic ({c} as zeros), (5.0) no properties, the
 * stamp's 16 bytes last.
 */
static int mqtt_answer_template(const struct mqtt_stream_opts *o, struct xr_mqtt_cfg *cfg)
{
	uint8_t tmp[XR_MQTT_ANSWER_MAX + 8];
	struct mq_buf b = { .p = tmp, .cap = XR_MQTT_ANSWER_MAX };
	size_t tlen = strlen(o->answer) + (strstr(o->answer, "{c}") ? XR_MQTT_DIGITS - 3 : 0);
	uint16_t digits;

	put_u8(&b, 0x30);
	put_varint(&b, 2 + tlen + (o->version == 5) + XR_MQTT_STAMP);
	put_template(&b, o->answer, &digits);
	if (o->version == 5)
		put_u8(&b, 0);
	for (int i = 0; i < XR_MQTT_STAMP; i++)
		put_u8(&b, 0);
	if (b.over) {
		pr_warn("--answer: an answer to '%s' would be more than %u bytes\n", o->answer,
			XR_MQTT_ANSWER_MAX);
		return -EINVAL;
	}
	memcpy(cfg->ans, tmp, b.len);
	cfg->ans_len = b.len;
	cfg->ans_digits_off = digits;
	cfg->responder = 1;
	return 0;
}

size_t mqtt_reply_write(const struct xr_mqtt_cfg *cfg, const uint8_t *stamp, uint16_t pid,
			uint8_t *out)
{
	char digits[XR_MQTT_DIGITS + 1];
	uint32_t caller;

	if (!cfg->responder) {
		out[0] = 0x40;
		out[1] = 2;
		out[2] = pid >> 8;
		out[3] = pid;
		return 4;
	}
	memcpy(out, cfg->ans, cfg->ans_len);
	caller = (uint32_t)stamp[0] << 24 | stamp[1] << 16 | stamp[2] << 8 | stamp[3];
	snprintf(digits, sizeof(digits), "%0*u", XR_MQTT_DIGITS, caller);
	if (cfg->ans_digits_off != XR_MQTT_NONE)
		memcpy(out + cfg->ans_digits_off, digits, XR_MQTT_DIGITS);
	memcpy(out + cfg->ans_len - XR_MQTT_STAMP, stamp, XR_MQTT_STAMP);
	return cfg->ans_len;
}

int mqtt_stream_build(const struct mqtt_stream_opts *o, uint8_t **connect, size_t *connect_len,
		      uint8_t **burst, size_t *burst_len, struct xr_mqtt_cfg *cfg)
{
	struct mq_buf c = { .cap = XR_MQTT_REQUEST_MAX }, p = { .cap = XR_MQTT_REQUEST_MAX };
	int err;

	*connect = *burst = NULL;
	*cfg = (struct xr_mqtt_cfg){ .batch = o->burst,
				     .qos = o->qos,
				     .version = o->version,
				     .topic_off = XR_MQTT_NONE,
				     .stamp_off = XR_MQTT_NONE,
				     .sub_off = XR_MQTT_NONE };
	c.p = malloc(c.cap);
	p.p = malloc(p.cap);
	err = -ENOMEM;
	if (!c.p || !p.p)
		goto fail;
	err = mqtt_connect(o, &c, cfg);
	if (err)
		goto fail;
	if (o->subscribe) {
		err = mqtt_subscribe(o, o->subscribe, o->qos, &c, cfg);
		if (!err && o->answer)
			err = mqtt_answer_template(o, cfg);
		if (err)
			goto fail;
		free(p.p);
		*connect = c.p;
		*connect_len = c.len;
		*burst_len = 0;
		return 0;
	}
	if (o->await) {
		/* a caller: its answers' topic, subscribed with the CONNECT */
		err = mqtt_subscribe(o, o->await, 0, &c, cfg);
		if (err)
			goto fail;
		cfg->caller = 1;
	}
	cfg->msg_len = mqtt_message_len(o);
	if ((uint64_t)cfg->msg_len * o->burst + (o->qos || o->await ? 0 : 2) >
	    XR_MQTT_REQUEST_MAX) {
		pr_warn("a burst of %u messages of %u bytes would be more than the %u bytes a "
			"session's request holds\n",
			o->burst, cfg->msg_len, XR_MQTT_REQUEST_MAX);
		err = -EINVAL;
		goto fail;
	}
	for (uint32_t i = 0; i < o->burst; i++)
		mqtt_publish(o, i, &p, cfg);
	/* PINGREQ: its PINGRESP says the broker read the burst (a caller's answers say so) */
	if (!o->qos && !o->await)
		put_bytes(&p, "\xc0\0", 2);
	*connect = c.p;
	*connect_len = c.len;
	*burst = p.p;
	*burst_len = p.len;
	return 0;
fail:
	free(c.p);
	free(p.p);
	return err;
}

/* The part of field f (n bytes at request offset at) that falls in [off, off + len). */
static void put_field(uint8_t *buf, uint32_t off, uint32_t len, uint32_t at, const uint8_t *f,
		      uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		if (at + j >= off && at + j < off + len)
			buf[at + j - off] = f[j];
}

void mqtt_stream_patch(const void *ctx, const struct xr_tcp_session *s, uint8_t *buf, uint32_t off,
		       uint32_t len)
{
	const struct xr_mqtt_cfg *cfg = ctx;
	uint8_t digits[XR_MQTT_DIGITS + 1], stamp[XR_MQTT_STAMP];

	snprintf((char *)digits, sizeof(digits), "%0*u", XR_MQTT_DIGITS, s->c32);
	if (!s->k) {
		if (cfg->cid_off != XR_MQTT_NONE)
			put_field(buf, off, len, cfg->cid_off, digits, XR_MQTT_DIGITS);
		if (cfg->sub_off != XR_MQTT_NONE)
			put_field(buf, off, len, cfg->sub_off, digits, XR_MQTT_DIGITS);
		return;
	}
	for (int j = 0; j < 4; j++)
		stamp[j] = s->c32 >> (24 - 8 * j);
	for (int j = 0; j < 8; j++)
		stamp[8 + j] = s->t_req >> (56 - 8 * j);
	for (uint32_t i = 0; i < cfg->batch; i++) {
		uint32_t base = i * cfg->msg_len, seq = (uint32_t)(s->k - 1) * cfg->batch + i;

		if (cfg->topic_off != XR_MQTT_NONE)
			put_field(buf, off, len, base + cfg->topic_off, digits, XR_MQTT_DIGITS);
		if (cfg->stamp_off != XR_MQTT_NONE) {
			for (int j = 0; j < 4; j++)
				stamp[4 + j] = seq >> (24 - 8 * j);
			put_field(buf, off, len, base + cfg->stamp_off, stamp, XR_MQTT_STAMP);
		}
	}
}
