/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen tcp's sessions without sockets (bpf/proto/tcp.bpf.h): the kernel
 * engine sends session c's SYN (ISN = isn_base + c * isn_step, as gen syn);
 * the reply handler on the sender's interface carries the rest of the
 * conversation from a few bytes of state per session, and answers every
 * server segment itself so that this host's stack never sees one.
 *
 * The client's byte stream is a first request of first_len bytes, then
 * K - 1 copies of one request of req_len bytes (gen tcp: the same request
 * K times): byte r of request k > 0 has sequence number ISN + 1 + first_len
 * + (k - 1) * req_len + r, so any segment can be rebuilt from (c, k, r) and
 * nothing is buffered. A few bytes (bye) may ride on our FIN.
 *
 * replay --sessions (user/proto/tcp/flows.c) gives each session the stream
 * of one TCP flow of a capture instead: session c plays flow c mod flows,
 * whose requests are steps of tcp_steps (their bytes in tcp_request, where
 * each starts in the stream, the size of the response the capture saw);
 * the session keeps its step's numbers (struct xr_tcp_session.step), so
 * any segment is still rebuilt from (c, k, r).
 */
#ifndef __XR_SHARED_TCP_H
#define __XR_SHARED_TCP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The most payload a segment of ours carries: what a 1500-byte MTU leaves after IPv4 and TCP. */
#define XR_TCP_PAYLOAD_MAX 1460
/*
 * The largest request (one value of the tcp_request map, plus a segment's
 * slack for the verifier): an MQTT PUBLISH of 64 KiB with up to 4 KiB of
 * header and topic. Offsets in a request fit a __u16 up to 65,535 only: a
 * field ({c}, a stamp) is placed before that (user/proto/).
 */
#define XR_TCP_REQUEST_MAX (68U << 10)
#define XR_TCP_REQUEST_VALUE (XR_TCP_REQUEST_MAX + 2048)
/*
 * XDP_PACKET_HEADROOM (256) less the frame's own growth: a segment that fits
 * whatever the driver gave (on veth, the server's frames have no tailroom).
 */
#define XR_TCP_SMALL_SEGMENT 192
/*
 * What does not fit there goes through the pump: XDP asks for the segment in
 * a ring buffer, and userspace (user/proto/tcp/pump.c) builds it from the
 * request and these fields and sends it through a packet socket. Up to
 * XR_TCP_FLIGHT_SEGS full segments are in flight, so that the server's
 * receiver acknowledges every second one at once instead of waiting for its
 * delayed ACK.
 */
struct xr_tcp_pump_seg {
	__u32 tkey; /* the session's slot key: its source address and port */
	__u32 c32;
	__u32 isn;
	__u32 ack; /* rcv_nxt when the segment was asked for */
	__u32 off; /* request k's bytes [off, off + len) */
	__u16 len; /* 0: a delayed ACK (tcp_ack_later in bpf/proto/tcp.bpf.h), at request k's end */
	__u16 k;
	__u64 t_req; /* request k's first send time (gen mqtt's stamps) */
};
#define XR_TCP_PUMP_RING (4U << 20) /* bytes of ring: ~87,000 segments asked for */
#define XR_TCP_FLIGHT_SEGS 10 /* as Linux's initial congestion window */
/* The most sessions the table holds at once (96 MiB). */
#define XR_TCP_TABLE_MAX (1U << 20)
/* The most bytes of the server's one segment that are read (a 1500-byte MTU's fit). */
#define XR_TCP_READ_MAX 2048
/* A response header longer than this is not one this client reads. */
#define XR_HTTP_HEADER_MAX 65536

enum xr_tcp_response {
	XR_TCP_RESP_HTTP = 0, /* HTTP/1.x: status line, Content-Length, or the server's FIN */
	XR_TCP_RESP_SIZE = 1, /* a fixed number of bytes (resp_size) */
	XR_TCP_RESP_MQTT = 2, /* MQTT packets (bpf/shared/mqtt.h) */
};

