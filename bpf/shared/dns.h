/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen dns's queries and answers (bpf/proto/dns.bpf.h, user/proto/dns/).
 * Query n carries id = n mod 2^16 and leaves from port base + (n / 2^16)
 * mod P (P a power of two, at most XR_DNS_MAX_PORTS): an answer's id and
 * destination port give back n mod 2^16 * P, its slot in send_ts.
 */
#ifndef __XR_SHARED_DNS_H
#define __XR_SHARED_DNS_H

#define XR_DNS_MAX_PORTS 16 /* 2^16 ids x 16 ports = XR_TS_RING queries in flight */
#define XR_DNS_HDR 12

/* xr_replies_stats.ctr[r]: answers with RCODE r (the header's 4 bits) */

#endif /* __XR_SHARED_DNS_H */
