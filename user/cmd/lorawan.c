// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay lorawan fleet | send: a fleet of ABP devices and gateways made
 * from a seed and saved as CSV, and its uplinks sent as Semtech UDP PUSH_DATA
 * by the kernel engine, with FCnt, FRMPayload, MIC, token, tmst and checksum
 * rewritten per packet in BPF (bpf/proto/lorawan.bpf.h). PUSH_ACKs are counted per
 * gateway on the sending interface.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <arpa/inet.h>
#include "cmd/cli.h"
#include "util/log.h"
#include "proto/lorawan/lorawan.h"
#include "proto/proto.h"
#include "send/run.h"
#include "util/time.h"
#include "util/units.h"

static void lorawan_send_usage(FILE *f, const struct xr_proto *p)
{
	fprintf(f,
		"Usage: xdpreplay lorawan send -i IFACE --fleet DIR --server ADDR[:PORT] [options]\n"
		"\n"
		"Sends the fleet's uplinks as Semtech UDP (v2) PUSH_DATA to a gateway bridge or\n"
		"network server (port 1700 by default). Each device's PUSH_DATA is built once; for\n"
		"every packet the engine writes the token, the gateway EUI, tmst, and the\n"
		"PHYPayload's FCnt, FRMPayload (encrypted with AppSKey) and MIC (AES-CMAC with\n"
		"NwkSKey) as base64 (from an AES-NI precompute, or computed in BPF), and the UDP\n"
		"checksum. Sequence number n is copy n mod K of\n"
		"uplink u = n / K (K = gateways that hear a device), from device u mod D in round\n"
		"u / D, with FCnt = fcnt_start + round: the default walks all devices once per\n"
		"round, and the copies of one uplink leave back to back (the server deduplicates\n"
		"them). PUSH_ACKs to this host are counted on IFACE per gateway and matched to n by\n"
		"their token (the last 65,536 packets), with round-trip percentiles.\n"
		"\n"
		"Options (and replay's --engine, --pps, --rate, --count, --duration, --threads,\n"
		"--first-seq, --batch, --backoff, --json, --fail-if, -q, -v):\n"
		"  -i, --iface IFACE       interface to send from (required)\n"
		"      --fleet DIR         devices.csv and gateways.csv (xdpreplay lorawan fleet)\n"
		"      --server ADDR[:P]   the gateway bridge, IPv4 (port default 1700)\n"
		"      --sport P[-Q]       source port of the gateways (default 1700); a range with --src\n"
		"      --src RANGE         each gateway its own source address and port: gateway g\n"
		"                          sends from address g mod A of RANGE (A addresses) and port\n"
		"                          P + g / A; the server must route RANGE back to IFACE\n"
		"      --keepalive T       every gateway sends a PULL_DATA every T (a packet forwarder:\n"
		"                          5s), spread evenly; PULL_ACKs counted per gateway\n"
		"      --stat T            every gateway sends its status (PUSH_DATA \"stat\", as a\n"
		"                          packet forwarder does every 30s, which network servers\n"
		"                          take as the gateway online) every T, the first after T;\n"
		"                          their PUSH_ACKs counted per gateway, apart from the uplinks'\n"
		"      --join              an OTAA fleet joins: each device sends its JoinRequest (its\n"
		"                          dev_nonce) once; each JoinAccept (PULL_RESP, which needs\n"
		"                          --keepalive, and --src for more than one gateway) is opened\n"
		"                          with the device's AppKey and gives its session; time to join\n"
		"      --joined DIR        with --join: write the fleet with the sessions (and the next\n"
		"                          DevNonces) to DIR, for the uplinks: lorawan send --fleet DIR\n"
		"      --rounds N          uplinks per device (default 1; with --duration alone: until it ends)\n"
		"      --wait T            how long PUSH_ACKs may take after the last packet (default 1s)\n"
		"      --dst-mac MAC       next hop's MAC (default: from the neighbour table)\n"
		"      --no-precompute     compute every uplink in BPF (by default, where the CPU has\n"
		"                          AES-NI, a thread computes the coming uplinks into a ring that\n"
		"                          the program reads, and computes the rest itself)\n"
		"      --static            send each device's frame as built, without the rewrite:\n"
		"                          not valid uplinks, the ceiling of the same frames\n"
		"      --mac LIST          uplinks ask for MAC answers in FOpts: linkcheck\n"
		"                          (LinkCheckReq) and/or devicetime (DeviceTimeReq); the\n"
		"                          answers (in a downlink's FOpts or on FPort 0, MIC checked)\n"
		"                          are counted per uplink and timed, LinkCheckAns' GwCnt\n"
		"                          summed, DeviceTimeAns held against the departure (1.1\n"
		"                          devices: FOpts both ways encrypted with NwkSEncKey)\n"
		"      --mac-every K       only devices 1, K+1, 2K+1, ... ask (default 1: all)\n"
		"      --schedule FILE     append the run's schedule (first departure, rate, first\n"
		"                          n) to FILE for xdpreplay count --webhook --schedule:\n"
		"                          event latencies, and each run's (search trial's) own\n"
		"                          uplinks\n"
		"\n" XR_EXIT_HELP "\n"
		"Examples:\n"
		"  xdpreplay lorawan fleet --devices 300k --gateways 2k --heard-by 3 --seed 1 --out fleet/\n"
		"  xdpreplay lorawan send -i eth1 --fleet fleet/ --server 198.18.0.2 --pps 10k --rounds 5\n"
		"  xdpreplay lorawan send -i eth1 --fleet fleet/ --server 198.18.0.2 --duration 30s --json -\n"
		"  xdpreplay lorawan send -i eth1 --fleet fleet/ --server 198.18.0.2 --src 198.18.64.0/21 \\\n"
		"      --keepalive 5s --pps 1k --duration 1m\n"
		"  xdpreplay lorawan send -i eth1 --fleet otaa/ --server 198.18.0.2 --src 198.18.64.0/26 \\\n"
		"      --keepalive 5s --join --joined joined/ --pps 2k --wait 10s\n");
}

