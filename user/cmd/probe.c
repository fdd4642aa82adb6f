// SPDX-License-Identifier: GPL-2.0
/* xdpreplay probe: its options, and the checks' report as text and JSON (engine/probe.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "cmd/cli.h"
#include "engine/probe.h"
#include "util/json.h"
#include "util/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay probe [-i IFACE] [--json FILE|-] [-v]\n"
		"\n"
		"Tests, by doing each for real and undoing it, what this kernel and IFACE support:\n"
		"BTF, bpffs, privileges, native XDP, BPF_PROG_RUN live frames, transmit through\n"
		"ndo_xdp_xmit (for veth: whether the peer is ready to receive, since frames sent\n"
		"to a peer without NAPI vanish without a trace, and whether the peer has an XDP\n"
		"program, without which what TCP sessions send by XDP_TX waits there), AF_XDP\n"
		"zero-copy and copy mode; then each program a kernel's verifier may refuse, loaded\n"
		"alone as a run loads it: each protocol's reply program (replies_syn: gen syn's\n"
		"answers, ...) and count's drop-reason tracer, a refusal by the verifier told apart\n"
		"from missing privileges.\n"
		"One test frame (EtherType 0x88B5, addressed to IFACE's own MAC) leaves IFACE.\n"
		"Each missing piece comes with the fix. Exit status 0 when an engine can send on\n"
		"IFACE (or, without -i, when live frames work), 1 otherwise.\n"
		"\n"
		"Options:\n"
		"  -i, --iface IFACE   interface to test\n"
		"      --json FILE|-   write the report as JSON\n"
		"  -v, --verbose       more detail (-vv: libbpf's messages)\n"
		"\n"
		"Examples:\n"
		"  xdpreplay probe\n"
		"  xdpreplay probe -i eth1 --json -\n");
}

static void print_report(FILE *out, const struct probe_report *r, const char *kernel,
			 const struct iface *ifc)
{
	fprintf(out, "xdpreplay probe: kernel %s%s%s%s%s\n", kernel, ifc ? ", interface " : "",
		ifc ? ifc->name : "", ifc ? ", driver " : "", ifc ? ifc->driver : "");
	for (int i = 0; i < r->n; i++) {
		fprintf(out, "  %-4s %-15s %s\n", r->c[i].ok ? "ok" : "no", r->c[i].name,
			r->c[i].detail);
		if (!r->c[i].ok && r->c[i].fix[0])
			fprintf(out, "       %-15s fix: %s\n", "", r->c[i].fix);
	}
	if (ifc) {
		bool live = false, xsk = false;

		for (int i = 0; i < r->n; i++) {
			live |= !strcmp(r->c[i].name, "xdp_xmit") && r->c[i].ok;
			xsk |= !strcmp(r->c[i].name, "afxdp_copy") && r->c[i].ok;
		}
		fprintf(out, "  engine: %s\n",
			live ? "kernel (live frames)" :
			xsk  ? "xsk (AF_XDP)" :
			       "none usable");
	}
}

/* The report as JSON into path: 0, or -errno after a message */
static int write_json(const struct probe_report *r, const char *json_path, const char *kernel,
		      const struct iface *ifc, bool usable)
{
	FILE *f = json_fopen(json_path);
	struct json j = { .f = f };

	if (!f) {
		int err = -errno;

		pr_warn("cannot write %s: %s\n", json_path, strerror(-err));
		return err;
	}
	json_open(&j, NULL, '{');
	json_str(&j, "kernel", kernel);
	if (ifc) {
		json_str(&j, "iface", ifc->name);
		json_str(&j, "driver", ifc->driver);
	}
	json_flag(&j, "usable", usable);
	json_open(&j, "checks", '{');
	for (int i = 0; i < r->n; i++) {
		json_open(&j, r->c[i].name, '{');
		json_flag(&j, "ok", r->c[i].ok);
		json_str(&j, "detail", r->c[i].detail);
		if (r->c[i].fix[0])
			json_str(&j, "fix", r->c[i].fix);
		json_close(&j, '}');
	}
	json_close(&j, '}');
	json_close(&j, '}');
	return json_fclose(f);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "json", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *ifname = NULL, *json_path = NULL;
	struct probe_report r = {};
	struct utsname uts;
	struct iface ifc;
	bool usable;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'i': ifname = optarg; break;
		case 'j': json_path = optarg; break;
		case 'v': xr_verbosity++; break;
		case 'h': usage(stdout); return XR_EXIT_OK;
		default: return cli_bad_option("probe", argv, opt);
		}
	}
	if (optind < argc)
		return cli_usage_error("probe", "unexpected argument '%s'", argv[optind]);
	if (ifname && iface_get(ifname, &ifc))
		return XR_EXIT_ENV;
	uname(&uts);

	probe_checks(&r, ifname ? &ifc : NULL);

	usable = false;
	for (int i = 0; i < r.n; i++)
		if ((ifname &&
		     (!strcmp(r.c[i].name, "xdp_xmit") || !strcmp(r.c[i].name, "afxdp_copy"))) ||
		    (!ifname &&
		     (!strcmp(r.c[i].name, "live_frames") || !strcmp(r.c[i].name, "afxdp_socket"))))
			usable |= r.c[i].ok;

	/* the JSON on standard output: the words go to standard error */
	print_report(json_path && !strcmp(json_path, "-") ? stderr : stdout, &r, uts.release,
		     ifname ? &ifc : NULL);
	if (json_path && write_json(&r, json_path, uts.release, ifname ? &ifc : NULL, usable))
		return XR_EXIT_ENV;
	return usable ? XR_EXIT_OK : XR_EXIT_FAIL;
}
