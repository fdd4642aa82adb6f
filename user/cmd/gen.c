// SPDX-License-Identifier: GPL-2.0
/* xdpreplay gen PROTO: built-in traffic from address and port ranges, one protocol per user/proto/X/. */
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "send/opts.h"
#include "send/run.h"

static void usage(FILE *f, const struct xr_proto *p)
{
	fprintf(f, "Usage: xdpreplay gen PROTO -i IFACE --dst ADDR[:PORT] [options]\n"
		   "\n"
		   "Sends built-in frames without a capture. Each packet is distinct: its source\n"
		   "address and port come from the ranges (address n mod the pool, port n / pool\n"
		   "mod the ports: every pair once before any repeats), and what else varies is a\n"
		   "pure function of the sequence number n.\n"
		   "\n"
		   "PROTO:\n");
	for (const struct xr_proto *const *q = xr_protos; *q; q++)
		if ((*q)->gen)
			fprintf(f, "  %-6s %s\n", (*q)->name, (*q)->summary);
	fprintf(f,
		"\n"
		"gen syn counts the server's answers on IFACE with an XDP program: SYN-ACKs\n"
		"(matched to their SYN, with round-trip histograms per second), RSTs. It drops\n"
		"them there, so that this host's kernel never answers a SYN-ACK with a RST and\n"
		"the server's SYN queue sees a real load. --complete answers each SYN-ACK with\n"
		"the handshake's ACK and the server's FIN with a RST: the server sees whole\n"
		"connections, and this host keeps no state. Replies are counted for IPv4 and\n"
		"IPv6 (no IPv6 extension headers).\n"
		"\n"
		"Options:\n"
		"%s"
		"      --dst ADDR[:PORT]   destination, IPv4 or [IPv6] (port: udp 9, syn 80, dns 53)\n"
		"      --src RANGE         source addresses: A.B.C.D/P, A.B.C.D-E.F.G.H, or an IPv6\n"
		"                          PREFIX/P with P >= 64 (default: IFACE's address)\n"
		"      --sport RANGE       source ports LO-HI (default 1024-65535; icmp: the echo\n"
		"                          identifiers, default 0x5852)\n"
		"      --size N            frame size on the wire with FCS (udp; default 64)\n"
		"      --dst-mac MAC       next hop's MAC (default: from the neighbour table)\n"
		"      --vlan VID[:PRI]    tag every frame 802.1Q (udp, icmp)\n"
		"      --wait T            how long answers may take after the last frame (default 1s)\n"
		"      --seed N            syn, tcp, mqtt: ISNs keyed from N, not at random (the\n"
		"                          shards of one run must share it)\n"
		"      --concurrency C     tcp, mqtt: a closed loop of C sessions open at once (as\n"
		"                          wrk's connections): one starts as another ends, at top\n"
		"                          speed (no --pps); --count sessions in all, or --duration\n"
		"      --rewrite SPEC      as replay's (see 'xdpreplay replay --help')\n",
		send_opts_help);
	for (const struct xr_proto *const *q = xr_protos; *q; q++)
		if ((*q)->gen && (*q)->usage && (!p || p == *q))
			fprintf(f, "  %s:\n%s", (*q)->name, (*q)->usage);
	fprintf(f,
		"\n" XR_EXIT_HELP "\n"
		"Examples:\n"
		"  xdpreplay gen udp -i eth1 --dst 198.18.0.2:9 --pps 1M --duration 10s\n"
		"  xdpreplay gen syn -i eth1 --dst 198.18.0.2:80 --src 198.18.64.0/23 --pps 50k --count 100k\n"
		"  xdpreplay gen syn -i eth1 --dst 198.18.0.2:80 --complete --pps 10k --duration 5s --json -\n"
		"  xdpreplay gen dns -i eth1 --dst 198.18.0.2 --names names.txt --pps 100k --duration 10s\n"
		"  xdpreplay gen icmp -i eth1 --dst 198.18.0.2 --src 198.18.64.0/23 --size 1500 --pps 100k\n"
		"  xdpreplay gen tcp -i eth1 --dst 198.18.0.2 --src 198.18.64.0/23 --http 'GET /' --pps 10k\n"
		"      --count 100k\n"
		"  xdpreplay gen tcp -i eth1 --dst 198.18.0.2 --http 'POST /api?user={c}&n={k}'\n"
		"      --body req.json --requests-per-session 100 --close rst --json -\n"
		"  xdpreplay gen mqtt -i eth1 --dst 198.18.0.2 --src 198.18.64.0/23 --username bench\n"
		"      --password secret --qos 1 --payload 64 --messages 100 --count 1000 --wait 30s\n"
		"  xdpreplay gen mqtt -i eth1 --dst 198.18.0.2 --username bench --password secret\n"
		"      --pattern notify --peer eth2 --subscribers 3 --payload 1k --messages 1000 --count 1\n"
		"  xdpreplay gen mqtt -i eth1 --dst 198.18.0.2 --username bench --password secret\n"
		"      --count 100 --messages 1000 --burst 1 --msg-rate 20k --json -\n"
		"  xdpreplay gen redis -i eth1 --dst 198.18.0.2 --command set --value-size 100\n"
		"      --requests-per-session 10 --pps 5k --count 50k\n");
}

/* the command as typed, for messages: "gen udp" */
static char gen_cmd[32];

int cmd_gen(int argc, char **argv)
{
	const struct xr_proto *p;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout, NULL);
		return XR_EXIT_OK;
	}
	p = argc >= 2 ? proto_find(argv[1]) : NULL;
	if (!p || !p->gen) {
		char names[128] = "";

		for (const struct xr_proto *const *q = xr_protos; *q; q++)
			if ((*q)->gen)
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? ", " : "", (*q)->name);
		return cli_usage_error("gen", "say what to generate: %s", names);
	}
	snprintf(gen_cmd, sizeof(gen_cmd), "gen %s", p->name);
	return send_command(gen_cmd, p, argc - 1, argv + 1, usage);
}
