// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the capture reader (pcap, pcapng, either byte order, gzip of either). */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "frames/frameset.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the reader takes a path: an in-memory file has one */
	static int fd = -1;
	static char path[64];
	struct fs_load_opts lo = { .max_len = 9018,
				   .max_memory = 64 << 20,
				   .max_ratio = 200,
				   .max_gap_ns = 0,
				   .io_buffer = 8192 };
	struct fs_skips sk = {};
	struct frameset fs;

	if (fd < 0) {
		fd = memfd_create("capture", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		xr_verbosity = -1;
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	frameset_init(&fs);
	lo.allow_truncated = size & 1;
	if (!pcap_load(path, &fs, &lo, &sk)) {
		frameset_finish(&fs);
		/* what the engines rely on: frames inside the buffer, times in order */
		for (size_t i = 0; i < fs.n; i++) {
			if (fs.frames[i].off + fs.frames[i].len > fs.bytes_len ||
			    fs.frames[i].len > lo.max_len)
				__builtin_trap();
			if (i && fs.frames[i].ts_ns < fs.frames[i - 1].ts_ns)
				__builtin_trap();
		}
	}
	frameset_free(&fs);
	return 0;
}
