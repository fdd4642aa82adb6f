// SPDX-License-Identifier: GPL-2.0
/*
 * LoRaWAN fleets: ABP or OTAA devices and gateways as a pure function of a seed, and
 * what makes a device valid in its region. Protocol facts and their sources:
 * ../shared/PROTOCOLS.md §1-2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "proto/lorawan/lorawan.h"
#include "util/log.h"
#include "util/splitmix.h"
#include "util/units.h"

const char *const lw_codr_names[] = { "4/5", "4/6", "4/7", "4/8" };

/* a fleet is a pure function of its seed */
static uint64_t rnd(uint64_t *state)
{
	return splitmix64(state);
}

static void rnd_bytes(uint64_t *state, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rnd(state);

		for (size_t j = 0; j < 8 && i + j < len; j++)
			out[i + j] = v >> (8 * j);
	}
}

struct region {
	const char *name;
	uint32_t lo_hz, hi_hz;
	uint32_t chan_hz[8];
	uint32_t wide_hz; /* the 500 kHz uplink channel of the plan, 0 = none */
	const char *drs; /* its uplink data rates, for messages */
};

/* Channel plans (LoRaWAN Regional Parameters): EU868's 8 default channels, US915 sub-band 2. */
static const struct region regions[] = {
	{ "eu868",
	  863000000,
	  870000000,
	  { 868100000, 868300000, 868500000, 867100000, 867300000, 867500000, 867700000,
	    867900000 },
	  0,
	  "SF7-SF12 at 125 kHz, SF7BW250" },
	{ "us915",
	  902000000,
	  928000000,
	  { 903900000, 904100000, 904300000, 904500000, 904700000, 904900000, 905100000,
	    905300000 },
	  904600000,
	  "SF7-SF10 at 125 kHz, SF8BW500 on a 500 kHz channel" },
};

static const struct region *region_of(uint32_t hz)
{
	for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++)
		if (hz >= regions[i].lo_hz && hz <= regions[i].hi_hz)
			return &regions[i];
	return NULL;
}

unsigned int lw_max_payload(uint32_t freq_hz, uint8_t sf, uint16_t bw_khz)
{
	const struct region *r = region_of(freq_hz);

	if (!r)
		return 0;
	if (!strcmp(r->name, "eu868")) {
		/* DR0-5 = SF12-SF7 at 125 kHz, DR6 = SF7 at 250 kHz: N = 51, 51, 51, 115, 222, 222, 222 */
		if (bw_khz == 125 && sf >= 10 && sf <= 12)
			return 51;
		if (bw_khz == 125 && sf == 9)
			return 115;
		if ((bw_khz == 125 && (sf == 8 || sf == 7)) || (bw_khz == 250 && sf == 7))
			return 222;
		return 0;
	}
	/* US915 uplink: DR0-3 = SF10-SF7 at 125 kHz, DR4 = SF8 at 500 kHz: N = 11, 53, 125, 242, 242 */
	if (bw_khz == 125 && sf == 10)
		return 11;
	if (bw_khz == 125 && sf == 9)
		return 53;
	if (bw_khz == 125 && sf == 8)
		return 125;
	if ((bw_khz == 125 && sf == 7) || (bw_khz == 500 && sf == 8))
		return 242;
	return 0;
}

int lw_tx_dr(uint32_t freq_hz, uint8_t sf, uint16_t bw_khz)
{
	const struct region *r = region_of(freq_hz);

	if (!r)
		return -1;
	/* EU868: DR0-5 = SF12-SF7 at 125 kHz, DR6 = SF7 at 250; US915: DR0-3 = SF10-SF7, DR4 = SF8 at 500 */
	if (!strcmp(r->name, "eu868"))
		return bw_khz == 125 && sf >= 7 && sf <= 12 ? 12 - sf :
		       bw_khz == 250 && sf == 7		    ? 6 :
							      -1;
	return bw_khz == 125 && sf >= 7 && sf <= 10 ? 10 - sf : bw_khz == 500 && sf == 8 ? 4 : -1;
}

/*
 * The channel index a network server finds for an uplink's frequency: EU868's
 * channels as the plan lists them (regions[]); US915's 64 channels of 125 kHz
 * from 902.3 MHz by 200 kHz, then 8 of 500 kHz from 903.0 MHz by 1.6 MHz.
 */
