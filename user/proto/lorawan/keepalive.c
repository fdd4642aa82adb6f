// SPDX-License-Identifier: GPL-2.0
/* PULL_DATA keepalives: see keepalive.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "util/time.h"
#include "proto/lorawan/keepalive.h"
#include "util/log.h"

void lw_build_pull_data(const struct lw_fleet *f, size_t g, const struct lw_net *net, uint8_t *out)
{
	const struct lw_gateway *gw = &f->gw[g];
	uint8_t *pd = out + XR_LORA_PUSH_DATA_OFF;

	lw_udp4_headers(out, net, f->gw_addrs ? gw->saddr : net->saddr,
			f->gw_addrs ? gw->sport : net->sport, LW_PULL_DATA_LEN);
	pd[0] = 2;
	pd[1] = g; /* the token, little-endian as the bridge reads it: the gateway's number */
	pd[2] = g >> 8;
	pd[3] = XR_LORA_PULL_DATA;
	memcpy(pd + 4, gw->eui, 8);
	lw_udp4_csum_fill(out, LW_PULL_DATA_LEN);
}

size_t lw_build_stat(const struct lw_fleet *f, size_t g, const struct lw_net *net, uint16_t tok,
		     const struct lw_stat_counts *sc, time_t now, uint8_t *out)
{
	const struct lw_gateway *gw = &f->gw[g];
	uint8_t *pd = out + XR_LORA_PUSH_DATA_OFF;
	char when[32];
	struct tm tm;
	int n;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S GMT", &tm);
	pd[0] = 2;
	pd[1] = tok; /* little-endian, as the uplinks' */
	pd[2] = tok >> 8;
	pd[3] = 0; /* PUSH_DATA */
	memcpy(pd + 4, gw->eui, 8);
	/* lora_pkt_fwd's fields (Semtech's PROTOCOL.TXT §4) */
	n = snprintf((char *)pd + 12, LW_STAT_MAX - XR_LORA_PUSH_DATA_OFF - 12,
		     "{\"stat\":{\"time\":\"%s\",\"rxnb\":%llu,\"rxok\":%llu,\"rxfw\":%llu,"
		     "\"ackr\":%.1f,\"dwnb\":%llu,\"txnb\":%llu}}",
		     when, (unsigned long long)sc->rx, (unsigned long long)sc->rx,
		     (unsigned long long)sc->rx, sc->ackr, (unsigned long long)sc->dwnb,
		     (unsigned long long)sc->txnb);
	if (n < 0 || n >= LW_STAT_MAX - XR_LORA_PUSH_DATA_OFF - 12)
		n = 0; /* cannot happen: five 20-digit numbers and ackr (0..100) fit */
	lw_udp4_headers(out, net, f->gw_addrs ? gw->saddr : net->saddr,
			f->gw_addrs ? gw->sport : net->sport, XR_LORA_PUSH_DATA_OFF + 12 + n);
	lw_udp4_csum_fill(out, XR_LORA_PUSH_DATA_OFF + 12 + n);
	return XR_LORA_PUSH_DATA_OFF + 12 + n;
}

/* Sleeps until t (CLOCK_MONOTONIC) or until stopped, whichever is first: false when stopped. */
static bool nap_until(struct lw_keepalive *ka, uint64_t t)
{
	for (;;) {
		uint64_t now = now_ns(), step;
		struct timespec ts;

		if (atomic_load(&ka->stop))
			return false;
		if (now >= t)
			return true;
		/* in steps of at most 20 ms: the run's end must not wait for a keepalive */
		step = t - now < 20000000ULL ? t - now : 20000000ULL;
		ts = (struct timespec){ .tv_sec = step / 1000000000ULL,
					.tv_nsec = step % 1000000000ULL };
		nanosleep(&ts, NULL);
	}
}

