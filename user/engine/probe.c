// SPDX-License-Identifier: GPL-2.0
/*
 * What this kernel and an interface support (xdpreplay probe, --engine auto),
 * tested rather than guessed: each check loads, attaches, binds or sends for
 * real and undoes it (links die with the process). Each missing piece comes
 * with a fix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>
#include <xdp/libxdp.h>
#include "engine/engine.h"
#include "util/json.h"
#include "util/caps.h"
#include "util/log.h"
#include "engine/probe.h"
#include "count.skel.h"

struct check *probe_add(struct probe_report *r, const char *name, bool ok)
{
	struct check *c = &r->c[r->n < PROBE_MAX_CHECKS - 1 ? r->n++ : r->n];

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->ok = ok;
	return c;
}

/* The capabilities BPF, XDP and AF_XDP need, and the locked-memory limit AF_XDP's UMEM counts against. */
static bool caps_ok(char *detail, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} need[] = {
		{ XR_CAP_BPF, "CAP_BPF" },
		{ XR_CAP_NET_ADMIN, "CAP_NET_ADMIN" },
		{ XR_CAP_PERFMON, "CAP_PERFMON" },
	};
	uint64_t eff = caps_effective();
	struct rlimit rl = {};
	char lim[32];
	size_t at = 0;
	bool ok = true;

	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		bool has = eff & (1ULL << need[i].bit) || eff & (1ULL << XR_CAP_SYS_ADMIN);

		if (!has) {
			at += snprintf(detail + at, at < len ? len - at : 0, "%s%s",
				       ok ? "missing " : ", ", need[i].name);
			ok = false;
		}
	}
	if (ok)
		snprintf(detail, len,
			 "CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON present; memlock limit %s", lim);
	return ok;
}

static int libxdp_quiet(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (xr_verbosity >= XR_LOG_DEBUG)
		vfprintf(stderr, fmt, ap);
	return 0;
}

/* Binds a TX-only AF_XDP socket to queue 0 in the given mode; 0 or -errno. */
static int try_xsk(const char *ifname, __u16 bind_flags)
{
	struct xsk_socket_config cfg = {
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = bind_flags,
	};
	size_t size = 4096 * XSK_UMEM__DEFAULT_FRAME_SIZE;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp;
	struct xsk_socket *xsk = NULL;
	struct xsk_umem *umem = NULL;
	void *buf;
	int err;

	buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -errno;
	err = xsk_umem__create(&umem, buf, size, &fill, &comp, NULL);
	if (!err)
		err = xsk_socket__create(&xsk, ifname, 0, umem, NULL, &tx, &cfg);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(buf, size);
	return err;
}

/* Without an interface: whether AF_XDP sockets open at all (the xsk engine's first need). */
static void probe_xsk_socket(struct probe_report *r)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	struct check *c = probe_add(r, "afxdp_socket", fd >= 0);

	if (fd >= 0) {
		snprintf(c->detail, sizeof(c->detail),
			 "AF_XDP sockets open (-i IFACE binds one to the interface)");
		close(fd);
		return;
	}
	snprintf(c->detail, sizeof(c->detail), "socket(AF_XDP) failed: %s", strerror(errno));
	snprintf(c->fix, sizeof(c->fix),
		 "needs CONFIG_XDP_SOCKETS and CAP_NET_RAW in this network namespace");
}

/* Attaches a pass-everything program in driver mode through a link, then drops it. */
static int try_native_xdp(const struct iface *ifc, __u32 *existing_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
	struct count_bpf *skel;
	int err, fd;

	*existing_id = 0;
	if (!bpf_xdp_query(ifc->ifindex, 0, &q) && (q.drv_prog_id || q.skb_prog_id)) {
		*existing_id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		return q.drv_prog_id ? 0 : -EOPNOTSUPP;
	}
	skel = count_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->cfg.proto = 255;
	err = count_bpf__load(skel);
	if (err)
		goto out;
	fd = bpf_link_create(bpf_program__fd(skel->progs.xr_count), ifc->ifindex, BPF_XDP, &lo);
	if (fd < 0)
		err = -errno;
	else
		close(fd);
out:
	count_bpf__destroy(skel);
	return err;
}

