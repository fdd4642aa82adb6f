// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel says of an interface's XDP over netlink, without sending a
 * frame: its XDP features (the "netdev" generic netlink family, Linux >=
 * 6.3; for veth, NDO_XMIT is set exactly when the peer has NAPI, an XDP
 * program or GRO, i.e. when live frames would arrive), and whether a veth's
 * peer has an XDP program (rtnetlink, the peer in whatever namespace it is),
 * and whether its NAPI runs in threads (netdev again, from inside the peer's
 * namespace, which netdev cannot name from outside).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "engine/iface.h"
#include "util/log.h"

/* include/uapi/linux/netdev.h, which Debian 12's headers predate */
#define NETDEV_FAMILY "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3
#define NETDEV_CMD_NAPI_GET 11 /* Linux >= 6.9 */
#define NETDEV_A_NAPI_IFINDEX 1
#define NETDEV_A_NAPI_ID 2
#define NETDEV_A_NAPI_PID 4 /* the NAPI instance's kernel thread, when threaded */

/* A request: its family's header (generic netlink's or rtnetlink's) and its attributes. */
struct nl_req {
	struct nlmsghdr nh;
	union {
		struct genlmsghdr gh;
		struct ifinfomsg ifi;
		struct rtgenmsg rtg;
	};
	char attrs[64];
};

static void put_attr(struct nl_req *r, unsigned short type, const void *data, unsigned short len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Attribute `want` among the `left` bytes of attributes at a, whole and at least min bytes long. */
static const struct nlattr *find_attr(const struct nlattr *a, int left, unsigned short want,
				      size_t min)
{
	while (left >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		if ((a->nla_type & NLA_TYPE_MASK) == want &&
		    (size_t)(a->nla_len - NLA_HDRLEN) >= min)
			return a;
		left -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

/*
 * Sends r and finds attribute `want` in the top level of the reply, after
 * its hdr_len-byte family header, or with `inner` that attribute nested in
 * it: its payload into out, len bytes (a number), or up to len (a string,
 * with len_is_max; out zeroed by the caller).
 */
static int nl_query(int fd, struct nl_req *r, size_t hdr_len, unsigned short want,
		    unsigned short inner, void *out, size_t len, bool len_is_max)
{
	/* a link's whole description (rtnetlink's, with its statistics) is a few KiB */
	char buf[32768];
	size_t min = len_is_max ? 0 : len;
	ssize_t n;

	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		const struct nlattr *a;
		size_t have;

		if (h->nlmsg_type == NLMSG_ERROR) {
			int e = ((struct nlmsgerr *)NLMSG_DATA(h))->error;

			return e ? e : -ENOENT;
		}
		if (h->nlmsg_len < NLMSG_LENGTH(NLMSG_ALIGN(hdr_len)))
			continue;
		a = find_attr((const struct nlattr *)((char *)NLMSG_DATA(h) + NLMSG_ALIGN(hdr_len)),
			      h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(hdr_len)), want,
			      inner ? 0 : min);
		if (a && inner)
			a = find_attr((const struct nlattr *)((const char *)a + NLA_HDRLEN),
				      a->nla_len - NLA_HDRLEN, inner, min);
		if (!a)
			continue;
		have = a->nla_len - NLA_HDRLEN;
		memcpy(out, (const char *)a + NLA_HDRLEN, have < len ? have : len);
		return 0;
	}
	return -ENOENT;
}

/* The id of the netdev family on generic netlink socket fd: -ENOENT, a kernel without it */
static int netdev_family(int fd, __u16 *family)
{
	struct nl_req r = { .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				    .nlmsg_type = GENL_ID_CTRL,
				    .nlmsg_flags = NLM_F_REQUEST,
				    .nlmsg_seq = 1 },
			    .gh = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };

	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY, sizeof(NETDEV_FAMILY));
	return nl_query(fd, &r, GENL_HDRLEN, CTRL_ATTR_FAMILY_ID, 0, family, sizeof(*family),
			false);
}

int iface_xdp_features(int ifindex, uint64_t *features)
{
	struct nl_req r;
	__u16 family;
	__u32 idx = ifindex;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	err = netdev_family(fd, &family);
	if (err)
		goto out;
	r = (struct nl_req){ .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				     .nlmsg_type = family,
				     .nlmsg_flags = NLM_F_REQUEST,
				     .nlmsg_seq = 2 },
			     .gh = { .cmd = NETDEV_CMD_DEV_GET, .version = 1 } };
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = nl_query(fd, &r, GENL_HDRLEN, NETDEV_A_DEV_XDP_FEATURES, 0, features,
		       sizeof(*features), false);
