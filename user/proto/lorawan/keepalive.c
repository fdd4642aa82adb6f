// SPDX-License-Identifier: GPL-2.0
/* PULL_DATA keepalives: see keepalive.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "engine/pacer.h"
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

static void send_pull_data(struct lw_keepalive *ka, size_t g)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET,
				  .sll_ifindex = ka->ifindex,
				  .sll_halen = 6 };

	memcpy(to.sll_addr, ka->dst_mac, 6);
	if (sendto(ka->fd, ka->frames + g * LW_PULL_DATA_LEN, LW_PULL_DATA_LEN, 0,
		   (struct sockaddr *)&to, sizeof(to)) == LW_PULL_DATA_LEN) {
		ka->sent++;
	} else {
		ka->failed++;
		ka->last_errno = errno;
	}
}

/*
 * Gateway g's k-th keepalive (k >= 1) is due at t0 + k x interval + g x
 * interval / gateways: evenly spread, never a burst of the whole fleet.
 */
static void *keepalive_main(void *arg)
{
	struct lw_keepalive *ka = arg;

	for (uint64_t k = 1;; k++) {
		for (size_t g = ka->first; g < ka->ngw; g += ka->step) {
			if (!nap_until(ka, ka->t0 + k * ka->interval_ns +
						   g * ka->interval_ns / ka->ngw))
				return NULL;
			send_pull_data(ka, g);
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
	memcpy(ka->dst_mac, net->dst_mac, 6);
	if (!ka->step)
		ka->step = 1;
	if (ka->first >= f->ngw)
		return 0; /* none of the gateways is this shard's: nothing to start or stop */
	ka->frames = malloc(f->ngw * LW_PULL_DATA_LEN);
	if (!ka->frames)
		return -ENOMEM;
	for (size_t g = 0; g < f->ngw; g++)
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
	for (size_t g = ka->first; g < ka->ngw; g += ka->step)
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
	return err;
}

void lw_keepalive_stop(struct lw_keepalive *ka)
{
	if (!ka->frames)
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
}
