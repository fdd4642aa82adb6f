/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS queries as gen dns sends them: one message per name, built once (RFC
 * 1035 §4.1); the names from a list in dnsperf's format ("NAME [TYPE]" per
 * line) or from the queries of a capture.
 */
#ifndef __XR_PROTO_DNS_QUERY_H
#define __XR_PROTO_DNS_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define DNS_MAX_MSG 512 /* what a query without EDNS may take (RFC 1035 §4.2.1) */

struct dns_query {
	uint8_t msg[DNS_MAX_MSG];
	uint16_t len;
};

struct dns_query_set {
	struct dns_query *q;
	size_t n, cap;
};

struct dns_query_opts {
	bool rd; /* recursion desired */
	uint16_t edns; /* 0: no OPT record; else the UDP payload size it offers */
};

/* A, AAAA, NS, ..., ANY, or TYPEnnn (RFC 3597): the type's number, or -1. */
int dns_qtype(const char *s);
/* name (dots between labels, a final dot optional) in wire form into out: its length, or -1. */
int dns_encode_name(const char *name, uint8_t *out, size_t cap);
/* One query for name and type into q (id 0; the plan writes it per packet): 0 or -EINVAL. */
int dns_build_query(const char *name, uint16_t qtype, const struct dns_query_opts *o,
		    struct dns_query *q);
/* The question of a captured query (qname, qtype, qclass as on the wire) into a query of ours: 0 or -EINVAL. */
int dns_query_from_wire(const uint8_t *dns, size_t len, const struct dns_query_opts *o,
			struct dns_query *q);

int dns_set_add(struct dns_query_set *s, const struct dns_query *q);
void dns_set_free(struct dns_query_set *s);
/*
 * The lines of a names file ("NAME [TYPE]", '#' comments, blank lines) as
 * queries; type defaults to qtype. 0, or -errno after a one-line message
 * naming the file and line.
 */
int dns_names_load(const char *path, uint16_t qtype, const struct dns_query_opts *o,
		   struct dns_query_set *s);
/* The same for text in memory (path names it in messages). */
int dns_names_parse(const char *text, size_t len, const char *path, uint16_t qtype,
		    const struct dns_query_opts *o, struct dns_query_set *s);

#endif
