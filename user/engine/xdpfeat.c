// SPDX-License-Identifier: GPL-2.0
/*
 * An interface's XDP features (kernel >= 6.3), from the "netdev" generic
 * netlink family: what the driver can do, known without sending a frame.
 * For veth, NDO_XMIT is set exactly when the peer has NAPI (an XDP program
 * or GRO), i.e. when live frames would arrive.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include "engine/iface.h"

/* include/uapi/linux/netdev.h, which Debian 12's headers predate */
#define NETDEV_FAMILY "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3

struct nl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
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

/* Sends r and finds attribute `want` in the reply's top level; its payload into out (len bytes). */
static int nl_query(int fd, struct nl_req *r, unsigned short want, void *out, size_t len)
{
	char buf[8192];
	ssize_t n;

	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		struct nlattr *a;
		int left;

		if (h->nlmsg_type == NLMSG_ERROR) {
			int e = ((struct nlmsgerr *)NLMSG_DATA(h))->error;

			return e ? e : -ENOENT;
		}
		a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
		left = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		while (left >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
			if ((a->nla_type & NLA_TYPE_MASK) == want &&
			    (size_t)(a->nla_len - NLA_HDRLEN) >= len) {
				memcpy(out, (char *)a + NLA_HDRLEN, len);
				return 0;
			}
			left -= NLA_ALIGN(a->nla_len);
			a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
		}
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
	err = nl_query(fd, &r, CTRL_ATTR_FAMILY_ID, &family, sizeof(family));
	if (err)
		goto out; /* -ENOENT: a kernel without the family */
	r = (struct nl_req){ .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				     .nlmsg_type = family,
				     .nlmsg_flags = NLM_F_REQUEST,
				     .nlmsg_seq = 2 },
			     .gh = { .cmd = NETDEV_CMD_DEV_GET, .version = 1 } };
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = nl_query(fd, &r, NETDEV_A_DEV_XDP_FEATURES, features, sizeof(*features));
out:
	close(fd);
	return err;
}
