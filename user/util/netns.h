/* SPDX-License-Identifier: GPL-2.0 */
/* --netns: moving a command into a network namespace after its start-up. */
#ifndef __XR_NETNS_H
#define __XR_NETNS_H

/*
 * Enters network namespace `name` (/run/netns/NAME, as 'ip netns add' makes
 * it) or the namespace file at `name` when it holds a '/', and, as 'ip netns
 * exec' does, gives this process a /sys of that namespace. The calling
 * process must still be single-threaded. 0, or -errno after a one-line
 * message naming the namespace.
 */
int netns_enter(const char *name);

#endif
