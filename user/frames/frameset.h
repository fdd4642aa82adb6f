/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame set: the frames of a run, read and laid out once. While loading,
 * frames are appended to one growing buffer; an engine then places them in
 * its shared memory (BPF map chunks, AF_XDP UMEM) and the buffer is freed.
 */
#ifndef __XR_FRAMESET_H
#define __XR_FRAMESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fs_frame {
	uint64_t off; /* into frameset.bytes */
	uint32_t len; /* bytes to send */
	uint32_t orig_len; /* length on the wire when captured */
	uint64_t ts_ns; /* capture time relative to the first frame of the set */
};

struct frameset {
	uint8_t *bytes;
	size_t bytes_len, bytes_cap;
	struct fs_frame *frames;
	size_t n, cap;
	uint32_t max_len, min_len;
	uint64_t span_ns; /* capture time of one round: last ts + mean gap */
	/* a bit per frame: sent as it is, the plan's ops skip it (--misfit send); NULL: none */
	uint8_t *unplanned;
};

static inline bool frameset_unplanned(const struct frameset *fs, size_t i)
{
	return fs->unplanned && (fs->unplanned[i / 8] >> (i % 8) & 1);
}

/* Why a frame was not taken into the set; counted, reported, never silent. */
struct fs_skips {
	uint64_t linktype; /* not Ethernet */
	uint64_t truncated; /* caplen < len and --allow-truncated not given */
	uint64_t too_long; /* longer than the interface (or live frames) allow */
	uint64_t too_short; /* shorter than an Ethernet header */
	uint64_t ts_backwards; /* taken, with the timestamp clamped */
	uint64_t gaps_cut; /* capture gaps longer than --max-gap, shortened to it */
	uint64_t max_gap_ns; /* the longest gap between two frames taken (after cutting) */
	size_t max_gap_frame; /* the frame (1-based) after that gap */
};

struct static_rewrite;

struct fs_load_opts {
	uint32_t max_len;
	bool allow_truncated;
	uint64_t max_frames; /* 0 = no limit */
	uint64_t max_memory; /* bytes the frame set may take; 0 = no limit */
	double max_ratio; /* a gzip file may expand this many times its size; 0 = no limit */
	uint64_t max_gap_ns; /* longer capture gaps are shortened to this; 0 = kept */
	unsigned int io_buffer; /* zlib's read buffer; 0 = 256 KiB (the fuzz target takes less) */
	struct static_rewrite *edit; /* applied to each frame taken (static.h); NULL: none */
};

void frameset_init(struct frameset *fs);
void frameset_free(struct frameset *fs);
/* 0 or -ENOMEM; ts_ns must already be relative */
int frameset_add(struct frameset *fs, const void *data, uint32_t len, uint32_t orig_len,
		 uint64_t ts_ns);
/*
 * Frees the bytes and per-frame records once an engine has laid the frames out
 * in its own memory; n, span_ns, bytes_len, min_len and max_len stay.
 */
void frameset_release(struct frameset *fs);
/* Computes span_ns once all files are read. */
void frameset_finish(struct frameset *fs);

/*
 * Reads pcap (us/ns, either byte order) or pcapng, plain or gzip (by magic),
 * appending to fs. Returns 0 or -errno after printing one line naming the
 * file and the problem.
 */
int pcap_load(const char *path, struct frameset *fs, const struct fs_load_opts *o,
	      struct fs_skips *skips);

#endif
