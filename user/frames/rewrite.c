// SPDX-License-Identifier: GPL-2.0
/*
 * Rewrite plans: parsing --rewrite specs, checking that each op fits every
 * frame of the set, and the reference implementation of the ops that the
 * tests hold bpf/gen.bpf.c against, byte for byte. The reference is written
 * from the specifications (RFC 1071 and 1624 checksums, RFC 768/793 and
 * 8200 pseudo-headers), not from the BPF code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "util/log.h"
#include "frames/addr.h"
#include "frames/rewrite.h"
#include "util/units.h"

#define ETH_HLEN 14
#define XR_STR2(x) #x
#define XR_STR(x) XR_STR2(x)

/* Where the IP header and the L4 header of a frame start; 0 when absent. */
struct layout {
	uint16_t l3, l4, l4_end; /* l4_end: end of the UDP/TCP header */
	uint8_t proto;
	uint8_t ipver; /* 4, 6 or 0 */
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
	if (type == 0x0800 && len >= off + 20u && (f[off] >> 4) == 4) {
		ihl = (f[off] & 0x0f) * 4;
		if (ihl < 20 || len < off + (uint32_t)ihl)
			return;
		l->ipver = 4;
		l->l3 = off;
		l->proto = f[off + 9];
		/* fragments after the first carry no L4 header */
		if (get16(f + off + 6) & 0x1fff)
			return;
		l->l4 = off + ihl;
	} else if (type == 0x86dd && len >= off + 40u && (f[off] >> 4) == 6) {
		/* extension headers are not followed: UDP or TCP must come first */
		l->ipver = 6;
		l->l3 = off;
		l->proto = f[off + 6];
		l->l4 = off + 40;
	} else {
		return;
	}
	if (l->proto == IPPROTO_UDP || (l->proto == IPPROTO_ICMP && l->ipver == 4) ||
	    (l->proto == IPPROTO_ICMPV6 && l->ipver == 6))
		l->l4_end = l->l4 + 8; /* UDP's header; ICMP's type, code, checksum and 4 more */
	else if (l->proto == IPPROTO_TCP && len >= l->l4 + 20u)
		l->l4_end = l->l4 + (f[l->l4 + 12] >> 4) * 4;
	else
		l->l4 = 0;
}

enum where {
	W_ABS,
	W_IP_ID,
	W_PAYLOAD,
	W_IP_SRC,
	W_IP_DST,
	W_IP6_SRC,
	W_IP6_DST,
	W_SPORT,
	W_DPORT
};

struct field {
	enum where where;
	unsigned int off, width;
	bool big_endian;
	uint8_t proto; /* W_SPORT/W_DPORT: the L4 protocol the name says */
};

static const struct {
	const char *name;
	enum where where;
	unsigned int width;
	uint8_t proto;
} named[] = {
	{ "ip.id", W_IP_ID, 2, 0 },
	{ "ip.src", W_IP_SRC, 4, 0 },
	{ "ip.dst", W_IP_DST, 4, 0 },
	{ "ip6.src", W_IP6_SRC, 8, 0 },
	{ "ip6.dst", W_IP6_DST, 8, 0 },
	{ "udp.sport", W_SPORT, 2, IPPROTO_UDP },
	{ "udp.dport", W_DPORT, 2, IPPROTO_UDP },
	{ "tcp.sport", W_SPORT, 2, IPPROTO_TCP },
	{ "tcp.dport", W_DPORT, 2, IPPROTO_TCP },
	/* an echo's identifier and sequence number sit where UDP and TCP have their ports */
	{ "icmp.id", W_SPORT, 2, IPPROTO_ICMP },
	{ "icmp.seq", W_DPORT, 2, IPPROTO_ICMP },
};

