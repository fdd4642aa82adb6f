// SPDX-License-Identifier: GPL-2.0
/* xdpreplay replay: send the frames of captures, at top speed or a precise rate. */
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "proto/proto.h"
#include "send/opts.h"
#include "send/run.h"

static void usage(FILE *f, const struct xr_proto *p)
{
	fprintf(f,
		"Usage: xdpreplay replay -i IFACE [options] FILE...\n"
		"\n"
		"Sends the Ethernet frames of FILE... (pcap or pcapng, plain or gzip) out of IFACE.\n"
		"Frames are read once into shared memory and sent by one of two engines, each\n"
		"doing all a sender command does: the kernel engine builds each frame in the\n"
		"kernel (BPF_PROG_RUN live frames), the xsk engine through AF_XDP (zero-copy\n"
		"where the driver has it, copy mode otherwise) on hosts that refuse live frames;\n"
		"--engine auto tries live frames and says which it chose. Every frame is\n"
		"accounted for: sent, or not sent with the reason. Files play in order; frames\n"
		"of non-Ethernet interfaces, truncated frames and frames longer than IFACE\n"
		"allows are skipped and counted.\n"
		"\n"
		"Options:\n"
		"%s%s"
		"      --rewrite SPEC      change a field in every frame as a function of the\n"
		"                          sequence number n (repeatable, up to 8); the checksums\n"
		"                          that cover the field are fixed (csum=auto says so):\n"
		"                            FIELD=seq[/DIV][%%MOD]    the field is n/DIV (mod MOD)\n"
		"                            FIELD+=STEP[/DIV][%%MOD]  captured + (n/DIV * STEP) mod MOD\n"
		"                            FIELD=CONST              written once into every frame as\n"
		"                                                     the set is built (not per packet:\n"
		"                                                     up to 16 specs in all)\n"
		"                            ip.src=198.18.64.0/23, ip.dst=A-B, ip6.src=PREFIX/64\n"
		"                            udp.sport=1024-65535 (also udp.dport, tcp.sport, ...)\n"
		"                          FIELD: ip.id, ip.src, ip.dst, ip6.src, ip6.dst, udp.sport,\n"
		"                          udp.dport, tcp.sport, tcp.dport, u8@OFF, u16be@OFF,\n"
		"                          u32be@OFF, u64be@OFF (le: little-endian; OFF from the\n"
		"                          frame start), payload@OFF:W (W bytes big-endian at OFF\n"
		"                          in the UDP/TCP payload)\n"
		"\n" XR_EXIT_HELP "\n"
		"Examples:\n"
		"  xdpreplay replay -i veth0 capture.pcap\n"
		"  xdpreplay replay -i veth0 --pps 100k --duration 10s uplinks.pcapng.gz\n"
		"  xdpreplay replay -i veth0 --count 10M --threads 2 --json - frame.pcap\n"
		"  xdpreplay replay -i veth0 --multiplier 2 --loop 3 a.pcap b.pcap\n"
		"  xdpreplay replay -i veth0 --count 1M --rewrite ip.id=seq frame.pcap   # count --seq ip.id\n"
		"\n"
		"replay --sessions plays the client side of a capture's TCP flows against a live\n"
		"server instead: 'xdpreplay replay --sessions --help'.\n",
		send_opts_help, p->usage);
}

static void sessions_usage(FILE *f, const struct xr_proto *p)
{
	fprintf(f,
		"Usage: xdpreplay replay --sessions -i IFACE --dst ADDR[:PORT] [options] FILE...\n"
		"\n"
		"Plays the client side of each TCP flow of FILE... (pcap or pcapng, plain or gzip)\n"
		"against a live server, over fresh connections and without sockets: the server's\n"
		"ISNs, windows and timing are its own, what the client says is the capture's.\n"
		"Each flow's client bytes are put together by sequence number (repeats and\n"
		"reordering undone) and cut into requests where the server had spoken since the\n"
		"client last did. Session c plays flow c mod flows: its requests one after the\n"
		"other, each once the last one's response is complete, then the close. --count is\n"
		"sessions (default: each flow once), --pps new sessions per second, or\n"
		"--multiplier X: each session when its flow started in the capture, X times\n"
		"faster. Flows that cannot be played (no SYN in the capture, the server speaks\n"
		"first, client bytes missing, a request over 68 KiB) are counted by why. The\n"
		"sessions are gen tcp's: every one asked is completed or failed with its\n"
		"reason. IPv4 only.\n"
		"\n"
		"Options:\n"
		"%s%s"
		"\n" XR_EXIT_HELP "\n"
		"Examples:\n"
		"  xdpreplay replay --sessions -i veth0 --dst 198.18.0.2 --src 198.18.64.0/23 web.pcap\n"
		"  xdpreplay replay --sessions -i veth0 --dst 198.18.0.2:8080 --count 100k --pps 10k \\\n"
		"      --json - api.pcapng\n"
		"  xdpreplay replay --sessions -i veth0 --dst 198.18.0.2 --concurrency 100 --duration 30s \\\n"
		"      --response capture mixed.pcap\n"
		"  xdpreplay replay --sessions -i veth0 --dst 198.18.0.2 --src 198.18.64.0/23 \\\n"
		"      --multiplier 10 --count 10k web.pcap   # the capture's timing, 10x faster\n",
		send_opts_help, p->usage);
}

int cmd_replay(int argc, char **argv)
{
	/* --sessions anywhere before a "--" chooses what the other options mean */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--sessions")) {
			memmove(argv + i, argv + i + 1, (argc - i) * sizeof(*argv));
			return send_command("replay --sessions", proto_find("sessions"), argc - 1,
					    argv, sessions_usage);
		}
	return send_command("replay", proto_find("capture"), argc, argv, usage);
}
