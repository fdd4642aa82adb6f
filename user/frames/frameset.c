// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "frames/frameset.h"

void frameset_init(struct frameset *fs)
{
	memset(fs, 0, sizeof(*fs));
	fs->min_len = UINT32_MAX;
}

void frameset_free(struct frameset *fs)
{
	free(fs->bytes);
	free(fs->frames);
	free(fs->unplanned);
	frameset_init(fs);
}

void frameset_release(struct frameset *fs)
{
	free(fs->bytes);
	free(fs->frames);
	free(fs->unplanned);
	fs->bytes = NULL;
	fs->frames = NULL;
	fs->unplanned = NULL;
	fs->bytes_cap = fs->cap = 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int frameset_add(struct frameset *fs, const void *data, uint32_t len, uint32_t orig_len,
		 uint64_t ts_ns)
{
	struct fs_frame *f;

	if (grow((void **)&fs->bytes, &fs->bytes_cap, fs->bytes_len + len, 1) ||
	    grow((void **)&fs->frames, &fs->cap, fs->n + 1, sizeof(*fs->frames)))
		return -ENOMEM;
	f = &fs->frames[fs->n++];
	f->off = fs->bytes_len;
	f->len = len;
	f->orig_len = orig_len;
	f->ts_ns = ts_ns;
	memcpy(fs->bytes + fs->bytes_len, data, len);
	fs->bytes_len += len;
	if (len > fs->max_len)
		fs->max_len = len;
	if (len < fs->min_len)
		fs->min_len = len;
	return 0;
}

void frameset_finish(struct frameset *fs)
{
	uint64_t last;

	if (!fs->n)
		return;
	last = fs->frames[fs->n - 1].ts_ns;
	/* a looped capture restarts one mean gap after its last frame */
	fs->span_ns = fs->n > 1 ? last + last / (fs->n - 1) : 0;
}