out:
	close(fd);
	return err;
}

/* An RTM_GETLINK request for ifindex, in this namespace or (other_ns) in netnsid's as this one sees it */
static void getlink_req(struct nl_req *r, int ifindex, int32_t netnsid, bool other_ns)
{
	*r = (struct nl_req){ .nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
				      .nlmsg_type = RTM_GETLINK,
				      .nlmsg_flags = NLM_F_REQUEST },
			      .ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex } };
	if (other_ns)
		put_attr(r, IFLA_TARGET_NETNSID, &netnsid, sizeof(netnsid));
}

int iface_veth_peer(int ifindex, struct veth_peer *vp)
{
	const size_t hdr = sizeof(struct ifinfomsg);
	struct nl_req r;
	int32_t netnsid = -1;
	__u32 peer = 0;
	__u8 mode = XDP_ATTACHED_NONE;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	getlink_req(&r, ifindex, 0, false);
	err = nl_query(fd, &r, hdr, IFLA_LINK, 0, &peer, sizeof(peer), false);
	if (err)
		goto out;
	/* the peer's namespace, when it is another: absent, the peer is in this one */
	getlink_req(&r, ifindex, 0, false);
	if (nl_query(fd, &r, hdr, IFLA_LINK_NETNSID, 0, &netnsid, sizeof(netnsid), false))
		netnsid = -1;
	getlink_req(&r, peer, netnsid, netnsid >= 0);
	err = nl_query(fd, &r, hdr, IFLA_XDP, IFLA_XDP_ATTACHED, &mode, sizeof(mode), false);
	if (err)
		goto out;
	*vp = (struct veth_peer){ .ifindex = peer,
				  .netnsid = netnsid,
				  .xdp = mode != XDP_ATTACHED_NONE,
				  .rx_queues = 1 };
	getlink_req(&r, peer, netnsid, netnsid >= 0);
	if (nl_query(fd, &r, hdr, IFLA_IFNAME, 0, vp->name, IF_NAMESIZE - 1, true))
		snprintf(vp->name, IF_NAMESIZE, "%u", peer);
	getlink_req(&r, peer, netnsid, netnsid >= 0);
	if (nl_query(fd, &r, hdr, IFLA_NUM_RX_QUEUES, 0, &vp->rx_queues, sizeof(vp->rx_queues),
		     false) ||
	    !vp->rx_queues)
		vp->rx_queues = 1;
out:
	close(fd);
	return err;
}

/* Whether nsfd is the namespace this one calls netnsid (RTM_GETNSID on rtnetlink socket rtfd) */
static bool netns_is(int rtfd, int nsfd, int32_t netnsid)
{
	struct nl_req r = { .nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg)),
				    .nlmsg_type = RTM_GETNSID,
				    .nlmsg_flags = NLM_F_REQUEST },
			    .rtg = { .rtgen_family = AF_UNSPEC } };
	__u32 fd = nsfd;
	int32_t id = -1;

	put_attr(&r, NETNSA_FD, &fd, sizeof(fd));
	return !nl_query(rtfd, &r, sizeof(struct rtgenmsg), NETNSA_NSID, 0, &id, sizeof(id),
			 false) &&
	       id == netnsid;
}

/*
 * A descriptor of the namespace this one calls netnsid: there is no call
 * from an id to a namespace, so ask of each that ip names (/run/netns) and
 * then of each a process is in, or -ENOENT.
 */
static int netns_open_by_id(int32_t netnsid)
{
	static const char *const dirs[] = { "/run/netns", "/proc" };
	uint32_t self = netns_ino_self();
	int rtfd, found = -ENOENT;

	rtfd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (rtfd < 0)
		return -errno;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]) && found < 0; d++) {
		bool procs = d == 1;
		struct dirent *e;
		DIR *dir;

		dir = opendir(dirs[d]);
		if (!dir)
			continue;
		while (found < 0 && (e = readdir(dir))) {
			char path[300];
			struct stat st;
			int fd;

			if (e->d_name[0] == '.' ||
			    (procs && (e->d_name[0] < '0' || e->d_name[0] > '9')))
				continue;
			snprintf(path, sizeof(path), procs ? "%s/%s/ns/net" : "%s/%s", dirs[d],
				 e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			/* most processes are in this namespace: no question to ask */
			if (!fstat(fd, &st) && st.st_ino != self && netns_is(rtfd, fd, netnsid))
				found = fd;
			else
				close(fd);
		}
		closedir(dir);
	}
	close(rtfd);
	return found;
}

