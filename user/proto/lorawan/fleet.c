// SPDX-License-Identifier: GPL-2.0
/*
 * LoRaWAN fleets and the reference implementation of the BPF rewriter.
 * Protocol facts and their sources: ../shared/PROTOCOLS.md §1-2 (Semtech UDP
 * v2, LoRaWAN 1.0.x uplinks: MIC over B0 | msg, FRMPayload xor AES(A_i)).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "frames/csum.h"
#include "util/log.h"
#include "proto/lorawan/lorawan.h"
#include "util/units.h"
#include "util/splitmix.h"

static const char *const codr_names[] = { "4/5", "4/6", "4/7", "4/8" };

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
	uint32_t wide_hz;    /* the 500 kHz uplink channel of the plan, 0 = none */
	const char *drs;     /* its uplink data rates, for messages */
};

/* Channel plans (LoRaWAN Regional Parameters): EU868's 8 default channels, US915 sub-band 2. */
static const struct region regions[] = {
	{ "eu868", 863000000, 870000000,
	  { 868100000, 868300000, 868500000, 867100000, 867300000, 867500000, 867700000, 867900000 }, 0,
	  "SF7-SF12 at 125 kHz, SF7BW250" },
	{ "us915", 902000000, 928000000,
	  { 903900000, 904100000, 904300000, 904500000, 904700000, 904900000, 905100000, 905300000 }, 904600000,
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

static int chan_of(uint32_t hz)
{
	const struct region *r = region_of(hz);

	for (int i = 0; r && i < 8; i++)
		if (r->chan_hz[i] == hz)
			return i;
	return -1;
}

void lw_fleet_free(struct lw_fleet *f)
{
	free(f->dev);
	free(f->gw);
	memset(f, 0, sizeof(*f));
}

/* Checks what the generator and the CSV loader both promise about a device. */
static int check_device(const struct lw_fleet *f, const struct lw_device *d, char *why, size_t wl)
{
	unsigned int max = lw_max_payload(d->freq_hz, d->sf, d->bw_khz);
	const struct region *r = region_of(d->freq_hz);

	if (d->payload_len < 1 || d->payload_len > XR_LORA_MAX_FRM) {
		snprintf(why, wl, "payload of %u bytes: xdpreplay sends 1 to %d", d->payload_len, XR_LORA_MAX_FRM);
		return -EINVAL;
	}
	if (max && d->payload_len > max) {
		snprintf(why, wl, "payload of %u bytes is too large for SF%uBW%u at %.1f MHz (at most %u)",
			 d->payload_len, d->sf, d->bw_khz, d->freq_hz / 1e6, max);
		return -EINVAL;
	}
	if (d->fport > 223) {
		snprintf(why, wl, "fport %u is reserved (1..223 for applications, 0 for MAC commands)", d->fport);
		return -EINVAL;
	}
	if (d->sf < 5 || d->sf > 12 || (d->bw_khz != 125 && d->bw_khz != 250 && d->bw_khz != 500)) {
		snprintf(why, wl, "datr SF%uBW%u is not a LoRa data rate", d->sf, d->bw_khz);
		return -EINVAL;
	}
	/* Regional Parameters: only the plan's data rates, each on a channel of its bandwidth */
	if (r && !max) {
		snprintf(why, wl, "datr SF%uBW%u is not an uplink data rate of %s (%s)", d->sf, d->bw_khz, r->name,
			 r->drs);
		return -EINVAL;
	}
	if (r && !strcmp(r->name, "us915") &&
	    (d->bw_khz == 500 ? (d->freq_hz - 903000000) % 1600000 || d->freq_hz > 914200000 :
				(d->freq_hz - 902300000) % 200000 || d->freq_hz > 914900000)) {
		snprintf(why, wl, "%.1f MHz is not a US915 %u kHz uplink channel", d->freq_hz / 1e6, d->bw_khz);
		return -EINVAL;
	}
	for (unsigned int k = 0; k < f->heard_by; k++)
		for (unsigned int j = 0; j < k; j++)
			if (d->gw[j] == d->gw[k]) {
				snprintf(why, wl, "gateway listed twice");
				return -EINVAL;
			}
	return 0;
}

int lw_fleet_generate(const struct lw_gen_opts *o, struct lw_fleet *f)
{
	const struct region *r = NULL;
	uint64_t st = o->seed;
	uint32_t addr_key, addr_mul;
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
			"at most the number of gateways)\n", o->heard_by, (unsigned long long)o->gateways,
			XR_LORA_MAX_HEARD);
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
	for (size_t i = 0; i < f->ndev; i++) {
		struct lw_device *d = &f->dev[i];
		uint64_t v = rnd(&st);

		d->dev_eui[0] = 0x02; /* locally administered */
		d->dev_eui[1] = 0x00;
		rnd_bytes(&st, d->dev_eui + 2, 2);
		for (int b = 0; b < 4; b++)
			d->dev_eui[4 + b] = i >> (24 - 8 * b);
		d->dev_addr = 0x01000000 | ((((uint32_t)i * addr_mul) ^ addr_key) & 0xffffff);
		rnd_bytes(&st, d->nwk_s_key, 16);
		rnd_bytes(&st, d->app_s_key, 16);
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
		if (check_device(f, d, why, sizeof(why))) {
			pr_warn("%s\n", why);
			lw_fleet_free(f);
			return -EINVAL;
		}
	}
	return 0;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

int lw_parse_datr(const char *s, uint8_t *sf, uint16_t *bw_khz)
{
	unsigned int a, b;
	const char *end;

	if (strncmp(s, "SF", 2) || parse_uint(s + 2, 12, &a, &end) || strncmp(end, "BW", 2) ||
	    parse_uint(end + 2, 500, &b, &end) || *end || a < 5 || (b != 125 && b != 250 && b != 500))
		return -EINVAL;
	*sf = a;
	*bw_khz = b;
	return 0;
}

char *lw_path(char *buf, size_t len, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	/* "fleet/" and "fleet" name the same folder: one slash either way */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	snprintf(buf, len, "%.*s/%s", (int)n, dir, name);
	return buf;
}

static FILE *open_in(const char *dir, const char *name, const char *mode, char *path, size_t pl)
{
	FILE *fp;

	lw_path(path, pl, dir, name);
	fp = fopen(path, mode);
	if (!fp)
		pr_warn("cannot %s %s: %s\n", *mode == 'r' ? "read" : "write", path,
			strerror(errno));
	return fp;
}

int lw_fleet_save(const struct lw_fleet *f, const char *dir)
{
	char path[4096], a[40], b[40], e[20], p[2 * XR_LORA_MAX_FRM + 1];
	FILE *fp;
	int err = 0;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		pr_warn("cannot create %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	fp = open_in(dir, "gateways.csv", "w", path, sizeof(path));
	if (!fp)
		return -errno;
	fprintf(fp, "gateway_eui,name\n");
	for (size_t g = 0; g < f->ngw; g++) {
		hex(e, f->gw[g].eui, 8);
		fprintf(fp, "%s,xdpreplay-gw-%zu\n", e, g);
	}
	if (fclose(fp))
		err = -errno;
	fp = open_in(dir, "devices.csv", "w", path, sizeof(path));
	if (!fp)
		return -errno;
	fprintf(fp, "dev_eui,dev_addr,nwk_s_key,app_s_key,fcnt_start,fport,confirmed,payload,freq_hz,datr,codr,"
		    "rssi,lsnr,gateways\n");
	for (size_t i = 0; i < f->ndev; i++) {
		const struct lw_device *d = &f->dev[i];

		hex(e, d->dev_eui, 8);
		hex(a, d->nwk_s_key, 16);
		hex(b, d->app_s_key, 16);
		hex(p, d->payload, d->payload_len);
		fprintf(fp, "%s,%08x,%s,%s,%u,%u,%u,%s,%u,SF%uBW%u,%s,%d,%.1f,", e, d->dev_addr, a, b, d->fcnt_start,
			d->fport, d->confirmed, p, d->freq_hz, d->sf, d->bw_khz, codr_names[d->codr], d->rssi,
			d->lsnr10 / 10.0);
		for (unsigned int k = 0; k < f->heard_by; k++) {
			hex(e, f->gw[d->gw[k]].eui, 8);
			fprintf(fp, "%s%s", k ? ";" : "", e);
		}
		fputc('\n', fp);
	}
	if (fclose(fp) && !err)
		err = -errno;
	if (err)
		pr_warn("writing %s: %s\n", path, strerror(-err));
	return err;
}

static int unhex(const char *s, size_t len, uint8_t *out, size_t n)
{
	if (len != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i + 1]))
			return -1;
		out[i] = v;
	}
	return 0;
}