int lw_tx_ch(uint32_t hz)
{
	const struct region *r = region_of(hz);

	if (r && !strcmp(r->name, "us915")) {
		if (hz >= 902300000 && (hz - 902300000) % 200000 == 0 && hz <= 914900000)
			return (hz - 902300000) / 200000;
		if (hz >= 903000000 && (hz - 903000000) % 1600000 == 0 && hz <= 914200000)
			return 64 + (hz - 903000000) / 1600000;
		return -1;
	}
	return lw_chan_of(hz);
}

int lw_chan_of(uint32_t hz)
{
	const struct region *r = region_of(hz);

	for (int i = 0; r && i < 8; i++)
		if (r->chan_hz[i] == hz)
			return i;
	return -1;
}

int lw_gw_index_build(const struct lw_fleet *f, struct lw_gw_index *ix)
{
	uint32_t *fill;

	ix->start = calloc(f->ngw + 1, sizeof(*ix->start));
	ix->dev = calloc(f->ndev * f->heard_by + 1, sizeof(*ix->dev));
	fill = calloc(f->ngw + 1, sizeof(*fill));
	if (!ix->start || !ix->dev || !fill) {
		free(fill);
		lw_gw_index_free(ix);
		return -ENOMEM;
	}
	for (size_t d = 0; d < f->ndev; d++)
		for (unsigned int k = 0; k < f->heard_by; k++)
			ix->start[f->dev[d].gw[k] + 1]++;
	for (size_t g = 0; g < f->ngw; g++)
		ix->start[g + 1] += ix->start[g];
	/* devices in order, so each gateway's list is ascending */
	for (size_t d = 0; d < f->ndev; d++)
		for (unsigned int k = 0; k < f->heard_by; k++) {
			uint32_t g = f->dev[d].gw[k];

			ix->dev[ix->start[g] + fill[g]++] = d;
		}
	free(fill);
	return 0;
}

void lw_gw_index_free(struct lw_gw_index *ix)
{
	free(ix->start);
	free(ix->dev);
	ix->start = ix->dev = NULL;
}

