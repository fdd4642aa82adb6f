/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_LOG_H
#define __XR_LOG_H

#include <stdarg.h>

enum xr_log_level { XR_LOG_WARN = 0, XR_LOG_INFO = 1, XR_LOG_DEBUG = 2, XR_LOG_TRACE = 3 };

extern int xr_verbosity; /* 1 by default; -q lowers, -v raises */
/* The command being run ("gen", "lorawan send"): every warning starts "xdpreplay CMD: ". */
extern const char *xr_cmd;

void xr_log(enum xr_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libbpf's messages one level below ours. */
void xr_log_libbpf(void);
/* The name of the program whose load failed last, as libbpf said it (a generic name if it did not). */
const char *xr_log_failed_prog(void);
/* Forgets it: before a load, so that a name from an earlier one is never given for it. */
void xr_log_failed_prog_clear(void);

#define pr_warn(...) xr_log(XR_LOG_WARN, __VA_ARGS__)
#define pr_info(...) xr_log(XR_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) xr_log(XR_LOG_DEBUG, __VA_ARGS__)

#endif