/* Splits a CSV line (no quoting: no field has commas) into at most max fields. */
static int split(char *line, char **fields, int max, char sep)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = 0;
	while (n < max) {
		fields[n++] = p;
		p = strchr(p, sep);
		if (!p)
			break;
		*p++ = 0;
	}
	return p ? max + 1 : n;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return (!*s || *end || errno || *out < lo || *out > hi) ? -1 : 0;
}

static int cmp_eui(const void *a, const void *b)
{
	const struct lw_eui_index *x = a, *y = b;

	return x->eui < y->eui ? -1 : x->eui > y->eui;
}

uint64_t lw_eui64(const uint8_t b[8])
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

int lw_eui_sort(struct lw_eui_index *ix, size_t n, uint64_t *dup)
{
	qsort(ix, n, sizeof(*ix), cmp_eui);
	for (size_t i = 1; i < n; i++)
		if (ix[i].eui == ix[i - 1].eui) {
			*dup = ix[i].eui;
			return -EEXIST;
		}
	return 0;
}

const struct lw_eui_index *lw_eui_find(const struct lw_eui_index *ix, size_t n, uint64_t eui)
{
	struct lw_eui_index key = { .eui = eui };

	return bsearch(&key, ix, n, sizeof(*ix), cmp_eui);
}

