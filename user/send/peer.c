// SPDX-License-Identifier: GPL-2.0
/*
 * The other end of a run in a child process: forked before the run (no
 * thread yet), it sends from the options parsed once, made its own by the
 * protocol (struct xr_proto.peer), and says when its sessions are ready
 * through a pipe, so that the run starts only then (a subscriber that has
 * not subscribed loses what is published before).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include "cmd/cli.h"
#include "send/peer.h"
#include "send/run.h"
#include "util/log.h"
#include "util/time.h"

/* Loading and verifying its BPF, then a handshake, a CONNECT and a SUBSCRIBE: seconds at most. */
#define PEER_READY_NS (30 * 1000000000ULL)

static int peer_exit_status(pid_t pid, bool block)
{
	int status = 0;
	pid_t r;

	do
		r = waitpid(pid, &status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The child: the other end's run, its sessions' readiness written to ready_fd. */
static void peer_child(struct send_opts *peer_so, const struct xr_proto *p, void *peer_st,
		       int ready_fd, const char *json)
{
	/* it ends with the run, whatever ends the run */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		_exit(XR_EXIT_INTERRUPTED);
	peer_so->json_path = json;
	peer_so->quiet = true;
	/* its warnings only: this run says what both are doing */
	if (xr_verbosity > XR_LOG_WARN)
		xr_verbosity = XR_LOG_WARN;
	_exit(send_run(peer_so, p, peer_st, &(struct send_env){ .ready_fd = ready_fd }));
}

int send_peer_start(const struct send_opts *so, const struct xr_proto *p, void *st,
		    struct send_peer *peer)
{
	struct send_opts peer_so = *so;
	int pipefd[2] = { -1, -1 }, fd, r, ret = XR_EXIT_ENV, status;
	uint64_t linger_ns = 0;
	void *peer_st = NULL;
	struct pollfd pfd;
	char byte;

	*peer = (struct send_peer){ .pid = -1, .ready_fd = -1 };
	if (!p->peer)
		return -1;
	if (p->state_size) {
		peer_st = calloc(1, p->state_size);
		if (!peer_st)
			return XR_EXIT_ENV;
	}
	r = p->peer(st, so, &peer_so, peer_st, &linger_ns);
	if (r <= 0) {
		ret = r < 0 ? XR_EXIT_USAGE : -1;
		goto out;
	}
	peer->linger_ns = linger_ns;
	peer->ifname = peer_so.ifname;
	strcpy(peer->json, "/tmp/xdpreplay-peer.XXXXXX");
	fd = mkstemp(peer->json);
	if (fd < 0) {
		pr_warn("cannot make a file for the other end's results: %s\n", strerror(errno));
		peer->json[0] = 0;
		goto out;
	}
	close(fd);
	if (pipe2(pipefd, O_CLOEXEC))
		goto fail;
	/* the write end above 2: 0 means none to the child's engine */
	if (pipefd[1] < 3) {
		fd = fcntl(pipefd[1], F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			goto fail;
		close(pipefd[1]);
		pipefd[1] = fd;
	}
	fflush(NULL);
	peer->pid = fork();
	if (peer->pid < 0)
		goto fail;
	if (peer->pid == 0) {
		close(pipefd[0]);
		peer_child(&peer_so, p, peer_st, pipefd[1], peer->json);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	pfd = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	do
		r = poll(&pfd, 1, PEER_READY_NS / 1000000);
	while (r < 0 && errno == EINTR);
	if (r == 1 && read(pipefd[0], &byte, 1) == 1) {
		peer->ready_fd = pipefd[0];
		pipefd[0] = -1;
		ret = 0;
		goto out;
	}
	if (r == 0) {
		pr_warn("the other end on %s was not ready after %llu s (not every one of its "
			"sessions was answered)\n",
			peer->ifname, (unsigned long long)(PEER_READY_NS / 1000000000ULL));
		kill(peer->pid, SIGTERM);
		peer_exit_status(peer->pid, true);
	} else {
		status = peer_exit_status(peer->pid, true);
		pr_warn("the other end on %s ended before it was ready (exit %d, for the reason "
			"above)\n",
			peer->ifname, status);
		if (status > 0 && status < 128)
			ret = status;
	}
	peer->pid = -1;
	goto out;
fail:
	pr_warn("cannot start the other end on %s: %s\n", peer->ifname, strerror(errno));
	if (peer->pid > 0) {
		kill(peer->pid, SIGTERM);
		peer_exit_status(peer->pid, true);
	}
	peer->pid = -1;
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (ret > 0 && peer->json[0])
		unlink(peer->json);
	/* this process's copy: the child has its own */
	if (p->free && peer_st)
		p->free(peer_st);
	free(peer_st);
	return ret;
}

void send_peer_end(struct send_peer *peer, const struct xr_proto *p, void *st)
{
	uint64_t until = now_ns() + peer->linger_ns;
	struct json_object *result = NULL;
	int status;

	if (peer->pid < 0)
		return;
	while ((status = peer_exit_status(peer->pid, false)) < 0 && now_ns() < until && !xr_stop)
		usleep(10000);
	if (status < 0) {
		kill(peer->pid, SIGTERM);
		status = peer_exit_status(peer->pid, true);
	}
	peer->pid = -1;
	close(peer->ready_fd);
	peer->ready_fd = -1;
	result = json_object_from_file(peer->json);
	unlink(peer->json);
	if (p->peer_done)
		p->peer_done(st, result, status);
	if (result)
		json_object_put(result);
}
