// SPDX-License-Identifier: GPL-2.0
/* A join storm's JoinAccepts: see join.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include "proto/lorawan/join.h"
#include "util/log.h"

/* JOIN_ACCEPT_DELAY1 and 2 (LoRaWAN 1.0.3 §7): where a JoinAccept's txpk.tmst puts it */
static const uint32_t join_delays_us[] = { 5000000, 6000000 };

int lw_pull_resp_phy(const char *json, size_t len, uint8_t *phy, size_t cap, size_t *plen,
		     bool *has_tmst, uint32_t *tmst)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL, *txpk, *data, *t;
	unsigned char buf[128];
	const char *b64;
	size_t n, pad = 0;
	int err = -EINVAL, got;

	if (!tok)
		return -ENOMEM;
	if (len > INT32_MAX)
		goto out;
	root = json_tokener_parse_ex(tok, json, len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_object_get_ex(root, "txpk", &txpk) ||
	    !json_object_is_type(txpk, json_type_object) ||
	    !json_object_object_get_ex(txpk, "data", &data) ||
	    !json_object_is_type(data, json_type_string))
		goto out;
	b64 = json_object_get_string(data);
	n = json_object_get_string_len(data);
	/* standard base64 with padding, as the forwarder's and ChirpStack's */
	if (!n || n % 4 || n / 4 * 3 > sizeof(buf) || strlen(b64) != n)
		goto out;
	pad = (b64[n - 1] == '=') + (b64[n - 2] == '=');
	got = EVP_DecodeBlock(buf, (const unsigned char *)b64, n);
	if (got < 0 || (size_t)got < pad || (size_t)got - pad > cap)
		goto out;
	*plen = got - pad;
	memcpy(phy, buf, *plen);
	*has_tmst = json_object_object_get_ex(txpk, "tmst", &t) &&
		    json_object_is_type(t, json_type_int) && json_object_get_int64(t) >= 0 &&
		    json_object_get_int64(t) <= UINT32_MAX;
	*tmst = *has_tmst ? (uint32_t)json_object_get_int64(t) : 0;
	err = 0;
out:
	json_object_put(root);
	json_tokener_free(tok);
	return err;
}

static bool tmst_fits(uint32_t sent, uint32_t txpk)
{
	for (size_t i = 0; i < sizeof(join_delays_us) / sizeof(join_delays_us[0]); i++)
		if (txpk - sent == join_delays_us[i])
			return true;
	return false;
}

/* Opens phy with device d's root key: 1 if it is d's (and d now has its session), 0 if not, -EIO. */
static int try_device(struct lw_join *j, size_t d, const uint8_t *phy, size_t plen, uint64_t rx_ns)
{
	const struct lw_device *dev = &j->fleet->dev[d];
	struct lw_session *s = &j->sessions[d];
	struct lw_join_accept ja;
	int err = lw_join_accept_open(j->c, dev, dev->dev_nonce, phy, plen, &ja);

	if (err == -EBADMSG)
		return 0;
	if (err)
		return err;
	if (s->join_ns) {
		j->duplicates++;
		return 1;
	}
	if (lw_session_keys(j->c, dev, &ja, dev->dev_nonce, &s->keys))
		return -EIO;
	s->dev_addr = ja.dev_addr;
	/* a clock that cannot go back: at least 1 ns marks it joined */
	s->join_ns = rx_ns > j->stamps[d].sent_ns ? rx_ns - j->stamps[d].sent_ns : 1;
	atomic_fetch_add(&j->joined, 1);
	return 1;
}

void lw_join_accept(struct lw_join *j, uint32_t gw, uint64_t rx_ns, const char *json, size_t len)
{
	uint8_t phy[64];
	size_t plen;
	bool has_tmst;
	uint32_t tmst;

	j->accepts++;
	if (lw_pull_resp_phy(json, len, phy, sizeof(phy), &plen, &has_tmst, &tmst) ||
	    (plen != 17 && plen != 33) || phy[0] != 0x20 || gw >= j->fleet->ngw) {
		j->malformed++;
		return;
	}
	/*
	 * First the devices whose JoinRequest it answers by its tmst (joined
	 * ones too: a second answer to one request is a duplicate), then every
	 * device of the gateway that has asked and not joined.
	 */
	for (int pass = has_tmst ? 0 : 1; pass < 2; pass++) {
		for (uint32_t i = j->gw_first[gw]; i < j->gw_first[gw + 1]; i++) {
			uint32_t d = j->gw_devs[i];
			const struct xr_lora_join *st = &j->stamps[d];
			int r;

			if (!st->requests)
				continue;
			if (pass == 0 ? !tmst_fits(st->tmst, tmst) : j->sessions[d].join_ns != 0)
				continue;
			r = try_device(j, d, phy, plen, rx_ns);
			if (r < 0) {
				j->malformed++;
				return;
			}
			if (r) {
				j->by_trial += pass;
				return;
			}
		}
	}
	j->unmatched++;
}

