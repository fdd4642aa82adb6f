/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rewrite plan in the kernel engine: each op sets a field of the frame
 * to a pure function of the sequence number n and fixes the checksums that
 * cover it (RFC 1624). One vocabulary with user/frames/rewrite.c, the
 * reference that xdpreplay selftest holds this code against byte for byte.
 * Included by gen.bpf.c after its cfg (struct xr_gen_cfg).
 */
#ifndef __XR_PLAN_BPF_H
#define __XR_PLAN_BPF_H

/* Updates the checksum at csum_off for the 16-bit words that changed from old to new. */
static __always_inline int fix_csum(struct xdp_md *ctx, __u16 csum_off, const __u16 *old,
				    const __u16 *new, int words, bool udp)
{
	__u16 c;

	if (bpf_xdp_load_bytes(ctx, csum_off, &c, 2))
		return -1;
	/* a UDP checksum of zero means "none": it stays none */
	if (udp && !c)
		return 0;
	for (int i = 0; i < 5; i++)
		if (i < words)
			c = csum_replace(c, old[i], new[i]);
	if (udp && !c)
		c = 0xffff;
	return bpf_xdp_store_bytes(ctx, csum_off, &c, 2);
}

/* ((n / divisor) * step) mod modulus: from the slot's running value where it keeps one */
static __always_inline __u64 op_value(const volatile struct xr_op *op, const struct xr_gen_slot *s,
				      int i, __u64 n)
{
	__u64 v;

	/* a shard of uplinks heard by several gateways does not step n evenly: divide */
	if (op->divisor <= 1 && i < XR_MAX_OPS && !(cfg.shards > 1 && cfg.frame_div > 1))
		return s->op_val[i];
	v = op->divisor > 1 ? n / op->divisor : n;
	if (!op->modulus)
		return v * op->step;
	/* exact: the plan allows a modulus above 2^32 only with step 1 */
	return (v % op->modulus) * (op->step % op->modulus) % op->modulus;
}

/* Moves the running values on to this thread's next n. */
static __always_inline void op_advance(struct xr_gen_slot *s)
{
	for (int i = 0; i < XR_MAX_OPS; i++) {
		__u64 m = cfg.ops[i].modulus, v;

		if (i >= cfg.nops)
			break;
		v = s->op_val[i] + s->op_inc[i];
		/* both terms are below m: one subtraction brings the sum back */
		if (m && (v >= m || v < s->op_val[i]))
			v -= m;
		s->op_val[i] = v;
	}
}

/*
 * The op's field inside the words it touches: `old` holds them as they were,
 * `new` receives them with the field set to pre (((n / div) * step) mod m)
 * plus the base (the captured value for XR_OPF_RELATIVE). rel is the field's
 * offset in the words (0 or 1).
 */
static __always_inline void set_field(const volatile struct xr_op *op, const __u8 *old, __u8 *new,
				      __u32 rel, __u64 pre)
{
	__u32 width = op->width;
	__u64 base = 0, v;

	if (op->flags & XR_OPF_RELATIVE) {
		for (int b = 0; b < 8; b++) {
			if (b >= width)
				break;
			/* most significant byte first */
			base = base << 8 |
			       old[rel + ((op->flags & XR_OPF_BIG_ENDIAN) ? b : width - 1 - b)];
		}
	} else {
		base = op->base;
	}
	v = pre + base;
	for (int b = 0; b < 8; b++) {
		if (b >= width)
			break;
		/* byte b of the value, least significant first */
		new[rel + ((op->flags & XR_OPF_BIG_ENDIAN) ? width - 1 - b : b)] = v >> (8 * b);
	}
}

static __always_inline int apply_op(struct xdp_md *ctx, int i, __u64 pre)
{
	const volatile struct xr_op *op = &cfg.ops[i];
	/* the 16-bit words the field touches: up to 10 bytes for 8 at an odd offset */
	union {
		__u16 w[6];
		__u8 b[12];
	} old = {}, new = {};
	__u32 width = op->width, at = op->off & ~1U, rel = op->off & 1U;
	__u32 span = (rel + width + 1) & ~1U, flen = ctx->data_end - ctx->data, load = span;

	if (op->kind != XR_OP_COUNTER || width < 1 || width > 8 || span > 10)
		return -1;
	/* a field ending an odd-length frame: its last word is padded with zero */
	if (at + span > flen)
		load = span - 1;
	if (load < 1 || load > 10 || at + load > flen)
		return -1;
	if (bpf_xdp_load_bytes(ctx, at, &old, load))
		return -1;
	new = old;
	set_field(op, old.b, new.b, rel, pre);
	if (bpf_xdp_store_bytes(ctx, at, &new, load))
		return -1;
	if (op->ip_csum_off && fix_csum(ctx, op->ip_csum_off, old.w, new.w, span / 2, false))
		return -1;
	if (op->l4_csum_off &&
	    fix_csum(ctx, op->l4_csum_off, old.w, new.w, span / 2, op->l4_proto == IPPROTO_UDP))
		return -1;
	return 0;
}

