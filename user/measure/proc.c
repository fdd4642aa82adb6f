// SPDX-License-Identifier: GPL-2.0
/* count --server-pid: a server process's CPU while count runs (see proc.h). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/prom.h"
#include "util/time.h"
#include "measure/proc.h"
#include "util/json.h"
#include "util/log.h"

#define NS_PER_S 1000000000ULL

static long clock_ticks(void)
{
	static long hz;

	if (!hz) {
		hz = sysconf(_SC_CLK_TCK);
		if (hz <= 0)
			hz = 100;
	}
	return hz;
}

/*
 * utime + stime of a /proc stat file in ns (clock ticks: 10 ms each), and its
 * comm when asked. The comm is in parentheses and may hold either, so the
 * fields are counted from the last ')'. 0, or -errno.
 */
static int stat_cpu_ns(const char *path, uint64_t *ns, char *comm, size_t comm_len)
{
	unsigned long long utime, stime;
	char buf[1024], *open, *close;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open ||
	    sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		   &stime) != 2)
		return -EINVAL;
	if (comm) {
		size_t len = (size_t)(close - open - 1);

		if (len > comm_len - 1)
			len = comm_len - 1;

		memcpy(comm, open + 1, len);
		comm[len] = 0;
	}
	*ns = (utime + stime) * (NS_PER_S / clock_ticks());
	return 0;
}

