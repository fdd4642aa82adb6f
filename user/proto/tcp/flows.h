/* SPDX-License-Identifier: GPL-2.0 */
/*
 * replay --sessions: the TCP flows of a capture read into what sessions play
 * (struct tcp_capture). A flow is a SYN's connection; its client's byte
 * stream is put together by sequence number (repeats and reordering in the
 * capture undone) and cut into requests where the server had said
 * something since the client last did; each request keeps the number of
 * bytes the server answered it with. Flows that cannot be played are
 * counted by why, never dropped silently.
 */
#ifndef __XR_PROTO_TCP_FLOWS_H
#define __XR_PROTO_TCP_FLOWS_H

#include <stdbool.h>
#include <stdint.h>
#include "proto/tcp/session.h"

struct frameset;

/* Why a flow of the capture is not played */
enum tcp_flow_skip {
	TCP_FLOW_NO_SYN = 0, /* its client's SYN is not in the capture (began before it) */
	TCP_FLOW_SERVER_FIRST, /* the server spoke first (not played yet) */
	TCP_FLOW_NO_DATA, /* the client sent no byte */
	TCP_FLOW_GAP, /* bytes of the client's stream are missing from the capture */
	TCP_FLOW_REQUEST_TOO_LONG, /* a request longer than XR_TCP_REQUEST_MAX */
	TCP_FLOW_TOO_MANY_REQUESTS, /* more than XR_TCP_FLOW_STEPS */
	TCP_FLOW_STREAM_TOO_LONG, /* a client stream over TCP_FLOW_STREAM_MAX */
	TCP_FLOW_KEYS_FULL, /* its requests would pass XR_TCP_STEP_KEYS distinct ones */
	TCP_FLOW_SKIPS,
};

/* A flow's client stream is read into memory whole: at most this much. */
#define TCP_FLOW_STREAM_MAX (16U << 20)

/* What the reading found (reported, JSON "flows") */
struct tcp_flow_books {
	uint64_t frames, tcp_frames; /* frames read; of them, IPv4 TCP segments */
	uint64_t not_ipv4_tcp; /* other frames: IPv6, fragments, not TCP (left alone) */
	uint64_t flows, played; /* flows seen; played */
	uint64_t skipped[TCP_FLOW_SKIPS];
	uint64_t requests; /* the played flows' requests */
	uint64_t client_bytes, server_bytes; /* theirs, as the capture saw them */
	uint16_t server_port; /* the one port every played flow went to (0: several) */
	bool http; /* every request an HTTP/1.x one answered by an HTTP/1.x response */
};

/*
 * The flows of the frames of fs into cap (its arrays malloc'ed) and books.
 * 0, or -ENOMEM. No flow to play is not an error here (books say why).
 */
int tcp_flows_extract(const struct frameset *fs, struct tcp_capture *cap,
		      struct tcp_flow_books *books);

void tcp_capture_free(struct tcp_capture *cap);

/* A name for a skip reason (JSON and the human line) */
const char *tcp_flow_skip_name(enum tcp_flow_skip why);

#endif