/*
 * The plan on a single-frame set, without copying the frame: every op writes
 * the words it touches from the template's (op->orig), and the checksums are
 * carried from the template's values through each op and written at the end:
 * absolute values, whatever a recycled page held before.
 */
static __always_inline int apply_ops_nocopy(struct xdp_md *ctx, const struct xr_gen_slot *s,
					    __u64 n)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	/* RFC 1624: HC' = ~(~HC + sum of (~m + m')) over the changed words; folded once at the end */
	__u32 d0 = (__u16)~cfg.nc.csum_orig[0], d1 = (__u16)~cfg.nc.csum_orig[1];
	__u16 *w, c;

	for (int i = 0; i < XR_MAX_OPS; i++) {
		const volatile struct xr_op *op = &cfg.ops[i];
		union {
			__u16 w[5];
			__u8 b[10];
		} old = {}, new = {};
		__u32 width = op->width, at = op->off & ~1U, rel = op->off & 1U, len = op->nc_len;
		__u64 base = 0, v;
		__u8 *p = data + at;

		if (i >= cfg.nops)
			break;
		/*
		 * The common case (ports, addresses, IDs: 2 or 4 bytes, big-endian, at
		 * an even offset) in a few instructions: one store, a word or two of
		 * checksum arithmetic.
		 */
		if (!rel && (op->flags & XR_OPF_BIG_ENDIAN) && (width == 2 || width == 4)) {
			union {
				__u8 b[4];
				__u16 w[2];
			} o = { .b = { op->orig[0], op->orig[1], op->orig[2], op->orig[3] } };
			__u16 o0 = o.w[0], o1 = o.w[1], n0, n1;
			__u32 dd;

			if ((void *)(p + width) > data_end)
				return -1;
			if (op->flags & XR_OPF_RELATIVE)
				base = width == 2 ? bpf_ntohs(o0) :
						    (__u32)bpf_ntohs(o0) << 16 | bpf_ntohs(o1);
			else
				base = op->base;
			v = op_value(op, s, i, n) + base;
			if (width == 2) {
				n0 = bpf_htons(v);
				*(__u16 *)p = n0;
				dd = (__u16)~o0 + n0;
			} else {
				__u32 nv = bpf_htonl(v);

				*(__u32 *)p = nv;
				/* the two words as they lie in memory */
				n0 = ((__u16 *)&nv)[0];
				n1 = ((__u16 *)&nv)[1];
				dd = (__u16)~o0 + n0 + (__u16)~o1 + n1;
			}
			/* the same words change in every checksum that covers them */
			if (op->ip_csum_off)
				d0 += dd;
			if (op->l4_csum_off)
				d1 += dd;
			continue;
		}
		if (width < 1 || width > 8 || len > 10 || (void *)(p + len) > data_end)
			return -1;
		for (int b = 0; b < 10; b++)
			old.b[b] = op->orig[b];
		new = old;
		set_field(op, old.b, new.b, rel, op_value(op, s, i, n));
		for (int b = 0; b < 10; b++) {
			/* the verifier checked p + len against data_end above */
			if (b < len && (void *)(p + b + 1) <= data_end)
				p[b] = new.b[b];
		}
		for (int j = 0; j < 5; j++) {
			if (j * 2 >= (rel + width + 1) / 2 * 2)
				break;
			if (op->ip_csum_off)
				d0 += (__u16)~old.w[j] + new.w[j];
			if (op->l4_csum_off)
				d1 += (__u16)~old.w[j] + new.w[j];
		}
	}
	if (cfg.nc.csum_off[0]) {
		w = data + cfg.nc.csum_off[0];
		if ((void *)(w + 1) > data_end)
			return -1;
		*w = fold_csum(d0);
	}
	/* a UDP checksum of zero means "none": it stays none */
	if (cfg.nc.csum_off[1] && !(cfg.nc.udp && !cfg.nc.csum_orig[1])) {
		w = data + cfg.nc.csum_off[1];
		if ((void *)(w + 1) > data_end)
			return -1;
		c = fold_csum(d1);
		*w = cfg.nc.udp && !c ? 0xffff : c;
	}
	return 0;
}

#endif /* __XR_PLAN_BPF_H */