/* A thread's CPU in ns: schedstat's run time (exact) where the kernel has it, else its ticks. */
static int thread_cpu_ns(pid_t pid, pid_t tid, uint64_t *ns)
{
	unsigned long long run;
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	f = fopen(path, "r");
	if (f) {
		ok = fscanf(f, "%llu", &run) == 1;
		fclose(f);
		if (ok) {
			*ns = run;
			return 0;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	return stat_cpu_ns(path, ns, NULL, 0);
}

int proc_last_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* field 39, "processor"; the comm (field 2) ends at the last ')' */
	for (int field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

uint64_t proc_cpu_ns(pid_t pid)
{
	char path[64];
	uint64_t ns;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return stat_cpu_ns(path, &ns, NULL, 0) ? 0 : ns;
}

/* The thread's record, made (its CPU 0: born since the last sample) when new; NULL when full. */
static struct proc_thread *thread_of(struct proc_watch *w, pid_t tid)
{
	for (unsigned int i = 0; i < w->threads; i++)
		if (w->t[i].tid == tid)
			return &w->t[i];
	if (w->threads == PROC_THREADS_MAX)
		return NULL;
	w->t[w->threads] = (struct proc_thread){ .tid = tid };
	return &w->t[w->threads++];
}

/* Each thread's CPU since the last sample, over elapsed ns: the busiest one's share, kept when the highest. */
static void sample_threads(struct proc_watch *w, uint64_t elapsed, bool first)
{
	char path[64];
	struct dirent *e;
	unsigned int seen = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", w->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t tid = atoi(e->d_name);
		struct proc_thread *t;
		uint64_t ns;
		double share;

		if (tid <= 0 || thread_cpu_ns(w->pid, tid, &ns))
			continue;
		seen++;
		t = thread_of(w, tid);
		if (!t)
			continue;
		share = elapsed && ns > t->cpu_ns ? (ns - t->cpu_ns) / (double)elapsed : 0;
		/*
		 * One thread runs on one core at a time: more is the sample's own
		 * jitter (the reads came late against the clock, on a busy host)
		 */
		if (share > 1)
			share = 1;
		if (!first && share > w->peak_share) {
			w->peak_share = share;
			w->peak_tid = tid;
		}
		t->cpu_ns = ns;
	}
	closedir(d);
	if (seen > w->nthreads_seen)
		w->nthreads_seen = seen;
}

int proc_watch_start(struct proc_watch *w, pid_t pid, uint64_t now)
{
	char path[64];
	int err;

	*w = (struct proc_watch){ .pid = pid, .start_ns = now, .sample_ns = now };
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	err = stat_cpu_ns(path, &w->start_cpu_ns, w->comm, sizeof(w->comm));
	if (err) {
		pr_warn("--server-pid %d: %s\n", pid,
			err == -ENOENT ? "no such process" : strerror(-err));
		return err == -ENOENT ? -ESRCH : err;
	}
	/* the comm goes into a Prometheus label and a line: nothing there may end or break it */
	for (char *c = w->comm; *c; c++)
		if (*c == '"' || *c == '\\' || *c < ' ' || *c > '~')
			*c = '_';
	w->cpu_ns = w->start_cpu_ns;
	sample_threads(w, 0, true);
	return 0;
}

void proc_watch_tick(struct proc_watch *w, uint64_t now, bool force)
{
	char path[64];
	uint64_t ns;

	if (w->gone || (!force && now - w->sample_ns < NS_PER_S) || now == w->sample_ns)
		return;
	/* the clock read next to the reads it times, not when the caller's loop woke */
	now = now_ns();
	snprintf(path, sizeof(path), "/proc/%d/stat", w->pid);
	if (stat_cpu_ns(path, &ns, NULL, 0)) {
		w->gone = true;
		return;
	}
	/* a sample shorter than a second (the last) says little about a thread's limit */
	if (now - w->sample_ns >= NS_PER_S / 2)
		sample_threads(w, now - w->sample_ns, false);
	w->cpu_ns = ns;
	w->sample_ns = now;
}

/*
 * The CPU seconds and the seconds watched as of now: a search's witness reads
 * them before and after each trial, so not as of the last second's sample.
 * A process that ended keeps its last sample.
 */
static void as_of_now(const struct proc_watch *w, double *cpu, double *watched)
{
	uint64_t ns = w->gone ? 0 : proc_cpu_ns(w->pid), at = now_ns();

	if (!ns) {
		ns = w->cpu_ns;
		at = w->sample_ns;
	}
	*cpu = ns > w->start_cpu_ns ? (ns - w->start_cpu_ns) / 1e9 : 0;
	*watched = (at - w->start_ns) / 1e9;
}

static bool at_limit(const struct proc_watch *w)
{
	return w->peak_share >= PROC_LIMIT_SHARE;
}

void proc_watch_text(const struct proc_watch *w, FILE *f)
{
	double cpu, s;

	as_of_now(w, &cpu, &s);
	fprintf(f, "  server process %d (%s): %.2f s of CPU in %.2f s (%.2f of a core)%s", w->pid,
		w->comm, cpu, s, s > 0 ? cpu / s : 0, w->gone ? ", until it ended" : "");
	if (w->peak_tid)
		fprintf(f, "; its busiest thread (%d) %.0f%% of a core in its busiest second: %s\n",
			w->peak_tid, w->peak_share * 100,
			at_limit(w) ? "at its CPU limit" : "not at its CPU limit");
	else
		fprintf(f, "; no second long enough to tell its busiest thread\n");
}

void proc_watch_json(const struct proc_watch *w, struct json *j)
{
	double cpu, s;

	as_of_now(w, &cpu, &s);
	json_open(j, "server_process", '{');
	json_u64(j, "pid", w->pid);
	json_str(j, "comm", w->comm);
	json_double(j, "cpu_s", cpu);
	json_double(j, "watched_s", s);
	json_double(j, "cores", s > 0 ? cpu / s : 0);
	json_u64(j, "threads", w->nthreads_seen);
	json_u64(j, "busiest_thread", w->peak_tid);
	json_double(j, "busiest_thread_peak_share", w->peak_share);
	json_flag(j, "at_cpu_limit", at_limit(w));
	json_flag(j, "ended", w->gone);
	json_close(j, '}');
}

void proc_watch_metrics(const struct proc_watch *w, struct prom *p)
{
	uint64_t now = proc_cpu_ns(w->pid);
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", w->pid);
	prom_family(p, "xdpreplay_count_server_cpu_seconds", PROM_COUNTER,
		    "CPU the --server-pid process used since count began.");
	prom_double(p, now > w->start_cpu_ns ? (now - w->start_cpu_ns) / 1e9 : 0, "pid", pid,
		    "comm", w->comm, NULL);
}