uint64_t lw_gw_copies(const struct lw_fleet *f, const struct lw_gw_index *ix, size_t g, uint64_t n)
{
	uint64_t u = n / f->heard_by, rounds = u / f->ndev, copies;
	uint32_t r = u % f->ndev, lo = ix->start[g], hi = ix->start[g + 1];
	const struct lw_device *last = &f->dev[r];

	/* whole rounds, then the devices below r that it hears (a binary search), then u's copies */
	copies = rounds * (hi - lo);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ix->dev[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	copies += lo - ix->start[g];
	for (unsigned int k = 0; k < n % f->heard_by; k++)
		copies += last->gw[k] == g;
	return copies;
}

void lw_fleet_free(struct lw_fleet *f)
{
	free(f->dev);
	free(f->gw);
	memset(f, 0, sizeof(*f));
}

int lw_fleet_gateway_addrs(struct lw_fleet *f, uint32_t base, uint64_t naddr, uint16_t port_lo,
			   uint32_t nports)
{
	if (!naddr || !nports || naddr * nports < f->ngw)
		return -ERANGE;
	for (size_t g = 0; g < f->ngw; g++) {
		f->gw[g].saddr = htonl(base + (uint32_t)(g % naddr));
		f->gw[g].sport = port_lo + g / naddr;
	}
	f->gw_addrs = true;
	return 0;
}

/*
 * LoRaWAN 1.1 as far as xdpreplay sends it: ABP sessions and joins (NwkKey and
 * AppKey), uplinks with their MIC's B1 with the DR and channel the server
 * derives from the rxpk, confirmed or not, with MAC commands in FOpts
 * (encrypted with NwkSEncKey).
 */
static int check_v11(const struct lw_device *d, char *why, size_t wl)
{
	if (d->otaa && !d->join11) {
		snprintf(why, wl, "a LoRaWAN 1.1 OTAA device joins with its nwk_key: it has none");
		return -EINVAL;
	}
	if (lw_tx_dr(d->freq_hz, d->sf, d->bw_khz) < 0 || lw_tx_ch(d->freq_hz) < 0) {
		snprintf(
			why, wl,
			"LoRaWAN 1.1: %.1f MHz at SF%uBW%u is no channel and data rate of its region "
			"(the MIC's B1 carries both)",
			d->freq_hz / 1e6, d->sf, d->bw_khz);
		return -EINVAL;
	}
	return 0;
}

/* Checks what the generator and the CSV loader both promise about a device. */
int lw_check_device(const struct lw_fleet *f, const struct lw_device *d, char *why, size_t wl)
{
	unsigned int max = lw_max_payload(d->freq_hz, d->sf, d->bw_khz);
	const struct region *r = region_of(d->freq_hz);

	if (d->payload_len < 1 || d->payload_len > XR_LORA_MAX_FRM) {
		snprintf(why, wl, "payload of %u bytes: xdpreplay sends 1 to %d", d->payload_len,
			 XR_LORA_MAX_FRM);
		return -EINVAL;
	}
	/* N is the FRMPayload without FOpts: FOpts take from it (Regional Parameters, M - 8) */
	if (max && d->payload_len + d->fopts_len > max) {
		snprintf(why, wl,
			 "payload of %u bytes%s is too large for SF%uBW%u at %.1f MHz (at most %u)",
			 d->payload_len, d->fopts_len ? " and its FOpts" : "", d->sf, d->bw_khz,
			 d->freq_hz / 1e6, max);
		return -EINVAL;
	}
	if (d->fopts_len && !d->fport) {
		snprintf(
			why, wl,
			"it sends on FPort 0, and an uplink with FOpts cannot (LoRaWAN 1.0.4 §4.3.1.6)");
		return -EINVAL;
	}
	if (d->fport > 223) {
		snprintf(why, wl,
			 "fport %u is reserved (1..223 for applications, 0 for MAC commands)",
			 d->fport);
		return -EINVAL;
	}
	if (d->sf < 5 || d->sf > 12 || (d->bw_khz != 125 && d->bw_khz != 250 && d->bw_khz != 500)) {
		snprintf(why, wl, "datr SF%uBW%u is not a LoRa data rate", d->sf, d->bw_khz);
		return -EINVAL;
	}
	/* Regional Parameters: only the plan's data rates, each on a channel of its bandwidth */
	if (r && !max) {
		snprintf(why, wl, "datr SF%uBW%u is not an uplink data rate of %s (%s)", d->sf,
			 d->bw_khz, r->name, r->drs);
		return -EINVAL;
	}
	if (r && !strcmp(r->name, "us915") &&
	    (d->bw_khz == 500 ? (d->freq_hz - 903000000) % 1600000 || d->freq_hz > 914200000 :
				(d->freq_hz - 902300000) % 200000 || d->freq_hz > 914900000)) {
		snprintf(why, wl, "%.1f MHz is not a US915 %u kHz uplink channel", d->freq_hz / 1e6,
			 d->bw_khz);
		return -EINVAL;
	}
	for (unsigned int k = 0; k < f->heard_by; k++)
		for (unsigned int j = 0; j < k; j++)
			if (d->gw[j] == d->gw[k]) {
				snprintf(why, wl, "gateway listed twice");
				return -EINVAL;
			}
	if (d->join11 && !d->otaa) {
		snprintf(why, wl, "an nwk_key (a 1.1 root key) without OTAA (join_eui, app_key)");
		return -EINVAL;
	}
	if (d->v11)
		return check_v11(d, why, wl);
	return 0;
}

int lw_fleet_generate(const struct lw_gen_opts *o, struct lw_fleet *f)
{
	const struct region *r = NULL;
	uint64_t st = o->seed;
	uint32_t addr_key, addr_mul;
	uint8_t join_eui[8];
	char why[160];

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++)
		if (!strcmp(o->region, regions[i].name))
			r = &regions[i];
	if (!r) {
		pr_warn("--region: '%s' is not eu868 or us915\n", o->region);
		return -EINVAL;
	}
	if (o->devices < 1 || o->devices > (1U << 24)) {
		pr_warn("--devices must be between 1 and 16M (24-bit DevAddrs)\n");
		return -EINVAL;
	}
	if (o->gateways < 1 || o->gateways > 65535) {
		pr_warn("--gateways must be between 1 and 65535\n");
		return -EINVAL;
	}
	if (o->heard_by < 1 || o->heard_by > XR_LORA_MAX_HEARD || o->heard_by > o->gateways) {
		pr_warn("--heard-by %u is impossible with %llu gateways (1 to %d, "
			"at most the number of gateways)\n",
			o->heard_by, (unsigned long long)o->gateways, XR_LORA_MAX_HEARD);
		return -EINVAL;
	}
	f->dev = calloc(o->devices, sizeof(*f->dev));
	f->gw = calloc(o->gateways, sizeof(*f->gw));
	if (!f->dev || !f->gw) {
		lw_fleet_free(f);
		pr_warn("out of memory for %llu devices\n", (unsigned long long)o->devices);
		return -ENOMEM;
	}
	f->ndev = o->devices;
	f->ngw = o->gateways;
	f->heard_by = o->heard_by;
	for (size_t g = 0; g < f->ngw; g++) {
		/* a locally administered EUI-64 prefix; unique by construction */
		uint64_t v = 0x0200c61200000000ULL | (rnd(&st) & 0xffff0000ULL) | g;

		for (int b = 0; b < 8; b++)
			f->gw[g].eui[b] = v >> (56 - 8 * b);
	}
	/* DevAddrs: NwkID 0 (NetID 000000), NwkAddr a keyed bijection of the index: unique */
	addr_key = rnd(&st) & 0xffffff;
	addr_mul = (rnd(&st) & 0xffffff) | 1;
	/* one JoinEUI (AppEUI) for the fleet, locally administered as the DevEUIs (ABP fleets draw none) */
	if (o->otaa) {
		rnd_bytes(&st, join_eui, 8);
		join_eui[0] = 0x02;
	}
	for (size_t i = 0; i < f->ndev; i++) {
		struct lw_device *d = &f->dev[i];
		uint64_t v = rnd(&st);

		d->dev_eui[0] = 0x02; /* locally administered */
		d->dev_eui[1] = 0x00;
		rnd_bytes(&st, d->dev_eui + 2, 2);
		for (int b = 0; b < 4; b++)
			d->dev_eui[4 + b] = i >> (24 - 8 * b);
		if (o->otaa) {
			/* the session comes from the join; DevNonces from a random start, one per JoinRequest */
			d->otaa = true;
			memcpy(d->join_eui, join_eui, 8);
			rnd_bytes(&st, d->app_key, 16);
			d->dev_nonce = rnd(&st);
			/* 1.1's second root key; a 1.0 fleet of a seed stays what it was */
			if (o->v11) {
				d->join11 = true;
				rnd_bytes(&st, d->nwk_key, 16);
			}
		} else {
			d->dev_addr = 0x01000000 |
				      ((((uint32_t)i * addr_mul) ^ addr_key) & 0xffffff);
			rnd_bytes(&st, d->nwk_s_key, 16);
			rnd_bytes(&st, d->app_s_key, 16);
			d->has_session = true;
			/* drawn only for 1.1: a 1.0 fleet of a seed stays what it was */
			if (o->v11) {
				rnd_bytes(&st, d->s_nwk_s_int_key, 16);
				rnd_bytes(&st, d->nwk_s_enc_key, 16);
			}
		}
		d->v11 = o->v11;
		d->fcnt_start = o->fcnt_random ? (uint32_t)(rnd(&st) & 0x7fffffff) : o->fcnt_start;
		d->fport = o->fport;
		d->confirmed = o->confirmed;
		d->payload_len = o->payload_min + v % (o->payload_max - o->payload_min + 1);
		rnd_bytes(&st, d->payload, d->payload_len);
		d->chan = (v >> 16) % 8;
		d->freq_hz = o->bw_khz == 500 && r->wide_hz ? r->wide_hz : r->chan_hz[d->chan];
		d->sf = o->sf;
		d->bw_khz = o->bw_khz;
		d->codr = 0;
		d->rssi = -30 - (int)((v >> 24) % 91);
		d->lsnr10 = -100 + (int)((v >> 32) % 201);
		/* consecutive gateways from a random one: distinct while heard_by <= gateways */
		for (unsigned int k = 0; k < f->heard_by; k++)
			d->gw[k] = ((v >> 40) + k) % f->ngw;
		if (lw_check_device(f, d, why, sizeof(why))) {
			pr_warn("%s\n", why);
			lw_fleet_free(f);
			return -EINVAL;
		}
	}
	return 0;
}
