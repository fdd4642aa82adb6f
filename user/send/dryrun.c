// SPDX-License-Identifier: GPL-2.0
/*
 * --pcap-out: the frames a run would send, written instead of sent, so that
 * they can be looked at (Wireshark, tcpdump -r) before a load test. Frame n
 * is the frame set's frame of n with the plan's ops applied by the userspace
 * reference (rewrite_apply), which selftest holds byte for byte against the
 * BPF rewrite; each is stamped with its departure time under the run's pacing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "engine/engine.h"
#include "frames/rewrite.h"
#include "send/run.h"
#include "util/log.h"

#define PCAP_OUT_MAX 1000000

/* pcap with nanosecond stamps, in this host's byte order (the magic tells readers which) */
struct pcap_file_header {
	uint32_t magic;
	uint16_t major, minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_record {
	uint32_t sec, nsec, caplen, len;
};

/* n's departure in the whole run (a shard's pps is its part of the whole's) */
static uint64_t departure_ns(const struct engine_opts *o, const struct frameset *fs, uint64_t n,
			     uint64_t pass, const struct fs_frame *fr)
{
	double whole_pps = o->pps * (o->shards > 1 ? o->shards : 1);

	switch (o->pace) {
	case XR_PACE_RATE: return o->pps > 0 ? (uint64_t)((n - o->first_n) * 1e9 / whole_pps) : 0;
	case XR_PACE_PCAP:
		return o->multiplier > 0 ?
			       (uint64_t)((pass * fs->span_ns + fr->ts_ns) / o->multiplier) :
			       0;
	default: return 0; /* top speed: no schedule */
	}
}

int send_pcap_out(const struct send_opts *so, const struct engine_opts *o,
		  const struct frameset *fs)
{
	struct pcap_file_header h = { .magic = 0xa1b23c4d,
				      .major = 2,
				      .minor = 4,
				      .snaplen = 65535,
				      .linktype = 1 };
	uint64_t count = o->count == XR_FOREVER || !o->count ? fs->n : o->count;
	uint64_t div = o->frame_div > 1 ? o->frame_div : 1;
	static uint8_t buf[XR_MAX_FRAME];
	int err = 0;
	FILE *f;

	if (o->hook != XR_HOOK_NONE) {
		pr_warn("--pcap-out: %s builds each frame's contents in BPF as it sends it: the frames "
			"cannot be written ahead\n",
			so->cmd);
		return -EOPNOTSUPP;
	}
	if (count > PCAP_OUT_MAX) {
		pr_warn("warning: --pcap-out: writing the first %d of %llu frames\n", PCAP_OUT_MAX,
			(unsigned long long)count);
		count = PCAP_OUT_MAX;
	}
	f = fopen(so->pcap_out, "wb");
	if (!f) {
		err = -errno;
		pr_warn("cannot write %s: %s\n", so->pcap_out, strerror(errno));
		return err;
	}
	fwrite(&h, sizeof(h), 1, f);
	for (uint64_t k = 0; k < count; k++) {
		uint64_t n = xr_seq(o->first_n, k, o->shard, o->shards, div), i = (n / div) % fs->n;
		const struct fs_frame *fr = &fs->frames[i];
		uint64_t t = departure_ns(o, fs, n, (n / div) / fs->n, fr);
		struct pcap_record r = { .sec = t / 1000000000,
					 .nsec = t % 1000000000,
					 .caplen = fr->len,
					 .len = fr->orig_len > fr->len ? fr->orig_len : fr->len };

		memcpy(buf, fs->bytes + fr->off, fr->len);
		if (!frameset_unplanned(fs, i))
			rewrite_apply(o->ops, o->nops, buf, fr->len, n);
		fwrite(&r, sizeof(r), 1, f);
		fwrite(buf, 1, fr->len, f);
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		pr_warn("cannot write %s: %s\n", so->pcap_out, strerror(-err));
		return err;
	}
	if (!so->quiet)
		fprintf(stderr, "%s: wrote %llu frames to %s (nothing sent)\n", so->cmd,
			(unsigned long long)count, so->pcap_out);
	return 0;
}