/*
 * A veth end transmits XDP frames only when its peer has NAPI (an XDP program
 * or GRO there): otherwise the kernel refuses them with EOPNOTSUPP (6.3+, the
 * peer does not advertise NDO_XMIT) or ENXIO (older kernels).
 */
static bool veth_peer_not_ready(const struct iface *ifc, int err)
{
	return !strcmp(ifc->driver, "veth") && (err == -ENXIO || err == -EOPNOTSUPP);
}

/* What refusing live frames means here, from the step and errno that failed. */
static const char *live_frames_refusal(const struct kengine_probe *kp)
{
	static char buf[160];

	if (!strcmp(kp->step, "load"))
		snprintf(buf, sizeof(buf), "the gen program did not load: %s", strerror(-kp->err));
	else if (kp->err == -EPERM)
		snprintf(buf, sizeof(buf),
			 "BPF_PROG_RUN with live frames refused: EPERM (this host refuses them; "
			 "the same run without live frames works)");
	else if (kp->err == -EINVAL)
		snprintf(buf, sizeof(buf),
			 "BPF_PROG_RUN has no live-frames mode here: EINVAL (live frames came in "
			 "Linux 5.18)");
	else
		snprintf(buf, sizeof(buf), "BPF_PROG_RUN with live frames failed: %s",
			 strerror(-kp->err));
	return buf;
}

static const char *live_frames_fix(const struct kengine_probe *kp)
{
	if (!strcmp(kp->step, "load"))
		return "loading BPF needs BTF (/sys/kernel/btf/vmlinux) and CAP_BPF with CAP_NET_ADMIN; "
		       "-vv shows the verifier's log";
	return "nothing to fix for xdpreplay: --engine auto sends through AF_XDP (the xsk engine), "
	       "which does every command";
}

static void probe_iface(struct probe_report *r, const struct iface *ifc)
{
	struct kengine_probe kp;
	struct check *c;
	__u32 existing;
	int err;

	err = try_native_xdp(ifc, &existing);
	c = probe_add(r, "native_xdp", !err);
	if (!err && existing)
		snprintf(c->detail, sizeof(c->detail),
			 "an XDP program (id %u) is attached in driver mode", existing);
	else if (!err)
		snprintf(c->detail, sizeof(c->detail), "driver %s runs XDP programs natively",
			 ifc->driver);
	else if (existing)
		snprintf(c->detail, sizeof(c->detail),
			 "only a generic-mode XDP program (id %u) is attached", existing);
	else
		snprintf(c->detail, sizeof(c->detail), "driver %s: %s", ifc->driver,
			 strerror(-err));
	if (err)
		snprintf(c->fix, sizeof(c->fix),
			 "xdpreplay count needs native XDP on the server's NIC; "
			 "generic mode works but is slower");

	kengine_probe(ifc, true, &kp);
	c = probe_add(r, "live_frames", kp.ran);
	if (kp.ran) {
		snprintf(c->detail, sizeof(c->detail),
			 "BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES works");
	} else {
		snprintf(c->detail, sizeof(c->detail), "%s", live_frames_refusal(&kp));
		snprintf(c->fix, sizeof(c->fix), "%s", live_frames_fix(&kp));
	}
	c = probe_add(r, "xdp_xmit", kp.xmit_ok);
	if (!kp.ran) {
		snprintf(c->detail, sizeof(c->detail), "not tried: it needs live frames");
	} else if (kp.xmit_ok) {
		snprintf(c->detail, sizeof(c->detail),
			 "a test frame left %s through ndo_xdp_xmit%s", ifc->name,
			 strcmp(ifc->driver, "veth") ? "" : " (the veth peer is ready to receive)");
	} else if (kp.ran) {
		snprintf(c->detail, sizeof(c->detail), "the driver refused the test frame: %s",
			 strerror(-kp.xmit_err));
		if (veth_peer_not_ready(ifc, kp.xmit_err))
			snprintf(
				c->fix, sizeof(c->fix),
				"the veth peer has no NAPI, frames would vanish: attach an "
				"XDP program to the peer (xdpreplay count) or enable GRO there (ethtool -K PEER gro on)");
		else if (kp.xmit_err == -ENETDOWN || !ifc->up)
			snprintf(c->fix, sizeof(c->fix),
				 "bring the interface up (ip link set %s up)", ifc->name);
		else
			snprintf(c->fix, sizeof(c->fix),
				 "many drivers need an XDP program attached to transmit "
				 "XDP frames; otherwise use --engine xsk");
	}

	err = try_xsk(ifc->name, XDP_ZEROCOPY);
	c = probe_add(r, "afxdp_zerocopy", !err);
	if (err) {
		snprintf(c->detail, sizeof(c->detail), "bind with XDP_ZEROCOPY failed: %s",
			 strerror(-err));
		snprintf(c->fix, sizeof(c->fix), "%s",
			 !strcmp(ifc->driver, "veth") ?
				 "veth has no zero-copy mode; copy mode is used" :
				 "the driver lacks AF_XDP zero-copy");
	} else {
		snprintf(c->detail, sizeof(c->detail), "driver %s supports AF_XDP zero-copy",
			 ifc->driver);
	}
	/* a socket just closed keeps its queue busy for about a second */
	if (!err)
		sleep(1);
	err = try_xsk(ifc->name, XDP_COPY);
	c = probe_add(r, "afxdp_copy", !err);
	if (err) {
		snprintf(c->detail, sizeof(c->detail), "bind in copy mode failed: %s",
			 strerror(-err));
		snprintf(c->fix, sizeof(c->fix), "needs CONFIG_XDP_SOCKETS and a free queue 0");
	} else {
		snprintf(c->detail, sizeof(c->detail), "AF_XDP copy mode works");
	}
}

