// SPDX-License-Identifier: GPL-2.0
/*
 * Rewrite plans: parsing --rewrite specs, checking that each op fits every
 * frame of the set, and the reference implementation of the ops that the
 * xsk engine would use and that the tests hold bpf/gen.bpf.c against, byte
 * for byte. Written from the specification (RFC 1071/1624 checksums), not
 * from the BPF code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "log.h"
#include "rewrite.h"

#define ETH_HLEN 14

/* Where the IPv4 header and the L4 header of a frame start; 0 when absent. */
struct layout {
	uint16_t l3, l4, l4_end_min;
	uint8_t proto;
	bool ipv4;
};

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static void frame_layout(const uint8_t *f, uint32_t len, struct layout *l)
{
	uint16_t type, off = 12;
	uint8_t ihl;

	memset(l, 0, sizeof(*l));
	if (len < ETH_HLEN)
		return;
	type = get16(f + off);
	off += 2;
	if ((type == 0x8100 || type == 0x88a8) && len >= off + 4u) {
		type = get16(f + off + 2);
		off += 4;
	}
	if (type != 0x0800 || len < off + 20u)
		return;
	ihl = (f[off] & 0x0f) * 4;
	if ((f[off] >> 4) != 4 || ihl < 20 || len < off + ihl)
		return;
	l->ipv4 = true;
	l->l3 = off;
	l->proto = f[off + 9];
	/* fragments after the first carry no L4 header */
	if (get16(f + off + 6) & 0x1fff)
		return;
	l->l4 = off + ihl;
	if (l->proto == IPPROTO_UDP)
		l->l4_end_min = l->l4 + 8;
	else if (l->proto == IPPROTO_TCP && len >= l->l4 + 20u)
		l->l4_end_min = l->l4 + (f[l->l4 + 12] >> 4) * 4;
}

/* FIELD forms: ip.id | u16be@OFF u32be@OFF u64be@OFF u16le@OFF ... | payload@OFF:W */
struct field {
	enum { F_ABS, F_IP_ID, F_PAYLOAD } where;
	unsigned int off, width;
	bool big_endian;
};

static int parse_field(const char *s, size_t len, struct field *f)
{
	char buf[64], end;
	unsigned int bits;
	char e1, e2;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	memset(f, 0, sizeof(*f));
	if (!strcmp(buf, "ip.id")) {
		f->where = F_IP_ID;
		f->width = 2;
		f->big_endian = true;
		return 0;
	}
	if (sscanf(buf, "payload@%u:%u%c", &f->off, &f->width, &end) == 2) {
		f->where = F_PAYLOAD;
		f->big_endian = true;
		return f->width == 2 || f->width == 4 || f->width == 8 ? 0 : -EINVAL;
	}
	if (sscanf(buf, "u%u%c%c@%u%c", &bits, &e1, &e2, &f->off, &end) == 4 &&
	    (bits == 16 || bits == 32 || bits == 64) && ((e1 == 'b' && e2 == 'e') || (e1 == 'l' && e2 == 'e'))) {
		f->where = F_ABS;
		f->width = bits / 8;
		f->big_endian = e1 == 'b';
		return 0;
	}
	return -EINVAL;
}

static int parse_u64(const char *s, __u64 *v)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

