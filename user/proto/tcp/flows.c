// SPDX-License-Identifier: GPL-2.0
/*
 * replay --sessions: a capture's TCP flows into the requests sessions play
 * (flows.h). Frames are read in capture order; each carries bytes of one
 * direction of one flow at an offset from that direction's first sequence
 * number. A flow's client stream is laid out by offset (the first copy of
 * a byte wins), and it is cut where the client sent new bytes after the
 * server had sent new bytes since the current request began.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "frames/frameset.h"
#include "proto/tcp/flows.h"
#include "util/bytes.h"

/* One segment with payload, in capture order */
struct flow_seg {
	const uint8_t *data;
	uint32_t off, len;
	bool client;
};

struct cap_flow {
	uint32_t cli_addr, srv_addr; /* network order */
	uint16_t cli_port, srv_port; /* host order */
	uint32_t cli_base, srv_base; /* sequence number of each direction's first byte */
	bool srv_based;
	int skip; /* enum tcp_flow_skip, or -1: playable so far */
	uint64_t start_ns; /* its first frame's capture time (its SYN's, if played) */
	struct flow_seg *segs;
	size_t nsegs, cap;
};

/* The flows so far, and the newest by (address, port) pair for the frames that follow */
struct flow_table {
	struct cap_flow *flows;
	size_t n, cap;
	uint32_t *slot; /* index + 1 of the pair's newest flow (0: empty), open addressing */
	size_t slots;
};

/* A frame's IPv4 TCP segment */
struct tcp_pkt {
	uint32_t saddr, daddr; /* network order */
	uint16_t sport, dport;
	uint32_t seq;
	uint8_t flags;
	const uint8_t *payload;
	uint32_t plen;
	uint64_t ts_ns; /* capture time */
};

static int frame_tcp(const uint8_t *f, uint32_t len, struct tcp_pkt *p)
{
	uint32_t off = 12, ihl, tot, doff;
	const uint8_t *ip, *th;
	uint16_t type;

	if (len < 14)
		return -1;
	type = get16(f + off);
	/* 802.1Q and 802.1ad tags, up to two */
	for (int i = 0; i < 2 && (type == 0x8100 || type == 0x88a8); i++) {
		off += 4;
		if (off + 2 > len)
			return -1;
		type = get16(f + off);
	}
	off += 2;
	if (type != 0x0800 || off + 20 > len)
		return -1;
	ip = f + off;
	ihl = (ip[0] & 15) * 4;
	tot = get16(ip + 2);
	if (ip[0] >> 4 != 4 || ihl < 20 || ip[9] != 6 || tot > len - off || tot < ihl + 20 ||
	    (get16(ip + 6) & 0x3fff))
		return -1;
	th = ip + ihl;
	doff = (th[12] >> 4) * 4;
	if (doff < 20 || ihl + doff > tot)
		return -1;
	memcpy(&p->saddr, ip + 12, 4);
	memcpy(&p->daddr, ip + 16, 4);
	p->sport = get16(th);
	p->dport = get16(th + 2);
	p->seq = get32(th + 4);
	p->flags = th[13];
	p->payload = th + doff;
	p->plen = tot - ihl - doff;
	return 0;
}

