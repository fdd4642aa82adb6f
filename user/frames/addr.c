// SPDX-License-Identifier: GPL-2.0
/* Destinations, address and port ranges, and their defaults: see addr.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "frames/addr.h"
#include "util/units.h"

/* ADDR, ADDR:PORT or [ADDR6]:PORT */
int addr_parse_dst(const char *s, struct xr_dst *d)
{
	char host[64];
	const char *colon;
	unsigned int port = 0;
	const char *end;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close - s - 1 >= (long)sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon)
			goto bad;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 address */
		snprintf(host, sizeof(host), "%.*s", (int)(colon ? colon - s : (long)strlen(s)), s);
	}
	if (colon) {
		if (parse_uint(colon + 1, 65535, &port, &end) || *end || !port)
			goto bad;
		d->port = port;
	}
	if (inet_pton(AF_INET, host, d->addr) == 1) {
		d->ipv6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, host, d->addr) == 1) {
		d->ipv6 = true;
		return 0;
	}
bad:
	return -EINVAL;
}

/* A.B.C.D, A.B.C.D/P or A.B.C.D-E.F.G.H: base and count */
int addr_parse_range4(const char *s, uint64_t *base, uint64_t *count)
{
	char a[32], b[32];
	struct in_addr x, y;
	unsigned int plen;
	char end;

	if (sscanf(s, "%31[0-9.]/%u%c", a, &plen, &end) == 2 && plen <= 32 &&
	    inet_pton(AF_INET, a, &x) == 1) {
		uint32_t mask = plen ? ~0U << (32 - plen) : 0;

		*base = ntohl(x.s_addr) & mask;
		*count = 1ULL << (32 - plen);
		return 0;
	}
	if (sscanf(s, "%31[0-9.]-%31[0-9.]%c", a, b, &end) == 2 && inet_pton(AF_INET, a, &x) == 1 &&
	    inet_pton(AF_INET, b, &y) == 1 && ntohl(y.s_addr) >= ntohl(x.s_addr)) {
		*base = ntohl(x.s_addr);
		*count = (uint64_t)ntohl(y.s_addr) - ntohl(x.s_addr) + 1;
		return 0;
	}
	if (inet_pton(AF_INET, s, &x) == 1) {
		*base = ntohl(x.s_addr);
		*count = 1;
		return 0;
	}
	return -EINVAL;
}

/* PREFIX/P with P >= 64: the low 64 bits vary; base is the prefix's low 64 bits */
int addr_parse_range6(const char *s, uint64_t *base, uint64_t *count, uint8_t high[8])
{
	char a[64], end;
	struct in6_addr x;
	unsigned int plen;
	uint64_t low;

	if (sscanf(s, "%63[0-9a-fA-F:]/%u%c", a, &plen, &end) != 2 || plen < 64 || plen > 128 ||
	    inet_pton(AF_INET6, a, &x) != 1)
		return -EINVAL;
	low = 0;
	for (int i = 8; i < 16; i++)
		low = low << 8 | x.s6_addr[i];
	if (plen == 64) {
		/* all 2^64: the value wraps at the field's width */
		*base = 0;
		*count = 0;
	} else {
		uint64_t size = 1ULL << (128 - plen);

		*base = low & ~(size - 1);
		*count = size;
	}
	memcpy(high, x.s6_addr, 8);
	return 0;
}

int addr_parse_range(const char *s, struct addr_range *r)
{
	memset(r, 0, sizeof(*r));
	r->ipv6 = strchr(s, ':') != NULL;
	return r->ipv6 ? addr_parse_range6(s, &r->base, &r->count, r->high) :
			 addr_parse_range4(s, &r->base, &r->count);
}

int addr_parse_ports(const char *s, struct port_range *p)
{
	unsigned int lo, hi;

	if (parse_uint_range(s, 65535, &lo, &hi))
		return -EINVAL;
	p->lo = lo;
	p->hi = hi;
	return 0;
}

void addr_range_first(const struct addr_range *r, uint8_t *addr)
{
	if (r->ipv6) {
		memcpy(addr, r->high, 8);
		for (int i = 0; i < 8; i++)
			addr[8 + i] = r->base >> (56 - 8 * i);
	} else {
		uint32_t a = htonl(r->base);

		memcpy(addr, &a, 4);
	}
}

/* The destination MAC from the neighbour table (/proc/net/arp), for IPv4. */
/* Whether the neighbour message h is for addr on ifindex, with a usable MAC: then it into mac. */
static bool neigh6_match(const struct nlmsghdr *h, const uint8_t addr[16], int ifindex,
			 uint8_t mac[6])
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	const struct rtattr *a =
		(const struct rtattr *)((const char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	int left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd));
	bool dst = false, ll = false;
	uint8_t got[6];

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)) || nd->ndm_family != AF_INET6 ||
	    nd->ndm_ifindex != ifindex ||
	    (nd->ndm_state & (NUD_INCOMPLETE | NUD_FAILED | NUD_NONE)) || !nd->ndm_state)
		return false;
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == 16)
			dst = !memcmp(RTA_DATA(a), addr, 16);
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(got, RTA_DATA(a), 6);
			ll = true;
		}
	}
	if (dst && ll)
		memcpy(mac, got, 6);
	return dst && ll;
}

/* An IPv6 neighbour's MAC from the kernel's table (rtnetlink: IPv6 has no /proc/net/arp). */
static int neigh6_mac(const uint8_t addr[16], const char *ifname, uint8_t mac[6])
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg nd;
	} req = { .nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
			  .nlmsg_type = RTM_GETNEIGH,
			  .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			  .nlmsg_seq = 1 },
		  .nd = { .ndm_family = AF_INET6 } };
	static char buf[32768];
	int ifindex = if_nametoindex(ifname), fd, err = -ENOENT;
	bool done = false, found = false;

	if (!ifindex)
		return -ENODEV;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		err = -errno;
		goto out;
	}
	/* the whole dump is read, so that the socket is left with nothing */
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			if (h->nlmsg_type == RTM_NEWNEIGH && !found)
				found = neigh6_match(h, addr, ifindex, mac);
		}
	}
	err = found ? 0 : -ENOENT;
out:
	close(fd);
	return err;
}

int addr_neigh_mac(const struct xr_dst *d, const char *ifname, uint8_t mac[6])
{
	char line[256], ip[64], hw[32], dev[32], want[INET_ADDRSTRLEN];
	unsigned int m[6], flags;
	FILE *f;

	if (d->ipv6)
		return neigh6_mac(d->addr, ifname, mac);
	inet_ntop(AF_INET, d->addr, want, sizeof(want));
	f = fopen("/proc/net/arp", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %*s %x %31s %*s %31s", ip, &flags, hw, dev) == 4 &&
		    !strcmp(ip, want) && !strcmp(dev, ifname) && (flags & 2) &&
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) ==
			    6) {
			for (int i = 0; i < 6; i++)
				mac[i] = m[i];
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

/* The interface's first address of the family, as the default source. */
int addr_iface(const char *ifname, bool ipv6, uint8_t *addr)
{
	struct ifaddrs *ifa, *i;
	int err = -ENOENT;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (!ipv6 && i->ifa_addr->sa_family == AF_INET) {
			memcpy(addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			err = 0;
			break;
		}
		if (ipv6 && i->ifa_addr->sa_family == AF_INET6) {
			memcpy(addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			err = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return err;
}
