// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay replay's frames: the Ethernet frames of pcap/pcapng files
 * (plain or gzip), read once into the frame set within loading limits, and
 * played in order, --loop times.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "send/opts.h"
#include "util/log.h"
#include "util/units.h"

enum { O_LOOP = PROTO_OPT_BASE, O_TRUNC, O_PRELOAD, O_MAXMEM, O_MAXRATIO, O_MAXGAP };

struct capture {
	uint64_t loop;
	bool have_loop;
	struct fs_load_opts lo;
	bool have_maxmem, have_ratio;
	struct fs_skips sk;
};

static const struct option capture_opts[] = {
	{ "loop", required_argument, NULL, O_LOOP },
	{ "allow-truncated", no_argument, NULL, O_TRUNC },
	{ "preload", required_argument, NULL, O_PRELOAD },
	{ "max-memory", required_argument, NULL, O_MAXMEM },
	{ "max-ratio", required_argument, NULL, O_MAXRATIO },
	{ "max-gap", required_argument, NULL, O_MAXGAP },
	{},
};

static int capture_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct capture *c = st;

	switch (id) {
	case O_LOOP:
		if (cli_count(so->cmd, "loop", arg, &c->loop))
			return XR_EXIT_USAGE;
		c->have_loop = true;
		break;
	case O_TRUNC: c->lo.allow_truncated = true; break;
	case O_PRELOAD:
		if (cli_count(so->cmd, "preload", arg, &c->lo.max_frames))
			return XR_EXIT_USAGE;
		if (!c->lo.max_frames)
			return cli_usage_error(so->cmd, "--preload must be above 0");
		break;
	case O_MAXMEM:
		if (cli_count(so->cmd, "max-memory", arg, &c->lo.max_memory))
			return XR_EXIT_USAGE;
		c->have_maxmem = true;
		break;
	case O_MAXRATIO:
		if (cli_number(so->cmd, "max-ratio", arg, &c->lo.max_ratio))
			return XR_EXIT_USAGE;
		c->have_ratio = true;
		break;
	case O_MAXGAP:
		if (cli_duration(so->cmd, "max-gap", arg, &c->lo.max_gap_ns))
			return XR_EXIT_USAGE;
		break;
	}
	return -1;
}

static void warn_skips(const struct capture *c, const struct send_opts *so,
		       const struct frameset *fs, bool preload_auto)
{
	const struct fs_skips *sk = &c->sk;

	if (c->lo.max_frames && fs->n == c->lo.max_frames && !preload_auto)
		pr_warn("warning: --preload %llu: playing the first %zu frames only\n",
			(unsigned long long)c->lo.max_frames, fs->n);
	if (sk->gaps_cut)
		pr_warn("warning: %llu capture gaps longer than --max-gap shortened to it\n",
			(unsigned long long)sk->gaps_cut);
	else if (so->pace == XR_PACE_PCAP && sk->max_gap_ns > 10000000000ULL)
		pr_warn("warning: a capture gap of %s before frame %zu will be waited out (x%g): --max-gap T "
			"shortens such gaps\n",
			fmt_duration(sk->max_gap_ns, (char[16]){}, 16), sk->max_gap_frame,
			so->multiplier);
	if (sk->linktype)
		pr_warn("warning: skipped %llu frames of non-Ethernet link types\n",
			(unsigned long long)sk->linktype);
	if (sk->truncated)
		pr_warn("warning: skipped %llu frames captured shorter than they were (--allow-truncated sends them)\n",
			(unsigned long long)sk->truncated);
	if (sk->too_long)
		pr_warn("warning: skipped %llu frames longer than %s allows (%u bytes)\n",
			(unsigned long long)sk->too_long, so->ifname, c->lo.max_len);
	if (sk->too_short)
		pr_warn("warning: skipped %llu frames shorter than an Ethernet header\n",
			(unsigned long long)sk->too_short);
}

static int capture_build(void *st, const struct send_opts *so, const struct iface *ifc,
			 struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	struct capture *c = st;
	bool preload_auto = false;
	int err;

	/* loading limits: half of this machine's memory, and gzip files that expand 200x at most */
	if (!c->have_maxmem)
		c->lo.max_memory = (uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 2;
	if (!c->have_ratio)
		c->lo.max_ratio = 200;
	/* an 802.1Q tag may ride on top of the MTU; live frames cap the rest */
	c->lo.max_len = ifc->mtu + 14 + 4;
	if (c->lo.max_len > XR_MAX_FRAME)
		c->lo.max_len = XR_MAX_FRAME;
	/* --count N below the capture's size plays its first N frames: no need to read the rest */
	if (so->count && (!c->lo.max_frames || so->count < c->lo.max_frames)) {
		c->lo.max_frames = so->count;
		preload_auto = true;
	}
	for (int i = 0; i < so->nfiles; i++) {
		err = pcap_load(so->files[i], fs, &c->lo, &c->sk);
		if (err)
			return err == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	frameset_finish(fs);
	warn_skips(c, so, fs, preload_auto);
	if (!fs->n)
		pr_warn("no frame to send in %s%s\n", so->files[0],
			so->nfiles > 1 ? " and the other files" : "");
	o->umem_limit = c->lo.max_memory;
	return 0;
}

static uint64_t capture_count(void *st, const struct send_opts *so, const struct frameset *fs)
{
	const struct capture *c = st;
	uint64_t loop = c->have_loop ? c->loop : 1;

	if (loop == 0 || (so->duration_ns && !c->have_loop) || fs->n > UINT64_MAX / loop)
		return XR_FOREVER;
	return fs->n * loop;
}

static void capture_report(void *st, const struct engine_result *res, uint64_t ready_ns,
			   FILE *human, struct json *j)
{
	const struct fs_skips *sk = &((struct capture *)st)->sk;

	if (human && (sk->linktype || sk->truncated || sk->too_long || sk->too_short))
		fprintf(human,
			"  skipped while reading: %llu non-Ethernet, %llu truncated, %llu too long, "
			"%llu too short\n",
			(unsigned long long)sk->linktype, (unsigned long long)sk->truncated,
			(unsigned long long)sk->too_long, (unsigned long long)sk->too_short);
	if (!j)
		return;
	json_open(j, "skipped", '{');
	json_u64(j, "non_ethernet", sk->linktype);
	json_u64(j, "truncated", sk->truncated);
	json_u64(j, "too_long", sk->too_long);
	json_u64(j, "too_short", sk->too_short);
	json_close(j, '}');
}

const struct xr_proto proto_capture = {
	.name = "capture",
	.summary = "the frames of pcap/pcapng files",
	.usage =
		"      --loop N            play the files N times (default 1, or until --duration\n"
		"                          ends when that is given; 0 = until stopped)\n"
		"      --allow-truncated   send frames captured shorter than they were, as captured\n"
		"      --preload N         load at most N frames (the rest of the files is not read);\n"
		"                          the frame set lives in memory: frame bytes + 24 bytes a\n"
		"                          frame in BPF maps (2 KiB a frame in an AF_XDP UMEM)\n"
		"      --max-memory N      refuse captures whose frames take more than N bytes\n"
		"                          (default: half of this machine's memory)\n"
		"      --max-ratio R       refuse gzip files that expand more than R times (200)\n"
		"      --max-gap T         shorten capture gaps longer than T to T (capture timing)\n",
	.opts = capture_opts,
	.accepts = SO_REWRITE | SO_FILES,
	.state_size = sizeof(struct capture),
	.parse_opt = capture_opt,
	.build = capture_build,
	.default_count = capture_count,
	.report = capture_report,
};