int rewrite_parse(const char *spec, struct rewrite_spec *out)
{
	const char *eq = strchr(spec, '='), *val, *pct;
	bool relative;
	struct field f;
	char num[32];

	memset(out, 0, sizeof(*out));
	snprintf(out->text, sizeof(out->text), "%s", spec);
	if (!eq || eq == spec)
		goto bad;
	relative = eq[-1] == '+';
	if (parse_field(spec, eq - spec - relative, &f)) {
		fprintf(stderr, "xdpreplay replay: --rewrite '%s': unknown field (ip.id, u16be@OFF, u32le@OFF, "
			"u64be@OFF, payload@OFF:W)\n", spec);
		return -EINVAL;
	}
	val = eq + 1;
	pct = strchr(val, '%');
	out->op.kind = XR_OP_COUNTER;
	out->op.width = f.width;
	out->op.flags = f.big_endian ? XR_OPF_BIG_ENDIAN : 0;
	out->where = f.where;
	out->field_off = f.off;
	if (relative) {
		/* FIELD+=STEP: the captured value plus n * STEP */
		out->op.flags |= XR_OPF_RELATIVE;
		snprintf(num, sizeof(num), "%.*s", (int)(pct ? pct - val : (long)strlen(val)), val);
		if (parse_u64(num, &out->op.step))
			goto bad;
	} else if (!strncmp(val, "seq", 3) && (val[3] == 0 || val[3] == '%')) {
		/* FIELD=seq: the sequence number itself */
		out->op.step = 1;
	} else {
		goto bad;
	}
	if (pct) {
		if (parse_u64(pct + 1, &out->op.modulus) || !out->op.modulus)
			goto bad;
		if (f.width < 8 && out->op.modulus > (1ULL << (f.width * 8))) {
			fprintf(stderr, "xdpreplay replay: --rewrite '%s': modulus larger than the field\n", spec);
			return -EINVAL;
		}
	}
	return 0;
bad:
	fprintf(stderr, "xdpreplay replay: --rewrite '%s' is not FIELD=seq[%%MOD] or FIELD+=STEP[%%MOD] "
		"(e.g. ip.id=seq, u32be@42+=1, payload@0:4=seq)\n", spec);
	return -EINVAL;
}

int rewrite_plan(const struct rewrite_spec *specs, int nspecs, const struct frameset *fs,
		 struct xr_op *ops)
{
	struct layout l0 = {}, l;

	if (nspecs > XR_MAX_OPS) {
		pr_warn("at most %d --rewrite ops\n", XR_MAX_OPS);
		return -E2BIG;
	}
	for (int i = 0; i < nspecs; i++) {
		const struct rewrite_spec *sp = &specs[i];
		struct xr_op *op = &ops[i];

		*op = sp->op;
		/* one plan serves every frame: each must have the same layout where it matters */
		for (size_t fi = 0; fi < fs->n; fi++) {
			const struct fs_frame *fr = &fs->frames[fi];
			const uint8_t *b = fs->bytes + fr->off;
			unsigned int off;

			frame_layout(b, fr->len, &l);
			if (sp->where != F_ABS && !l.ipv4) {
				pr_warn("--rewrite %s: frame %zu is not IPv4\n", sp->text, fi + 1);
				return -EINVAL;
			}
			if (sp->where == F_PAYLOAD && !l.l4_end_min) {
				pr_warn("--rewrite %s: frame %zu has no UDP or TCP header\n", sp->text, fi + 1);
				return -EINVAL;
			}
			off = sp->where == F_IP_ID ? l.l3 + 4u :
			      sp->where == F_PAYLOAD ? l.l4_end_min + sp->field_off : sp->field_off;
			if (off + op->width > fr->len) {
				pr_warn("--rewrite %s: frame %zu is %u bytes long, the field ends at %u\n", sp->text,
					fi + 1, fr->len, off + op->width);
				return -EINVAL;
			}
			if (fi == 0) {
				l0 = l;
				op->off = off;
			} else if (off != op->off || l.l3 != l0.l3 || l.l4 != l0.l4 || l.proto != l0.proto) {
				pr_warn("--rewrite %s: frame %zu is laid out unlike frame 1 (one plan serves all "
					"frames)\n", sp->text, fi + 1);
				return -EINVAL;
			}
		}
		/* the checksums that cover the field */
		if (l0.ipv4 && op->off >= l0.l3 && op->off < l0.l3 + 20u && op->off + op->width > l0.l3 + 20u) {
			pr_warn("--rewrite %s: the field straddles the end of the IPv4 header\n", sp->text);
			return -EINVAL;
		}
		if (l0.ipv4 && op->off >= l0.l3 && op->off + op->width <= (l0.l4 ? l0.l4 : l0.l3 + 20u)) {
			if (op->off < l0.l3 + 12u && op->off + op->width > l0.l3 + 10u) {
				pr_warn("--rewrite %s: the field overlaps the IPv4 header checksum\n", sp->text);
				return -EINVAL;
			}
			op->ip_csum_off = l0.l3 + 10;
			if ((op->off - l0.l3) % 2) {
				pr_warn("--rewrite %s: an odd offset in the IPv4 header is not supported\n", sp->text);
				return -EINVAL;
			}
			/* addresses are in the pseudo-header: not handled by this op yet */
			if (op->off + op->width > l0.l3 + 12u && (l0.proto == IPPROTO_UDP || l0.proto == IPPROTO_TCP)) {
				pr_warn("--rewrite %s: rewriting IPv4 addresses is not supported yet\n", sp->text);
				return -EINVAL;
			}
		} else if (l0.l4_end_min && op->off >= l0.l4) {
			uint16_t csum_at = l0.l4 + (l0.proto == IPPROTO_UDP ? 6 : 16);

			if (op->off < csum_at + 2u && op->off + op->width > csum_at) {
				pr_warn("--rewrite %s: the field overlaps the %s checksum\n", sp->text,
					l0.proto == IPPROTO_UDP ? "UDP" : "TCP");
				return -EINVAL;
			}
			if ((op->off - l0.l4) % 2) {
				pr_warn("--rewrite %s: a field at an odd offset from the %s header is not supported\n",
					sp->text, l0.proto == IPPROTO_UDP ? "UDP" : "TCP");
				return -EINVAL;
			}
			op->l4_csum_off = csum_at;
			op->l4_proto = l0.proto;
		} else if (l0.ipv4 && op->off < l0.l3 + 20u && op->off >= ETH_HLEN) {
			pr_warn("--rewrite %s: the field straddles headers\n", sp->text);
			return -EINVAL;
		}
	}
	return 0;
}