/* Where the reading of an HTTP/1.x response is (bpf/proto/tcp.bpf.h: http_step). */
enum xr_http_phase {
	XR_HTTP_HEADER = 0, /* status line and header fields, up to the empty line */
	XR_HTTP_BODY = 1, /* http_num bytes of body left (Content-Length) */
	XR_HTTP_TO_FIN = 2, /* a body without a length: it ends with the server's FIN */
	XR_HTTP_CHUNK_SIZE = 3, /* a chunk's size, in hex, into http_num */
	XR_HTTP_CHUNK_EXT = 4, /* the rest of the chunk-size line */
	XR_HTTP_CHUNK_DATA = 5, /* http_num bytes of the chunk left */
	XR_HTTP_CHUNK_CR = 6, /* the CRLF after a chunk's data */
	XR_HTTP_CHUNK_LF = 7,
	XR_HTTP_TRAILER = 8, /* after the last chunk: trailer fields up to an empty line */
	XR_HTTP_DONE = 9,
	XR_HTTP_BAD = 10, /* not a response this client can read */
};

/* http_flags */
#define XR_HTTPF_CLEN 1 /* reading Content-Length's digits */
#define XR_HTTPF_CLEN_READ 2 /* read: http_num holds it */
#define XR_HTTPF_CHUNKED 4 /* Transfer-Encoding: chunked */

enum xr_tcp_close {
	XR_TCP_CLOSE_FIN = 0, /* FIN, and the server's FIN acknowledged */
	XR_TCP_CLOSE_RST = 1, /* RST with the exact sequence number */
};

/*
 * gen tcp's per-session fields: {c} (the session number) and {k} (the
 * request's, from 0) in a request become XR_TCP_DIGITS zero-padded decimal
 * digits, written in per segment (bpf/proto/fields.bpf.h; in userspace for the
 * pump and retransmissions: user/proto/tcp/tcp.c).
 */
#define XR_TCP_FIELDS 4
#define XR_TCP_DIGITS 10
enum xr_tcp_field_kind {
	XR_TCP_FIELD_NONE = 0,
	XR_TCP_FIELD_C = 1,
	XR_TCP_FIELD_K = 2,
};
struct xr_tcp_fields {
	__u16 off[XR_TCP_FIELDS]; /* where each field's digits start in the request */
	__u8 kind[XR_TCP_FIELDS]; /* enum xr_tcp_field_kind; the first NONE ends them */
};

struct xr_tcp_cfg {
	__u32 isn_base, isn_inv;
	__u32 req_len; /* bytes of one request */
	__u32 first_len; /* bytes of request 0 */
	__u32 requests; /* requests per session (keep-alive) */
	__u32 table_mask; /* session table slots - 1 (a power of two) */
	__u32 resp_size; /* XR_TCP_RESP_SIZE: bytes of each response */
	__u8 response; /* enum xr_tcp_response */
	__u8 close; /* enum xr_tcp_close */
	__u8 bye_len; /* bytes on our FIN */
	__u8 bye[4];
	/*
	 * XR_TCP_RESP_SIZE: the byte a response that succeeds begins with (0:
	 * any, each a success); one that begins otherwise is booked as an
	 * error (XR_TCP_OTHER_STATUS), its length taken as it comes
	 */
	__u8 resp_first;
	__u8 pad[4];
	struct xr_tcp_fields fields; /* gen tcp's {c} and {k} */
	__u32 flows; /* replay --sessions: the capture's flows (0: gen's one stream) */
	/*
	 * Paced requests (gen mqtt --msg-rate, gen tcp --request-rate): request k >= 1 of session
	 * pace_base + i departs at tcp_pace_t0_ns + ((k - 1) * pace_sessions + i)
	 * * pace_ps / 1000 ns (0: each as soon as the one before is answered)
	 */
	__u64 pace_ps;
	__u32 pace_sessions, pace_base;
};

/* replay --sessions: flow f's requests are steps first .. first + steps - 1 */
struct xr_tcp_flow {
	__u32 first, steps;
};

/* replay --sessions: one request of a flow */
struct xr_tcp_step {
	__u32 len; /* its bytes */
	__u32 off; /* where it starts in the flow's byte stream */
	__u32 resp; /* bytes of the response the capture saw to it (--response capture) */
	__u16 key; /* its bytes in tcp_request (identical requests share one) */
	__u16 pad;
};
/* The most distinct requests one capture's flows bring (each a tcp_request value, 18 KiB). */
#define XR_TCP_STEP_KEYS 1024
/* The most requests of one flow (struct xr_tcp_session.k is 16 bits). */
#define XR_TCP_FLOW_STEPS 65535