static void fleet_usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay lorawan fleet --out DIR [options]\n"
		"\n"
		"Makes a fleet of LoRaWAN devices (1.0.x or 1.1, ABP or OTAA) and the gateways\n"
		"that hear them, as a pure function of --seed, and writes DIR/devices.csv and\n"
		"DIR/gateways.csv: the same fleet can then be provisioned in the server under test\n"
		"(docs/lorawan.md) and sent by xdpreplay lorawan send. DevAddrs are unique\n"
		"(NetID 000000), keys random. An OTAA fleet joins first (lorawan send --join).\n"
		"\n"
		"Options:\n"
		"      --out DIR           where to write the CSV files (required)\n"
		"      --devices N         number of devices (default 1000; e.g. 300k)\n"
		"      --gateways N        number of gateways (default 10; at most 65535)\n"
		"      --heard-by K        gateways that hear each uplink (default 1, at most 8)\n"
		"      --seed S            the fleet is a pure function of it (default 1)\n"
		"      --region R          eu868 (default) or us915 (sub-band 2): channel plan\n"
		"      --datr D            data rate, e.g. SF7BW125 (default), SF12BW125\n"
		"      --payload-size N|A-B  FRMPayload bytes, one size or a range (default 12)\n"
		"      --fport N           application port (default 1; 0 = MAC commands)\n"
		"      --confirmed         Confirmed Data Up (default: unconfirmed)\n"
		"      --fcnt-start N|random  FCnt of the first uplink (default 0)\n"
		"      --otaa              devices join (OTAA): an AppKey each, one JoinEUI, a random\n"
		"                          first DevNonce; no session until lorawan send --join\n"
		"      --mac-version V     1.0.3 (default) or 1.1.0: sessions with four keys\n"
		"                          (FNwkSIntKey, SNwkSIntKey, NwkSEncKey, AppSKey) and the\n"
		"                          uplink MIC of both integrity keys (B0 and B1: TxDr, TxCh),\n"
		"                          FOpts encrypted with NwkSEncKey; with --otaa two root\n"
		"                          keys (NwkKey signs the JoinRequest, JSIntKey the\n"
		"                          JoinAccept when the server sets OptNeg)\n"
		"\n"
		"Examples:\n"
		"  xdpreplay lorawan fleet --devices 300k --gateways 2k --heard-by 3 --seed 7 --out fleet/\n"
		"  xdpreplay lorawan fleet --devices 10k --gateways 50 --otaa --out otaa/\n"
		"  xdpreplay lorawan fleet --devices 10k --mac-version 1.1.0 --out v11/\n"
		"  xdpreplay lorawan fleet --devices 1k --otaa --mac-version 1.1.0 --out otaa11/\n"
		"  xdpreplay lorawan fleet --devices 100 --datr SF12BW125 --payload-size 51 --out small/\n");
}

