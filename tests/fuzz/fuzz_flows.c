// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: replay --sessions' reading of a capture's TCP flows (any bytes
 * read as a capture, then its frames as TCP flows), with the invariants the
 * sessions rely on checked.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "frames/frameset.h"
#include "proto/tcp/flows.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the reader takes a path: an in-memory file has one */
	static int fd = -1;
	static char path[64];
	struct fs_load_opts lo = { .max_len = 65535,
				   .max_memory = 64 << 20,
				   .max_ratio = 200,
				   .io_buffer = 8192,
				   .allow_truncated = true };
	struct fs_skips sk = {};
	struct tcp_flow_books b;
	struct tcp_capture cap;
	struct frameset fs;
	uint64_t ended;

	if (fd < 0) {
		fd = memfd_create("capture", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		xr_verbosity = -1;
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	frameset_init(&fs);
	if (!pcap_load(path, &fs, &lo, &sk) && !tcp_flows_extract(&fs, &cap, &b)) {
		ended = b.played;
		for (int i = 0; i < TCP_FLOW_SKIPS; i++)
			ended += b.skipped[i];
		if (ended != b.flows || b.played != cap.nflows || b.requests != cap.nsteps ||
		    cap.nkeys > XR_TCP_STEP_KEYS)
			__builtin_trap();
		for (uint32_t f = 0; f < cap.nflows; f++) {
			const struct xr_tcp_flow *fl = &cap.flows[f];

			if (!fl->steps || fl->first + fl->steps > cap.nsteps)
				__builtin_trap();
			for (uint32_t k = 0; k < fl->steps; k++) {
				const struct xr_tcp_step *s = &cap.steps[fl->first + k];

				/* a request's bytes whole, each after the last in the stream */
				if (s->key >= cap.nkeys || !s->len || s->len > XR_TCP_REQUEST_MAX ||
				    s->len != cap.req_len[s->key] ||
				    (k ? s->off != s[-1].off + s[-1].len : s->off != 0))
					__builtin_trap();
			}
		}
		tcp_capture_free(&cap);
	}
	frameset_free(&fs);
	return 0;
}