static int load_gateways(const char *dir, struct lw_fleet *f, struct lw_eui_index **idx)
{
	char path[4096], line[256], *fl[3];
	size_t cap = 0, lineno = 0;
	uint64_t dup;
	FILE *fp = open_in(dir, "gateways.csv", "r", path, sizeof(path));
	int err = -EINVAL;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (lineno == 1 && !strncmp(line, "gateway_eui", 11))
			continue;
		if (split(line, fl, 2, ',') < 1 || !*fl[0])
			continue;
		if (f->ngw >= 65535) {
			pr_warn("%s:%zu: more than 65535 gateways\n", path, lineno);
			goto out;
		}
		if (f->ngw == cap) {
			struct lw_gateway *ng;

			cap = cap ? 2 * cap : 64;
			ng = realloc(f->gw, cap * sizeof(*f->gw));
			if (!ng) {
				err = -ENOMEM;
				goto out;
			}
			f->gw = ng;
		}
		if (unhex(fl[0], strlen(fl[0]), f->gw[f->ngw].eui, 8)) {
			pr_warn("%s:%zu: gateway_eui '%s' is not 16 hex digits\n", path, lineno, fl[0]);
			goto out;
		}
		f->ngw++;
	}
	if (!f->ngw) {
		pr_warn("%s: no gateway\n", path);
		goto out;
	}
	*idx = calloc(f->ngw, sizeof(**idx));
	if (!*idx) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t g = 0; g < f->ngw; g++)
		(*idx)[g] = (struct lw_eui_index){ lw_eui64(f->gw[g].eui), g };
	if (lw_eui_sort(*idx, f->ngw, &dup)) {
		pr_warn("%s: gateway %016llx is listed twice\n", path, (unsigned long long)dup);
		goto out;
	}
	err = 0;
out:
	fclose(fp);
	return err;
}