static int cmd_fleet(int argc, char **argv)
{
	enum {
		O_OUT = 256,
		O_DEVICES,
		O_GATEWAYS,
		O_HEARD,
		O_SEED,
		O_REGION,
		O_DATR,
		O_PSIZE,
		O_FPORT,
		O_CONFIRMED,
		O_FCNT,
		O_OTAA,
		O_MAC_VERSION
	};
	static const struct option opts[] = {
		{ "out", required_argument, NULL, O_OUT },
		{ "devices", required_argument, NULL, O_DEVICES },
		{ "gateways", required_argument, NULL, O_GATEWAYS },
		{ "heard-by", required_argument, NULL, O_HEARD },
		{ "seed", required_argument, NULL, O_SEED },
		{ "region", required_argument, NULL, O_REGION },
		{ "datr", required_argument, NULL, O_DATR },
		{ "payload-size", required_argument, NULL, O_PSIZE },
		{ "fport", required_argument, NULL, O_FPORT },
		{ "confirmed", no_argument, NULL, O_CONFIRMED },
		{ "fcnt-start", required_argument, NULL, O_FCNT },
		{ "otaa", no_argument, NULL, O_OTAA },
		{ "mac-version", required_argument, NULL, O_MAC_VERSION },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *cmd = "lorawan fleet", *out = NULL;
	struct lw_gen_opts g = { .devices = 1000,
				 .gateways = 10,
				 .heard_by = 1,
				 .seed = 1,
				 .region = "eu868",
				 .sf = 7,
				 .bw_khz = 125,
				 .payload_min = 12,
				 .payload_max = 12,
				 .fport = 1 };
	uint64_t v, t0 = 0;
	struct lw_fleet f;
	bool quiet = false;
	int opt, err;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
		switch (opt) {
		case O_OUT: out = optarg; break;
		case O_DEVICES:
			if (cli_count(cmd, "devices", optarg, &g.devices))
				return XR_EXIT_USAGE;
			break;
		case O_GATEWAYS:
			if (cli_count(cmd, "gateways", optarg, &g.gateways))
				return XR_EXIT_USAGE;
			break;
		case O_SEED:
			if (cli_count(cmd, "seed", optarg, &g.seed))
				return XR_EXIT_USAGE;
			break;
		case O_HEARD:
			if (cli_count(cmd, "heard-by", optarg, &v))
				return XR_EXIT_USAGE;
			g.heard_by = v > 255 ? 255 : v;
			break;
		case O_REGION: g.region = optarg; break;
		case O_DATR:
			if (lw_parse_datr(optarg, &g.sf, &g.bw_khz))
				return cli_usage_error(
					cmd, "--datr: '%s' is not SF<5..12>BW<125|250|500>",
					optarg);
			break;
		case O_PSIZE:
			if (parse_uint_range(optarg, 65535, &g.payload_min, &g.payload_max))
				return cli_usage_error(cmd, "--payload-size: '%s' is not N or A-B",
						       optarg);
			if (g.payload_min < 1 || g.payload_max > XR_LORA_MAX_FRM)
				return cli_usage_error(
					cmd,
					"--payload-size: xdpreplay sends FRMPayloads of 1 to %d bytes",
					XR_LORA_MAX_FRM);
			break;
		case O_FPORT:
			if (cli_count(cmd, "fport", optarg, &v))
				return XR_EXIT_USAGE;
			if (v > 223)
				return cli_usage_error(cmd, "--fport must be between 0 and 223");
			g.fport = v;
			break;
		case O_CONFIRMED: g.confirmed = true; break;
		case O_OTAA: g.otaa = true; break;
		case O_MAC_VERSION:
			if (strcmp(optarg, "1.1.0") && strcmp(optarg, "1.1") &&
			    strcmp(optarg, "1.0.3"))
				return cli_usage_error(cmd, "--mac-version %s: 1.0.3 or 1.1.0",
						       optarg);
			g.v11 = optarg[2] == '1';
			break;
		case O_FCNT:
			if (!strcmp(optarg, "random")) {
				g.fcnt_random = true;
				break;
			}
			if (cli_count(cmd, "fcnt-start", optarg, &v))
				return XR_EXIT_USAGE;
			if (v > UINT32_MAX)
				return cli_usage_error(cmd, "--fcnt-start must fit 32 bits");
			g.fcnt_start = v;
			break;
		case 'q': quiet = true; break;
		case 'h': fleet_usage(stdout); return XR_EXIT_OK;
		default: return cli_bad_option(cmd, argv, opt);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!out)
		return cli_usage_error(cmd, "missing --out DIR");
	t0 = now_ns();
	err = lw_fleet_generate(&g, &f);
	if (err)
		return err == -EINVAL ? XR_EXIT_USAGE : XR_EXIT_ENV;
	err = lw_fleet_save(&f, out);
	if (!err && !quiet) {
		char dp[4096], gp[4096];

		fprintf(stderr,
			"lorawan fleet: %zu devices, %zu gateways, heard by %u, seed %llu: %s, %s (%.2f s)\n",
			f.ndev, f.ngw, f.heard_by, (unsigned long long)g.seed,
			lw_path(dp, sizeof(dp), out, "devices.csv"),
			lw_path(gp, sizeof(gp), out, "gateways.csv"), (now_ns() - t0) / 1e9);
	}
	lw_fleet_free(&f);
	return err ? XR_EXIT_ENV : XR_EXIT_OK;
}

int cmd_lorawan(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		FILE *f = argc < 2 ? stderr : stdout;

		fprintf(f,
			"Usage: xdpreplay lorawan fleet|send [options]\n\n"
			"  fleet   make a fleet of devices (ABP or OTAA) and gateways from a seed, as CSV\n"
			"  send    send its uplinks (or JoinRequests) as Semtech UDP PUSH_DATA; count answers\n\n"
			"'xdpreplay lorawan fleet --help' and 'xdpreplay lorawan send --help' say more.\n");
		return argc < 2 ? XR_EXIT_USAGE : XR_EXIT_OK;
	}
	if (!strcmp(argv[1], "fleet")) {
		xr_cmd = "lorawan fleet";
		return cmd_fleet(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "send"))
		return send_command("lorawan send", proto_find("lorawan"), argc - 1, argv + 1,
				    lorawan_send_usage);
	fprintf(stderr, "xdpreplay lorawan: unknown subcommand '%s' (fleet or send)\n", argv[1]);
	return XR_EXIT_USAGE;
}