static uint16_t csum_replace(uint16_t csum, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~csum + (uint16_t)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static void fix(uint8_t *f, uint16_t at, const uint8_t *old, const uint8_t *new, int width, bool udp)
{
	uint16_t c, o, n;

	memcpy(&c, f + at, 2);
	if (udp && !c)
		return;
	for (int i = 0; i < width; i += 2) {
		memcpy(&o, old + i, 2);
		memcpy(&n, new + i, 2);
		c = csum_replace(c, o, n);
	}
	if (udp && !c)
		c = 0xffff;
	memcpy(f + at, &c, 2);
}

void rewrite_apply(const struct xr_op *ops, int nops, uint8_t *f, uint32_t len, uint64_t n)
{
	for (int i = 0; i < nops; i++) {
		const struct xr_op *op = &ops[i];
		uint8_t old[8], new[8];
		uint64_t base = 0, v;
		int w = op->width;

		if (op->off + (uint32_t)w > len)
			continue;
		memcpy(old, f + op->off, w);
		if (op->flags & XR_OPF_RELATIVE)
			for (int b = 0; b < w; b++)
				base |= (uint64_t)old[(op->flags & XR_OPF_BIG_ENDIAN) ? b : w - 1 - b] << (8 * (w - 1 - b));
		else
			base = op->base;
		v = base + n * op->step;
		if (op->modulus)
			v %= op->modulus;
		else if (w < 8)
			v &= (1ULL << (8 * w)) - 1;
		for (int b = 0; b < w; b++)
			new[(op->flags & XR_OPF_BIG_ENDIAN) ? w - 1 - b : b] = v >> (8 * b);
		memcpy(f + op->off, new, w);
		if (op->ip_csum_off)
			fix(f, op->ip_csum_off, old, new, w, false);
		if (op->l4_csum_off)
			fix(f, op->l4_csum_off, old, new, w, op->l4_proto == IPPROTO_UDP);
	}
}
