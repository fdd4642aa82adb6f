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
#include "frames/rewrite.h"
#include "frames/static.h"
#include "proto/proto.h"
#include "send/opts.h"
#include "util/log.h"
#include "util/units.h"

enum {
	O_LOOP = PROTO_OPT_BASE,
	O_TRUNC,
	O_PRELOAD,
	O_MAXMEM,
	O_MAXRATIO,
	O_MAXGAP,
	O_SRCMAC,
	O_DSTMAC,
	O_MAPIP,
	O_MAPPORT,
	O_TTL,
	O_VLANPUSH,
	O_VLANSTRIP,
	O_MTUTRUNC,
	O_MISFIT,
};

struct capture {
	uint64_t loop;
	bool have_loop;
	struct fs_load_opts lo;
	bool have_maxmem, have_ratio;
	struct fs_skips sk;
	struct static_rewrite sr;
	uint64_t ops_misfits; /* frames the --rewrite ops do not fit: sent as they were, or left out */
};

static const struct option capture_opts[] = {
	{ "loop", required_argument, NULL, O_LOOP },
	{ "allow-truncated", no_argument, NULL, O_TRUNC },
	{ "preload", required_argument, NULL, O_PRELOAD },
	{ "max-memory", required_argument, NULL, O_MAXMEM },
	{ "max-ratio", required_argument, NULL, O_MAXRATIO },
	{ "max-gap", required_argument, NULL, O_MAXGAP },
	{ "src-mac", required_argument, NULL, O_SRCMAC },
	{ "dst-mac", required_argument, NULL, O_DSTMAC },
	{ "map-ip", required_argument, NULL, O_MAPIP },
	{ "map-port", required_argument, NULL, O_MAPPORT },
	{ "ttl", required_argument, NULL, O_TTL },
	{ "vlan-push", required_argument, NULL, O_VLANPUSH },
	{ "vlan-strip", no_argument, NULL, O_VLANSTRIP },
	{ "mtu-trunc", no_argument, NULL, O_MTUTRUNC },
	{ "misfit", required_argument, NULL, O_MISFIT },
	{},
};

/* --src-mac / --dst-mac: MAC, or auto (the interface's own; the neighbour table's) */
static int mac_opt(const struct send_opts *so, const char *opt, const char *arg, enum mac_how *how,
		   uint8_t mac[6])
{
	if (!strcmp(arg, "auto")) {
		*how = MAC_AUTO;
		return -1;
	}
	if (parse_mac(arg, mac))
		return cli_usage_error(so->cmd, "--%s: '%s' is not a MAC address or auto", opt,
				       arg);
	*how = MAC_SET;
	return -1;
}

static int static_opt(struct static_rewrite *sr, int id, const char *arg,
		      const struct send_opts *so)
{
	switch (id) {
	case O_SRCMAC: return mac_opt(so, "src-mac", arg, &sr->src_mac_how, sr->src_mac);
	case O_DSTMAC: return mac_opt(so, "dst-mac", arg, &sr->dst_mac_how, sr->dst_mac);
	case O_MAPIP:
		if (sr->nmaps >= STATIC_MAX_MAPS)
			return cli_usage_error(so->cmd, "at most %d --map-ip", STATIC_MAX_MAPS);
		if (static_parse_map_ip(arg, &sr->maps[sr->nmaps++]))
			return cli_usage_error(
				so->cmd,
				"--map-ip: '%s' is not FROM=TO (A.B.C.D/P or IPv6 PREFIX/P, each)",
				arg);
		break;
	case O_MAPPORT:
		if (sr->nports >= STATIC_MAX_MAPS)
			return cli_usage_error(so->cmd, "at most %d --map-port", STATIC_MAX_MAPS);
		if (static_parse_map_port(arg, &sr->ports[sr->nports++]))
			return cli_usage_error(
				so->cmd, "--map-port: '%s' is not FROM=TO (ports 0-65535)", arg);
		break;
	case O_TTL:
		if (static_parse_ttl(arg, sr))
			return cli_usage_error(so->cmd, "--ttl: '%s' is not N (1-255), +N or -N",
					       arg);
		break;
	case O_VLANPUSH:
		if (static_parse_vlan(arg, &sr->vlan_tci))
			return cli_usage_error(
				so->cmd, "--vlan-push: '%s' is not VID[:PRI] (0-4095, 0-7)", arg);
		sr->vlan_push = true;
		break;
	case O_VLANSTRIP: sr->vlan_strip = true; break;
	case O_MTUTRUNC: sr->mtu_trunc = true; break;
	case O_MISFIT:
		if (strcmp(arg, "send") && strcmp(arg, "skip"))
			return cli_usage_error(so->cmd, "--misfit: '%s' is not send or skip", arg);
		sr->skip_misfits = !strcmp(arg, "skip");
		sr->misfit_given = true;
		break;
	}
	return -1;
}

