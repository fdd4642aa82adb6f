/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen tcp's per-session fields ({c}, {k}: bpf/shared/tcp.h) written into the
 * part of a request a segment carries. xdpreplay selftest holds it against
 * user/proto/tcp/tcp.c's own writing of the same.
 */
#ifndef __XR_PROTO_FIELDS_BPF_H
#define __XR_PROTO_FIELDS_BPF_H

/* Request s->k's bytes [off, off + len) in seg (2048 bytes), the fields of f written in. */
static __always_inline void tcp_fields_patch(const struct xr_tcp_fields *f,
					     const struct xr_tcp_session *s, __u8 *seg, __u32 off,
					     __u32 len)
{
	for (int i = 0; i < XR_TCP_FIELDS; i++) {
		__u32 v, at = f->off[i];

		if (f->kind[i] == XR_TCP_FIELD_NONE)
			break;
		v = f->kind[i] == XR_TCP_FIELD_C ? s->c32 : s->k;
		for (int j = XR_TCP_DIGITS - 1; j >= 0; j--) {
			__u32 ro = at + j;

			if (ro >= off && ro - off < len)
				seg[(ro - off) & 2047] = '0' + v % 10;
			v /= 10;
		}
	}
}

#endif /* __XR_PROTO_FIELDS_BPF_H */
