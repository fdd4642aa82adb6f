// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay selftest: holds the kernel engine's rewrites (bpf/gen.bpf.c) against
 * the userspace reference (user/rewrite.c) byte for byte, over random frames,
 * random plans and random sequence numbers, and checks every checksum of every
 * result by recomputing it from scratch. Nothing is sent: the program runs
 * with BPF_PROG_RUN in test mode on the loopback device.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cli.h"
#include "engine.h"
#include "log.h"
#include "rewrite.h"
#include "units.h"

#define MAX_NS 16

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: reproducible from --seed */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* Checksum of an IPv4 UDP/TCP segment with its pseudo-header; 0 when it verifies. */
static uint16_t l4_csum(const uint8_t *ip, const uint8_t *l4, size_t l4len, uint8_t proto)
{
	uint32_t sum = sum16(ip + 12, 8, 0);

	sum += proto + (uint32_t)l4len;
	return fold(sum16(l4, l4len, sum));
}

/* An Ethernet/IPv4/UDP or TCP frame with random contents and valid checksums. */
static uint32_t random_frame(uint8_t *f, uint8_t proto, uint32_t payload)
{
	uint32_t l4hdr = proto == IPPROTO_UDP ? 8 : 20, len = 14 + 20 + l4hdr + payload;
	uint8_t *ip = f + 14, *l4 = ip + 20;
	uint16_t c;

	for (uint32_t i = 0; i < len; i++)
		f[i] = rnd();
	f[12] = 0x08;
	f[13] = 0x00;
	ip[0] = 0x45;
	ip[2] = (20 + l4hdr + payload) >> 8;
	ip[3] = (20 + l4hdr + payload) & 0xff;
	ip[6] = 0x40; /* DF, no fragment offset */
	ip[7] = 0;
	ip[9] = proto;
	ip[10] = ip[11] = 0;
	c = fold(sum16(ip, 20, 0));
	ip[10] = c >> 8;
	ip[11] = c & 0xff;
	if (proto == IPPROTO_UDP) {
		l4[4] = (8 + payload) >> 8;
		l4[5] = (8 + payload) & 0xff;
		l4[6] = l4[7] = 0;
		/* one frame in eight keeps a zero UDP checksum: "none" */
		if (rnd() % 8) {
			c = l4_csum(ip, l4, 8 + payload, proto);
			if (!c)
				c = 0xffff;
			l4[6] = c >> 8;
			l4[7] = c & 0xff;
		}
	} else {
		l4[12] = 5 << 4;
		l4[16] = l4[17] = 0;
		c = l4_csum(ip, l4, 20 + payload, proto);
		l4[16] = c >> 8;
		l4[17] = c & 0xff;
	}
	return len;
}

static void random_spec(char *buf, size_t len, uint32_t min_payload, uint32_t l4hdr)
{
	static const unsigned int widths[] = { 2, 4, 8 };
	unsigned int kind = rnd() % 4, w = kind < 2 ? 2 : widths[rnd() % 3], off;
	char mod[32] = "";

	if (rnd() % 3 == 0)
		snprintf(mod, sizeof(mod), "%%%llu", (unsigned long long)(rnd() % (w == 2 ? 65536 : 1000000) + 1));
	switch (kind) {
	case 0:
		snprintf(buf, len, "ip.id=seq%s", mod);
		return;
	case 1:
		snprintf(buf, len, "ip.id+=%llu%s", (unsigned long long)(rnd() % 70000), mod);
		return;
	case 2:
		off = (rnd() % (min_payload - w + 1)) & ~1U;
		snprintf(buf, len, "payload@%u:%u=seq%s", off, w, mod);
		return;
	default:
		off = (rnd() % (min_payload - w + 1)) & ~1U;
		snprintf(buf, len, "u%u%s@%u+=%llu%s", w * 8, rnd() % 2 ? "be" : "le", 14 + 20 + l4hdr + off,
			 (unsigned long long)(rnd() % 100000), mod);
	}
}

static int check_csums(const uint8_t *f, uint32_t len, uint8_t proto, char *why, size_t wl)
{
	const uint8_t *ip = f + 14, *l4 = ip + 20;

	if (fold(sum16(ip, 20, 0))) {
		snprintf(why, wl, "IPv4 header checksum does not verify");
		return -1;
	}
	if (proto == IPPROTO_UDP && !l4[6] && !l4[7])
		return 0;
	if (l4_csum(ip, l4, len - 34, proto)) {
		snprintf(why, wl, "%s checksum does not verify", proto == IPPROTO_UDP ? "UDP" : "TCP");
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay selftest [--cases N] [--seed S] [-v]\n"
		"\n"
		"Runs the kernel engine's per-packet rewrites (BPF) on N random frame sets with\n"
		"random --rewrite plans and random sequence numbers, in BPF_PROG_RUN test mode\n"
		"(nothing is sent), and compares each frame byte for byte with the userspace\n"
		"reference; every IPv4, UDP and TCP checksum is also recomputed from scratch.\n"
		"Exit status 0 when all agree.\n"
		"\n"
		"Examples:\n"
		"  xdpreplay selftest\n"
		"  xdpreplay selftest --cases 2000 --seed 7\n");
}

