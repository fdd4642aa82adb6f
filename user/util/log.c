// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "util/log.h"

int xr_verbosity = XR_LOG_INFO;
const char *xr_cmd;

static void vlog(enum xr_log_level level, const char *fmt, va_list ap)
{
	if ((int)level > xr_verbosity)
		return;
	if (level == XR_LOG_WARN)
		fprintf(stderr, "xdpreplay%s%s: ", xr_cmd ? " " : "", xr_cmd ? xr_cmd : "");
	vfprintf(stderr, fmt, ap);
}

void xr_log(enum xr_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

/* The program whose load libbpf saw fail last (its own words, libbpf 1.x), for our message. */
static char failed_prog[64];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && !strcmp(fmt, "libbpf: prog '%s': failed to load: %d\n")) {
		va_list name;

		va_copy(name, ap);
		snprintf(failed_prog, sizeof(failed_prog), "%s", va_arg(name, const char *));
		va_end(name);
	}
	/* libbpf's warnings are details of an error we report ourselves */
	vlog(level == LIBBPF_WARN ? XR_LOG_DEBUG : XR_LOG_TRACE, fmt, ap);
	return 0;
}

void xr_log_failed_prog_clear(void)
{
	failed_prog[0] = 0;
}

const char *xr_log_failed_prog(void)
{
	return failed_prog[0] ? failed_prog : "the gen BPF program";
}

void xr_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