static uint64_t pair_hash(uint32_t a, uint16_t ap, uint32_t b, uint16_t bp)
{
	/* the same for both directions */
	uint64_t x = (uint64_t)(a ^ b) << 32 | (uint32_t)(ap ^ bp) | (uint64_t)(a + b) << 7;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static bool flow_is(const struct cap_flow *f, const struct tcp_pkt *p, bool *client)
{
	if (f->cli_addr == p->saddr && f->cli_port == p->sport && f->srv_addr == p->daddr &&
	    f->srv_port == p->dport) {
		*client = true;
		return true;
	}
	*client = false;
	return f->cli_addr == p->daddr && f->cli_port == p->dport && f->srv_addr == p->saddr &&
	       f->srv_port == p->sport;
}

/* The slot of p's pair: its flow's, or the empty one where it would go */
static size_t table_find(const struct flow_table *t, const struct tcp_pkt *p, bool *client)
{
	size_t i = pair_hash(p->saddr, p->sport, p->daddr, p->dport) & (t->slots - 1);

	while (t->slot[i] && !flow_is(&t->flows[t->slot[i] - 1], p, client))
		i = (i + 1) & (t->slots - 1);
	return i;
}

static int table_grow(struct flow_table *t)
{
	struct flow_table n = *t;
	bool client;

	n.slots = t->slots ? t->slots * 2 : 1024;
	n.slot = calloc(n.slots, sizeof(*n.slot));
	if (!n.slot)
		return -ENOMEM;
	/* the newest flow of each pair keeps the slot: later ones come later in flows[] */
	for (size_t k = 0; k < t->n; k++) {
		const struct cap_flow *f = &t->flows[k];
		struct tcp_pkt p = { .saddr = f->cli_addr,
				     .daddr = f->srv_addr,
				     .sport = f->cli_port,
				     .dport = f->srv_port };

		n.slot[table_find(&n, &p, &client)] = k + 1;
	}
	free(t->slot);
	*t = n;
	return 0;
}

/* A new flow of p's pair at slot i (p's sender the client), the pair's newest */
static struct cap_flow *flow_new(struct flow_table *t, const struct tcp_pkt *p, int skip)
{
	struct cap_flow *f;
	bool client;
	size_t i;

	if ((t->n + 1) * 2 > t->slots && table_grow(t))
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct cap_flow *fl = realloc(t->flows, cap * sizeof(*fl));

		if (!fl)
			return NULL;
		t->flows = fl;
		t->cap = cap;
	}
	i = table_find(t, p, &client);
	f = &t->flows[t->n++];
	*f = (struct cap_flow){ .cli_addr = p->saddr,
				.srv_addr = p->daddr,
				.cli_port = p->sport,
				.srv_port = p->dport,
				.cli_base = p->seq + 1,
				.skip = skip,
				.start_ns = p->ts_ns };
	t->slot[i] = t->n;
	return f;
}

static int flow_add_seg(struct cap_flow *f, const struct tcp_pkt *p, bool client)
{
	uint32_t base = client ? f->cli_base : f->srv_base, off;

	if (!client && !f->srv_based) {
		/* no SYN-ACK in the capture: the server's first bytes are its stream's start */
		f->srv_base = base = p->seq;
		f->srv_based = true;
	}
	off = p->seq - base;
	/* before the stream's start (a SYN's repeat with data, or another flow's): not ours */
	if (off >= 1U << 31 || p->plen > (1U << 31) - off)
		return 0;
	if (f->nsegs == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct flow_seg *s = realloc(f->segs, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		f->segs = s;
		f->cap = cap;
	}
	f->segs[f->nsegs++] = (struct flow_seg){ .data = p->payload,
						 .off = off,
						 .len = p->plen,
						 .client = client };
	return 0;
}

static int table_frame(struct flow_table *t, const struct tcp_pkt *p)
{
	bool client, syn = p->flags & 0x02, ack = p->flags & 0x10;
	size_t i = t->slots ? table_find(t, p, &client) : 0;
	struct cap_flow *f = t->slots && t->slot[i] ? &t->flows[t->slot[i] - 1] : NULL;

	if (syn && !ack) {
		/* a SYN sent again is the same flow; another ISN is a new one on the same pair */
		if (f && client && f->cli_base == p->seq + 1)
			return 0;
		return flow_new(t, p, -1) ? 0 : -ENOMEM;
	}
	if (!f) {
		/* begun before the capture: counted once, its frames left alone */
		return p->plen && !flow_new(t, p, TCP_FLOW_NO_SYN) ? -ENOMEM : 0;
	}
	if (f->skip >= 0)
		return 0;
	if (syn && !client) {
		if (!f->srv_based) {
			f->srv_base = p->seq + 1;
			f->srv_based = true;
		}
		return 0;
	}
	return p->plen ? flow_add_seg(f, p, client) : 0;
}

/* Key of the n bytes at b among cap's requests, added when new; -1 when no room */
static int request_key(struct tcp_capture *cap, const uint8_t *b, uint32_t n)
{
	uint8_t *copy;

	for (uint32_t k = 0; k < cap->nkeys; k++)
		if (cap->req_len[k] == n && !memcmp(cap->req[k], b, n))
			return k;
	if (cap->nkeys == XR_TCP_STEP_KEYS)
		return -1;
	copy = malloc(n);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, b, n);
	cap->req[cap->nkeys] = copy;
	cap->req_len[cap->nkeys] = n;
	return cap->nkeys++;
}