int cmd_selftest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cases", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	uint64_t cases = 300, seed = 1, frames_checked = 0, mismatches = 0;
	uint8_t *out = NULL, *ref = NULL;
	struct iface lo;
	int opt, err = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': if (cli_count("selftest", "cases", optarg, &cases)) return XR_EXIT_USAGE; break;
		case 's': if (cli_count("selftest", "seed", optarg, &seed)) return XR_EXIT_USAGE; break;
		case 'v': xr_verbosity++; break;
		case 'h': usage(stdout); return XR_EXIT_OK;
		default: return cli_bad_option("selftest", argv, opt);
		}
	}
	if (cli_need_root("selftest"))
		return XR_EXIT_ENV;
	if (iface_get("lo", &lo))
		return XR_EXIT_ENV;
	rng_state = seed;
	out = malloc((size_t)MAX_NS * XR_MAX_FRAME);
	ref = malloc(XR_MAX_FRAME);
	if (!out || !ref) {
		err = -ENOMEM;
		goto done;
	}
	for (uint64_t c = 0; c < cases && !err; c++) {
		uint8_t proto = rnd() % 2 ? IPPROTO_UDP : IPPROTO_TCP, buf[XR_MAX_FRAME];
		uint32_t l4hdr = proto == IPPROTO_UDP ? 8 : 20, min_payload = UINT32_MAX, out_len[MAX_NS];
		struct rewrite_spec specs[XR_MAX_OPS];
		struct engine_opts o = { .threads = 1 };
		int nframes = 1 + rnd() % 4, nspecs = 1 + rnd() % 3;
		char text[XR_MAX_OPS][96];
		uint64_t ns[MAX_NS];
		struct frameset fs;

		frameset_init(&fs);
		for (int i = 0; i < nframes; i++) {
			uint32_t payload = 16 + rnd() % 1400, len = random_frame(buf, proto, payload);

			if (payload < min_payload)
				min_payload = payload;
			if (frameset_add(&fs, buf, len, len, 0)) {
				err = -ENOMEM;
				break;
			}
		}
		for (int i = 0; i < nspecs && !err; i++) {
			random_spec(text[i], sizeof(text[i]), min_payload, l4hdr);
			if (rewrite_parse(text[i], &specs[i]))
				err = -EINVAL;
		}
		if (!err && rewrite_plan(specs, nspecs, &fs, o.ops))
			err = -EINVAL;
		o.nops = nspecs;
		o.fs = &fs;
		for (int i = 0; i < MAX_NS; i++) {
			switch (rnd() % 4) {
			case 0: ns[i] = rnd() % 16; break;
			case 1: ns[i] = 65530 + rnd() % 12; break; /* 16-bit wrap */
			case 2: ns[i] = rnd() % (1ULL << 40); break;
			default: ns[i] = rnd(); break;
			}
		}
		if (!err)
			err = kengine_run_frames(&lo, &o, ns, MAX_NS, out, out_len);
		for (int i = 0; i < MAX_NS && !err; i++) {
			const struct fs_frame *fr = &fs.frames[ns[i] % fs.n];
			char why[96] = "";

			memcpy(ref, fs.bytes + fr->off, fr->len);
			rewrite_apply(o.ops, o.nops, ref, fr->len, ns[i]);
			frames_checked++;
			if (out_len[i] != fr->len)
				snprintf(why, sizeof(why), "BPF gave %u bytes, expected %u", out_len[i], fr->len);
			else if (memcmp(out + (size_t)i * XR_MAX_FRAME, ref, fr->len))
				snprintf(why, sizeof(why), "bytes differ from the reference");
			else
				check_csums(ref, fr->len, proto, why, sizeof(why));
			if (why[0]) {
				mismatches++;
				if (mismatches <= 5) {
					fprintf(stderr, "selftest: case %llu, n=%llu:", (unsigned long long)c,
						(unsigned long long)ns[i]);
					for (int s = 0; s < nspecs; s++)
						fprintf(stderr, " --rewrite %s", text[s]);
					fprintf(stderr, ": %s\n", why);
				}
			}
		}
		frameset_free(&fs);
	}
done:
	free(out);
	free(ref);
	if (err) {
		fprintf(stderr, "selftest: could not run: %s\n", strerror(-err));
		return XR_EXIT_ENV;
	}
	printf("selftest rewrite: %llu cases, %llu frames, %llu mismatches (seed %llu)\n",
	       (unsigned long long)cases, (unsigned long long)frames_checked, (unsigned long long)mismatches,
	       (unsigned long long)seed);
	return mismatches ? XR_EXIT_FAIL : XR_EXIT_OK;
}
