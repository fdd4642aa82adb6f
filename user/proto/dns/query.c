// SPDX-License-Identifier: GPL-2.0
/* DNS query messages and where their names come from: see query.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proto/dns/query.h"
#include "util/log.h"

static const struct {
	const char *name;
	uint16_t type;
} qtypes[] = {
	{ "A", 1 },   { "NS", 2 },	{ "CNAME", 5 },	 { "SOA", 6 },	 { "PTR", 12 },
	{ "MX", 15 }, { "TXT", 16 },	{ "AAAA", 28 },	 { "SRV", 33 },	 { "NAPTR", 35 },
	{ "DS", 43 }, { "DNSKEY", 48 }, { "HTTPS", 65 }, { "ANY", 255 },
};

int dns_qtype(const char *s)
{
	char *end;
	unsigned long v;

	for (size_t i = 0; i < sizeof(qtypes) / sizeof(qtypes[0]); i++)
		if (!strcasecmp(s, qtypes[i].name))
			return qtypes[i].type;
	if (strncasecmp(s, "TYPE", 4) || !isdigit((unsigned char)s[4]))
		return -1;
	v = strtoul(s + 4, &end, 10);
	return *end || v > 65535 ? -1 : (int)v;
}

int dns_encode_name(const char *name, uint8_t *out, size_t cap)
{
	size_t at = 0, nlen = strlen(name);

	if (nlen == 1 && name[0] == '.')
		nlen = 0;
	else if (nlen && name[nlen - 1] == '.')
		nlen--;
	/* one final dot is the root; a second is an empty label */
	if (nlen && name[nlen - 1] == '.')
		return -1;
	for (size_t i = 0; i < nlen;) {
		size_t l = 0;

		while (i + l < nlen && name[i + l] != '.')
			l++;
		/* an empty label (two dots) or one over 63 bytes is not a name */
		if (!l || l > 63 || at + 1 + l >= cap)
			return -1;
		out[at++] = l;
		memcpy(out + at, name + i, l);
		at += l;
		i += l + 1;
	}
	if (at + 1 > cap || at + 1 > 255)
		return -1;
	out[at++] = 0;
	return at;
}

/* The header (id 0), then question, then the OPT record if asked for. */
static int finish_query(struct dns_query *q, size_t qlen, const struct dns_query_opts *o)
{
	uint8_t *m = q->msg;
	size_t at = 12 + qlen;

	memset(m, 0, 12);
	m[2] = o->rd ? 0x01 : 0x00; /* QR 0, opcode QUERY, RD */
	m[5] = 1; /* QDCOUNT */
	if (o->edns) {
		if (at + 11 > sizeof(q->msg))
			return -EINVAL;
		m[11] = 1; /* ARCOUNT */
		/* root name, type OPT (41), class = UDP payload size, TTL 0, RDLEN 0 (RFC 6891 §6.1.2) */
		memcpy(m + at,
		       (const uint8_t[]){ 0, 0, 41, o->edns >> 8, o->edns & 0xff, 0, 0, 0, 0, 0,
					  0 },
		       11);
		at += 11;
	}
	q->len = at;
	return 0;
}

int dns_build_query(const char *name, uint16_t qtype, const struct dns_query_opts *o,
		    struct dns_query *q)
{
	int nl = dns_encode_name(name, q->msg + 12, sizeof(q->msg) - 12 - 4);

	if (nl < 0)
		return -EINVAL;
	q->msg[12 + nl] = qtype >> 8;
	q->msg[13 + nl] = qtype & 0xff;
	q->msg[14 + nl] = 0;
	q->msg[15 + nl] = 1; /* IN */
	return finish_query(q, nl + 4, o);
}

int dns_query_from_wire(const uint8_t *dns, size_t len, const struct dns_query_opts *o,
			struct dns_query *q)
{
	size_t at = 12;

	/* a query (QR 0, opcode QUERY) with one question at least */
	if (len < 12 + 5 || (dns[2] & 0x80) || (dns[2] & 0x78) || !(dns[4] | dns[5]))
		return -EINVAL;
	/* the name: labels up to the root; a compression pointer has no place in a query's first name */
	while (at < len && dns[at]) {
		if (dns[at] > 63)
			return -EINVAL;
		at += 1 + dns[at];
	}
	if (at >= len || at - 12 + 1 > 255 || at + 1 + 4 > len)
		return -EINVAL;
	at += 1 + 4;
	if (at - 12 > sizeof(q->msg) - 12)
		return -EINVAL;
	memcpy(q->msg + 12, dns + 12, at - 12);
	return finish_query(q, at - 12, o);
}

int dns_set_add(struct dns_query_set *s, const struct dns_query *q)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct dns_query *nq = realloc(s->q, cap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		s->q = nq;
		s->cap = cap;
	}
	s->q[s->n++] = *q;
	return 0;
}

void dns_set_free(struct dns_query_set *s)
{
	free(s->q);
	memset(s, 0, sizeof(*s));
}

int dns_names_parse(const char *text, size_t len, const char *path, uint16_t qtype,
		    const struct dns_query_opts *o, struct dns_query_set *s)
{
	size_t lineno = 0;

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - (text + at)) : len - at;
		char line[600], name[300], type[32], extra;
		struct dns_query q;
		int n, t = qtype;

		lineno++;
		if (ll >= sizeof(line)) {
			pr_warn("%s:%zu: line longer than %zu bytes\n", path, lineno,
				sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, text + at, ll);
		line[ll] = 0;
		at += ll + 1;
		if (memchr(line, 0, ll)) {
			pr_warn("%s:%zu: a NUL byte is not text\n", path, lineno);
			return -EINVAL;
		}
		n = sscanf(line, " %299s %31s %c", name, type, &extra);
		if (n <= 0 || name[0] == '#')
			continue;
		if (n == 3) {
			pr_warn("%s:%zu: not NAME [TYPE]\n", path, lineno);
			return -EINVAL;
		}
		if (n == 2 && (t = dns_qtype(type)) < 0) {
			pr_warn("%s:%zu: '%s' is not a query type (A, AAAA, MX, ..., TYPEnnn)\n",
				path, lineno, type);
			return -EINVAL;
		}
		if (dns_build_query(name, t, o, &q)) {
			pr_warn("%s:%zu: '%s' is not a domain name (labels of 1-63 bytes, 255 in all)\n",
				path, lineno, name);
			return -EINVAL;
		}
		if (dns_set_add(s, &q)) {
			pr_warn("%s: out of memory\n", path);
			return -ENOMEM;
		}
	}
	return 0;
}

int dns_names_load(const char *path, uint16_t qtype, const struct dns_query_opts *o,
		   struct dns_query_set *s)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err;

	if (!f) {
		err = -errno;
		pr_warn("%s: %s\n", path, strerror(-err));
		return err;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 65536);

			/* a names file is text; beyond 1 GiB it is a mistake */
			if (!nb || cap >= (1UL << 30)) {
				free(nb ? nb : buf);
				fclose(f);
				pr_warn("%s: too large for a names file\n", path);
				return -ENOMEM;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err)
		pr_warn("%s: %s\n", path, strerror(-err));
	else
		err = dns_names_parse(buf, len, path, qtype, o, s);
	free(buf);
	return err;
}