/* An HTTP/1.x request line's start: a method in capitals, a space */
static bool http_request(const uint8_t *b, uint32_t n)
{
	uint32_t i = 0;

	while (i < n && i < 16 && b[i] >= 'A' && b[i] <= 'Z')
		i++;
	return i > 0 && i < n && b[i] == ' ';
}

struct flow_step {
	uint32_t at, mark; /* where it starts in the client's stream; the server's bytes then */
};

/* A response's first bytes, from the server's first segment that has them */
struct flow_head {
	uint8_t b[8];
	bool got;
};

/* One flow taken apart: its requests (steps), the client's stream, each response's head */
struct flow_work {
	const struct cap_flow *f;
	uint32_t total, cli_hi, srv_hi, nsteps; /* the client's bytes, both sides' highest */
	struct flow_step *steps;
	size_t steps_room;
	uint8_t *stream, *have;
	struct flow_head *heads;
	bool http; /* every request an HTTP/1.x one answered by an HTTP/1.x response */
	int why; /* the TCP_FLOW_* reason it is not played (-1: none) */
	int err; /* -ENOMEM */
};

/* The client's bytes: some, and not too many. Whether the flow goes on. */
static bool flow_total(struct flow_work *w)
{
	const struct cap_flow *f = w->f;

	for (size_t i = 0; i < f->nsegs; i++)
		if (f->segs[i].client && f->segs[i].off + f->segs[i].len > w->total)
			w->total = f->segs[i].off + f->segs[i].len;
	if (!w->total)
		w->why = TCP_FLOW_NO_DATA;
	else if (w->total > TCP_FLOW_STREAM_MAX)
		w->why = TCP_FLOW_STREAM_TOO_LONG;
	return w->why < 0;
}

/* A step more, room made. Whether it was added. */
static bool flow_step_add(struct flow_work *w)
{
	if (w->nsteps == XR_TCP_FLOW_STEPS) {
		w->why = TCP_FLOW_TOO_MANY_REQUESTS;
		return false;
	}
	if (w->nsteps == w->steps_room) {
		size_t room = w->steps_room ? w->steps_room * 2 : 16;
		struct flow_step *n = realloc(w->steps, room * sizeof(*n));

		if (!n) {
			w->err = -ENOMEM;
			return false;
		}
		w->steps = n;
		w->steps_room = room;
	}
	w->steps[w->nsteps] =
		(struct flow_step){ .at = w->nsteps ? w->cli_hi : 0, .mark = w->srv_hi };
	w->nsteps++;
	return true;
}

/* Where each request starts, and what the server had said by then. Whether the flow goes on. */
static bool flow_steps(struct flow_work *w)
{
	const struct cap_flow *f = w->f;

	for (size_t i = 0; i < f->nsegs; i++) {
		const struct flow_seg *s = &f->segs[i];
		uint32_t end = s->off + s->len;

		if (!s->client) {
			if (end > w->srv_hi)
				w->srv_hi = end;
			continue;
		}
		if (end <= w->cli_hi)
			continue; /* a repeat */
		if (!w->nsteps && w->srv_hi) {
			w->why = TCP_FLOW_SERVER_FIRST;
			return false;
		}
		if ((!w->nsteps || w->srv_hi > w->steps[w->nsteps - 1].mark) && !flow_step_add(w))
			return false;
		w->cli_hi = end;
	}
	return true;
}

