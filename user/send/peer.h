/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's other end (struct xr_proto.peer: gen mqtt --pattern's subscribers
 * or responder) in a child process on its own interface: started and ready
 * before the run, ended after it, its JSON handed to the protocol.
 */
#ifndef __XR_SEND_PEER_H
#define __XR_SEND_PEER_H

#include <stdint.h>
#include <sys/types.h>
#include "send/opts.h"

struct send_peer {
	pid_t pid;
	int ready_fd; /* the read end: a byte once the other end is ready, EOF if it ended first */
	uint64_t linger_ns; /* how long it may go on after the run before it is stopped */
	const char *ifname; /* where it runs, for messages */
	char json[40]; /* its JSON (a temporary file) */
};

/*
 * Starts p's other end of the run so and st describe, if it has one, and
 * waits until it is ready. -1: there is none; 0: it is
 * running; otherwise the exit status after a one-line message. peer->pid
 * is -1 unless it is running.
 */
int send_peer_start(const struct send_opts *so, const struct xr_proto *p, void *st,
		    struct send_peer *peer);

/*
 * After the run: lets the other end finish for its linger time, stops it
 * (SIGTERM), and hands its JSON and exit status to p->peer_done.
 */
void send_peer_end(struct send_peer *peer, const struct xr_proto *p, void *st);

#endif