enum xr_tcp_state {
	XR_TCP_FREE = 0,
	XR_TCP_REQUEST = 1, /* request k on its way: waiting for its bytes to be acknowledged */
	XR_TCP_RESPONSE = 2, /* request k acknowledged whole: reading response k */
	XR_TCP_FIN_SENT =
		3, /* our FIN sent: waiting for its acknowledgement and the server's FIN */
	XR_TCP_DONE = 4, /* completed or failed: late segments are answered, not counted */
	XR_TCP_PACED = 5, /* request k waits for its departure (pace_ps) */
};

/* One session's state: 96 bytes, the slot of (source, port) in the session table. */
struct xr_tcp_session {
	__u32 tkey; /* (address - base) + (port - base) * addresses + 1: whose slot this is (0: nobody's) */
	__u32 c32; /* low 32 bits of the session number */
	__u32 isn; /* ours */
	__u32 rcv_nxt; /* the server's next byte */
	__u32 acked; /* bytes of request k the server acknowledged */
	__u32 resp_got; /* bytes of response k so far (MQTT: the broker's packets) */
	__u32 mq_at; /* the broker's packet: body bytes read (a delivery's whole length) */
	__u16 wnd; /* the server's receive window */
	__u16 mss; /* the server's MSS */
	__u16 k; /* responses complete */
	__u8 state; /* enum xr_tcp_state */
	__u8 flags; /* XR_TCPF_* */
	union {
		__u16 status; /* response k's HTTP status */
		__u16 mq_payload_at; /* a delivery: where its payload starts in the body (0: unknown yet) */
	};
	__u16 in_flight; /* bytes of request k sent past acked (a replying subscriber's
			  * RESPONSE: its replies not sent yet) */
	__u8 retries; /* timeouts since the server last acknowledged something new (user/proto/tcp/) */
	/* where the reading of the server's answer is: the protocol's own */
	union {
		/* XR_TCP_RESP_MQTT: the broker's packets (bpf/proto/mqtt.bpf.h) */
		struct {
			__u8 mq_state; /* 0: a packet's first byte next, 1-4: its length's, 5: its body's */
			__u8 mq_type;
			__u8 mq_pos; /* body bytes read (up to 255) */
			__u8 mq_body[4]; /* the first of them */
		};
		/* XR_TCP_RESP_HTTP: response k */
		struct {
			__u8 http_phase; /* enum xr_http_phase */
			__u8 http_flags; /* XR_HTTPF_* */
			__u8 http_line; /* XR_HTTP_TRAILER: the line so far is not empty */
		};
	};
	union {
		__u32 mq_left; /* body bytes still to come */
		__u32 http_num; /* Content-Length, a chunk's size, or what is left of either */
	};
	__u8 dupacks; /* ACKs in a row that acknowledged nothing new while something was in flight */
	__u8 mq_last; /* the broker's packet's last body byte so far (a SUBACK's code) */
	__u8 mq_props; /* a 5.0 delivery: 0 before its properties' length, 1-4 in it, 5 after */
	__u8 mq_flags; /* the packet's first byte's low four bits (a delivery's QoS) */
	__u64 t_req; /* when request k's first byte went out */
	__u64 t_sent; /* when our last segment that wants an acknowledgement went out */
	union {
		__u64 mq_acked; /* the packet ids (1 << (id - 1)) of burst k's PUBACKs so far */
		__u64 http_last8; /* the header's last 8 bytes, lower case, the last in the low bits */
		/* a QoS-1 subscriber's PUBACKs (bpf/shared/mqtt.h): sent, and acknowledged by the broker */
		struct {
			__u32 pa_sent, pa_acked;
		};
	};
	union {
		__u8 mq_stamp[16]; /* a delivery's stamp so far (bpf/shared/mqtt.h) */
		/* replay --sessions: request k as its flow has it (struct xr_tcp_step) */
		struct {
			__u32 step_len, step_off, step_resp;
			__u16 step_key, step_requests;
		};
		/* a publisher's (no stamps to read) */
		struct {
			/*
			 * paced requests: 1 while XR_TCP_PACED, taken
			 * (compare-and-swap to 0) by whoever sends request k,
			 * userspace at its departure or XDP when the departure
			 * came before request k - 1 was answered
			 */
			__u32 pace_gate;
			/*
			 * 1: a delayed ACK is asked of the pump, which takes it
			 * (exchange to 0) and acknowledges rcv_nxt as it is then
			 */
			__u32 ack_owed;
			/*
			 * --keepalive: PINGREQs a paced publisher sent while
			 * waiting for a departure (user/proto/tcp/pace.c),
			 * 2 bytes each of our stream before request k
			 */
			__u16 pings;
			/* 1 from a PINGREQ's send to its PINGRESP (read in XDP) */
			__u8 ping_owed;
		};
	};
};

