/* SPDX-License-Identifier: GPL-2.0 */
/*
 * count --server-pid: the CPU a server process on the counted host used while
 * count ran, and its busiest thread's busiest second. A single-threaded
 * server (Mosquitto, one nginx worker) near 100% of a core in a second is at
 * its CPU limit: what it lost then is the CPU's to answer for.
 */
#ifndef __XR_MEASURE_PROC_H
#define __XR_MEASURE_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Threads of the process whose seconds are followed; more are summed, not followed. */
#define PROC_THREADS_MAX 256
/* The busiest thread's share of a core, in its busiest second, from which it is at its limit. */
#define PROC_LIMIT_SHARE 0.95

struct proc_thread {
	pid_t tid;
	uint64_t cpu_ns; /* at the last sample */
};

struct proc_watch {
	pid_t pid;
	char comm[17];
	bool gone; /* the process ended while watched: its figures stop there */
	uint64_t start_ns, start_cpu_ns; /* when the watch began, and the process's CPU then */
	uint64_t sample_ns, cpu_ns; /* the last sample, and the process's CPU then */
	double peak_share; /* the busiest thread's share of a core in its busiest second */
	pid_t peak_tid;
	unsigned int threads, nthreads_seen;
	struct proc_thread t[PROC_THREADS_MAX];
};

/* Starts watching pid: 0, or -ESRCH (no such process), -EACCES, ... with one line said. */
int proc_watch_start(struct proc_watch *w, pid_t pid, uint64_t now);
/* A sample when a second has passed since the last (or always, with force). */
void proc_watch_tick(struct proc_watch *w, uint64_t now, bool force);
/* The CPU a process or thread last ran on (/proc/PID/stat), or -1 */
int proc_last_cpu(pid_t pid);
/* The process's CPU in ns now (its threads' sum, ended ones included), or 0 when gone. */
uint64_t proc_cpu_ns(pid_t pid);
void proc_watch_text(const struct proc_watch *w, FILE *f);
struct json;
void proc_watch_json(const struct proc_watch *w, struct json *j);
struct prom;
void proc_watch_metrics(const struct proc_watch *w, struct prom *p);

#endif