int probe_best_engine(const struct iface *ifc, const char **why)
{
	struct kengine_probe kp;
	uint64_t feat;
	int err;

	/*
	 * The driver's XDP features say whether it transmits XDP frames without
	 * a frame on the wire that the user did not ask for; only a kernel
	 * without them (< 6.3) gets the test frame.
	 */
	err = iface_xdp_features(ifc->ifindex, &feat);
	kengine_probe(ifc, err != 0, &kp);
	if (!kp.ran) {
		*why = live_frames_refusal(&kp);
		return -EOPNOTSUPP;
	}
	if (!err) {
		if (feat & XR_XDP_ACT_NDO_XMIT) {
			*why = "live frames work, and the driver transmits XDP frames (ndo_xdp_xmit)";
			return PROBE_ENGINE_KERNEL;
		}
		*why = !strcmp(ifc->driver, "veth") ?
			       "the veth peer has no NAPI (attach an XDP program or enable GRO on the peer)" :
			       "the driver does not transmit XDP frames (ndo_xdp_xmit) now; many need an XDP "
			       "program attached first";
		return -EOPNOTSUPP;
	}
	if (kp.xmit_ok) {
		*why = "live frames and ndo_xdp_xmit work on this interface";
		return PROBE_ENGINE_KERNEL;
	}
	if (veth_peer_not_ready(ifc, kp.xmit_err))
		*why = "the veth peer has no NAPI (attach an XDP program or enable GRO on the peer)";
	else
		*why = "the driver refused a test frame through ndo_xdp_xmit";
	return -EOPNOTSUPP;
}

