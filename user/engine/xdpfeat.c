// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel says of an interface's XDP over netlink, without sending a
 * frame: its XDP features (the "netdev" generic netlink family, Linux >=
 * 6.3; for veth, NDO_XMIT is set exactly when the peer has NAPI, an XDP
 * program or GRO, i.e. when live frames would arrive), and whether a veth's
 * peer has an XDP program (rtnetlink, the peer in whatever namespace it is).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "engine/iface.h"

/* include/uapi/linux/netdev.h, which Debian 12's headers predate */
#define NETDEV_FAMILY "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3

/* A request: its family's header (generic netlink's or rtnetlink's) and its attributes. */
struct nl_req {
	struct nlmsghdr nh;
	union {
		struct genlmsghdr gh;
		struct ifinfomsg ifi;
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

int iface_xdp_features(int ifindex, uint64_t *features)
{
	struct nl_req r = { .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				    .nlmsg_type = GENL_ID_CTRL,
				    .nlmsg_flags = NLM_F_REQUEST,
				    .nlmsg_seq = 1 },
			    .gh = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
	__u16 family;
	__u32 idx = ifindex;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY, sizeof(NETDEV_FAMILY));
	err = nl_query(fd, &r, GENL_HDRLEN, CTRL_ATTR_FAMILY_ID, 0, &family, sizeof(family), false);
	if (err)
		goto out; /* -ENOENT: a kernel without the family */
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
	*vp = (struct veth_peer){ .xdp = mode != XDP_ATTACHED_NONE, .rx_queues = 1 };
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