static int capture_opt(void *st, int id, const char *arg, const struct send_opts *so)
{
	struct capture *c = st;

	if (id >= O_SRCMAC)
		return static_opt(&c->sr, id, arg, so);

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
	if (static_active(&c->sr)) {
		c->sr.mtu = ifc->mtu;
		c->sr.ifname = ifc->name;
		memcpy(c->sr.if_mac, ifc->mac, 6);
		c->lo.edit = &c->sr;
	}
	for (int i = 0; i < so->nfiles; i++) {
		err = pcap_load(so->files[i], fs, &c->lo, &c->sk);
		if (err)
			/* a destination without a neighbour entry is the environment's problem */
			return err == -ENOMEM || err == -EHOSTUNREACH ? err : -EINVAL;
	}
	/* --misfit: the frames the --rewrite ops do not fit are left out, or go as they are */
	if (c->sr.misfit_given && plan->nspecs)
		c->ops_misfits = c->sr.skip_misfits ?
					 rewrite_keep_fitting(plan->specs, plan->nspecs, fs) :
					 rewrite_mark_unfit(plan->specs, plan->nspecs, fs);
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
	const struct capture *c = st;
	const struct fs_skips *sk = &c->sk;
	const struct static_rewrite *sr = &c->sr;
	bool any = static_active(sr);

	if (human && any)
		fprintf(human,
			"  static rewrites: %llu frames changed, %llu cut to the MTU; %llu the IP "
			"rewrites do not fit (%s)\n",
			(unsigned long long)sr->changed, (unsigned long long)sr->truncated,
			(unsigned long long)(sr->misfits_sent + sr->misfits_skipped),
			sr->skip_misfits ? "left out" : "sent as they were");
	if (j && any) {
		json_open(j, "static_rewrites", '{');
		json_u64(j, "changed", sr->changed);
		json_u64(j, "cut_to_mtu", sr->truncated);
		json_u64(j, "misfits_sent", sr->misfits_sent);
		json_u64(j, "misfits_skipped", sr->misfits_skipped);
		json_close(j, '}');
	}
	if (human && c->ops_misfits)
		fprintf(human, "  --rewrite ops: %llu frames they do not fit %s\n",
			(unsigned long long)c->ops_misfits,
			sr->skip_misfits ? "left out" : "sent as they were");
	if (j && sr->misfit_given) {
		json_open(j, "rewrite_misfits", '{');
		json_u64(j, "sent_as_they_were", sr->skip_misfits ? 0 : c->ops_misfits);
		json_u64(j, "left_out", sr->skip_misfits ? c->ops_misfits : 0);
		json_close(j, '}');
	}
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
		"      --max-gap T         shorten capture gaps longer than T to T (capture timing)\n"
		"  Static rewrites, applied once as the frames are read (tcprewrite's, no per-packet\n"
		"  cost; IPv4, IPv6 and ARP; checksums updated where anything they cover changed):\n"
		"      --dst-mac MAC|auto  every frame's destination MAC; auto: the neighbour table's\n"
		"                          entry for each IPv4 frame's destination (after --map-ip)\n"
		"      --src-mac MAC|auto  every frame's source MAC; auto: IFACE's\n"
		"      --map-ip FROM=TO    addresses in FROM (A.B.C.D/P, or IPv6 PREFIX/P) move to\n"
		"                          TO keeping the bits below TO's prefix, source and\n"
		"                          destination alike, also in ARP (tcprewrite --pnat);\n"
		"                          repeatable, the first match wins\n"
		"      --map-port FROM=TO  UDP/TCP source and destination ports (repeatable)\n"
		"      --ttl N|+N|-N       set the IPv4 TTL (IPv6 hop limit), or add to it, or take\n"
		"                          from it\n"
		"      --vlan-push VID[:PRI]  add an 802.1Q tag (priority PRI, default 0)\n"
		"      --vlan-strip        remove the outer 802.1Q (or 802.1ad) tag\n"
		"      --mtu-trunc         cut IPv4 packets longer than IFACE's MTU to it (a longer\n"
		"                          IPv6 packet, or one whose UDP/TCP header the cut would\n"
		"                          split, is a misfit)\n"
		"      --misfit send|skip  frames the IP rewrites do not fit (not IP; IPv6 with\n"
		"                          --dst-mac auto): sent as they were (default) or left\n"
		"                          out; counted either way.\n"
		"                          It also covers the frames the --rewrite ops do not fit\n"
		"                          (without it, one such frame refuses the run)\n",
	.opts = capture_opts,
	.accepts = SO_REWRITE | SO_FILES,
	.state_size = sizeof(struct capture),
	.parse_opt = capture_opt,
	.build = capture_build,
	.default_count = capture_count,
	.report = capture_report,
};
