/* SPDX-License-Identifier: GPL-2.0 */
/* Command-line plumbing shared by the commands. */
#ifndef __XR_CLI_H
#define __XR_CLI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Exit codes: 0 complete, 1 short (frames asked for were not sent, or a search
 * found no answer), 2 usage, 3 environment, 4 interrupted (SIGINT/SIGTERM),
 * 5 a --fail-if threshold failed (senders).
 */
enum {
	XR_EXIT_OK = 0,
	XR_EXIT_FAIL = 1,
	XR_EXIT_USAGE = 2,
	XR_EXIT_ENV = 3,
	XR_EXIT_INTERRUPTED = 4,
	XR_EXIT_THRESHOLD = 5 /* a --fail-if threshold failed */
};

/* The exit statuses, for every command's --help. */
#define XR_EXIT_HELP                                                                        \
	"Exit status: 0 complete, 1 short (some of what was asked for was not sent; the\n"  \
	"summary says why), 2 bad usage, 3 the environment is the problem, 4 interrupted\n" \
	"(SIGINT/SIGTERM; the summary and JSON cover what was done).\n"

int cmd_probe(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_lorawan(int argc, char **argv);

/* Each prints "xdpreplay CMD: --OPT: 'ARG' is not ..." and returns -EINVAL on bad text. */
int cli_count(const char *cmd, const char *opt, const char *arg, uint64_t *out);
int cli_number(const char *cmd, const char *opt, const char *arg, double *out);
int cli_duration(const char *cmd, const char *opt, const char *arg, uint64_t *ns);
int cli_bitrate(const char *cmd, const char *opt, const char *arg, double *bps);

/* One-line error for an unknown option or a missing argument; returns XR_EXIT_USAGE. */
/*
 * --json's file for a command without operands (getopt's optional_argument):
 * "--json=F" or "--json F" is F, a bare "--json" (last, or before another
 * option) standard output, as "--json -" is.
 */
const char *cli_json_path(int argc, char **argv, const char *optarg_);
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For getopt_long with a leading ':' in optstring and opterr = 0: names the bad option. */
int cli_bad_option(const char *cmd, char **argv, int opt);

/* Fails with a one-line error unless running with the privileges BPF needs. */
int cli_need_root(const char *cmd);

/* Installs SIGINT/SIGTERM handlers that set xr_stop. */
void cli_catch_signals(void);

#endif