struct socket_in_netns {
	int nsfd; /* -1: this namespace */
	int fd; /* or -errno */
};

/* A thread's own namespace changes alone: the process stays where it is */
static void *open_socket_in_netns(void *arg)
{
	struct socket_in_netns *s = arg;

	if (s->nsfd >= 0 && setns(s->nsfd, CLONE_NEWNET)) {
		s->fd = -errno;
		return NULL;
	}
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		s->fd = -errno;
	return NULL;
}

/* ifindex's NAPI threads (netdev napi-get, a dump) on generic netlink socket fd */
static int napi_threads(int fd, __u16 family, int ifindex, struct napi_thread *t, int max)
{
	struct nl_req r = { .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				    .nlmsg_type = family,
				    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
				    .nlmsg_seq = 3 },
			    .gh = { .cmd = NETDEV_CMD_NAPI_GET, .version = 1 } };
	__u32 idx = ifindex;
	char buf[16384];
	int n = 0;

	put_attr(&r, NETDEV_A_NAPI_IFINDEX, &idx, sizeof(idx));
	if (send(fd, &r, r.nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len < 0)
			return -errno;
		if (len == 0)
			return -EPROTO;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			const struct nlattr *a, *id;
			const void *attrs = (char *)NLMSG_DATA(h) + GENL_HDRLEN;
			int left;
			__u32 pid;

			if (h->nlmsg_type == NLMSG_DONE)
				return n;
			if (h->nlmsg_type == NLMSG_ERROR) {
				int e = ((struct nlmsgerr *)NLMSG_DATA(h))->error;

				return e ? e : n;
			}
			if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				continue;
			left = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			a = find_attr(attrs, left, NETDEV_A_NAPI_PID, sizeof(pid));
			id = find_attr(attrs, left, NETDEV_A_NAPI_ID, sizeof(__u32));
			if (!a || !id)
				continue;
			memcpy(&pid, (const char *)a + NLA_HDRLEN, sizeof(pid));
			if (!pid)
				continue;
			if (n < max) {
				t[n] = (struct napi_thread){ .pid = pid, .cpu = -1 };
				memcpy(&t[n].id, (const char *)id + NLA_HDRLEN, sizeof(t[n].id));
			}
			n++;
		}
	}
}

static int by_napi_id(const void *a, const void *b)
{
	const struct napi_thread *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The one CPU a task may run on, or -1 */
static int pinned_cpu(int pid)
{
	cpu_set_t set;
	int cpu = -1;

	if (sched_getaffinity(pid, sizeof(set), &set) || CPU_COUNT(&set) != 1)
		return -1;
	while (!CPU_ISSET(++cpu, &set))
		;
	return cpu;
}

int iface_veth_peer_napi_threads(const struct veth_peer *vp, struct napi_thread *t, int max)
{
	struct socket_in_netns s = { .nsfd = -1 };
	pthread_t opener;
	__u16 family;
	int err;

	if (vp->netnsid >= 0) {
		s.nsfd = netns_open_by_id(vp->netnsid);
		if (s.nsfd < 0)
			return s.nsfd;
	}
	err = -pthread_create(&opener, NULL, open_socket_in_netns, &s);
	if (!err)
		pthread_join(opener, NULL);
	if (s.nsfd >= 0)
		close(s.nsfd);
	if (err)
		return err;
	if (s.fd < 0)
		return s.fd;
	err = netdev_family(s.fd, &family);
	if (!err)
		err = napi_threads(s.fd, family, vp->ifindex, t, max);
	close(s.fd);
	if (err <= 0)
		return err;
	qsort(t, err < max ? err : max, sizeof(*t), by_napi_id);
	for (int i = 0; i < err && i < max; i++)
		t[i].cpu = pinned_cpu(t[i].pid);
	return err;
}

bool iface_warn_veth_peer_xdp(const struct iface *ifc, const char *what)
{
	struct veth_peer vp;

	if (strcmp(ifc->driver, "veth") || iface_veth_peer(ifc->ifindex, &vp) || vp.xdp)
		return false;
	pr_warn("%s's veth peer %s has no XDP program: %s sent by XDP_TX wait there for its next "
		"other frame; attach one to it (xdpreplay count -i %s --any)\n",
		ifc->name, vp.name, what, vp.name);
	return true;
}