/* One devices.csv line into d; a one-line message naming the field on error. */
static int parse_device(struct lw_fleet *f, const struct lw_eui_index *gidx, char *line, struct lw_device *d,
			const char *where)
{
	char *fl[15], *gws[XR_LORA_MAX_HEARD + 1], why[160];
	long v;
	int n, ng;

	memset(d, 0, sizeof(*d));
	n = split(line, fl, 14, ',');
	if (n != 14) {
		pr_warn("%s: %d fields, expected 14 (dev_eui,...,gateways)\n", where, n > 14 ? 15 : n);
		return -EINVAL;
	}
	if (unhex(fl[0], strlen(fl[0]), d->dev_eui, 8)) {
		pr_warn("%s: dev_eui '%s' is not 16 hex digits\n", where, fl[0]);
		return -EINVAL;
	}
	{
		uint8_t a[4];

		if (unhex(fl[1], strlen(fl[1]), a, 4)) {
			pr_warn("%s: dev_addr '%s' is not 8 hex digits\n", where, fl[1]);
			return -EINVAL;
		}
		d->dev_addr = (uint32_t)a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
	}
	if (unhex(fl[2], strlen(fl[2]), d->nwk_s_key, 16)) {
		pr_warn("%s: nwk_s_key '%s' is not 32 hex digits\n", where, fl[2]);
		return -EINVAL;
	}
	if (unhex(fl[3], strlen(fl[3]), d->app_s_key, 16)) {
		pr_warn("%s: app_s_key '%s' is not 32 hex digits\n", where, fl[3]);
		return -EINVAL;
	}
	if (parse_long(fl[4], 0, UINT32_MAX, &v)) {
		pr_warn("%s: fcnt_start '%s' is not a number from 0 to 4294967295\n", where, fl[4]);
		return -EINVAL;
	}
	d->fcnt_start = v;
	if (parse_long(fl[5], 0, 255, &v)) {
		pr_warn("%s: fport '%s' is not a number from 0 to 223\n", where, fl[5]);
		return -EINVAL;
	}
	d->fport = v;
	if (parse_long(fl[6], 0, 1, &v)) {
		pr_warn("%s: confirmed '%s' is not 0 or 1\n", where, fl[6]);
		return -EINVAL;
	}
	d->confirmed = v;
	if (strlen(fl[7]) % 2 || strlen(fl[7]) / 2 > XR_LORA_MAX_FRM ||
	    unhex(fl[7], strlen(fl[7]), d->payload, strlen(fl[7]) / 2)) {
		pr_warn("%s: payload '%.20s%s' is not 1 to %d bytes of hex\n", where, fl[7],
			strlen(fl[7]) > 20 ? "..." : "", XR_LORA_MAX_FRM);
		return -EINVAL;
	}
	d->payload_len = strlen(fl[7]) / 2;
	if (parse_long(fl[8], 100000000, 3000000000L, &v)) {
		pr_warn("%s: freq_hz '%s' is not a frequency in Hz (e.g. 868100000)\n", where, fl[8]);
		return -EINVAL;
	}
	d->freq_hz = v;
	if (lw_parse_datr(fl[9], &d->sf, &d->bw_khz)) {
		pr_warn("%s: datr '%s' is not SF<7..12>BW<125|250|500>\n", where, fl[9]);
		return -EINVAL;
	}
	d->codr = 255;
	for (size_t c = 0; c < sizeof(codr_names) / sizeof(codr_names[0]); c++)
		if (!strcmp(fl[10], codr_names[c]))
			d->codr = c;
	if (d->codr == 255) {
		pr_warn("%s: codr '%s' is not 4/5, 4/6, 4/7 or 4/8\n", where, fl[10]);
		return -EINVAL;
	}
	if (parse_long(fl[11], -200, 20, &v)) {
		pr_warn("%s: rssi '%s' is not a whole number of dBm from -200 to 20\n", where, fl[11]);
		return -EINVAL;
	}
	d->rssi = v;
	{
		double s;
		char *end;

		s = strtod(fl[12], &end);
		/* NaN fails every comparison: only a number inside the range passes */
		if (!*fl[12] || *end || !(s >= -30 && s <= 30)) {
			pr_warn("%s: lsnr '%s' is not an SNR in dB from -30 to 30\n", where, fl[12]);
			return -EINVAL;
		}
		d->lsnr10 = s * 10 + (s < 0 ? -0.5 : 0.5);
	}
	d->chan = chan_of(d->freq_hz) < 0 ? 0 : chan_of(d->freq_hz);
	ng = split(fl[13], gws, XR_LORA_MAX_HEARD, ';');
	if (ng > XR_LORA_MAX_HEARD || !*fl[13]) {
		pr_warn("%s: gateways: 1 to %d EUIs separated by ';'\n", where, XR_LORA_MAX_HEARD);
		return -EINVAL;
	}
	if (!f->heard_by)
		f->heard_by = ng;
	if ((unsigned int)ng != f->heard_by) {
		pr_warn("%s: heard by %d gateways, the devices before by %u: xdpreplay needs the same number "
			"for every device\n", where, ng, f->heard_by);
		return -EINVAL;
	}
	for (int k = 0; k < ng; k++) {
		const struct lw_eui_index *hit;
		uint8_t e[8];

		if (unhex(gws[k], strlen(gws[k]), e, 8)) {
			pr_warn("%s: gateway '%s' is not 16 hex digits\n", where, gws[k]);
			return -EINVAL;
		}
		hit = lw_eui_find(gidx, f->ngw, lw_eui64(e));
		if (!hit) {
			pr_warn("%s: gateway %s is not in gateways.csv\n", where, gws[k]);
			return -EINVAL;
		}
		d->gw[k] = hit->idx;
	}
	if (check_device(f, d, why, sizeof(why))) {
		pr_warn("%s: %s\n", where, why);
		return -EINVAL;
	}
	return 0;
}

