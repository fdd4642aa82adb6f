/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The applications on gen tcp's sessions, as the TCP core (tcp.bpf.h) reaches
 * them: what of our stream is the application's besides the requests, which
 * bytes of a request are the session's own, what resets with each request.
 * The response's kind (tcp_cfg.response) chooses: HTTP and fixed sizes need
 * nothing here beyond gen tcp's {c} and {k} fields; MQTT its replies,
 * keep-alives and per-session bytes. A new application adds its header and
 * its case here (and its reader's part to tcp_reply.bpf.h's hooks).
 */
#ifndef __XR_PROTO_TCP_APPS_BPF_H
#define __XR_PROTO_TCP_APPS_BPF_H

#include "proto/http.bpf.h"
#include "proto/fields.bpf.h"
#include "proto/mqtt.bpf.h"

#define TCP_MQTT (tcp_cfg.response == XR_TCP_RESP_MQTT)

/*
 * Bytes of ours in the stream before request s->k that are the
 * application's own: a subscriber's replies (PUBACKs, answers: they follow
 * request 0), a publisher's keep-alive PINGREQs
 */
static __always_inline __u32 tcp_app_sent(const struct xr_tcp_session *s)
{
	__u32 n = 0;

	if (TCP_MQTT && MQTT_REPLIES)
		n += MQTT_REPLY_LEN * s->pa_sent;
	if (TCP_MQTT && MQTT_PUBLISHER)
		n += 2 * (__u32)s->pings;
	return n;
}

/* Whether a request's bytes are made the session's own (tcp_app_patch), not sent as they are */
static __always_inline bool tcp_app_patched(void)
{
	return TCP_MQTT || tcp_cfg.fields.kind[0];
}

/* Bytes [off, off + len) of request s->k in seg, the template's, made session s's own */
static __always_inline void tcp_app_patch(const struct xr_tcp_session *s, __u8 *seg, __u32 off,
					  __u32 len)
{
	/*
	 * member by member from the volatile rodata: through a plain pointer,
	 * clang would take the initializer's zeros for them
	 */
	struct xr_tcp_fields f;

	if (TCP_MQTT) {
		mqtt_patch(s, seg, off, len);
		return;
	}
	for (int i = 0; i < XR_TCP_FIELDS; i++) {
		f.off[i] = tcp_cfg.fields.off[i];
		f.kind[i] = tcp_cfg.fields.kind[i];
	}
	tcp_fields_patch(&f, s, seg, off, len);
}

/* The application's state that each request starts afresh */
static __always_inline void tcp_app_next(struct xr_tcp_session *s)
{
	/* a replying subscriber's count of replies places its goodbye: it stays */
	if (!(TCP_MQTT && MQTT_REPLIES))
		s->mq_acked = 0;
}

#endif /* __XR_PROTO_TCP_APPS_BPF_H */
