// SPDX-License-Identifier: GPL-2.0
/* xdpreplay: put a precise, known load on a server and measure where it went. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "util/log.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "probe", cmd_probe,
	  "what this kernel and an interface support, and how to fix what is missing" },
	{ "replay", cmd_replay,
	  "send pcap/pcapng frames at top speed or a precise rate, with exact accounting" },
	{ "gen", cmd_gen,
	  "built-in UDP, SYN, DNS, TCP-session and MQTT traffic; answers counted in XDP" },
	{ "count", cmd_count,
	  "server side: count what arrives (XDP) and attribute drops to kernel layers" },
	{ "lorawan", cmd_lorawan,
	  "LoRaWAN fleets: valid uplinks over Semtech UDP, FCnt and MIC rewritten in BPF" },
	{ "search", cmd_search,
	  "find the highest load a server takes within a loss goal (NDR/PDR)" },
	{ "selftest", cmd_selftest,
	  "hold the BPF rewrites against the userspace reference (sends nothing)" },
	{ "report", cmd_report, "one self-contained HTML page from results' JSON" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdpreplay COMMAND [options]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\nGlobal options: --help, --version; per command: -v/-vv (more detail), -q, --json FILE|-\n"
		"\nExamples:\n"
		"  xdpreplay probe -i eth1\n"
		"  xdpreplay replay -i eth1 --pps 100k --duration 10s capture.pcapng.gz\n"
		"  xdpreplay count -i eth1 --udp --dport 1700 --duration 30s --json -\n"
		"\n'xdpreplay COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return XR_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return XR_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("xdpreplay %s\n", XR_VERSION);
		return XR_EXIT_OK;
	}
	xr_log_libbpf();
	/* a peer that closes a socket is an error to report, never a signal that kills the run */
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			xr_cmd = commands[i].name;
			return commands[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "xdpreplay: unknown command '%s' (see 'xdpreplay --help')\n", argv[1]);
	return XR_EXIT_USAGE;
}
