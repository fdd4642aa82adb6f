/* SPDX-License-Identifier: GPL-2.0 */
/* Facts about a network interface and its counters, as the kernel gives them. */
#ifndef __XR_IFACE_H
#define __XR_IFACE_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

struct iface {
	char name[IF_NAMESIZE];
	int ifindex;
	int mtu;
	bool up;
	unsigned char mac[6];
	char driver[32];
	char driver_version[32], firmware[32]; /* as ethtool -i gives them; empty when none */
	unsigned int nrxq, ntxq;
	uint32_t netns_ino;
};

/* 0 or -errno, with a one-line message naming the interface. */
int iface_get(const char *name, struct iface *ifc);

/* One counter from /sys/class/net/NAME/statistics; -errno when it cannot be read. */
int iface_sysfs_stat(const char *name, const char *stat, uint64_t *val);

/* All `ethtool -S` counters of an interface. */
struct ethtool_counters {
	unsigned int n;
	char (*names)[32];
	uint64_t *vals;
};
int ethtool_counters_get(const char *name, struct ethtool_counters *c);
/* Sum of every counter whose name ends with suffix (e.g. "xdp_xmit_errors"). */
uint64_t ethtool_counters_sum(const struct ethtool_counters *c, const char *suffix);
void ethtool_counters_free(struct ethtool_counters *c);

/* NETDEV_XDP_ACT_* of include/uapi/linux/netdev.h */
#define XR_XDP_ACT_NDO_XMIT 4

/*
 * The interface's XDP features from the kernel (netdev generic netlink, Linux
 * >= 6.3), without sending anything: 0, or -ENOENT where the kernel has none.
 */
int iface_xdp_features(int ifindex, uint64_t *features);

/* A veth's peer, wherever its namespace (iface_veth_peer). */
struct veth_peer {
	char name[IF_NAMESIZE]; /* its ifindex when unknown */
	int ifindex; /* in its namespace */
	int32_t netnsid; /* its namespace as this one names it; -1: this one */
	bool xdp; /* an XDP program attached, in any mode */
	/* what it receives on: a frame sent from CPU c goes to queue c % rx_queues */
	uint32_t rx_queues;
};

/* The peer of veth ifindex: 0, or -errno (not a veth, no peer). */
int iface_veth_peer(int ifindex, struct veth_peer *peer);

/*
 * A veth hands what its end sends by XDP_TX (what: a handshake's ACKs, say)
 * to the peer at once only when the peer has an XDP program; with GRO alone
 * it waits there for the peer's next frame that comes through NAPI, which
 * the kernel engine's live frames are and AF_XDP's are not. Says so when
 * ifc is such a veth: true then.
 */
bool iface_warn_veth_peer_xdp(const struct iface *ifc, const char *what);

/* A NAPI instance's kernel thread (threaded NAPI) */
struct napi_thread {
	uint32_t id; /* the NAPI instance's */
	int pid;
	int cpu; /* the one CPU it may run on, or -1: not pinned */
};

/*
 * The kernel threads of vp's NAPI instances (threaded NAPI; netdev genl,
 * Linux >= 6.9): how many, up to max of them into t in the order of their
 * ids, which for a veth is its receive queues' (it adds a NAPI instance per
 * queue, in order); 0 when its NAPI runs in softirqs; -errno when that cannot
 * be known (-ENOENT: its namespace is neither one ip names nor one a process
 * is in).
 */
int iface_veth_peer_napi_threads(const struct veth_peer *vp, struct napi_thread *t, int max);

/* The inode of this process's network namespace. */
uint32_t netns_ino_self(void);

#endif