/* The client's stream, every byte of it. Whether the flow goes on. */
static bool flow_stream(struct flow_work *w)
{
	const struct cap_flow *f = w->f;

	w->stream = malloc(w->total);
	w->have = calloc(w->total, 1);
	if (!w->stream || !w->have) {
		w->err = -ENOMEM;
		return false;
	}
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct flow_seg *s = &f->segs[i];

		for (uint32_t j = 0; s->client && j < s->len; j++)
			if (!w->have[s->off + j]) {
				w->have[s->off + j] = 1;
				w->stream[s->off + j] = s->data[j];
			}
	}
	if (memchr(w->have, 0, w->total))
		w->why = TCP_FLOW_GAP;
	return w->why < 0;
}

/* Each response's first bytes, from the server's first segment that has them. Whether it went. */
static bool flow_heads(struct flow_work *w)
{
	const struct cap_flow *f = w->f;

	w->heads = calloc(w->nsteps, sizeof(*w->heads));
	if (!w->heads) {
		w->err = -ENOMEM;
		return false;
	}
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct flow_seg *s = &f->segs[i];
		uint32_t lo = 0, hi = w->nsteps;

		if (s->client)
			continue;
		/* marks do not decrease: the first step whose mark is at or past the segment's start */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (w->steps[mid].mark < s->off)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (uint32_t k = lo; k < w->nsteps && w->steps[k].mark < s->off + s->len; k++) {
			uint32_t n = s->off + s->len - w->steps[k].mark;

			if (w->heads[k].got)
				continue;
			memcpy(w->heads[k].b, s->data + (w->steps[k].mark - s->off),
			       n < sizeof(w->heads[k].b) ? n : sizeof(w->heads[k].b));
			w->heads[k].got = true;
		}
	}
	return true;
}

/* Request k's end in the stream, and its response's bytes */
static uint32_t flow_request_end(const struct flow_work *w, uint32_t k)
{
	return k + 1 < w->nsteps ? w->steps[k + 1].at : w->total;
}

static uint32_t flow_response_len(const struct flow_work *w, uint32_t k)
{
	return (k + 1 < w->nsteps ? w->steps[k + 1].mark : w->srv_hi) - w->steps[k].mark;
}

/* No request too long for a session; whether every one is HTTP/1.x. Whether the flow goes on. */
static bool flow_requests_check(struct flow_work *w)
{
	for (uint32_t k = 0; k < w->nsteps; k++) {
		uint32_t end = flow_request_end(w, k);

		if (end - w->steps[k].at > XR_TCP_REQUEST_MAX) {
			w->why = TCP_FLOW_REQUEST_TOO_LONG;
			return false;
		}
		w->http = w->http && flow_response_len(w, k) &&
			  http_request(w->stream + w->steps[k].at, end - w->steps[k].at) &&
			  !memcmp(w->heads[k].b, "HTTP/1.", 7);
	}
	return true;
}

/* The flow's steps into cap (their requests' keys), the flow itself, the books. */
static void flow_commit(struct flow_work *w, struct tcp_capture *cap, struct tcp_flow_books *books,
			size_t *steps_cap)
{
	uint32_t keys0 = cap->nkeys;

	if (cap->nsteps + w->nsteps > *steps_cap) {
		size_t room = (cap->nsteps + w->nsteps) * 2;
		struct xr_tcp_step *n = realloc(cap->steps, room * sizeof(*n));

		if (!n) {
			w->err = -ENOMEM;
			return;
		}
		cap->steps = n;
		*steps_cap = room;
	}
	for (uint32_t k = 0; k < w->nsteps; k++) {
		uint32_t end = flow_request_end(w, k);
		int key = request_key(cap, w->stream + w->steps[k].at, end - w->steps[k].at);

		if (key == -ENOMEM) {
			w->err = key;
			return;
		}
		if (key < 0) {
			/* the requests this flow added are only its own */
			while (cap->nkeys > keys0)
				free(cap->req[--cap->nkeys]);
			w->why = TCP_FLOW_KEYS_FULL;
			return;
		}
		cap->steps[cap->nsteps + k] = (struct xr_tcp_step){ .len = end - w->steps[k].at,
								    .off = w->steps[k].at,
								    .resp = flow_response_len(w, k),
								    .key = key };
	}
	cap->start_ns[cap->nflows] = w->f->start_ns;
	cap->flows[cap->nflows++] =
		(struct xr_tcp_flow){ .first = cap->nsteps, .steps = w->nsteps };
	cap->nsteps += w->nsteps;
	books->played++;
	books->requests += w->nsteps;
	books->client_bytes += w->total;
	books->server_bytes += w->srv_hi;
	books->http = books->http && w->http;
	if (books->played == 1)
		books->server_port = w->f->srv_port;
	else if (books->server_port != w->f->srv_port)
		books->server_port = 0;
}

