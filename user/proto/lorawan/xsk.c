// SPDX-License-Identifier: GPL-2.0
/*
 * LoRaWAN uplinks for the xsk engine, finished in userspace from the AES-NI
 * ring: what lora_rewrite (bpf/proto/lorawan.bpf.h) does to an uplink the
 * ring holds (token, tmst, the gateway's EUI and address, the UDP checksum,
 * the precomputed characters), without a BPF_PROG_RUN call per frame.
 * A join storm's JoinRequests likewise (as the frame set holds them, stamped
 * for their JoinAccepts as lora_stamp_join does). Whatever else the program
 * does (confirmed devices' stamps, an uplink the producer has not reached)
 * stays the program's: -EAGAIN hands the frame back to it. Selftest holds
 * these frames against lw_ref_frame.
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

/* tmst's digits' share of the UDP sum at frame offset off: the even digits are high bytes when off is */
static uint32_t tmst_sum(const struct lw_xsk_thread *th, uint16_t off)
{
	return off & 1 ? (th->tmst_odd << 8) + th->tmst_even : (th->tmst_even << 8) + th->tmst_odd;
}

/* The token (n's low 16 bits, which the PUSH_ACK echoes) and the UDP checksum from its sum */
static void token_and_csum(uint8_t *frame, uint64_t n, uint32_t sum)
{
	uint16_t c = ~xr_lora_csum_fold(sum + (uint32_t)(n & 0xffff));

	/* a computed zero is sent as all ones: zero means "no checksum" */
	if (!c)
		c = 0xffff;
	frame[XR_LORA_PUSH_DATA_OFF + 1] = n;
	frame[XR_LORA_PUSH_DATA_OFF + 2] = n >> 8;
	frame[XR_LORA_UDP_CHECK_OFF] = c >> 8;
	frame[XR_LORA_UDP_CHECK_OFF + 1] = c;
}

/*
 * Device d's JoinRequest as the frame set built it, copy k of uplink u: tmst,
 * the gateway, token and checksum, as lora_rewrite writes a JoinRequest; the
 * first copy stamps the device's departure (lora_stamp_join) before it leaves.
 */
static int join_build(struct lw_kernel *lk, struct lw_xsk_thread *th, uint64_t n, uint64_t u,
		      uint32_t k, uint8_t *frame, uint32_t len, uint16_t *tag)
{
	const struct lw_fleet *f = lk->fleet;
	size_t d = u % f->ndev;
	const struct xr_lora_dev *dev;
	struct xr_lora_join *j;
	uint32_t sum;

	if (!lk->devs || !lk->join_map || (d + 1) * sizeof(*dev) > lk->devs_sz ||
	    (d + 1) * sizeof(*j) > lk->join_sz)
		return -EINVAL;
	dev = &lk->devs[d];
	j = &lk->join_map[d];
	if (len < XR_LORA_PUSH_DATA_OFF + 12 || dev->tmst_off + 10u > len)
		return -EINVAL;
	if (th->u != u + 1) {
		th->u = u + 1;
		thread_tmst(th);
	}
	sum = dev->csum_rest + tmst_sum(th, dev->tmst_off);
	if (f->heard_by > 1)
		sum += gateway_write(f, dev->gw[k], frame);
	token_and_csum(frame, n, sum);
	memcpy(frame + dev->tmst_off, th->digits, 10);
	*tag = dev->gw[k];
	if (!k) {
		__atomic_store_n(&j->tmst, th->tmst, __ATOMIC_RELAXED);
		__atomic_store_n(&j->sent_ns, now_ns(), __ATOMIC_RELAXED);
		__atomic_fetch_add(&j->requests, 1, __ATOMIC_RELAXED);
	}
	return 0;
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

	if (k >= XR_LORA_MAX_HEARD)
		return -EAGAIN;
	if (f->joining)
		return join_build(lk, th, n, u, k, frame, len, tag);
	if (!lk->ring || lk->confirmed_map)
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
	sum = slot.csum + tmst_sum(th, slot.tmst_off);
	if (f->heard_by > 1)
		sum += gateway_write(f, slot.gw[k], frame);
	token_and_csum(frame, n, sum);
	memcpy(frame + slot.tmst_off, th->digits, 10);
	memcpy(frame + slot.b64_off + 8, slot.b64, slot.chars);
	*tag = slot.gw[k];
	return 0;
}