/* What the interface's driver says it does, and a veth peer's readiness */
static void iface_checks(struct probe_report *r, const struct iface *ifc)
{
	struct check *c;
	int err;
	uint64_t feat;

	err = iface_xdp_features(ifc->ifindex, &feat);
	c = probe_add(r, "xdp_features", !err && (feat & XR_XDP_ACT_NDO_XMIT));
	if (err)
		snprintf(c->detail, sizeof(c->detail),
			 "the kernel does not report XDP features (%s)", strerror(-err));
	else
		snprintf(c->detail, sizeof(c->detail), "0x%llx: %s XDP frames (ndo_xdp_xmit)",
			 (unsigned long long)feat,
			 feat & XR_XDP_ACT_NDO_XMIT ? "transmits" : "does not transmit");
	if (!err && !(feat & XR_XDP_ACT_NDO_XMIT))
		snprintf(
			c->fix, sizeof(c->fix), "%s",
			!strcmp(ifc->driver, "veth") ?
				"the veth peer needs NAPI: an XDP program on it (xdpreplay count) or GRO on" :
				"many drivers transmit XDP frames only with an XDP program attached");
	if (!strcmp(ifc->driver, "veth")) {
		struct veth_peer vp = {};

		/*
		 * GRO gives the peer NAPI, but a veth kicks it for XDP_TX only when it
		 * has a program: what gen tcp and gen mqtt answer with waits until then
		 */
		err = iface_veth_peer(ifc->ifindex, &vp);
		c = probe_add(r, "veth_peer_xdp", !err && vp.xdp);
		if (err)
			snprintf(c->detail, sizeof(c->detail), "the peer cannot be read: %s",
				 strerror(-err));
		else
			snprintf(c->detail, sizeof(c->detail),
				 "the peer %s %s XDP program: frames sent by XDP_TX (TCP "
				 "sessions' ACKs and requests) %s",
				 vp.name, vp.xdp ? "has an" : "has no",
				 vp.xdp ? "arrive at once" : "wait for its next other frame");
		if (!c->ok)
			snprintf(c->fix, sizeof(c->fix),
				 "attach one to the peer, e.g. xdpreplay count -i PEER --any");
	}
}

void probe_checks(struct probe_report *r, const struct iface *ifc)
{
	/* without root the BPF checks cannot run; the rest is still worth saying */
	bool root = geteuid() == 0;
	struct check *c;
	char detail[160];
	struct statfs sfs;
	int err;

	libxdp_set_print(libxdp_quiet);
	c = probe_add(r, "btf", !access("/sys/kernel/btf/vmlinux", R_OK));
	snprintf(c->detail, sizeof(c->detail),
		 c->ok ? "/sys/kernel/btf/vmlinux present" : "no kernel BTF");
	if (!c->ok)
		snprintf(c->fix, sizeof(c->fix), "a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	c = probe_add(r, "privileges", caps_ok(detail, sizeof(detail)));
	snprintf(c->detail, sizeof(c->detail), "%s", detail);
	if (!c->ok)
		snprintf(c->fix, sizeof(c->fix),
			 "run as root, or grant CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON "
			 "(and CAP_IPC_LOCK for a large AF_XDP UMEM)");
	c = probe_add(r, "bpffs", !statfs("/sys/fs/bpf", &sfs) && sfs.f_type == BPF_FS_MAGIC);
	snprintf(c->detail, sizeof(c->detail),
		 c->ok ? "mounted at /sys/fs/bpf" : "not mounted (not needed to send)");
	if (!c->ok)
		snprintf(c->fix, sizeof(c->fix), "mount -t bpf bpf /sys/fs/bpf");
	if (ifc)
		iface_checks(r, ifc);
	if (!root) {
		c = probe_add(r, "bpf_checks", false);
		snprintf(c->detail, sizeof(c->detail),
			 "skipped: not root (live frames, XDP attach, AF_XDP need it)");
		snprintf(c->fix, sizeof(c->fix), "run xdpreplay probe as root for the rest");
	} else if (ifc) {
		probe_iface(r, ifc);
		probe_programs(r);
	} else {
		struct kengine_probe kp;
		struct iface lo;

		/* without an interface: live frames on loopback tell whether the kernel has them */
		err = iface_get("lo", &lo);
		kengine_probe(&lo, false, &kp);
		c = probe_add(r, "live_frames", !err && kp.ran);
		snprintf(c->detail, sizeof(c->detail), "%s",
			 c->ok ? "BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES works" :
				 live_frames_refusal(&kp));
		if (!c->ok)
			snprintf(c->fix, sizeof(c->fix), "%s", live_frames_fix(&kp));
		probe_xsk_socket(r);
		probe_programs(r);
	}
}