struct addr_idx {
	uint32_t addr;
	uint32_t idx;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct addr_idx *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int lw_fleet_load(const char *dir, struct lw_fleet *f)
{
	char path[4096], where[4200], line[1024];
	struct lw_eui_index *gidx = NULL, *eidx = NULL;
	struct addr_idx *aidx = NULL;
	uint64_t dup;
	size_t cap = 0, lineno = 0;
	int err;
	FILE *fp;

	memset(f, 0, sizeof(*f));
	err = load_gateways(dir, f, &gidx);
	if (err)
		goto err;
	fp = open_in(dir, "devices.csv", "r", path, sizeof(path));
	if (!fp) {
		err = -errno;
		goto err;
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (lineno == 1 && !strncmp(line, "dev_eui", 7))
			continue;
		if (line[0] == '\n' || line[0] == '\r')
			continue;
		if (f->ndev == cap) {
			struct lw_device *nd;

			cap = cap ? 2 * cap : 64;
			nd = realloc(f->dev, cap * sizeof(*f->dev));
			if (!nd) {
				fclose(fp);
				err = -ENOMEM;
				pr_warn("%s: out of memory\n", path);
				goto err;
			}
			f->dev = nd;
		}
		snprintf(where, sizeof(where), "%s:%zu", path, lineno);
		err = parse_device(f, gidx, line, &f->dev[f->ndev], where);
		if (err) {
			fclose(fp);
			goto err;
		}
		f->ndev++;
	}
	fclose(fp);
	if (!f->ndev) {
		pr_warn("%s: no device\n", path);
		err = -EINVAL;
		goto err;
	}
	/* the server finds a device by DevAddr: two devices with one address are one too many */
	aidx = calloc(f->ndev, sizeof(*aidx));
	if (!aidx) {
		err = -ENOMEM;
		goto err;
	}
	/* the server keys devices by DevEUI: one used twice is refused too */
	eidx = calloc(f->ndev, sizeof(*eidx));
	if (!eidx) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < f->ndev; i++)
		eidx[i] = (struct lw_eui_index){ lw_eui64(f->dev[i].dev_eui), i };
	if (lw_eui_sort(eidx, f->ndev, &dup)) {
		pr_warn("%s: dev_eui %016llx is used twice\n", path, (unsigned long long)dup);
		err = -EINVAL;
		goto err;
	}
	for (size_t i = 0; i < f->ndev; i++)
		aidx[i] = (struct addr_idx){ f->dev[i].dev_addr, i };
	qsort(aidx, f->ndev, sizeof(*aidx), cmp_addr);
	for (size_t i = 1; i < f->ndev; i++)
		if (aidx[i].addr == aidx[i - 1].addr) {
			size_t a = aidx[i - 1].idx, b = aidx[i].idx;

			pr_warn("%s: dev_addr %08x is used twice (devices %zu and %zu)\n", path, aidx[i].addr,
				(a < b ? a : b) + 1, (a < b ? b : a) + 1);
			err = -EINVAL;
			goto err;
		}
	free(aidx);
	free(gidx);
	free(eidx);
	return 0;
err:
	free(aidx);
	free(gidx);
	free(eidx);
	lw_fleet_free(f);
	return err;
}

/* The UDP checksum of an Ethernet/IPv4 (no options) frame, from scratch. */
static void udp4_csum_fill(uint8_t *frame, uint32_t len)
{
	uint8_t *ip = frame + 14, *udp = ip + 20;
	uint32_t ulen = len - 34, sum = csum_add(ip + 12, 8, 0) + IPPROTO_UDP + ulen;
	uint16_t c;

	udp[6] = udp[7] = 0;
	c = csum_fold(csum_add(udp, ulen, sum));
	/* a computed zero is sent as all ones: zero means "no checksum" */
	if (!c)
		c = 0xffff;
	udp[6] = c >> 8;
	udp[7] = c;
}