/* Retransmission after a timeout (userspace, user/proto/tcp/tcp.c): 200 ms, doubled each time, 6 times. */
#define XR_TCP_RTO_NS 200000000ULL
#define XR_TCP_MAX_RETRIES 6
/* A SYN without an answer goes again after 1 s, then 2 s (as Linux's), counted in xr_send_ts.tag. */
#define XR_TCP_SYN_RTO_NS 1000000000ULL
#define XR_TCP_SYN_RETRIES 2

#define XR_TCPF_FIN_RCVD 1 /* the server's FIN came (rcv_nxt counts it) */
#define XR_TCPF_FIN_ACKED 2 /* the server acknowledged ours */
#define XR_TCPF_FAILED 4 /* DONE by failure */
#define XR_TCPF_PUMPED 8 /* request k's segments go through the pump */

/* xr_replies_stats.ctr[]: answered = SYN-ACKs, repeated = SYN-ACKs repeated */
enum xr_tcp_ctr {
	XR_TCP_REFUSED = 0, /* a RST to the SYN */
	XR_TCP_COMPLETED = 1, /* sessions: every response complete, closed */
	XR_TCP_RESET = 2, /* sessions the server reset after the handshake */
	XR_TCP_TABLE_FULL = 3, /* SYN-ACKs whose table slot another session held: reset */
	XR_TCP_MALFORMED = 4, /* sessions whose response could not be read: reset */
	XR_TCP_REQUESTS = 5, /* requests sent whole */
	XR_TCP_RESPONSES = 6, /* responses complete */
	XR_TCP_2XX = 7, /* responses by HTTP status class: 2xx, 3xx (8), 4xx (9), 5xx (10) */
	XR_TCP_OTHER_STATUS = 11, /* responses with any other status */
	XR_TCP_SEGMENTS = 12, /* data segments we sent (first transmissions) */
	XR_TCP_RESENT =
		13, /* segments sent again: the server asked again (a repeated SYN-ACK, a duplicate ACK) */
	XR_TCP_OUT_OF_ORDER =
		14, /* server segments not at rcv_nxt: answered with a duplicate ACK */
	XR_TCP_STRAY = 15, /* segments of no session of this run (answered with a RST) */
	XR_TCP_CLOSED_EARLY = 16, /* sessions the server closed before their last response */
	XR_TCP_WINDOW_WAITS = 17, /* segments held back by a closed window */
	/* 18-23: gen mqtt's (bpf/shared/mqtt.h) */
	XR_TCP_PUMPED =
		24, /* segments asked of the pump (counted in XR_TCP_SEGMENTS or RESENT too) */
	XR_TCP_PUMP_FULL = 25, /* segments the pump's ring had no room for: left to the timeout */
	XR_TCP_FAST_RESENT =
		26, /* sent again on duplicate ACKs (the third; QoS-1 PUBACKs: mqtt.h) (also in RESENT) */
	/* 27-33: gen mqtt's */
	XR_TCP_LATE =
		34, /* paced requests sent after their departure: the one before was not answered by then */
	XR_TCP_ACKS_DELAYED = 35, /* delayed ACKs asked of the pump (tcp_ack_later) */
	/* 36: gen mqtt's */
	XR_TCP_ACKS_RING_FULL = 37, /* ACKs sent at once from XDP: no room to ask the pump */
};

#endif /* __XR_SHARED_TCP_H */