static int on_record(void *ctx, void *data, size_t size)
{
	const struct xr_lora_join_accept *ja = data;

	if (size < sizeof(*ja))
		return 0;
	lw_join_accept(ctx, ja->gw, ja->rx_ns, (const char *)ja->json,
		       ja->len < XR_LORA_JA_JSON ? ja->len : XR_LORA_JA_JSON);
	return 0;
}

static void *join_main(void *arg)
{
	struct lw_join *j = arg;

	while (!atomic_load(&j->stop)) {
		int r = ring_buffer__poll(j->rb, 100);

		if (r < 0 && r != -EINTR) {
			pr_warn("the JoinAccepts' ring buffer: %s\n", strerror(-r));
			break;
		}
	}
	return NULL;
}

int lw_join_init(struct lw_join *j, const struct lw_fleet *f, const struct xr_lora_join *stamps)
{
	memset(j, 0, sizeof(*j));
	j->fleet = f;
	j->stamps = stamps;
	j->c = lw_crypto_new();
	j->sessions = calloc(f->ndev, sizeof(*j->sessions));
	j->gw_first = calloc(f->ngw + 1, sizeof(*j->gw_first));
	j->gw_devs = calloc((size_t)f->ndev * f->heard_by, sizeof(*j->gw_devs));
	if (!j->c || !j->sessions || !j->gw_first || !j->gw_devs)
		goto nomem;
	/* each gateway's devices, in device order: counts, their running sums, then the lists */
	for (size_t d = 0; d < f->ndev; d++)
		for (unsigned int k = 0; k < f->heard_by; k++)
			j->gw_first[f->dev[d].gw[k] + 1]++;
	for (size_t g = 0; g < f->ngw; g++)
		j->gw_first[g + 1] += j->gw_first[g];
	{
		uint32_t *at = calloc(f->ngw, sizeof(*at));

		if (!at)
			goto nomem;
		for (size_t d = 0; d < f->ndev; d++)
			for (unsigned int k = 0; k < f->heard_by; k++) {
				uint16_t g = f->dev[d].gw[k];

				j->gw_devs[j->gw_first[g] + at[g]++] = d;
			}
		free(at);
	}
	return 0;
nomem:
	pr_warn("out of memory for %zu joining devices\n", f->ndev);
	lw_join_stop(j);
	lw_join_free(j);
	return -ENOMEM;
}

int lw_join_start(struct lw_join *j, const struct lw_fleet *f, const struct xr_lora_join *stamps,
		  int ring_fd)
{
	int err = lw_join_init(j, f, stamps);

	if (err)
		return err;
	j->rb = ring_buffer__new(ring_fd, on_record, j, NULL);
	if (!j->rb) {
		err = -errno;
		pr_warn("cannot read the JoinAccepts' ring buffer: %s\n", strerror(errno));
		goto err;
	}
	err = -pthread_create(&j->tid, NULL, join_main, j);
	if (err) {
		pr_warn("cannot start the JoinAccepts' thread: %s\n", strerror(-err));
		goto err;
	}
	j->running = true;
	return 0;
err:
	lw_join_stop(j);
	lw_join_free(j);
	return err;
}

void lw_join_stop(struct lw_join *j)
{
	if (j->running) {
		atomic_store(&j->stop, true);
		pthread_join(j->tid, NULL);
		j->running = false;
		/* what the ring still holds is read: every JoinAccept XDP handed on is accounted for */
		ring_buffer__consume(j->rb);
		for (size_t d = 0; d < j->fleet->ndev; d++) {
			j->sessions[d].requested = j->stamps[d].requests > 0;
			j->requested += j->sessions[d].requested;
		}
	}
	ring_buffer__free(j->rb);
	j->rb = NULL;
	lw_crypto_free(j->c);
	j->c = NULL;
	free(j->gw_first);
	free(j->gw_devs);
	j->gw_first = j->gw_devs = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void lw_join_latency(const struct lw_join *j, size_t ndev, uint64_t out[4])
{
	uint64_t *v = j->sessions ? malloc(ndev * sizeof(*v)) : NULL;
	size_t n = 0;

	memset(out, 0, 4 * sizeof(*out));
	if (!v)
		return;
	for (size_t d = 0; d < ndev; d++)
		if (j->sessions[d].join_ns)
			v[n++] = j->sessions[d].join_ns;
	if (n) {
		qsort(v, n, sizeof(*v), cmp_u64);
		/* nearest rank */
		out[0] = v[(n - 1) * 50 / 100];
		out[1] = v[(n - 1) * 90 / 100];
		out[2] = v[(n - 1) * 99 / 100];
		out[3] = v[n - 1];
	}
	free(v);
}

void lw_join_free(struct lw_join *j)
{
	free(j->sessions);
	j->sessions = NULL;
}