/* The PHYPayload template: FCnt's low 16 bits of round 0, FRMPayload in plaintext, MIC zero. */
static int phy_template(const struct lw_device *d, uint8_t *phy)
{
	memset(phy, 0, XR_LORA_MAX_PHY);
	phy[0] = d->confirmed ? 0x80 : 0x40; /* Confirmed / Unconfirmed Data Up, LoRaWAN R1 */
	phy[1] = d->dev_addr;
	phy[2] = d->dev_addr >> 8;
	phy[3] = d->dev_addr >> 16;
	phy[4] = d->dev_addr >> 24;
	phy[5] = 0; /* FCtrl: no ADR, no FOpts */
	phy[6] = d->fcnt_start;
	phy[7] = d->fcnt_start >> 8;
	phy[8] = d->fport;
	memcpy(phy + 9, d->payload, d->payload_len);
	return 13 + d->payload_len;
}

int lw_build_frame(struct lw_fleet *f, size_t di, const struct lw_net *net, uint8_t *out, size_t cap)
{
	struct lw_device *d = &f->dev[di];
	uint8_t phy[XR_LORA_MAX_PHY], *ip = out + 14, *udp = ip + 20, *pd = udp + 8;
	char js[512], b64[XR_LORA_B64_MAX + 4];
	int plen = phy_template(d, phy), n, pre;
	uint32_t len, ulen;

	EVP_EncodeBlock((unsigned char *)b64, phy, plen);
	pre = snprintf(js, sizeof(js), "{\"rxpk\":[{\"tmst\":");
	n = snprintf(js + pre, sizeof(js) - pre,
		     "1000000000,\"chan\":%u,\"rfch\":0,\"freq\":%u.%06u,\"stat\":1,\"modu\":\"LORA\","
		     "\"datr\":\"SF%uBW%u\",\"codr\":\"%s\",\"rssi\":%d,\"lsnr\":%s%d.%d,\"size\":%d,\"data\":\"",
		     d->chan, d->freq_hz / 1000000, d->freq_hz % 1000000, d->sf, d->bw_khz, codr_names[d->codr],
		     d->rssi, d->lsnr10 < 0 ? "-" : "", abs(d->lsnr10) / 10, abs(d->lsnr10) % 10, plen);
	d->tmst_off = XR_LORA_PUSH_DATA_OFF + 12 + pre;
	d->b64_off = XR_LORA_PUSH_DATA_OFF + 12 + pre + n;
	n = pre + n;
	n += snprintf(js + n, sizeof(js) - n, "%s\"}]}", b64);
	len = XR_LORA_PUSH_DATA_OFF + 12 + n;
	if (len > cap || len > XR_MAX_FRAME)
		return -E2BIG;

	memcpy(out, net->dst_mac, 6);
	memcpy(out + 6, net->src_mac, 6);
	out[12] = 0x08;
	out[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (len - 14) >> 8;
	ip[3] = (len - 14) & 0xff;
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &net->saddr, 4);
	memcpy(ip + 16, &net->daddr, 4);
	{
		uint16_t c = csum_fold(csum_add(ip, 20, 0));

		ip[10] = c >> 8;
		ip[11] = c;
	}
	ulen = len - 34;
	udp[0] = net->sport >> 8;
	udp[1] = net->sport;
	udp[2] = net->dport >> 8;
	udp[3] = net->dport;
	udp[4] = ulen >> 8;
	udp[5] = ulen;
	/* Semtech UDP v2 PUSH_DATA: version, token, identifier 0, gateway EUI, JSON */
	pd[0] = 2;
	pd[1] = pd[2] = 0;
	pd[3] = 0;
	memcpy(pd + 4, f->gw[d->gw[0]].eui, 8);
	memcpy(pd + 12, js, n);
	udp4_csum_fill(out, len);
	return len;
}

static uint8_t xtime(uint8_t x)
{
	return (x << 1) ^ (x & 0x80 ? 0x1b : 0);
}

static uint8_t rotl8(uint8_t x, int s)
{
	return (x << s) | (x >> (8 - s));
}

