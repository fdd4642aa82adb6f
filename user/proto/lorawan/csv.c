// SPDX-License-Identifier: GPL-2.0
/* A fleet as CSV (devices.csv, gateways.csv): written by lorawan fleet, read back strictly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "proto/lorawan/lorawan.h"
#include "util/log.h"
#include "util/units.h"

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
	    parse_uint(end + 2, 500, &b, &end) || *end || a < 5 ||
	    (b != 125 && b != 250 && b != 500))
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
	/*
	 * an OTAA device has no session until it joins: its dev_addr and session keys are empty;
	 * a 1.1 session's nwk_s_key is its FNwkSIntKey, beside its SNwkSIntKey and NwkSEncKey
	 */
	fprintf(fp,
		"dev_eui,dev_addr,nwk_s_key,app_s_key,fcnt_start,fport,confirmed,payload,freq_hz,datr,codr,"
		"rssi,lsnr,gateways,join_eui,app_key,dev_nonce,mac_version,s_nwk_s_int_key,nwk_s_enc_key,"
		"nwk_key\n");
	for (size_t i = 0; i < f->ndev; i++) {
		const struct lw_device *d = &f->dev[i];
		char addr[9] = "";

		hex(e, d->dev_eui, 8);
		a[0] = b[0] = 0;
		if (d->has_session) {
			snprintf(addr, sizeof(addr), "%08x", d->dev_addr);
			hex(a, d->nwk_s_key, 16);
			hex(b, d->app_s_key, 16);
		}
		hex(p, d->payload, d->payload_len);
		fprintf(fp, "%s,%s,%s,%s,%u,%u,%u,%s,%u,SF%uBW%u,%s,%d,%.1f,", e, addr, a, b,
			d->fcnt_start, d->fport, d->confirmed, p, d->freq_hz, d->sf, d->bw_khz,
			lw_codr_names[d->codr], d->rssi, d->lsnr10 / 10.0);
		for (unsigned int k = 0; k < f->heard_by; k++) {
			hex(e, f->gw[d->gw[k]].eui, 8);
			fprintf(fp, "%s%s", k ? ";" : "", e);
		}
		if (d->otaa) {
			hex(e, d->join_eui, 8);
			hex(a, d->app_key, 16);
			fprintf(fp, ",%s,%s,%u", e, a, d->dev_nonce);
		} else {
			fputs(",,,", fp);
		}
		a[0] = b[0] = 0;
		if (d->v11 && d->has_session) {
			hex(a, d->s_nwk_s_int_key, 16);
			hex(b, d->nwk_s_enc_key, 16);
		}
		fprintf(fp, ",%s,%s,%s,", d->v11 ? "1.1.0" : "1.0.3", a, b);
		a[0] = 0;
		if (d->join11)
			hex(a, d->nwk_key, 16);
		fprintf(fp, "%s\n", a);
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

		if (sscanf(s + 2 * i, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
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
			pr_warn("%s:%zu: gateway_eui '%s' is not 16 hex digits\n", path, lineno,
				fl[0]);
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
/* mac_version (fields 17..): 1.0.x, or 1.1 (d->v11). 0 or -EINVAL after a line */
static int parse_version(struct lw_device *d, char **fl, int n, const char *where)
{
	if (n >= 20 && *fl[17] && strncmp(fl[17], "1.0.", 4)) {
		if (strcmp(fl[17], "1.1.0") && strcmp(fl[17], "1.1")) {
			pr_warn("%s: mac_version '%s' is not 1.0.x or 1.1.0\n", where, fl[17]);
			return -EINVAL;
		}
		d->v11 = true;
	}
	if (n >= 20 && !strncmp(fl[17], "1.0.", 4) &&
	    (!fl[17][4] || !strchr("01234", fl[17][4]) || fl[17][5])) {
		pr_warn("%s: mac_version '%s' is not 1.0.x or 1.1.0\n", where, fl[17]);
		return -EINVAL;
	}
	return 0;
}

/* OTAA: join_eui, app_key, dev_nonce (fields 14..16), 1.1's nwk_key (20). 0 or -EINVAL after a line */
static int parse_join(struct lw_device *d, char **fl, int n, const char *where)
{
	long v;

	if (n >= 17 && (*fl[14] || *fl[15] || *fl[16])) {
		if (unhex(fl[14], strlen(fl[14]), d->join_eui, 8)) {
			pr_warn("%s: join_eui '%s' is not 16 hex digits\n", where, fl[14]);
			return -EINVAL;
		}
		if (unhex(fl[15], strlen(fl[15]), d->app_key, 16)) {
			pr_warn("%s: app_key '%s' is not 32 hex digits\n", where, fl[15]);
			return -EINVAL;
		}
		if (parse_long(fl[16], 0, 65535, &v)) {
			pr_warn("%s: dev_nonce '%s' is not a number from 0 to 65535\n", where,
				fl[16]);
			return -EINVAL;
		}
		d->dev_nonce = v;
		d->otaa = true;
	}
	if (n == 21 && *fl[20]) {
		if (unhex(fl[20], strlen(fl[20]), d->nwk_key, 16)) {
			pr_warn("%s: nwk_key '%s' is not 32 hex digits\n", where, fl[20]);
			return -EINVAL;
		}
		d->join11 = true;
	}
	return 0;
}

/*
 * The session: dev_addr, nwk_s_key, app_s_key (fields 1..3), 1.1's two
 * network keys (18, 19); all of them, or none for an OTAA device that has
 * not joined. 0 or -EINVAL after a line.
 */
static int parse_session(struct lw_device *d, char **fl, const char *where)
{
	/* the session: all three fields, or none for an OTAA device that has not joined */
	if (d->otaa && !*fl[1] && !*fl[2] && !*fl[3]) {
		d->has_session = false;
	} else {
		uint8_t a[4];

		if (unhex(fl[1], strlen(fl[1]), a, 4)) {
			pr_warn("%s: dev_addr '%s' is not 8 hex digits%s\n", where, fl[1],
				d->otaa ? "" :
					  " (empty only for OTAA devices that have not joined)");
			return -EINVAL;
		}
		d->dev_addr = (uint32_t)a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
		if (unhex(fl[2], strlen(fl[2]), d->nwk_s_key, 16)) {
			pr_warn("%s: nwk_s_key '%s' is not 32 hex digits\n", where, fl[2]);
			return -EINVAL;
		}
		if (unhex(fl[3], strlen(fl[3]), d->app_s_key, 16)) {
			pr_warn("%s: app_s_key '%s' is not 32 hex digits\n", where, fl[3]);
			return -EINVAL;
		}
		if (d->v11 && unhex(fl[18], strlen(fl[18]), d->s_nwk_s_int_key, 16)) {
			pr_warn("%s: s_nwk_s_int_key '%s' is not 32 hex digits (a 1.1 session has one)\n",
				where, fl[18]);
			return -EINVAL;
		}
		if (d->v11 && unhex(fl[19], strlen(fl[19]), d->nwk_s_enc_key, 16)) {
			pr_warn("%s: nwk_s_enc_key '%s' is not 32 hex digits (a 1.1 session has one)\n",
				where, fl[19]);
			return -EINVAL;
		}
		d->has_session = true;
	}
	return 0;
}

/* The uplinks: fcnt_start, fport, confirmed, payload (fields 4..7). 0 or -EINVAL after a line */
static int parse_uplink(struct lw_device *d, char **fl, const char *where)
{
	long v;

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
	return 0;
}

/* The radio: freq_hz, datr, codr, rssi, lsnr (fields 8..12), its channel. 0 or -EINVAL after a line */
static int parse_radio(struct lw_device *d, char **fl, const char *where)
{
	double s;
	char *end;
	long v;

	if (parse_long(fl[8], 100000000, 3000000000L, &v)) {
		pr_warn("%s: freq_hz '%s' is not a frequency in Hz (e.g. 868100000)\n", where,
			fl[8]);
		return -EINVAL;
	}
	d->freq_hz = v;
	if (lw_parse_datr(fl[9], &d->sf, &d->bw_khz)) {
		pr_warn("%s: datr '%s' is not SF<7..12>BW<125|250|500>\n", where, fl[9]);
		return -EINVAL;
	}
	d->codr = 255;
	for (size_t c = 0; c < sizeof(lw_codr_names) / sizeof(lw_codr_names[0]); c++)
		if (!strcmp(fl[10], lw_codr_names[c]))
			d->codr = c;
	if (d->codr == 255) {
		pr_warn("%s: codr '%s' is not 4/5, 4/6, 4/7 or 4/8\n", where, fl[10]);
		return -EINVAL;
	}
	if (parse_long(fl[11], -200, 20, &v)) {
		pr_warn("%s: rssi '%s' is not a whole number of dBm from -200 to 20\n", where,
			fl[11]);
		return -EINVAL;
	}
	d->rssi = v;
	s = strtod(fl[12], &end);
	/* NaN fails every comparison: only a number inside the range passes */
	if (!*fl[12] || *end || !(s >= -30 && s <= 30)) {
		pr_warn("%s: lsnr '%s' is not an SNR in dB from -30 to 30\n", where, fl[12]);
		return -EINVAL;
	}
	d->lsnr10 = s * 10 + (s < 0 ? -0.5 : 0.5);
	d->chan = lw_chan_of(d->freq_hz) < 0 ? 0 : lw_chan_of(d->freq_hz);
	return 0;
}

/* The gateways that hear it (field 13: EUIs of gateways.csv, as many as the devices before). 0 or -EINVAL after a line */
static int parse_gateways(struct lw_fleet *f, const struct lw_eui_index *gidx, struct lw_device *d,
			  char *field, const char *where)
{
	char *gws[XR_LORA_MAX_HEARD + 1];
	int ng;

	ng = split(field, gws, XR_LORA_MAX_HEARD, ';');
	if (ng > XR_LORA_MAX_HEARD || !*field) {
		pr_warn("%s: gateways: 1 to %d EUIs separated by ';'\n", where, XR_LORA_MAX_HEARD);
		return -EINVAL;
	}
	if (!f->heard_by)
		f->heard_by = ng;
	if ((unsigned int)ng != f->heard_by) {
		pr_warn("%s: heard by %d gateways, the devices before by %u: xdpreplay needs the same number "
			"for every device\n",
			where, ng, f->heard_by);
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
	return 0;
}

static int parse_device(struct lw_fleet *f, const struct lw_eui_index *gidx, char *line,
			struct lw_device *d, const char *where)
{
	char *fl[22], why[160];
	int n;

	memset(d, 0, sizeof(*d));
	/*
	 * 14 fields (ABP fleets before OTAA), 17 with join_eui,app_key,dev_nonce, 20 with
	 * mac_version,s_nwk_s_int_key,nwk_s_enc_key, or 21 with nwk_key (1.1 OTAA)
	 */
	n = split(line, fl, 21, ',');
	if (n != 14 && n != 17 && n != 20 && n != 21) {
		pr_warn("%s: %d fields, expected 21 (dev_eui,...,gateways,join_eui,app_key,dev_nonce,"
			"mac_version,s_nwk_s_int_key,nwk_s_enc_key,nwk_key)\n",
			where, n > 21 ? 22 : n);
		return -EINVAL;
	}
	if (parse_version(d, fl, n, where))
		return -EINVAL;
	if (unhex(fl[0], strlen(fl[0]), d->dev_eui, 8)) {
		pr_warn("%s: dev_eui '%s' is not 16 hex digits\n", where, fl[0]);
		return -EINVAL;
	}
	if (parse_join(d, fl, n, where) || parse_session(d, fl, where) ||
	    parse_uplink(d, fl, where) || parse_radio(d, fl, where) ||
	    parse_gateways(f, gidx, d, fl[13], where))
		return -EINVAL;
	if (lw_check_device(f, d, why, sizeof(why))) {
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
	size_t cap = 0, lineno = 0, naddr = 0;
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
		if (f->dev[i].has_session)
			aidx[naddr++] = (struct addr_idx){ f->dev[i].dev_addr, i };
	qsort(aidx, naddr, sizeof(*aidx), cmp_addr);
	for (size_t i = 1; i < naddr; i++)
		if (aidx[i].addr == aidx[i - 1].addr) {
			size_t a = aidx[i - 1].idx, b = aidx[i].idx;

			pr_warn("%s: dev_addr %08x is used twice (devices %zu and %zu)\n", path,
				aidx[i].addr, (a < b ? a : b) + 1, (a < b ? b : a) + 1);
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