/*
 * Flow f into cap (its steps, their requests' keys) and books, or the
 * reason it is not played. 0, or -ENOMEM.
 */
static int flow_take(const struct cap_flow *f, struct tcp_capture *cap,
		     struct tcp_flow_books *books, size_t *steps_cap)
{
	struct flow_work w = { .f = f, .http = true, .why = -1 };

	if (flow_total(&w) && flow_steps(&w) && flow_stream(&w) && flow_heads(&w) &&
	    flow_requests_check(&w))
		flow_commit(&w, cap, books, steps_cap);
	if (w.why >= 0)
		books->skipped[w.why]++;
	free(w.steps);
	free(w.heads);
	free(w.stream);
	free(w.have);
	return w.err;
}

int tcp_flows_extract(const struct frameset *fs, struct tcp_capture *cap,
		      struct tcp_flow_books *books)
{
	struct flow_table t = {};
	size_t steps_cap = 0;
	int err = 0;

	memset(cap, 0, sizeof(*cap));
	memset(books, 0, sizeof(*books));
	books->http = true;
	books->frames = fs->n;
	for (size_t i = 0; i < fs->n && !err; i++) {
		struct tcp_pkt p;

		if (frame_tcp(fs->bytes + fs->frames[i].off, fs->frames[i].len, &p)) {
			books->not_ipv4_tcp++;
			continue;
		}
		books->tcp_frames++;
		p.ts_ns = fs->frames[i].ts_ns;
		err = table_frame(&t, &p);
	}
	books->flows = t.n;
	cap->req = calloc(XR_TCP_STEP_KEYS, sizeof(*cap->req));
	cap->req_len = calloc(XR_TCP_STEP_KEYS, sizeof(*cap->req_len));
	cap->flows = calloc(t.n ? t.n : 1, sizeof(*cap->flows));
	cap->start_ns = calloc(t.n ? t.n : 1, sizeof(*cap->start_ns));
	if (!err && (!cap->req || !cap->req_len || !cap->flows || !cap->start_ns))
		err = -ENOMEM;
	for (size_t k = 0; k < t.n && !err; k++) {
		if (t.flows[k].skip >= 0)
			books->skipped[t.flows[k].skip]++;
		else
			err = flow_take(&t.flows[k], cap, books, &steps_cap);
	}
	if (!books->played)
		books->http = false;
	for (size_t k = 0; k < t.n; k++)
		free(t.flows[k].segs);
	free(t.flows);
	free(t.slot);
	if (err)
		tcp_capture_free(cap);
	return err;
}

void tcp_capture_free(struct tcp_capture *cap)
{
	for (uint32_t k = 0; cap->req && k < cap->nkeys; k++)
		free(cap->req[k]);
	free(cap->req);
	free(cap->req_len);
	free(cap->flows);
	free(cap->start_ns);
	free(cap->steps);
	memset(cap, 0, sizeof(*cap));
}

const char *tcp_flow_skip_name(enum tcp_flow_skip why)
{
	static const char *const names[TCP_FLOW_SKIPS] = {
		[TCP_FLOW_NO_SYN] = "no_syn",
		[TCP_FLOW_SERVER_FIRST] = "server_first",
		[TCP_FLOW_NO_DATA] = "no_client_data",
		[TCP_FLOW_GAP] = "gap",
		[TCP_FLOW_REQUEST_TOO_LONG] = "request_too_long",
		[TCP_FLOW_TOO_MANY_REQUESTS] = "too_many_requests",
		[TCP_FLOW_STREAM_TOO_LONG] = "stream_too_long",
		[TCP_FLOW_KEYS_FULL] = "distinct_requests_full",
	};

	return why < TCP_FLOW_SKIPS ? names[why] : "?";
}