void lw_aes_tables(struct xr_aes_tables *t)
{
	uint8_t p = 1, q = 1;

	/* the S-box (FIPS-197 §5.1.1): walk GF(2^8)* by 3 and its inverse by 1/3, then the affine map */
	do {
		p = p ^ xtime(p);
		q ^= q << 1;
		q ^= q << 2;
		q ^= q << 4;
		if (q & 0x80)
			q ^= 0x09;
		t->sbox[p] = (q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4)) ^ 0x63;
	} while (p != 1);
	t->sbox[0] = 0x63;
	/* T-tables: SubBytes and MixColumns of one byte, as four rotations of one column */
	for (int x = 0; x < 256; x++) {
		uint8_t s = t->sbox[x];
		uint32_t w = (uint32_t)xtime(s) << 24 | (uint32_t)s << 16 | (uint32_t)s << 8 | (xtime(s) ^ s);

		t->te[0][x] = w;
		t->te[1][x] = w >> 8 | w << 24;
		t->te[2][x] = w >> 16 | w << 16;
		t->te[3][x] = w >> 24 | w << 8;
	}
}

void lw_aes_expand(const struct xr_aes_tables *t, const uint8_t key[16], uint32_t rk[44])
{
	uint8_t rcon = 1;

	for (int i = 0; i < 4; i++)
		rk[i] = (uint32_t)key[4 * i] << 24 | key[4 * i + 1] << 16 | key[4 * i + 2] << 8 | key[4 * i + 3];
	for (int i = 4; i < 44; i++) {
		uint32_t w = rk[i - 1];

		if (i % 4 == 0) {
			w = w << 8 | w >> 24;
			w = (uint32_t)t->sbox[w >> 24] << 24 | (uint32_t)t->sbox[(w >> 16) & 0xff] << 16 |
			    (uint32_t)t->sbox[(w >> 8) & 0xff] << 8 | t->sbox[w & 0xff];
			w ^= (uint32_t)rcon << 24;
			rcon = xtime(rcon);
		}
		rk[i] = rk[i - 4] ^ w;
	}
}

struct lw_crypto {
	EVP_CIPHER_CTX *ecb;
	EVP_MAC *mac;
	EVP_MAC_CTX *cmac;
};

struct lw_crypto *lw_crypto_new(void)
{
	struct lw_crypto *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ecb = EVP_CIPHER_CTX_new();
	c->mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	c->cmac = c->mac ? EVP_MAC_CTX_new(c->mac) : NULL;
	if (!c->ecb || !c->cmac) {
		lw_crypto_free(c);
		return NULL;
	}
	return c;
}

void lw_crypto_free(struct lw_crypto *c)
{
	if (!c)
		return;
	EVP_CIPHER_CTX_free(c->ecb);
	EVP_MAC_CTX_free(c->cmac);
	EVP_MAC_free(c->mac);
	free(c);
}

int lw_aes128(struct lw_crypto *c, const uint8_t key[16], const uint8_t in[16], uint8_t out[16])
{
	int l;

	if (!EVP_EncryptInit_ex(c->ecb, EVP_aes_128_ecb(), NULL, key, NULL) ||
	    !EVP_CIPHER_CTX_set_padding(c->ecb, 0) || !EVP_EncryptUpdate(c->ecb, out, &l, in, 16) || l != 16)
		return -EIO;
	return 0;
}

int lw_cmac(struct lw_crypto *c, const uint8_t key[16], const uint8_t *msg, size_t len, uint8_t out[16])
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, "AES-128-CBC", 0),
		OSSL_PARAM_construct_end(),
	};
	size_t ol = 0;

	if (!EVP_MAC_init(c->cmac, key, 16, params) || !EVP_MAC_update(c->cmac, msg, len) ||
	    !EVP_MAC_final(c->cmac, out, &ol, 16) || ol != 16)
		return -EIO;
	return 0;
}

static void shift1(const uint8_t in[16], uint8_t out[16])
{
	uint8_t msb = in[0] & 0x80;

	for (int i = 0; i < 15; i++)
		out[i] = in[i] << 1 | in[i + 1] >> 7;
	out[15] = in[15] << 1;
	if (msb)
		out[15] ^= 0x87;
}

int lw_cmac_subkeys(struct lw_crypto *c, const uint8_t key[16], uint8_t k1[16], uint8_t k2[16])
{
	uint8_t zero[16] = {}, l[16];

	if (lw_aes128(c, key, zero, l))
		return -EIO;
	shift1(l, k1);
	shift1(k1, k2);
	return 0;
}

int lw_bpf_device(const struct lw_fleet *f, size_t di, const struct xr_aes_tables *t, struct lw_crypto *c,
		  struct xr_lora_dev *out)
{
	const struct lw_device *d = &f->dev[di];