static int parse_field(const char *s, size_t len, struct field *f)
{
	/* a field lies inside a frame: its offset is below the largest frame */
	const unsigned int max_off = XR_MAX_FRAME - 1;
	static const struct {
		const char *prefix;
		unsigned int width;
		bool big_endian;
	} abs[] = {
		{ "u8@", 1, true },	{ "u16be@", 2, true },	{ "u16le@", 2, false },
		{ "u32be@", 4, true },	{ "u32le@", 4, false }, { "u64be@", 8, true },
		{ "u64le@", 8, false },
	};
	const char *end;
	char buf[64];

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	memset(f, 0, sizeof(*f));
	f->big_endian = true;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (!strcmp(buf, named[i].name)) {
			f->where = named[i].where;
			f->width = named[i].width;
			f->proto = named[i].proto;
			return 0;
		}
	}
	if (!strncmp(buf, "payload@", 8)) {
		int err = parse_uint(buf + 8, max_off, &f->off, &end);

		f->where = W_PAYLOAD;
		if (err)
			return err;
		if (*end != ':' || parse_uint(end + 1, 8, &f->width, &end) || *end)
			return -EINVAL;
		return f->width == 1 || f->width == 2 || f->width == 4 || f->width == 8 ? 0 :
											  -EINVAL;
	}
	for (size_t i = 0; i < sizeof(abs) / sizeof(abs[0]); i++) {
		size_t pl = strlen(abs[i].prefix);

		int err;

		if (strncmp(buf, abs[i].prefix, pl))
			continue;
		err = parse_uint(buf + pl, max_off, &f->off, &end);
		if (err)
			return err;
		if (*end)
			return -EINVAL;
		f->where = W_ABS;
		f->width = abs[i].width;
		f->big_endian = abs[i].big_endian;
		return 0;
	}
	return -EINVAL;
}

