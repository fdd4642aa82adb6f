// SPDX-License-Identifier: GPL-2.0
/*
 * xdpreplay selftest: holds the kernel engine's rewrites (bpf/gen.bpf.c) against
 * the userspace reference (user/frames/rewrite.c) byte for byte, over random frames,
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
#include "cmd/cli.h"
#include "engine/engine.h"
#include "engine/pacer.h"
#include "frames/csum.h"
#include "util/log.h"
#include "frames/rewrite.h"
#include "selftest/selftest.h"
#include "util/splitmix.h"
#include "util/units.h"

#define MAX_NS 16

static uint64_t rng_state;

/* reproducible from --seed */
static uint64_t rnd(void)
{
	return splitmix64(&rng_state);
}

/* Checksum of a UDP/TCP segment with its IPv4 or IPv6 pseudo-header; 0 when it verifies. */
static uint16_t l4_csum(const uint8_t *ip, const uint8_t *l4, size_t l4len, uint8_t proto)
{
	uint32_t sum = (ip[0] >> 4) == 6 ? csum_add(ip + 8, 32, 0) : csum_add(ip + 12, 8, 0);

	sum += proto + (uint32_t)l4len;
	return csum_fold(csum_add(l4, l4len, sum));
}

/* An Ethernet/IPv4 or IPv6/UDP or TCP frame with random contents and valid checksums. */
static uint32_t random_frame(uint8_t *f, int ipver, uint8_t proto, uint32_t payload,
			     const uint8_t *v6high)
{
	uint32_t l3len = ipver == 6 ? 40 : 20, l4hdr = proto == IPPROTO_UDP ? 8 : 20;
	uint32_t len = 14 + l3len + l4hdr + payload;
	uint8_t *ip = f + 14, *l4 = ip + l3len;
	uint16_t c;

	for (uint32_t i = 0; i < len; i++)
		f[i] = rnd();
	if (ipver == 6) {
		f[12] = 0x86;
		f[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = (l4hdr + payload) >> 8;
		ip[5] = (l4hdr + payload) & 0xff;
		ip[6] = proto;
		/* the upper halves of both addresses are the set's prefix */
		memcpy(ip + 8, v6high, 8);
		memcpy(ip + 24, v6high, 8);
	} else {
		f[12] = 0x08;
		f[13] = 0x00;
		ip[0] = 0x45;
		ip[2] = (20 + l4hdr + payload) >> 8;
		ip[3] = (20 + l4hdr + payload) & 0xff;
		ip[6] = 0x40; /* DF, no fragment offset */
		ip[7] = 0;
		ip[9] = proto;
		ip[10] = ip[11] = 0;
		c = csum_fold(csum_add(ip, 20, 0));
		ip[10] = c >> 8;
		ip[11] = c & 0xff;
	}
	if (proto == IPPROTO_UDP) {
		l4[4] = (8 + payload) >> 8;
		l4[5] = (8 + payload) & 0xff;
		l4[6] = l4[7] = 0;
		/* one IPv4 frame in eight keeps a zero UDP checksum: "none" */
		if (ipver == 6 || rnd() % 8) {
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

static void random_spec(char *buf, size_t len, int ipver, uint8_t proto, uint32_t min_payload,
			uint32_t hdrs)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	const char *l4 = proto == IPPROTO_UDP ? "udp" : "tcp";
	unsigned int kind = rnd() % 7, w = widths[rnd() % 4], off, lo;
	char mod[32] = "";

	if (rnd() % 3 == 0)
		snprintf(mod, sizeof(mod), "%%%llu",
			 (unsigned long long)(rnd() % (w == 1 ? 256 :
						       w == 2 ? 65536 :
								1000000) +
					      1));
	if (rnd() % 4 == 0)
		snprintf(mod + strlen(mod), sizeof(mod) - strlen(mod), "/%u",
			 1 + (unsigned)(rnd() % 1000));
	switch (kind) {
	case 0:
		if (ipver == 4) {
			snprintf(buf, len, "ip.id=seq%s", rnd() % 2 ? "" : "%65536");
			return;
		}
		/* fall through */
	case 1:
		if (ipver == 4)
			snprintf(buf, len, "ip.%s=198.%u.%u.0/%u", rnd() % 2 ? "src" : "dst",
				 18 + (unsigned)(rnd() % 2), (unsigned)(rnd() % 256),
				 16 + (unsigned)(rnd() % 17));
		else
			snprintf(buf, len, "ip6.%s=2001:db8::%x/%u", rnd() % 2 ? "src" : "dst",
				 (unsigned)(rnd() % 65536), 64 + (unsigned)(rnd() % 65));
		return;
	case 2:
		lo = rnd() % 60000;
		snprintf(buf, len, "%s.%s=%u-%u", l4, rnd() % 2 ? "sport" : "dport", lo,
			 lo + (unsigned)(rnd() % 5000));
		return;
	case 3:
		/* payload fields are 2, 4 or 8 bytes */
		w = w == 1 ? 2 : w;
		off = rnd() % (min_payload - w + 1);
		snprintf(buf, len, "payload@%u:%u=seq%s", off, w, w == 2 ? "" : mod);
		return;
	default:
		/* anywhere in the payload, any alignment, either byte order */
		off = hdrs + rnd() % (min_payload - w + 1);
		if (w == 1)
			snprintf(buf, len, "u8@%u+=%llu%s", off, (unsigned long long)(rnd() % 300),
				 mod);
		else
			snprintf(buf, len, "u%u%s@%u+=%llu%s", w * 8, rnd() % 2 ? "be" : "le", off,
				 (unsigned long long)(rnd() % 100000), mod);
	}
}

static int check_csums(const uint8_t *f, uint32_t len, int ipver, uint8_t proto, char *why,
		       size_t wl)
{
	uint32_t l3len = ipver == 6 ? 40 : 20;
	const uint8_t *ip = f + 14, *l4 = ip + l3len;

	if (ipver == 4 && csum_fold(csum_add(ip, 20, 0))) {
		snprintf(why, wl, "IPv4 header checksum does not verify");
		return -1;
	}
	if (proto == IPPROTO_UDP && !l4[6] && !l4[7])
		return 0;
	if (l4_csum(ip, l4, len - 14 - l3len, proto)) {
		snprintf(why, wl, "%s checksum does not verify",
			 proto == IPPROTO_UDP ? "UDP" : "TCP");
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay selftest [--cases N] [--seed S] [--only PART] [-v]\n"
		"\n"
		"Runs the kernel engine's per-packet rewrites (BPF) on N random frame sets with\n"
		"random --rewrite plans and random sequence numbers, in BPF_PROG_RUN test mode\n"
		"(nothing is sent), and compares each frame byte for byte with the userspace\n"
		"reference; every IPv4, UDP and TCP checksum is also recomputed from scratch.\n"
		"Then the same for the other BPF code, each part against its own reference:\n"
		"  rewrite  the per-packet rewrites (above)\n"
		"  lorawan  AES, CMAC and uplinks (published vectors, random fleets)\n"
		"  pacer    departure times against the userspace pacer\n"
		"  tcp      the TCP reply builder, payloads of 0 to 1460 bytes; gen tcp's {c}, {k}\n"
		"  mqtt     gen mqtt's per-session bytes\n"
		"  http     gen tcp's HTTP reader, random responses cut into random segments\n"
		"  hist     the round-trip histograms' regions per CPU\n"
		"  --only PART  runs that part alone.\n"
		"Exit status 0 when all agree.\n"
		"\n"
		"Examples:\n"
		"  xdpreplay selftest\n"
		"  xdpreplay selftest --cases 2000 --seed 7\n"
		"  xdpreplay selftest --only http --cases 10000\n");
}

/*
 * The kernel engine's departure times against the userspace pacer's: random
 * rates and capture timings, threads, shards (--shard I/N, with units of
 * one or several sequence numbers), first sequence numbers, k near and far.
 */
static int pacer_cases(const struct iface *lo, uint64_t cases, uint64_t *checked,
		       uint64_t *mismatches)
{
	for (uint64_t c = 0; c < cases; c++) {
		struct engine_opts o = { .threads = 1 + rnd() % 4,
					 .first_n = rnd() % 2 ? 0 : rnd() % (1ULL << 40) };
		uint64_t ks[XR_DUE_TEST_K], due[XR_DUE_TEST_K],
			t0 = 1000000000ULL + rnd() % (1ULL << 50), ts = 0;
		unsigned int thread = rnd() % o.threads;
		uint8_t frame[64] = { [12] = 0x88, [13] = 0xb5 };
		struct frameset fs;
		struct pacer p;
		int err = 0, nframes = 1 + rnd() % 8;

		frameset_init(&fs);
		for (int i = 0; i < nframes && !err; i++) {
			err = frameset_add(&fs, frame, sizeof(frame), sizeof(frame), ts);
			ts += rnd() % 3 ? rnd() % 1000000 : rnd() % 100000000000ULL;
		}
		frameset_finish(&fs);
		o.fs = &fs;
		if (rnd() % 2) {
			o.shards = 2 + rnd() % 4;
			o.shard = rnd() % o.shards;
			o.frame_div = 1 + rnd() % 3;
		}
		if (rnd() % 2) {
			o.pace = XR_PACE_RATE;
			o.pps = (double)(1 + rnd() % 100000000) / (1 + rnd() % 1000);
		} else {
			o.pace = XR_PACE_PCAP;
			o.multiplier = (double)(1 + rnd() % 1000000000) / 1000;
		}
		for (int i = 0; i < XR_DUE_TEST_K; i++)
			ks[i] = i < 4  ? (uint64_t)i :
				i < 8  ? rnd() % 100000 :
				i < 12 ? rnd() % (1ULL << 32) :
					 rnd() % (1ULL << 44);
		if (!err)
			err = kengine_due_test(lo, &o, thread, t0, ks, XR_DUE_TEST_K, due);
		if (err) {
			frameset_free(&fs);
			return err;
		}
		{
			struct xr_frame fr[8];

			for (size_t i = 0; i < fs.n; i++)
				fr[i] = (struct xr_frame){ .len = fs.frames[i].len,
							   .ts_ns = fs.frames[i].ts_ns };
			pacer_init(&p, &o, thread, t0, fr);
			for (int i = 0; i < XR_DUE_TEST_K; i++) {
				uint64_t want = pacer_due(&p, ks[i]);

				(*checked)++;
				if (due[i] != want && ++*mismatches <= 5)
					fprintf(stderr,
						"selftest pacer: case %llu (%s, %u threads), k=%llu: BPF %llu ns, "
						"userspace %llu ns\n",
						(unsigned long long)c,
						o.pace == XR_PACE_RATE ? "rate" : "capture",
						o.threads, (unsigned long long)ks[i],
						(unsigned long long)due[i],
						(unsigned long long)want);
			}
		}
		frameset_free(&fs);
	}
	return 0;
}

/* --only: one part, or NULL for all */
/* The rewrite part's books: frames held against the reference, those that differed, plans drawn again */
struct rewrite_books {
	uint64_t frames, mismatches, redrawn;
};

/*
 * One rewrite case's frames: 1 to 4 random frames (now and then an ARP
 * request no plan fits), a random plan of them into o. 0, 1 (the plan
 * refused fields that share bytes: draw again), or -errno.
 */
static int rewrite_case_plan(struct frameset *fs, struct engine_opts *o, char text[][96],
			     int nframes, int nspecs, int ipver, uint8_t proto)
{
	uint32_t l4hdr = proto == IPPROTO_UDP ? 8 : 20, min_payload = UINT32_MAX;
	uint32_t hdrs = 14 + (ipver == 6 ? 40 : 20) + l4hdr;
	struct rewrite_spec specs[XR_MAX_OPS];
	int nops, v = xr_verbosity;
	uint8_t buf[XR_MAX_FRAME], v6high[8];
	bool misfit;

	/* 2001:db8:: upper half, so that the ip6.* ranges below fit every frame */
	memcpy(v6high, "\x20\x01\x0d\xb8\0\0\0\0", 8);
	for (int i = 0; i < nframes; i++) {
		uint32_t payload = 16 + rnd() % 1400,
			 len = random_frame(buf, ipver, proto, payload, v6high);

		if (payload < min_payload)
			min_payload = payload;
		if (frameset_add(fs, buf, len, len, 0))
			return -ENOMEM;
	}
	/* now and then an ARP request, which no plan fits: --misfit send sends it as it is */
	misfit = rnd() % 4 == 0;
	if (misfit) {
		static const uint8_t arp[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0,
						 0xc6, 0x12, 0,	   1,	 0x08, 0x06, 0, 1,
						 0x08, 0,    6,	   4,	 0,    1 };

		if (frameset_add(fs, arp, sizeof(arp), sizeof(arp), 0))
			return -ENOMEM;
	}
	for (int i = 0; i < nspecs; i++) {
		random_spec(text[i], sizeof(text[i]), ipver, proto, min_payload, hdrs);
		if (rewrite_parse(text[i], &specs[i]))
			return -EINVAL;
	}
	/* random fields may share bytes, which a plan refuses: draw again */
	xr_verbosity = -1;
	if (misfit)
		rewrite_mark_unfit(specs, nspecs, fs);
	nops = rewrite_plan(specs, nspecs, fs, o->ops);
	xr_verbosity = v;
	if (nops < 0)
		return 1;
	o->nops = nops;
	o->fs = fs;
	return 0;
}

/* Random sequence numbers: small, around the 16-bit wrap, 40-bit and 64-bit */
static void random_ns(uint64_t *ns, int n)
{
	for (int i = 0; i < n; i++) {
		switch (rnd() % 4) {
		case 0: ns[i] = rnd() % 16; break;
		case 1: ns[i] = 65530 + rnd() % 12; break; /* 16-bit wrap */
		case 2: ns[i] = rnd() % (1ULL << 40); break;
		default: ns[i] = rnd(); break;
		}
	}
}

/*
 * Rewrite case c: its frames run through the BPF (test mode) at random
 * sequence numbers and held, byte for byte and checksum by checksum,
 * against the userspace reference. 0, 1 (drawn again), or -errno.
 */
static int rewrite_case(const struct iface *lo, uint64_t c, uint8_t *out, uint8_t *ref,
			struct rewrite_books *b)
{
	uint8_t proto = rnd() % 2 ? IPPROTO_UDP : IPPROTO_TCP;
	/* drawn in this order: a seed gives the cases it always gave */
	int ipver = rnd() % 3 ? 4 : 6, nframes = 1 + rnd() % 4, nspecs = 1 + rnd() % XR_MAX_OPS,
	    err;
	struct engine_opts o = { .threads = 1 };
	char text[XR_MAX_OPS][96];
	uint32_t out_len[MAX_NS];
	uint64_t ns[MAX_NS];
	struct frameset fs;

	frameset_init(&fs);
	err = rewrite_case_plan(&fs, &o, text, nframes, nspecs, ipver, proto);
	if (err) {
		frameset_free(&fs);
		return err;
	}
	random_ns(ns, MAX_NS);
	err = kengine_run_frames(lo, &o, ns, MAX_NS, out, out_len, NULL);
	for (int i = 0; i < MAX_NS && !err; i++) {
		const struct fs_frame *fr = &fs.frames[ns[i] % fs.n];
		bool as_is = frameset_unplanned(&fs, ns[i] % fs.n);
		char why[96] = "";

		memcpy(ref, fs.bytes + fr->off, fr->len);
		if (!as_is)
			rewrite_apply(o.ops, o.nops, ref, fr->len, ns[i]);
		b->frames++;
		if (out_len[i] != fr->len)
			snprintf(why, sizeof(why), "BPF gave %u bytes, expected %u", out_len[i],
				 fr->len);
		else if (memcmp(out + (size_t)i * XR_MAX_FRAME, ref, fr->len))
			snprintf(why, sizeof(why), "bytes differ from the reference");
		else if (!as_is)
			check_csums(ref, fr->len, ipver, proto, why, sizeof(why));
		if (!why[0] || ++b->mismatches > 5)
			continue;
		fprintf(stderr, "selftest: case %llu, n=%llu:", (unsigned long long)c,
			(unsigned long long)ns[i]);
		for (int s = 0; s < nspecs; s++)
			fprintf(stderr, " --rewrite %s", text[s]);
		fprintf(stderr, ": %s\n", why);
	}
	frameset_free(&fs);
	return err;
}

/* The parts of selftest: each runs its checks, says its line, adds its mismatches. 0 or -errno. */
static int part_rewrite(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint8_t *out = malloc((size_t)MAX_NS * XR_MAX_FRAME), *ref = malloc(XR_MAX_FRAME);
	struct rewrite_books b = {};
	int err = out && ref ? 0 : -ENOMEM;

	for (uint64_t c = 0; c < cases && !err; c++) {
		err = rewrite_case(lo, c, out, ref, &b);
		if (err == 1) {
			b.redrawn++;
			c--;
			err = 0;
		}
	}
	free(out);
	free(ref);
	if (err)
		return err;
	printf("selftest rewrite: %llu cases, %llu frames, %llu mismatches (seed %llu; %llu plans drawn again)\n",
	       (unsigned long long)cases, (unsigned long long)b.frames,
	       (unsigned long long)b.mismatches, (unsigned long long)seed,
	       (unsigned long long)b.redrawn);
	*mis += b.mismatches;
	return 0;
}

static int part_lorawan(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint64_t lw_cases = cases / 10 ? cases / 10 : 1, checked = 0, m = 0, frames = 0;
	int err = selftest_lorawan(lo, lw_cases, rnd, &checked, &m, &frames);

	if (err)
		return err;
	printf("selftest lorawan: AES/CMAC and published vectors, %llu random fleets, %llu frames; "
	       "%llu checks, %llu mismatches\n",
	       (unsigned long long)lw_cases, (unsigned long long)frames,
	       (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	return 0;
}

static int part_pacer(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint64_t pc = cases / 10 ? cases / 10 : 1, checked = 0, m = 0;
	int err = pacer_cases(lo, pc, &checked, &m);

	if (err)
		return err;
	printf("selftest pacer: %llu cases, %llu departure times, %llu mismatches\n",
	       (unsigned long long)pc, (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	return 0;
}

static int part_tcp(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint64_t checked = 0, m = 0;
	int err = selftest_tcp(cases, rnd, &checked, &m);

	if (err)
		return err;
	printf("selftest tcp reply: %llu segments (payloads 0 to 1460 bytes) and segments of "
	       "requests with {c} and {k}, %llu mismatches\n",
	       (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	return 0;
}

static int part_mqtt(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint64_t checked = 0, m = 0;
	unsigned int shapes = 0;
	int err = selftest_mqtt(cases, rnd, &checked, &m, &shapes);

	if (err)
		return err;
	printf("selftest mqtt: %llu segments of CONNECTs and bursts in %u stream shapes (2 of "
	       "callers), %llu mismatches\n",
	       (unsigned long long)checked, shapes, (unsigned long long)m);
	*mis += m;
	checked = m = 0;
	err = selftest_mqtt_deliveries(cases, rnd, &checked, &m);
	if (err)
		return err;
	printf("selftest mqtt deliveries: %llu subscriber streams (QoS-1 subscribers and responders, 3.1.1 and 5.0) in %llu "
	       "segments, %llu mismatches\n",
	       (unsigned long long)cases, (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	checked = m = 0;
	err = selftest_mqtt_calls(cases, rnd, &checked, &m);
	if (err)
		return err;
	printf("selftest mqtt calls: %llu callers' answer streams (3.1.1 and 5.0) in %llu "
	       "segments, %llu mismatches\n",
	       (unsigned long long)cases, (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	return 0;
}

static int part_http(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint64_t checked = 0, m = 0;
	int err = selftest_http(cases, rnd, &checked, &m);

	if (err)
		return err;
	printf("selftest http: %llu responses (Content-Length, chunked, none, to the FIN; "
	       "headers to 70 KB) in %llu segments, %llu mismatches\n",
	       (unsigned long long)cases, (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	return 0;
}

static int part_hist(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis)
{
	uint64_t checked = 0, m = 0;
	int err = selftest_hist(&checked, &m);

	if (err)
		return err;
	printf("selftest hist: a round trip recorded on each of %llu CPUs, %llu mismatches\n",
	       (unsigned long long)checked, (unsigned long long)m);
	*mis += m;
	return 0;
}

static const struct selftest_part {
	const char *name;
	int (*run)(const struct iface *lo, uint64_t cases, uint64_t seed, uint64_t *mis);
} selftest_parts[] = {
	{ "rewrite", part_rewrite }, { "lorawan", part_lorawan }, { "pacer", part_pacer },
	{ "tcp", part_tcp },	     { "mqtt", part_mqtt },	  { "http", part_http },
	{ "hist", part_hist },
};

int cmd_selftest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cases", required_argument, NULL, 'c' }, { "seed", required_argument, NULL, 's' },
		{ "only", required_argument, NULL, 'o' },  { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },	   {},
	};
	uint64_t cases = 300, seed = 1, mismatches = 0;
	const char *only = NULL;
	struct iface lo;
	int opt, err;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (cli_count("selftest", "cases", optarg, &cases))
				return XR_EXIT_USAGE;
			break;
		case 's':
			if (cli_count("selftest", "seed", optarg, &seed))
				return XR_EXIT_USAGE;
			break;
		case 'o':
			for (size_t i = 0; i < sizeof(selftest_parts) / sizeof(selftest_parts[0]);
			     i++)
				if (!strcmp(optarg, selftest_parts[i].name))
					only = selftest_parts[i].name;
			if (!only)
				return cli_usage_error(
					"selftest",
					"--only: rewrite, lorawan, pacer, tcp, mqtt, http or hist, not '%s'",
					optarg);
			break;
		case 'v': xr_verbosity++; break;
		case 'h': usage(stdout); return XR_EXIT_OK;
		default: return cli_bad_option("selftest", argv, opt);
		}
	}
	if (cli_need_root("selftest") || iface_get("lo", &lo))
		return XR_EXIT_ENV;
	rng_state = seed;
	for (size_t i = 0; i < sizeof(selftest_parts) / sizeof(selftest_parts[0]); i++) {
		const struct selftest_part *pt = &selftest_parts[i];

		if (only && strcmp(only, pt->name))
			continue;
		err = pt->run(&lo, cases, seed, &mismatches);
		if (err) {
			fprintf(stderr, "selftest %s: could not run: %s\n", pt->name,
				strerror(-err));
			return XR_EXIT_ENV;
		}
	}
	return mismatches ? XR_EXIT_FAIL : XR_EXIT_OK;
}
