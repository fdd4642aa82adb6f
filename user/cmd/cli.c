// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "engine/engine.h"
#include "util/units.h"

static int bad_value(const char *cmd, const char *opt, const char *arg, const char *what)
{
	double v;

	/* a negative value is a value, just not one these options take */
	if (arg[0] == '-' && !parse_number(arg + 1, &v))
		fprintf(stderr, "xdpreplay %s: --%s: '%s': the value must be positive\n", cmd, opt,
			arg);
	else
		fprintf(stderr, "xdpreplay %s: --%s: '%s' is not %s\n", cmd, opt, arg, what);
	return -EINVAL;
}

int cli_count(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	return parse_count(arg, out) ?
		       bad_value(cmd, opt, arg, "a count (examples: 1000, 10k, 2.5M)") :
		       0;
}

int cli_number(const char *cmd, const char *opt, const char *arg, double *out)
{
	return parse_number(arg, out) ?
		       bad_value(cmd, opt, arg, "a number (examples: 2, 0.5, 10k)") :
		       0;
}

int cli_duration(const char *cmd, const char *opt, const char *arg, uint64_t *ns)
{
	return parse_duration(arg, ns) ?
		       bad_value(cmd, opt, arg, "a duration (examples: 250ms, 30s, 5m)") :
		       0;
}

int cli_bitrate(const char *cmd, const char *opt, const char *arg, double *bps)
{
	return parse_bitrate(arg, bps) ?
		       bad_value(cmd, opt, arg, "a bit rate (examples: 100Mbit, 1Gbit, 2.5G)") :
		       0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xdpreplay %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'xdpreplay %s --help')\n", cmd);
	return XR_EXIT_USAGE;
}

int cli_need_root(const char *cmd)
{
	if (geteuid() == 0)
		return 0;
	fprintf(stderr,
		"xdpreplay %s: must run as root (BPF and XDP need CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON)\n",
		cmd);
	return -EPERM;
}

static void on_stop(int sig)
{
	xr_stop = 1;
}

void cli_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int cli_bad_option(const char *cmd, char **argv, int opt)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", arg);
	if (optopt && arg[0] == '-' && arg[1] != '-')
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", arg);
}

const char *cli_json_path(int argc, char **argv, const char *optarg_)
{
	if (optarg_)
		return optarg_;
	if (optind < argc && (argv[optind][0] != '-' || !strcmp(argv[optind], "-")))
		return argv[optind++];
	return "-";
}