static int parse_u64(const char *s, __u64 *v)
{
	char *end;

	if (!*s || *s == '-' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_port_range(const char *s, __u64 *base, __u64 *count)
{
	unsigned int lo, hi;

	if (parse_uint_range(s, 65535, &lo, &hi))
		return -EINVAL;
	*base = lo;
	*count = hi - lo + 1;
	return 0;
}

/* Names what the user typed: --rewrite SPEC, or the option a spec was made from (gen --src VALUE). */
static int bad_spec(const char *spec, const char *opt, const char *why)
{
	const char *eq = strchr(spec, '=');

	if (opt)
		pr_warn("%s '%s': %s\n", opt, eq ? eq + 1 : spec, why);
	else
		pr_warn("--rewrite '%s': %s\n", spec, why);
	return -EINVAL;
}

int rewrite_parse(const char *spec, struct rewrite_spec *out)
{
	return rewrite_parse_opt(spec, NULL, out);
}

int rewrite_parse_opt(const char *spec, const char *opt, struct rewrite_spec *out)
{
	const char *eq = strchr(spec, '='), *val;
	bool relative;
	struct field f;
	char num[32];
	size_t len;
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(out->text, sizeof(out->text), "%s", spec);
	if (!strcmp(spec, "csum=auto")) {
		/* checksums that cover a rewritten field are always fixed; say so explicitly */
		out->csum_only = true;
		return 0;
	}
	if (!eq || eq == spec)
		return bad_spec(spec, opt, "not FIELD=VALUE (see --help)");
	relative = eq[-1] == '+';
	err = parse_field(spec, eq - spec - relative, &f);
	if (err == -ERANGE)
		return bad_spec(
			spec, opt,
			"the offset is past the largest frame (" XR_STR(XR_MAX_FRAME) " bytes)");
	if (err)
		return bad_spec(
			spec, opt,
			"unknown field (ip.id, ip.src, ip.dst, ip6.src, ip6.dst, udp.sport, "
			"udp.dport, tcp.sport, tcp.dport, u8@OFF, u16be@OFF, u32le@OFF, u64be@OFF, "
			"payload@OFF:W)");
	val = eq + 1;
	out->op.kind = XR_OP_COUNTER;
	out->op.width = f.width;
	out->op.flags = f.big_endian ? XR_OPF_BIG_ENDIAN : 0;
	out->where = f.where;
	out->field_off = f.off;
	out->proto = f.proto;
	if (f.where == W_IP_SRC || f.where == W_IP_DST) {
		uint64_t base, count;

		if (relative || addr_parse_range4(val, &base, &count))
			return bad_spec(spec, opt,
					"not an IPv4 address, A.B.C.D/P or A.B.C.D-E.F.G.H");
		out->op.base = base;
		out->op.modulus = count;
		out->op.step = 1;
		return 0;
	}
	if (f.where == W_IP6_SRC || f.where == W_IP6_DST) {
		uint64_t base, count;

		if (relative || addr_parse_range6(val, &base, &count, out->ip6_high))
			return bad_spec(spec, opt, "not an IPv6 PREFIX/P with P from 64 to 128");
		out->op.base = base;
		out->op.modulus = count;
		out->op.step = 1;
		out->ip6_check = true;
		return 0;
	}
	if ((f.where == W_SPORT || f.where == W_DPORT) && !relative && strncmp(val, "seq", 3)) {
		if (parse_port_range(val, &out->op.base, &out->op.modulus))
			return bad_spec(spec, opt,
					"not a port or a range LO-HI (0-65535, LO <= HI)");
		out->op.step = 1;
		return 0;
	}
	/* FIELD=seq[/DIV][%MOD]: the sequence number; FIELD+=STEP[/DIV][%MOD]: captured + n * STEP */
	len = strcspn(val, "/%");
	snprintf(num, sizeof(num), "%.*s", (int)(len < sizeof(num) ? len : sizeof(num) - 1), val);
	if (relative) {
		out->op.flags |= XR_OPF_RELATIVE;
		if (parse_u64(num, &out->op.step))
			return bad_spec(spec, opt, "STEP is not a number");
	} else if (!strcmp(num, "seq")) {
		out->op.step = 1;
	} else if (!parse_u64(num, &out->op.base) && len == strlen(val)) {
		/* FIELD=CONST: written once into every frame as the set is built, not per packet */
		if (f.width < 8 && out->op.base >> (f.width * 8))
			return bad_spec(spec, opt, "the constant is larger than the field");
		out->constant = true;
		return 0;
	} else {
		return bad_spec(
			spec, opt,
			"not FIELD=seq[/DIV][%MOD], FIELD+=STEP[/DIV][%MOD] or FIELD=CONST (e.g. "
			"ip.id=seq, u32be@42+=1, u16be@12=0x0800)");
	}
	for (val += len; *val;) {
		char sep = *val++;
		__u64 x;

		len = strcspn(val, "/%");
		snprintf(num, sizeof(num), "%.*s", (int)(len < sizeof(num) ? len : sizeof(num) - 1),
			 val);
		if (parse_u64(num, &x) || !x)
			return bad_spec(spec, opt,
					sep == '/' ? "DIV is not a number above 0" :
						     "MOD is not a number above 0");
		if (sep == '/')
			out->op.divisor = x;
		else
			out->op.modulus = x;
		val += len;
	}
	if (f.width < 8 && out->op.modulus > (1ULL << (f.width * 8)))
		return bad_spec(spec, opt, "modulus larger than the field");
	if (out->op.modulus > (1ULL << 32) && out->op.step > 1 && out->op.divisor > 1)
		return bad_spec(spec, opt, "a modulus above 2^32 with a divisor needs step 1");
	return 0;
}

/* Where the L4 checksum lies, and whether it covers the addresses (a pseudo-header): not ICMPv4's. */
static unsigned int l4_csum_at(const struct layout *l)
{
	return l->l4 + (l->proto == IPPROTO_UDP ? 6 : l->proto == IPPROTO_TCP ? 16 : 2);
}

static bool l4_pseudo_header(const struct layout *l)
{
	return l->proto != IPPROTO_ICMP;
}

/* Offset of the field in a frame of layout l; -1 when the frame has no such field. */
static int field_offset(const struct rewrite_spec *sp, const struct layout *l)
{
	switch (sp->where) {
	case W_ABS: return (int)sp->field_off;
	case W_IP_ID: return l->ipver == 4 ? (int)l->l3 + 4 : -1;
	case W_IP_SRC: return l->ipver == 4 ? (int)l->l3 + 12 : -1;
	case W_IP_DST: return l->ipver == 4 ? (int)l->l3 + 16 : -1;
	case W_IP6_SRC: return l->ipver == 6 ? (int)l->l3 + 16 : -1;
	case W_IP6_DST: return l->ipver == 6 ? (int)l->l3 + 32 : -1;
	case W_SPORT:
	case W_DPORT:
		if (!l->l4)
			return -1;
		/* icmp.id and icmp.seq: an echo request or reply's, ICMPv4 or ICMPv6 */
		if (sp->proto == IPPROTO_ICMP)
			return (l->proto == IPPROTO_ICMP || l->proto == IPPROTO_ICMPV6) ?
				       (int)l->l4 + (sp->where == W_SPORT ? 4 : 6) :
				       -1;
		return l->proto == sp->proto ? (int)l->l4 + (sp->where == W_SPORT ? 0 : 2) : -1;
	case W_PAYLOAD: return l->l4 ? (int)(l->l4_end + sp->field_off) : -1;
	}
	return -1;
}

static int plan_fail(const struct rewrite_spec *sp, size_t frame, const char *why)
{
	if (frame)
		pr_warn("--rewrite %s: frame %zu %s\n", sp->text, frame, why);
	else
		pr_warn("--rewrite %s: %s\n", sp->text, why);
	return -EINVAL;
}

/* Whether frame b fits every spec, and laid out as ref (when given) where the specs write. */
static bool frame_fits(const struct rewrite_spec *specs, int nspecs, const uint8_t *b, uint32_t len,
		       const struct layout *ref, const uint8_t *ref_b, uint32_t ref_len,
		       struct layout *l)
{
	struct layout rl;

	frame_layout(b, len, l);
	if (ref) {
		if (l->l3 != ref->l3 || l->l4 != ref->l4 || l->proto != ref->proto ||
		    l->ipver != ref->ipver)
			return false;
		frame_layout(ref_b, ref_len, &rl);
	}
	for (int i = 0; i < nspecs; i++) {
		const struct rewrite_spec *sp = &specs[i];
		int off;

		if (sp->csum_only) {
			if (!l->ipver)
				return false;
			continue;
		}
		off = field_offset(sp, l);
		if (off < 0 || (uint32_t)off + sp->op.width > len ||
		    (sp->ip6_check && memcmp(b + off - 8, sp->ip6_high, 8)) ||
		    (ref && off != field_offset(sp, &rl)))
			return false;
	}
	return true;
}

/*
 * The frames the specs do not fit, or that are laid out unlike the first that
 * fits (one plan serves all): marked in fs->unplanned when keep, else taken
 * out of fs. The number of them; 0 when none fits at all (rewrite_plan names
 * the first frame then).
 */
static size_t misfits(const struct rewrite_spec *specs, int nspecs, struct frameset *fs, bool keep)
{
	const struct fs_frame *ref = NULL;
	struct layout l0, l;
	size_t kept = 0, n = fs->n, marked = 0;
	const uint8_t *ref_b;
	uint32_t ref_len;

	for (size_t fi = 0; fi < fs->n && !ref; fi++)
		if (frame_fits(specs, nspecs, fs->bytes + fs->frames[fi].off, fs->frames[fi].len,
			       NULL, NULL, 0, &l0))
			ref = &fs->frames[fi];
	if (!ref)
		return 0;
	ref_b = fs->bytes + ref->off;
	ref_len = ref->len;
	if (keep && !fs->unplanned && !(fs->unplanned = calloc((fs->n + 7) / 8, 1)))
		return 0; /* out of memory: the plan refuses the misfits as it would without */
	for (size_t fi = 0; fi < n; fi++) {
		bool fits = frame_fits(specs, nspecs, fs->bytes + fs->frames[fi].off,
				       fs->frames[fi].len, &l0, ref_b, ref_len, &l);

		if (keep && !fits) {
			fs->unplanned[fi / 8] |= 1 << (fi % 8);
			marked++;
		} else if (!keep && fits) {
			fs->frames[kept++] = fs->frames[fi];
		}
	}
	if (keep)
		return marked;
	fs->n = kept;
	return n - kept;
}

size_t rewrite_keep_fitting(const struct rewrite_spec *specs, int nspecs, struct frameset *fs)
{
	return misfits(specs, nspecs, fs, false);
}

size_t rewrite_mark_unfit(const struct rewrite_spec *specs, int nspecs, struct frameset *fs)
{
	return misfits(specs, nspecs, fs, true);
}

int rewrite_plan(const struct rewrite_spec *specs, int nspecs, const struct frameset *fs,
		 struct xr_op *ops)
{
	struct layout l0 = {}, l;
	int nops = 0;

	for (int i = 0; i < nspecs; i++) {
		const struct rewrite_spec *sp = &specs[i];
		struct xr_op *op = &ops[nops];
		unsigned int end;

		if (sp->applied)
			continue; /* a constant, written into the frames already */
		if (sp->csum_only) {
			for (size_t fi = 0; fi < fs->n; fi++) {
				if (frameset_unplanned(fs, fi))
					continue;
				frame_layout(fs->bytes + fs->frames[fi].off, fs->frames[fi].len,
					     &l);
				if (!l.ipver)
					return plan_fail(sp, fi + 1,
							 "is not IP: it has no checksum to fix");
			}
			continue;
		}
		if (nops >= XR_MAX_OPS)
			return plan_fail(
				sp, 0,
				"too many per-packet ops (" XR_STR(
					XR_MAX_OPS) " at most; FIELD=CONST ones do not count)");
		*op = sp->op;
		/* one plan serves every frame: each must have the same layout where it matters */
		for (size_t fi = 0, first = 1; fi < fs->n; fi++) {
			const struct fs_frame *fr = &fs->frames[fi];
			const uint8_t *b = fs->bytes + fr->off;
			int off;

			if (frameset_unplanned(fs, fi))
				continue; /* --misfit send: this one goes as it is */
			frame_layout(b, fr->len, &l);
			off = field_offset(sp, &l);
			if (off < 0)
				return plan_fail(
					sp, fi + 1,
					sp->where == W_SPORT || sp->where == W_DPORT ?
						"has no header of that protocol" :
					sp->where == W_PAYLOAD ?
						"has no UDP or TCP header" :
						"has no such field (not that IP version?)");
			if ((uint32_t)off + op->width > fr->len) {
				char why[96];

				snprintf(why, sizeof(why), "is %u bytes long: the field ends at %u",
					 fr->len, off + op->width);
				return plan_fail(sp, fi + 1, why);
			}
			if (sp->ip6_check && memcmp(b + off - 8, sp->ip6_high, 8))
				return plan_fail(
					sp, fi + 1,
					"has an address outside the prefix's upper 64 bits");
			if (first) {
				first = 0;
				l0 = l;
				op->off = off;
			} else if (off != op->off || l.l3 != l0.l3 || l.l4 != l0.l4 ||
				   l.proto != l0.proto || l.ipver != l0.ipver) {
				return plan_fail(
					sp, fi + 1,
					"is laid out unlike frame 1 (one plan serves all frames)");
			}
		}
		end = op->off + op->width;
		if (l0.ipver && (l0.l3 % 2 || l0.l4 % 2))
			return plan_fail(sp, 0, "headers at odd offsets are not supported");
		/* the checksums that cover the field */
		if (l0.ipver == 4 && op->off < l0.l3 + 20u && end > l0.l3) {
			if (op->off < l0.l3 || end > l0.l3 + 20u)
				return plan_fail(sp, 0,
						 "the field straddles the IPv4 header's boundary");
			if (op->off < l0.l3 + 12u && end > l0.l3 + 10u)
				return plan_fail(sp, 0,
						 "the field overlaps the IPv4 header checksum");
			op->ip_csum_off = l0.l3 + 10;
			/* the addresses are in the UDP/TCP pseudo-header too */
			if (end > l0.l3 + 12u && l0.l4 && l4_pseudo_header(&l0)) {
				op->l4_csum_off = l4_csum_at(&l0);
				op->l4_proto = l0.proto;
			}
		} else if (l0.ipver == 6 && op->off < l0.l3 + 40u && end > l0.l3) {
			if (op->off < l0.l3 + 8u || end > l0.l3 + 40u)
				return plan_fail(
					sp, 0,
					"only the IPv6 addresses may be rewritten in the IPv6 header");
			if (l0.l4) {
				op->l4_csum_off = l4_csum_at(&l0);
				op->l4_proto = l0.proto;
			}
		} else if (l0.l4 && op->off >= l0.l4) {
			uint16_t csum_at = l4_csum_at(&l0);

			if (op->off < csum_at + 2u && end > csum_at)
				return plan_fail(sp, 0, "the field overlaps the UDP/TCP checksum");
			op->l4_csum_off = csum_at;
			op->l4_proto = l0.proto;
		} else if (l0.ipver && end > l0.l3 && op->off < l0.l3) {
			return plan_fail(sp, 0, "the field straddles the Ethernet and IP headers");
		}
		nops++;
	}
	/* ops on the same 16-bit words would each start from the template's words */
	for (int i = 0; i < nops; i++)
		for (int j = 0; j < i; j++)
			if ((ops[i].off & ~1U) < ((ops[j].off + ops[j].width + 1U) & ~1U) &&
			    (ops[j].off & ~1U) < ((ops[i].off + ops[i].width + 1U) & ~1U)) {
				pr_warn("--rewrite: two fields share bytes (at %u and %u): rewrite each byte once\n",
					ops[j].off, ops[i].off);
				return -EINVAL;
			}
	return nops;
}

int rewrite_constants(struct rewrite_spec *specs, int nspecs, struct frameset *fs)
{
	int applied = 0;

	for (int i = 0; i < nspecs; i++) {
		struct rewrite_spec *sp = &specs[i];
		struct xr_op op;

		if (!sp->constant || sp->applied)
			continue;
		/* the same checks and checksum offsets as a per-packet op, then applied for n = 0 */
		if (rewrite_plan(sp, 1, fs, &op) < 0)
			return -EINVAL;
		for (size_t fi = 0; fi < fs->n; fi++)
			if (!frameset_unplanned(fs, fi))
				rewrite_apply(&op, 1, fs->bytes + fs->frames[fi].off,
					      fs->frames[fi].len, 0);
		sp->applied = true;
		applied++;
	}
	return applied;
}

void rewrite_nocopy(struct xr_op *ops, int nops, const uint8_t *f, uint32_t len,
		    struct xr_nocopy *nc)
{
	memset(nc, 0, sizeof(*nc));
	for (int i = 0; i < nops; i++) {
		struct xr_op *op = &ops[i];
		unsigned int first = op->off & ~1U,
			     span = ((op->off + op->width + 1U) & ~1U) - first;
		/* rewrite_plan put every field inside the frame; never read past it whatever came in */
		unsigned int have = first >= len ? 0 : first + span > len ? len - first : span;

		memset(op->orig, 0, sizeof(op->orig));
		memcpy(op->orig, f + first, have);
		op->nc_len = have;
		/* one frame: every op names the same two checksums */
		if (op->ip_csum_off)
			nc->csum_off[0] = op->ip_csum_off;
		if (op->l4_csum_off) {
			nc->csum_off[1] = op->l4_csum_off;
			nc->udp = op->l4_proto == IPPROTO_UDP;
		}
	}
	for (int c = 0; c < 2; c++)
		if (nc->csum_off[c])
			memcpy(&nc->csum_orig[c], f + nc->csum_off[c], 2);
}

static uint16_t csum_replace(uint16_t csum, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~csum + (uint16_t)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/*
 * The checksum at `at` updated for span bytes of 16-bit words that changed
 * from old to new (RFC 1624); a UDP checksum of 0 means none and stays so.
 */
static void csum_update(uint8_t *f, uint16_t at, const uint8_t *old, const uint8_t *new, int span,
			bool udp)
{
	uint16_t c = get16(f + at);

	if (udp && !c)
		return;
	for (int i = 0; i < span; i += 2)
		c = csum_replace(c, get16(old + i), get16(new + i));
	if (udp && !c)
		c = 0xffff;
	f[at] = c >> 8;
	f[at + 1] = c & 0xff;
}

void rewrite_apply(const struct xr_op *ops, int nops, uint8_t *f, uint32_t len, uint64_t n)
{
	for (int i = 0; i < nops; i++) {
		const struct xr_op *op = &ops[i];
		unsigned int w = op->width, first = op->off & ~1U,
			     span = ((op->off + w + 1) & ~1U) - first;
		bool be = op->flags & XR_OPF_BIG_ENDIAN;
		uint8_t old[10] = {}, new[10] = {};
		/* rewrite_plan put every field inside the frame; never read past it whatever came in */
		unsigned int have = first >= len ? 0 : first + span > len ? len - first : span;
		uint64_t base = 0, v;

		if (op->off + w > len)
			continue;
		/* past the end of an odd-length frame the checksum counts a zero byte */
		memcpy(old, f + first, have);
		if (op->flags & XR_OPF_RELATIVE) {
			for (unsigned int b = 0; b < w; b++)
				base |= (uint64_t)f[op->off + b] << (be ? 8 * (w - 1 - b) : 8 * b);
		} else {
			base = op->base;
		}
		/* exactly ((n / divisor) * step) mod modulus */
		v = op->divisor > 1 ? n / op->divisor : n;
		v = op->modulus ? (uint64_t)((unsigned __int128)v * op->step % op->modulus) :
				  v * op->step;
		v += base;
		for (unsigned int b = 0; b < w; b++)
			f[op->off + b] = v >> (be ? 8 * (w - 1 - b) : 8 * b);
		memcpy(new, f + first, have);
		if (op->ip_csum_off)
			csum_update(f, op->ip_csum_off, old, new, span, false);
		if (op->l4_csum_off)
			csum_update(f, op->l4_csum_off, old, new, span,
				    op->l4_proto == IPPROTO_UDP);
	}
}

void rewrite_spec_src(struct rewrite_spec *sp, const struct addr_range *r)
{
	char a[INET6_ADDRSTRLEN];
	uint8_t first[16];

	memset(sp, 0, sizeof(*sp));
	sp->op = (struct xr_op){ .kind = XR_OP_COUNTER,
				 .flags = XR_OPF_BIG_ENDIAN,
				 .base = r->base,
				 .step = 1,
				 .modulus = r->count };
	addr_range_first(r, first);
	inet_ntop(r->ipv6 ? AF_INET6 : AF_INET, first, a, sizeof(a));
	if (r->ipv6) {
		sp->where = W_IP6_SRC;
		sp->op.width = 8;
		sp->ip6_check = true;
		memcpy(sp->ip6_high, r->high, 8);
	} else {
		sp->where = W_IP_SRC;
		sp->op.width = 4;
	}
	/* for the report: what the plan does, not text to parse */
	snprintf(sp->text, sizeof(sp->text), "%s=%s+%llu", r->ipv6 ? "ip6.src" : "ip.src", a,
		 (unsigned long long)r->count);
}

void rewrite_spec_sport(struct rewrite_spec *sp, uint8_t proto, const struct port_range *p,
			uint64_t divisor)
{
	memset(sp, 0, sizeof(*sp));
	sp->op = (struct xr_op){ .kind = XR_OP_COUNTER,
				 .width = 2,
				 .flags = XR_OPF_BIG_ENDIAN,
				 .base = p->lo,
				 .step = 1,
				 .modulus = (uint64_t)p->hi - p->lo + 1,
				 .divisor = divisor };
	sp->where = W_SPORT;
	sp->proto = proto;
	snprintf(sp->text, sizeof(sp->text), "%s=%u-%u",
		 proto == IPPROTO_TCP  ? "tcp.sport" :
		 proto == IPPROTO_ICMP ? "icmp.id" :
					 "udp.sport",
		 p->lo, p->hi);
	if (divisor > 1)
		snprintf(sp->text + strlen(sp->text), sizeof(sp->text) - strlen(sp->text), "/%llu",
			 (unsigned long long)divisor);
}