static bool send_frame(struct lw_keepalive *ka, const uint8_t *frame, size_t len)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = ka->ifindex,
				  .sll_halen = 6 };

	memcpy(to.sll_addr, ka->dst_mac, 6);
	if (sendto(ka->fd, frame, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
		return true;
	ka->last_errno = errno;
	return false;
}

static void send_pull_data(struct lw_keepalive *ka, size_t g)
{
	if (send_frame(ka, ka->frames + g * LW_PULL_DATA_LEN, LW_PULL_DATA_LEN))
		ka->sent++;
	else
		ka->failed++;
}

/*
 * Gateway g's stat. Its token is half the token space ahead of the uplinks
 * being sent, so that no uplink in flight shares it, plus the stat's own
 * number (mod 8192), so that no other stat in flight shares it either: once
 * n stood still (after the run, or while the thread caught up), two stats
 * sent together had one token, and the second's PUSH_ACK found it taken.
 * It is in lora_stat_tok before the frame leaves.
 */
static void send_stat(struct lw_keepalive *ka, size_t g)
{
	uint64_t dl = ka->gw_ctr ? ka->gw_ctr[g].pull_resps : 0,
		 tx = ka->gw_ctr ? ka->gw_ctr[g].tx_acks : 0,
		 acks = ka->gw_ctr ? ka->gw_ctr[g].push_acks : 0,
		 n = ka->cur_n ? ka->cur_n(ka->cur_n_ctx) : 0,
		 rx = ka->gw_index.start ? lw_gw_copies(ka->fleet, &ka->gw_index, g, n) : 0,
		 *prev = ka->stat_prev + 4 * g;
	uint16_t tok = ka->cur_n ? (uint16_t)(n + 32768 + ka->stat_seq++ % 8192) :
				   (uint16_t)random();
	struct lw_stat_counts sc = { .rx = rx - prev[2],
				     .dwnb = dl - prev[0],
				     .txnb = tx - prev[1] };
	uint8_t frame[LW_STAT_MAX];
	uint32_t key = tok, val = g + 1;
	size_t len;

	/* the uplinks' PUSH_ACKs against the uplinks (PUSH_ACKs come late: at most 100%) */
	sc.ackr = sc.rx ? 100.0 * (acks - prev[3]) / sc.rx : 0;
	if (sc.ackr > 100)
		sc.ackr = 100;
	len = lw_build_stat(ka->fleet, g, &ka->net, tok, &sc, time(NULL), frame);
	prev[0] = dl;
	prev[1] = tx;
	prev[2] = rx;
	prev[3] = acks;
	if (bpf_map_update_elem(ka->stat_tok_fd, &key, &val, BPF_ANY)) {
		ka->last_errno = errno;
		ka->stat_failed++;
		return;
	}
	if (send_frame(ka, frame, len)) {
		ka->stat_sent++;
	} else {
		bpf_map_delete_elem(ka->stat_tok_fd, &key);
		ka->stat_failed++;
	}
}

/* Where one of the thread's two schedules (keepalives, stats) is. */
struct ka_cursor {
	uint64_t k, interval;
	size_t g;
};

/*
 * Gateway g's k-th message (k >= 1) is due at t0 + k x interval + g x
 * interval / gateways: evenly spread, never a burst of the whole fleet.
 */
static uint64_t due(const struct lw_keepalive *ka, const struct ka_cursor *c)
{
	return ka->t0 + c->k * c->interval + c->g * c->interval / ka->ngw;
}

static void *keepalive_main(void *arg)
{
	struct lw_keepalive *ka = arg;
	struct ka_cursor pull = { 1, ka->interval_ns, ka->first },
			 stat = { 1, ka->stat_interval_ns, ka->first };

	for (;;) {
		bool is_stat = stat.interval && (!pull.interval || due(ka, &stat) < due(ka, &pull));
		struct ka_cursor *c = is_stat ? &stat : &pull;

		if (!nap_until(ka, due(ka, c)))
			return NULL;
		if (is_stat)
			send_stat(ka, c->g);
		else
			send_pull_data(ka, c->g);
		c->g += ka->step;
		if (c->g >= ka->ngw) {
			c->g = ka->first;
			c->k++;
		}
	}
}

int lw_keepalive_start(struct lw_keepalive *ka, const struct lw_fleet *f, const struct lw_net *net,
		       int ifindex)
{
	int err;

	ka->fd = -1;
	ka->ngw = f->ngw;
	ka->ifindex = ifindex;
	ka->fleet = f;
	ka->net = *net;
	memcpy(ka->dst_mac, net->dst_mac, 6);
	if (!ka->step)
		ka->step = 1;
	if (ka->first >= f->ngw || (!ka->interval_ns && !ka->stat_interval_ns))
		return 0; /* none of the gateways is this shard's: nothing to start or stop */
	ka->started = true;
	ka->frames = ka->interval_ns ? malloc(f->ngw * LW_PULL_DATA_LEN) : NULL;
	ka->stat_prev = ka->stat_interval_ns ? calloc(4 * f->ngw, sizeof(*ka->stat_prev)) : NULL;
	if ((ka->interval_ns && !ka->frames) || (ka->stat_interval_ns && !ka->stat_prev) ||
	    (ka->stat_interval_ns && ka->cur_n && lw_gw_index_build(f, &ka->gw_index))) {
		err = -ENOMEM;
		goto err;
	}
	/* what each gateway received before the run's first sequence number is not this run's */
	for (size_t g = 0; g < f->ngw && ka->gw_index.start; g++)
		ka->stat_prev[4 * g + 2] =
			lw_gw_copies(f, &ka->gw_index, g, ka->cur_n(ka->cur_n_ctx));
	for (size_t g = 0; g < f->ngw && ka->frames; g++)
		lw_build_pull_data(f, g, net, ka->frames + g * LW_PULL_DATA_LEN);
	/* protocol 0: the socket sends, never receives */
	ka->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (ka->fd < 0) {
		err = -errno;
		pr_warn("cannot open a packet socket for the keepalives: %s\n", strerror(errno));
		goto err;
	}
	/*
	 * The first round at once, before any uplink: a forwarder sends one as it
	 * starts, and the server sends a gateway's downlinks only where its
	 * PULL_DATA came from
	 */
	ka->t0 = now_ns();
	for (size_t g = ka->first; g < ka->ngw && ka->interval_ns; g += ka->step)
		send_pull_data(ka, g);
	atomic_store(&ka->stop, false);
	err = -pthread_create(&ka->tid, NULL, keepalive_main, ka);
	if (err) {
		pr_warn("cannot start the keepalive thread: %s\n", strerror(-err));
		goto err;
	}
	ka->running = true;
	return 0;
err:
	if (ka->fd >= 0)
		close(ka->fd);
	ka->fd = -1;
	free(ka->frames);
	ka->frames = NULL;
	free(ka->stat_prev);
	ka->stat_prev = NULL;
	lw_gw_index_free(&ka->gw_index);
	ka->started = false;
	return err;
}

void lw_keepalive_stop(struct lw_keepalive *ka)
{
	if (!ka->started)
		return; /* never started */
	if (ka->running) {
		atomic_store(&ka->stop, true);
		pthread_join(ka->tid, NULL);
		ka->running = false;
	}
	if (ka->fd >= 0)
		close(ka->fd);
	ka->fd = -1;
	free(ka->frames);
	ka->frames = NULL;
	free(ka->stat_prev);
	ka->stat_prev = NULL;
	lw_gw_index_free(&ka->gw_index);
	ka->started = false;
}
