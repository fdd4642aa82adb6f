// SPDX-License-Identifier: GPL-2.0
/* xdpreplay selftest: gen mqtt's per-session bytes in XDP against user/proto/mqtt/stream.c's. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "selftest/selftest.h"
#include "proto/mqtt/stream.h"
#include "proto/tcp/session.h"
#include "xdpreplay.h"
#include "selftest.skel.h"

/* One stream's shape per load: its CONNECT and burst, and random segments of both. */
static int mqtt_patch_cases(const struct mqtt_stream_opts *o, uint64_t cases, uint64_t (*rnd)(void),
			    uint64_t *checked, uint64_t *mismatches)
{
	static struct xr_mqtt_patch_test t;
	static uint8_t want[sizeof(t.seg)];
	uint8_t *connect = NULL, *burst = NULL;
	size_t connect_len, burst_len;
	struct selftest_bpf *skel = NULL;
	struct xr_mqtt_cfg cfg;
	int err;

	err = mqtt_stream_build(o, &connect, &connect_len, &burst, &burst_len, &cfg);
	if (err)
		return err;
	skel = selftest_bpf__open();
	if (!skel) {
		err = -errno;
		goto out;
	}
	skel->rodata->mqtt_cfg = cfg;
	err = selftest_bpf__load(skel);
	if (err)
		goto out;
	for (uint64_t c = 0; c < cases; c++) {
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = want, .data_size_in = 64,
			    .repeat = 1);
		const uint8_t *req;
		size_t rlen;

		memset(&t, 0, sizeof(t));
		t.s.c32 = c < 2 ? (uint32_t[]){ 0, UINT32_MAX }[c] : rnd();
		t.s.k = c % 3 == 0 ? 0 : 1 + rnd() % 4000;
		t.s.t_req = rnd();
		req = t.s.k ? burst : connect;
		rlen = t.s.k ? burst_len : connect_len;
		t.off = rnd() % rlen;
		t.len = 1 + rnd() % (rlen - t.off < sizeof(t.seg) ? rlen - t.off : sizeof(t.seg));
		memcpy(t.seg, req + t.off, t.len);
		memcpy(want, t.seg, t.len);
		mqtt_stream_patch(&cfg, &t.s, want, t.off, t.len);
		err = test_prog_run(skel->maps.mqtt_patch_test, skel->progs.xr_mqtt_patch_test, &t,
				    &topts);
		if (err)
			break;
		(*checked)++;
		if (memcmp(t.seg, want, t.len) && ++*mismatches <= 5)
			fprintf(stderr,
				"selftest mqtt: QoS %u, %u B payload, bursts of %u, request %u, bytes "
				"%u..%u: differ from user/proto/mqtt/stream.c's\n",
				o->qos, o->payload, o->burst, t.s.k, t.off, t.off + t.len);
	}
out:
	selftest_bpf__destroy(skel);
	free(connect);
	free(burst);
	return err;
}

int selftest_mqtt(uint64_t cases, uint64_t (*rnd)(void), uint64_t *checked, uint64_t *mismatches,
		  unsigned int *nshapes)
{
	static const struct mqtt_stream_opts shapes[] = {
		{ .client_id = "xr-{c}",
		  .topic = "msg/{c}",
		  .version = 4,
		  .qos = 1,
		  .payload = 64,
		  .burst = 1,
		  .keepalive_s = 60,
		  .username = "u",
		  .password = "p" },
		{ .client_id = "{c}",
		  .topic = "t",
		  .version = 5,
		  .qos = 0,
		  .payload = 16,
		  .burst = 40,
		  .keepalive_s = 60 },
		{ .client_id = "a{c}b",
		  .topic = "req/{c}/x",
		  .version = 5,
		  .qos = 1,
		  .payload = 15,
		  .burst = 64,
		  .keepalive_s = 1 },
		{ .client_id = "xr-{c}",
		  .topic = "msg/{c}",
		  .version = 4,
		  .qos = 0,
		  .payload = 10240,
		  .burst = 1,
		  .keepalive_s = 60 },
		/* the largest: a Remaining Length of three bytes */
		{ .client_id = "xr-{c}",
		  .topic = "msg/{c}",
		  .version = 5,
		  .qos = 1,
		  .payload = XR_MQTT_PAYLOAD_MAX,
		  .burst = 1,
		  .keepalive_s = 60 },
		{ .client_id = "xr-{c}",
		  .topic = "res/{c}",
		  .version = 4,
		  .qos = 1,
		  .payload = 200,
		  .burst = 64,
		  .keepalive_s = 60 },
		/* callers: request 0's SUBSCRIBE holds {c} too */
		{ .client_id = "caller-{c}",
		  .topic = "req/{c}",
		  .await = "res/{c}/answers",
		  .version = 5,
		  .payload = 16,
		  .burst = 10,
		  .keepalive_s = 60,
		  .username = "bench" },
		{ .client_id = "{c}",
		  .topic = "req/x",
		  .await = "{c}",
		  .version = 4,
		  .payload = 40,
		  .burst = 1 },
	};
	int err = 0;

	*nshapes = sizeof(shapes) / sizeof(shapes[0]);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]) && !err; i++)
		err = mqtt_patch_cases(&shapes[i], cases / (sizeof(shapes) / sizeof(shapes[0])) + 1,
				       rnd, checked, mismatches);
	return err;
}
