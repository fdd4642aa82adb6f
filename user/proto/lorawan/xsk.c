// SPDX-License-Identifier: GPL-2.0
/*
 * LoRaWAN uplinks for the xsk engine, finished in userspace from the AES-NI
 * ring: what lora_rewrite (bpf/proto/lorawan.bpf.h) does to an uplink the
 * ring holds (token, tmst, the gateway's EUI and address, the UDP checksum,
 * the precomputed characters), without a BPF_PROG_RUN call per frame.
 * Whatever else the program does (a join storm, confirmed devices' stamps, an
 * uplink the producer has not reached) stays the program's: -EAGAIN hands the
 * frame back to it. Selftest holds these frames against lw_ref_frame.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include "util/time.h"
#include "proto/lorawan/kernel.h"

/* as lora_tmst: the clock read again every XR_LORA_TMST_EVERY uplinks (the builder does not pace) */
#define LW_TMST_EVERY 16

static void thread_tmst(struct lw_xsk_thread *th)
{
	uint32_t v, even = 0, odd = 0;

	if (th->tmst && ++th->tmst_age < LW_TMST_EVERY)
		return;
	th->tmst_age = 0;
	v = 1000000000U + (uint32_t)((now_ns() / 1000) & 0x7fffffff);
	if (v == th->tmst)
		return;
	th->tmst = v;
	for (int i = 9; i >= 0; i--) {
		th->digits[i] = '0' + v % 10;
		if (i & 1)
			odd += th->digits[i];
		else
			even += th->digits[i];
		v /= 10;
	}
	th->tmst_even = even;
	th->tmst_odd = odd;
}

/*
 * Gateway g's EUI at the PUSH_DATA's byte 4 and, with addresses of their own,
 * its source address and port with the IPv4 checksum updated (RFC 1624):
 * what the UDP sum gains, in the big-endian word form of csum_rest. As
 * lora_rewrite and lora_gw_address sum 16-bit loads as they are and swap
 * the folded result once.
 */
static uint32_t gateway_write(const struct lw_fleet *f, uint16_t g, uint8_t *frame)
{
	const struct lw_gateway *gw = &f->gw[g];
	uint16_t w[4], old[2], new[2], check, sport = htons(gw->sport), uh_sport;
	uint32_t sum = 0, d;

	memcpy(w, gw->eui, 8);
	d = xr_lora_csum_fold((uint32_t)w[0] + w[1] + w[2] + w[3]);
	sum += (d >> 8 | d << 8) & 0xffff;
	memcpy(frame + XR_LORA_PUSH_DATA_OFF + 4, gw->eui, 8);
	if (!f->gw_addrs)
		return sum;
	/* the IPv4 header at 14 (source at +12, checksum at +10), the UDP source port at 34 */
	memcpy(old, frame + 26, 4);
	memcpy(new, &gw->saddr, 4);
	memcpy(&check, frame + 24, 2);
	memcpy(&uh_sport, frame + 34, 2);
	d = (uint16_t)~old[0] + (uint16_t)~old[1] + new[0] + new[1];
	check = ~xr_lora_csum_fold((uint16_t)~check + d);
	d += (uint16_t)~uh_sport + sport;
	memcpy(frame + 24, &check, 2);
	memcpy(frame + 26, &gw->saddr, 4);
	memcpy(frame + 34, &sport, 2);
	d = xr_lora_csum_fold(d);
	return sum + ((d >> 8 | d << 8) & 0xffff);
}

int lw_xsk_build(void *ctx, struct xr_gen_slot *s, uint64_t n, uint8_t *frame, uint32_t len,
		 uint16_t *tag)
{
	struct lw_kernel *lk = ctx;
	const struct lw_fleet *f = lk->fleet;
	uint64_t u = f->heard_by > 1 ? n / f->heard_by : n;
	uint32_t k = n - u * f->heard_by, sum;
	struct lw_xsk_thread *th = &lk->xsk[s->thread % XR_MAX_CPUS];
	const struct xr_lora_ring_slot *rs;
	struct xr_lora_ring_slot slot;
	uint16_t c;

	if (!lk->ring || f->joining || lk->confirmed_map || k >= XR_LORA_MAX_HEARD)
		return -EAGAIN;
	/* a shard's uplinks are every N-th: u / N numbers them without gaps */
	rs = &lk->ring[(lk->u_step > 1 ? u / lk->u_step : u) & (LORA_RING_SLOTS - 1)];
	if (__atomic_load_n(&rs->tag, __ATOMIC_ACQUIRE) != u + 1)
		return -EAGAIN;
	memcpy(&slot, rs, sizeof(slot));
	/* the producer clears the tag before it rewrites a slot: unchanged, the copy is whole */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&rs->tag, __ATOMIC_RELAXED) != u + 1)
		return -EAGAIN;
	if (len < XR_LORA_PUSH_DATA_OFF + 12 || slot.tmst_off + 10u > len || slot.chars < 8 ||
	    slot.chars > XR_LORA_RING_CHARS || slot.b64_off + 8u + slot.chars > len)
		return -EINVAL;
	/* a new uplink for this thread: the program refreshes its scratch (and tmst) then */
	if (th->u != u + 1) {
		th->u = u + 1;
		s->hook_ctr[XR_LORA_RING_HITS]++;
		thread_tmst(th);
	}
	sum = slot.tmst_off & 1 ? (th->tmst_odd << 8) + th->tmst_even :
				  (th->tmst_even << 8) + th->tmst_odd;
	if (f->heard_by > 1)
		sum += gateway_write(f, slot.gw[k], frame);
	c = ~xr_lora_csum_fold(slot.csum + (uint32_t)(n & 0xffff) + sum);
	/* a computed zero is sent as all ones: zero means "no checksum" */
	if (!c)
		c = 0xffff;
	frame[XR_LORA_PUSH_DATA_OFF + 1] = n;
	frame[XR_LORA_PUSH_DATA_OFF + 2] = n >> 8;
	frame[XR_LORA_UDP_CHECK_OFF] = c >> 8;
	frame[XR_LORA_UDP_CHECK_OFF + 1] = c;
	memcpy(frame + slot.tmst_off, th->digits, 10);
	memcpy(frame + slot.b64_off + 8, slot.b64, slot.chars);
	*tag = slot.gw[k];
	return 0;
}