	memset(out, 0, sizeof(*out));
	lw_aes_expand(t, d->nwk_s_key, out->nwk_rk);
	/* FPort 0 carries MAC commands, encrypted with NwkSKey (LoRaWAN 1.0.3 Table 4) */
	lw_aes_expand(t, d->fport ? d->app_s_key : d->nwk_s_key, out->enc_rk);
	if (lw_cmac_subkeys(c, d->nwk_s_key, (uint8_t *)out->k1, (uint8_t *)out->k2))
		return -EIO;
	out->phy_len = phy_template(d, out->phy);
	/* the program writes FCnt and MIC: the template's bytes there must be the same for every round */
	out->phy[6] = out->phy[7] = 0;
	out->frm_off = 9;
	out->frm_len = d->payload_len;
	out->fcnt0 = d->fcnt_start;
	out->b64_off = d->b64_off;
	out->tmst_off = d->tmst_off;
	for (unsigned int k = 0; k < XR_LORA_MAX_HEARD; k++)
		out->gw[k] = k < f->heard_by ? d->gw[k] : 0;
	return 0;
}

/* A_i and B0 of an uplink (Dir 0): first | 4 x 00 | 00 | DevAddr (as on air) | FCnt (32 bits LE) | 00 | last */
static void uplink_block(uint8_t b[16], uint8_t first, const uint8_t *devaddr, uint32_t fcnt, uint8_t last)
{
	memset(b, 0, 16);
	b[0] = first;
	memcpy(b + 6, devaddr, 4);
	b[10] = fcnt;
	b[11] = fcnt >> 8;
	b[12] = fcnt >> 16;
	b[13] = fcnt >> 24;
	b[15] = last;
}

int lw_ref_phy(struct lw_crypto *c, const struct lw_device *d, uint32_t fcnt, uint8_t *phy)
{
	uint8_t blk[16], s[16], cm[16 + XR_LORA_MAX_PHY], mac[16];
	int len = phy_template(d, phy), msg = len - 4;
	const uint8_t *key = d->fport ? d->app_s_key : d->nwk_s_key;

	phy[6] = fcnt;
	phy[7] = fcnt >> 8;
	/* A_i: 01 | 4 x 00 | Dir | DevAddr | FCnt (32 bits) | 00 | i */
	for (int i = 0; i * 16 < d->payload_len; i++) {
		uplink_block(blk, 0x01, phy + 1, fcnt, i + 1);
		if (lw_aes128(c, key, blk, s))
			return -EIO;
		for (int j = 0; j < 16 && i * 16 + j < d->payload_len; j++)
			phy[9 + i * 16 + j] ^= s[j];
	}
	/* B0: 49 | 4 x 00 | Dir | DevAddr | FCnt | 00 | len(msg) */
	uplink_block(cm, 0x49, phy + 1, fcnt, msg);
	memcpy(cm + 16, phy, msg);
	if (lw_cmac(c, d->nwk_s_key, cm, 16 + msg, mac))
		return -EIO;
	memcpy(phy + msg, mac, 4);
	return len;
}

int lw_ref_frame(struct lw_crypto *c, const struct lw_fleet *f, uint64_t n, uint32_t tmst, uint8_t *frame,
		 uint32_t len)
{
	uint8_t phy[XR_LORA_MAX_PHY], *pd = frame + XR_LORA_PUSH_DATA_OFF;
	char b64[XR_LORA_B64_MAX + 4], digits[16];
	const struct lw_device *d;
	unsigned int k;
	uint32_t fcnt;
	size_t di;
	int plen;

	lw_of_n(f, n, &di, &k, &fcnt);
	d = &f->dev[di];
	plen = lw_ref_phy(c, d, fcnt, phy);
	if (plen < 0)
		return plen;
	pd[1] = n;
	pd[2] = n >> 8;
	memcpy(pd + 4, f->gw[d->gw[k]].eui, 8);
	snprintf(digits, sizeof(digits), "%010u", tmst);
	memcpy(frame + d->tmst_off, digits, 10);
	EVP_EncodeBlock((unsigned char *)b64, phy, plen);
	if (d->b64_off + strlen(b64) > len)
		return -EINVAL;
	memcpy(frame + d->b64_off, b64, strlen(b64));
	udp4_csum_fill(frame, len);
	return 0;
}
