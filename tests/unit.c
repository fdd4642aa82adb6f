// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the pure-C modules: units, JSON, the pcap/pcapng reader, the
 * pacer, MLR load classification, drop attribution, rewrite specs, typed
 * addresses, DNS queries, MQTT packets, a join storm's JoinAccept matcher.
 * Prints "PASS name" or "FAIL name: why" per test for tests/run.sh.
 * XR_PCAPS names pcaps/ (samples written by pcaps/mkpcap.py), XR_HOSTILE the
 * malformed files mkpcap.py writes for the tests.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frames/frameset.h"
#include "util/json.h"
#include "util/prom.h"
#include "engine/spectrum.h"
#include "engine/engine.h"
#include "util/log.h"
#include "engine/meter.h"
#include "engine/pacer.h"
#include "util/splitmix.h"
#include "util/units.h"
#include "frames/addr.h"
#include "frames/rewrite.h"
#include "measure/attrib.h"
#include "proto/dns/query.h"
#include "proto/lorawan/join.h"
#include "proto/mqtt/stream.h"
#include "proto/tcp/session.h"
#include "search/search.h"
#include "report/compare.h"
#include "report/headline.h"
#include "util/words.h"

static int failed_checks;
static char why[512];

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond) && !failed_checks++)                 \
			snprintf(why, sizeof(why), __VA_ARGS__); \
	} while (0)

static int nfail;

static void run(const char *name, void (*fn)(void))
{
	failed_checks = 0;
	why[0] = 0;
	fn();
	if (failed_checks) {
		printf("FAIL %s: %s\n", name, why);
		nfail++;
	} else {
		printf("PASS %s\n", name);
	}
}

static void test_parse_count(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 },	      { "1000", 1000 }, { "10k", 10000 },   { "2.5M", 2500000 },
		{ "1G", 1000000000 }, { "1.5k", 1500 }, { "300K", 300000 },
	};
	static const char *bad[] = { "",    "banana", "-1", "1.5",  "10x", "1e3",
				     "inf", "nan",    " 5", "0x10", "k" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(!parse_count(ok[i].s, &v), "'%s' rejected", ok[i].s);
		CHECK(v == ok[i].v, "'%s' -> %llu, expected %llu", ok[i].s, (unsigned long long)v,
		      (unsigned long long)ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_count(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
}

static void test_parse_duration(void)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {
		{ "30s", 30000000000ULL },
		{ "250ms", 250000000ULL },
		{ "1.5", 1500000000ULL },
		{ "5m", 300000000000ULL },
		{ "1h", 3600000000000ULL },
		{ "10us", 10000 },
		{ "7ns", 7 },
	};
	static const char *bad[] = { "", "ten", "-1s", "5 s", "3parsecs", "1e999s" };
	uint64_t ns;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(!parse_duration(ok[i].s, &ns), "'%s' rejected", ok[i].s);
		CHECK(ns == ok[i].ns, "'%s' -> %llu ns", ok[i].s, (unsigned long long)ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_duration(bad[i], &ns) == -EINVAL, "'%s' accepted", bad[i]);
}

static void test_parse_bitrate(void)
{
	static const struct {
		const char *s;
		double v;
	} ok[] = {
		{ "1Gbit", 1e9 },   { "100Mbit", 1e8 }, { "2.5G", 2.5e9 },
		{ "64kbps", 64e3 }, { "1000", 1000 },
	};
	static const char *bad[] = { "fast", "1Gbyte", "-3M", "1Q" };
	double v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(!parse_bitrate(ok[i].s, &v), "'%s' rejected", ok[i].s);
		CHECK(v == ok[i].v, "'%s' -> %g", ok[i].s, v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_bitrate(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
}

static void test_fmt_si(void)
{
	char b[16];

	CHECK(!strcmp(fmt_si(4780000, b, sizeof(b)), "4.78M"), "4780000 -> %s", b);
	CHECK(!strcmp(fmt_si(812000, b, sizeof(b)), "812k"), "812000 -> %s", b);
	CHECK(!strcmp(fmt_si(950, b, sizeof(b)), "950"), "950 -> %s", b);
	CHECK(!strcmp(fmt_si(12500, b, sizeof(b)), "12.5k"), "12500 -> %s", b);
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j = { .f = f };

	json_open(&j, NULL, '{');
	json_u64(&j, "a", 1);
	json_str(&j, "s", "q\"\\\n");
	/* valid UTF-8 as it is; a byte that is not (a stray continuation, an overlong '/', a surrogate, 0xff) as U+FFFD */
	json_str(&j, "u", "caf\xc3\xa9\xe2\x82\xac \x80\xc0\xaf\xed\xa0\x80\xff\xf0\x9f\x98\x80");
	json_open(&j, "o", '{');
	json_flag(&j, "t", true);
	json_close(&j, '}');
	json_open(&j, "l", '[');
	json_u64(&j, NULL, 2);
	json_double(&j, NULL, NAN);
	json_close(&j, ']');
	json_close(&j, '}');
	fclose(f);
	CHECK(!strcmp(buf,
		      "{\"a\":1,\"s\":\"q\\\"\\\\\\u000a\",\"u\":\"caf\xc3\xa9\xe2\x82\xac "
		      "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\xf0\x9f\x98\x80\",\"o\":{\"t\":true},"
		      "\"l\":[2,null]}\n"),
	      "got %s", buf);
	free(buf);
}

/* one exposition in both formats: escaped labels, a counter's _total, a histogram, # EOF */
static char *prom_sample_text(bool openmetrics)
{
	static const double le[] = { 0.001, 0.01 };
	static const uint64_t cum[] = { 3, 5 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct prom p;

	prom_begin(&p, f, openmetrics ? "application/openmetrics-text;version=1.0.0" : NULL);
	prom_common(&p, "run", "r1");
	prom_family(&p, "x_sent", PROM_COUNTER, "Frames\\sent.");
	prom_u64(&p, 7, "comm", "a\"b\\c\nd", NULL);
	prom_family(&p, "x_rtt_seconds", PROM_HISTOGRAM, "Round trips.");
	prom_histogram(&p, le, cum, 2, 6, 0.25, NULL);
	CHECK(!strcmp(prom_end(&p), openmetrics ? PROM_OPENMETRICS_TYPE : PROM_TEXT_TYPE), "type");
	fclose(f);
	return buf;
}

static void test_prom(void)
{
	const char *hist =
		"x_rtt_seconds_bucket{run=\"r1\",le=\"0.001\"} 3\n"
		"x_rtt_seconds_bucket{run=\"r1\",le=\"0.01\"} 5\n"
		"x_rtt_seconds_bucket{run=\"r1\",le=\"+Inf\"} 6\n"
		"x_rtt_seconds_count{run=\"r1\"} 6\nx_rtt_seconds_sum{run=\"r1\"} 0.25\n";
	char *text = prom_sample_text(false), *om = prom_sample_text(true), want[1024];

	snprintf(want, sizeof(want),
		 "# HELP x_sent_total Frames\\\\sent.\n# TYPE x_sent_total counter\n"
		 "x_sent_total{run=\"r1\",comm=\"a\\\"b\\\\c\\nd\"} 7\n"
		 "# HELP x_rtt_seconds Round trips.\n# TYPE x_rtt_seconds histogram\n%s",
		 hist);
	CHECK(!strcmp(text, want), "text format: got\n%s", text);
	snprintf(want, sizeof(want),
		 "# HELP x_sent Frames\\\\sent.\n# TYPE x_sent counter\n"
		 "x_sent_total{run=\"r1\",comm=\"a\\\"b\\\\c\\nd\"} 7\n"
		 "# HELP x_rtt_seconds Round trips.\n# TYPE x_rtt_seconds histogram\n%s# EOF\n",
		 hist);
	CHECK(!strcmp(om, want), "OpenMetrics: got\n%s", om);
	CHECK(strlen(prom_run_id()) == 16 && !strcmp(prom_run_id(), prom_run_id()), "run id");
	free(text);
	free(om);
}

/*
 * The spectrum of 1..20 ns, one each (exact buckets): HdrHistogram's levels
 * (0, 10, .. 50, 55, .. 75, 77.5, ..), each at the first value that reaches
 * it, and once every count is behind, the last at 100%
 */
static void test_spectrum(void)
{
	static const double level[] = { 0,     10,   20,    30,	    40,	  50,	  55,	60,    65,
					70,    75,   77.5,  80,	    82.5, 85,	  87.5, 88.75, 90,
					91.25, 92.5, 93.75, 94.375, 95,	  95.625, 100 };
	static const uint64_t value[] = { 1,  2,  4,  6,  8,  10, 11, 12, 13, 14, 15, 16, 16,
					  17, 17, 18, 18, 18, 19, 19, 19, 19, 19, 20, 20 };
	uint64_t h[XR_RTT_BUCKETS] = {};
	struct spectrum_point p[64];
	unsigned int n;

	for (int v = 1; v <= 20; v++)
		h[v] = 1;
	n = spectrum_points(h, p, 64);
	CHECK(n == sizeof(level) / sizeof(level[0]), "%u points", n);
	for (unsigned int i = 0; i < n && i < sizeof(level) / sizeof(level[0]); i++)
		CHECK(p[i].percentile == level[i] && p[i].value_ns == value[i] &&
			      p[i].count == (i + 1 < n ? value[i] : 20),
		      "point %u: %g%% at %llu ns (%llu)", i, p[i].percentile,
		      (unsigned long long)p[i].value_ns, (unsigned long long)p[i].count);
	memset(h, 0, sizeof(h));
	CHECK(spectrum_points(h, p, 64) == 0, "an empty histogram has no points");
}

static char *path(const char *env, const char *name)
{
	static char p[4096];

	snprintf(p, sizeof(p), "%s/%s", getenv(env) ? getenv(env) : ".", name);
	return p;
}

static int load(const char *env, const char *name, struct frameset *fs, struct fs_skips *sk,
		bool trunc)
{
	struct fs_load_opts o = { .max_len = 1518, .allow_truncated = trunc };

	frameset_init(fs);
	memset(sk, 0, sizeof(*sk));
	return pcap_load(path(env, name), fs, &o, sk);
}

/* pcaps/three.pcapng: 3 frames of 60, 64, 68 bytes, 10 ms apart, tags XRSEQ000..002 */
static void test_pcapng_sample(void)
{
	struct frameset fs;
	struct fs_skips sk;
	int err = load("XR_PCAPS", "three.pcapng", &fs, &sk, false);

	CHECK(!err, "load: %d", err);
	CHECK(fs.n == 3, "%zu frames", fs.n);
	for (size_t i = 0; i < fs.n && i < 3; i++) {
		char tag[16];

		snprintf(tag, sizeof(tag), "XRSEQ%03zu", i);
		CHECK(fs.frames[i].len == 60 + 4 * i, "frame %zu: %u bytes", i, fs.frames[i].len);
		CHECK(fs.frames[i].ts_ns == i * 10000000ULL, "frame %zu at %llu ns", i,
		      (unsigned long long)fs.frames[i].ts_ns);
		CHECK(!memcmp(fs.bytes + fs.frames[i].off + 42, tag, 8), "frame %zu payload", i);
	}
	frameset_finish(&fs);
	CHECK(fs.span_ns == 30000000ULL, "span %llu", (unsigned long long)fs.span_ns);
	frameset_free(&fs);
}

static void test_pcap_gz_ns(void)
{
	struct frameset fs;
	struct fs_skips sk;
	int err = load("XR_PCAPS", "spaced-100.pcap.gz", &fs, &sk, false);

	CHECK(!err, "load: %d", err);
	CHECK(fs.n == 100, "%zu frames", fs.n);
	CHECK(fs.n == 100 && fs.frames[99].ts_ns == 990000000ULL, "last frame at %llu ns",
	      fs.n ? (unsigned long long)fs.frames[fs.n - 1].ts_ns : 0ULL);
	frameset_free(&fs);
}

static void test_hostile(void)
{
	static const char *files[] = {
		"empty.pcap",
		"badmagic.pcap",
		"truncated-header.pcap",
		"truncated-record.pcap",
		"truncated.pcap.gz",
		"huge-caplen.pcap",
		"bad-block.pcapng",
		"garbage.pcap",
	};
	struct frameset fs;
	struct fs_skips sk;

	xr_verbosity = -1; /* the errors are expected */
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int err = load("XR_HOSTILE", files[i], &fs, &sk, false);

		CHECK(err == -EINVAL, "%s: %d, expected -EINVAL", files[i], err);
		frameset_free(&fs);
	}
	xr_verbosity = XR_LOG_INFO;
}

static void test_skips(void)
{
	struct frameset fs;
	struct fs_skips sk;

	CHECK(!load("XR_HOSTILE", "mixed-linktypes.pcapng", &fs, &sk, false), "mixed");
	CHECK(fs.n == 2 && sk.linktype == 1, "mixed: %zu frames, %llu skipped", fs.n,
	      (unsigned long long)sk.linktype);
	/* the raw-IP interface has nanosecond timestamps; the Ethernet ones microseconds */
	CHECK(fs.n == 2 && fs.frames[1].ts_ns == 2000, "second frame at %llu ns",
	      fs.n == 2 ? (unsigned long long)fs.frames[1].ts_ns : 0ULL);
	frameset_free(&fs);
	CHECK(!load("XR_HOSTILE", "snapped.pcap", &fs, &sk, false), "snapped");
	CHECK(fs.n == 1 && sk.truncated == 1, "snapped: %zu frames", fs.n);
	frameset_free(&fs);
	CHECK(!load("XR_HOSTILE", "snapped.pcap", &fs, &sk, true), "snapped, allowed");
	CHECK(fs.n == 2 && fs.frames[0].len == 40, "snapped, allowed: %zu frames", fs.n);
	frameset_free(&fs);
}

/* What one thread was asked and why it did not send the rest (pacer.c: thread_plan, thread_account). */
static void test_thread_account(void)
{
	struct frameset fs = { .n = 1 };
	struct engine_opts o = { .fs = &fs,
				 .threads = 1,
				 .count = XR_FOREVER,
				 .pace = XR_PACE_RATE,
				 .pps = 1e6,
				 .duration_ns = 1000000000ULL };
	struct thread_plan tp;
	struct engine_unsent u;
	struct pacer p;
	uint64_t asked;

	/* 1 Mpps for 1 s: 1,000,000 due; the sender got to 600,000 by the deadline */
	pacer_init(&p, &o, 0, 1000, NULL);
	thread_plan_init(&tp, &o, &p, 0, 1000);
	CHECK(tp.k_due == 1000000 && tp.k_count == XR_FOREVER, "due %llu",
	      (unsigned long long)tp.k_due);
	asked = 0, u = (struct engine_unsent){};
	thread_account(&tp, &o, 600000, STOP_DEADLINE, &asked, &u);
	CHECK(asked == 1000000 && u.behind == 400000 && engine_unsent_total(&u) == 400000,
	      "behind: asked %llu behind %llu", (unsigned long long)asked,
	      (unsigned long long)u.behind);
	/* the same stopped by a signal, by a device error */
	asked = 0, u = (struct engine_unsent){};
	thread_account(&tp, &o, 600000, STOP_SIGNAL, &asked, &u);
	CHECK(asked == 1000000 && u.interrupted == 400000 && !u.behind, "signal");
	asked = 0, u = (struct engine_unsent){};
	thread_account(&tp, &o, 600000, STOP_ERROR, &asked, &u);
	CHECK(u.device_error == 400000 && engine_unsent_total(&u) == 400000, "device error");
	/* --count 3M with the same duration: 2M are cut by the duration, the 400k missed are behind */
	o.count = 3000000;
	thread_plan_init(&tp, &o, &p, 0, 1000);
	asked = 0, u = (struct engine_unsent){};
	thread_account(&tp, &o, 600000, STOP_DEADLINE, &asked, &u);
	CHECK(asked == 3000000 && u.duration == 2000000 && u.behind == 400000,
	      "count beyond the duration: %llu %llu", (unsigned long long)u.duration,
	      (unsigned long long)u.behind);
	/* top speed, --count and --duration: what the deadline cut is "duration reached" */
	o.pace = XR_PACE_NONE;
	thread_plan_init(&tp, &o, &p, 0, 1000);
	asked = 0, u = (struct engine_unsent){};
	thread_account(&tp, &o, 600000, STOP_DEADLINE, &asked, &u);
	CHECK(asked == 3000000 && u.duration == 2400000 && !u.behind, "top speed cut");
	/* until stopped: what was asked is what was attempted */
	o.count = XR_FOREVER;
	thread_plan_init(&tp, &o, &p, 0, 1000);
	asked = 0, u = (struct engine_unsent){};
	thread_account(&tp, &o, 600000, STOP_SIGNAL, &asked, &u);
	CHECK(asked == 600000 && engine_unsent_total(&u) == 0, "forever");
	/* two threads share --count 5: 3 and 2 */
	o.count = 5;
	o.threads = 2;
	thread_plan_init(&tp, &o, &p, 0, 1000);
	CHECK(tp.k_count == 3, "thread 0 of 2: %llu", (unsigned long long)tp.k_count);
	thread_plan_init(&tp, &o, &p, 1, 1000);
	CHECK(tp.k_count == 2, "thread 1 of 2: %llu", (unsigned long long)tp.k_count);
	/* the grace after --duration: 20 ms at least, 2% of the duration, 500 ms at most */
	o.pace = XR_PACE_RATE;
	CHECK(pacer_grace_ns(&o) == 20000000ULL, "grace of 1 s");
	o.duration_ns = 10000000000ULL;
	CHECK(pacer_grace_ns(&o) == 200000000ULL, "grace of 10 s");
	o.duration_ns = 3600000000000ULL;
	CHECK(pacer_grace_ns(&o) == 500000000ULL, "grace of 1 h");
}

/* Strict integers, ranges and MACs for what users type (units.c): no sign, no wrap. */
static void test_parse_strict(void)
{
	static const char *bad_uint[] = { "", "-2", "+2", " 2", "0x10", "4294967295", "65536", "x" };
	static const char *bad_mac[] = { "",
					 "1:2:3:4:5",
					 "1:2:3:4:5:6:7",
					 "-1:2:3:4:5:6",
					 "123:2:3:4:5:6",
					 "1:2:3:4:5:6 ",
					 "g:2:3:4:5:6",
					 "1::3:4:5:6" };
	unsigned int v, lo, hi;
	const char *end;
	uint8_t mac[6];

	CHECK(!parse_uint("65535", 65535, &v, &end) && v == 65535 && !*end, "65535");
	CHECK(!parse_uint("12:x", 65535, &v, &end) && v == 12 && *end == ':', "12 then more");
	for (size_t i = 0; i < sizeof(bad_uint) / sizeof(bad_uint[0]); i++)
		CHECK(parse_uint(bad_uint[i], 65535, &v, &end) || *end, "'%s' accepted",
		      bad_uint[i]);
	CHECK(!parse_uint_range("1024-65535", 65535, &lo, &hi) && lo == 1024 && hi == 65535,
	      "a range");
	CHECK(!parse_uint_range("80", 65535, &lo, &hi) && lo == 80 && hi == 80, "one value");
	CHECK(parse_uint_range("5-3", 65535, &lo, &hi) &&
		      parse_uint_range("5--3", 65535, &lo, &hi) &&
		      parse_uint_range("1-2-3", 65535, &lo, &hi),
	      "bad ranges accepted");
	CHECK(!parse_mac("02:00:c6:12:0:ff", mac) && mac[0] == 2 && mac[3] == 0x12 && mac[4] == 0 &&
		      mac[5] == 0xff,
	      "a MAC");
	for (size_t i = 0; i < sizeof(bad_mac) / sizeof(bad_mac[0]); i++)
		CHECK(parse_mac(bad_mac[i], mac), "MAC '%s' accepted", bad_mac[i]);
}

/* RFC 9971 load classification (search/mlr.c): bounds from trials, noise, exceed ratio, short senders. */
static void test_mlr_classify(void)
{
	static struct search s;
	struct goal ndr = { .loss = 0, .dsum = 1, .name = "NDR" };
	struct goal pdr = { .loss = 0.005, .dsum = 1, .name = "PDR" };
	struct goal half = { .loss = 0, .exceed = 0.5, .dsum = 2, .name = "half" };

	memset(&s, 0, sizeof(s));
	s.min = 1000;
	s.max = 8000;
	s.t[s.nt++] = (struct trial){ .load = 8000, .loss = 0.2, .duration_s = 1 };
	s.t[s.nt++] = (struct trial){ .load = 4000, .loss = 0.003, .duration_s = 1 };
	s.t[s.nt++] = (struct trial){ .load = 2000, .loss = 0, .duration_s = 1 };
	/* a sender that fell behind measured itself: never a bound, however good it looks */
	s.t[s.nt++] =
		(struct trial){ .load = 6000, .loss = 0, .duration_s = 1, .sender_short = true };
	classify(&s, &ndr);
	CHECK(ndr.lower == 2000 && ndr.upper == 4000, "NDR [%g, %g], expected [2000, 4000]",
	      ndr.lower, ndr.upper);
	classify(&s, &pdr);
	CHECK(pdr.lower == 4000 && pdr.upper == 8000, "PDR [%g, %g], expected [4000, 8000]",
	      pdr.lower, pdr.upper);
	CHECK(!trial_counted(&s.t[3]) && trial_counted(&s.t[2]), "sender-short trial counted");
	/* conditional throughput: what was received at the lower bound, per second */
	s.t[2].received = 1990;
	CHECK(fabs(conditional_throughput(&s, &ndr) - 1990) < 1e-9, "conditional throughput %g",
	      conditional_throughput(&s, &ndr));
	/* exceed ratio 0.5 of a 2 s duration sum: one bad second of two is still a lower bound */
	s.nt = 0;
	s.t[s.nt++] = (struct trial){ .load = 3000, .loss = 0.1, .duration_s = 1 };
	classify(&s, &half);
	CHECK(half.pending == 3000 && !half.lower && !half.upper,
	      "one bad trial of two undecided: pending %g", half.pending);
	s.t[s.nt++] = (struct trial){ .load = 3000, .loss = 0, .duration_s = 1 };
	classify(&s, &half);
	CHECK(half.lower == 3000 && !half.pending, "half bad within exceed 0.5: lower %g",
	      half.lower);
	s.t[s.nt++] = (struct trial){ .load = 3000, .loss = 0.1, .duration_s = 1 };
	classify(&s, &half);
	CHECK(half.upper == 3000 && !half.lower, "two bad seconds of a 2 s sum: upper %g lower %g",
	      half.upper, half.lower);
	/* a load above a max lowered to what the sender keeps waits for no more trials */
	s.nt = 0;
	s.max = 2500;
	s.t[s.nt++] = (struct trial){ .load = 3000, .loss = 0.1, .duration_s = 1 };
	classify(&s, &half);
	CHECK(!half.pending, "pending %g above the lowered max", half.pending);
	s.max = 8000;
	/* a lower bound above an upper bound is noise, not a bound */
	s.nt = 0;
	s.t[s.nt++] = (struct trial){ .load = 5000, .loss = 0, .duration_s = 1 };
	s.t[s.nt++] = (struct trial){ .load = 4000, .loss = 0.5, .duration_s = 1 };
	classify(&s, &ndr);
	CHECK(ndr.upper == 4000 && ndr.lower == 0, "inverted bounds: [%g, %g]", ndr.lower,
	      ndr.upper);
	/* ...but one below it still is (RFC 9971's relevant lower bound): the search goes on from it */
	s.t[s.nt++] = (struct trial){ .load = 2000, .loss = 0, .duration_s = 1 };
	classify(&s, &ndr);
	CHECK(ndr.upper == 4000 && ndr.lower == 2000, "relevant bounds: [%g, %g]", ndr.lower,
	      ndr.upper);
	/* an undecided load below the lower bound needs no more trials (4000 is one for half) */
	s.t[s.nt++] = (struct trial){ .load = 6000, .loss = 0.5, .duration_s = 1 };
	classify(&s, &half);
	CHECK(half.lower == 5000 && !half.upper && half.pending == 6000,
	      "half [%g, %g], pending %g: expected [5000, none], pending 6000", half.lower,
	      half.upper, half.pending);
}

/* Drop attribution (measure/attrib.c): each counter lands where it belongs. */
static void test_attribution(void)
{
	struct kstats d = {};
	struct attribution a;

	d.v[KS_UDP_IN_DATAGRAMS] = 900;
	d.v[KS_UDP_RCVBUF_ERRORS] = 70;
	d.v[KS_UDP_IN_ERRORS] = 75; /* the kernel counts the 70 in InErrors too */
	d.v[KS_UDP_NO_PORTS] = 3;
	d.v[KS_IP_IN_DISCARDS] = 1;
	d.v[KS_IP_IN_HDR_ERRORS] = 2;
	d.v[KS_IF_RX_DROPPED] = 4;
	d.v[KS_ET_RX_DROPS] = 5;
	d.v[KS_TCPEXT_LISTEN_DROPS] = 6;
	d.v[KS_SOFTNET_DROPPED] = 7;
	attribute(&d, &a);
	CHECK(a.udp_delivered == 900 && a.udp_rcvbuf == 70 && a.udp_other == 5 && a.udp_noport == 3,
	      "UDP: %llu delivered, %llu rcvbuf, %llu other, %llu no port",
	      (unsigned long long)a.udp_delivered, (unsigned long long)a.udp_rcvbuf,
	      (unsigned long long)a.udp_other, (unsigned long long)a.udp_noport);
	CHECK(a.ip_discarded == 3 && a.if_rx_dropped == 9 && a.tcp_listen_drops == 6 &&
		      a.softnet_dropped == 7,
	      "IP %llu, interface %llu, listen %llu, softnet %llu",
	      (unsigned long long)a.ip_discarded, (unsigned long long)a.if_rx_dropped,
	      (unsigned long long)a.tcp_listen_drops, (unsigned long long)a.softnet_dropped);
	d.v[KS_UDP_IN_ERRORS] = 10; /* fewer InErrors than buffer errors: nothing else */
	attribute(&d, &a);
	CHECK(a.udp_other == 0, "udp_other %llu with InErrors below RcvbufErrors",
	      (unsigned long long)a.udp_other);
}

/* --rewrite specs (frames/rewrite.c) and the typed ranges gen builds the same ops from. */
static void test_rewrite_specs(void)
{
	struct rewrite_spec a, b;
	struct addr_range r;
	struct port_range p;

	xr_verbosity = -1;
	CHECK(!rewrite_parse("ip.src=198.18.64.0/23", &a) && a.op.base == 0xc6124000 &&
		      a.op.modulus == 512 && a.op.width == 4 && a.op.step == 1,
	      "ip.src range");
	CHECK(!addr_parse_range("198.18.64.0/23", &r) && !r.ipv6 && r.base == 0xc6124000 &&
		      r.count == 512,
	      "--src range");
	rewrite_spec_src(&b, &r);
	CHECK(a.op.base == b.op.base && a.op.modulus == b.op.modulus && a.op.width == b.op.width &&
		      a.op.flags == b.op.flags && a.where == b.where,
	      "--src and ip.src= make different ops");
	CHECK(!rewrite_parse("udp.sport=1024-65535", &a) && a.op.base == 1024 &&
		      a.op.modulus == 64512,
	      "udp.sport");
	CHECK(!addr_parse_ports("1024-65535", &p) && p.lo == 1024 && p.hi == 65535, "--sport");
	rewrite_spec_sport(&b, 17, &p, 512);
	CHECK(a.op.base == b.op.base && a.op.modulus == b.op.modulus && a.where == b.where &&
		      a.proto == b.proto && b.op.divisor == 512,
	      "--sport and udp.sport= make different ops");
	CHECK(!rewrite_parse("payload@0:8=seq", &a) && a.op.width == 8 && a.op.step == 1,
	      "payload seq");
	CHECK(!rewrite_parse("u32be@42+=3/2%100", &a) && (a.op.flags & XR_OPF_RELATIVE) &&
		      a.op.step == 3 && a.op.divisor == 2 && a.op.modulus == 100,
	      "relative with divisor and modulus");
	CHECK(rewrite_parse("ip.id=seq%70000", &a), "a modulus larger than the field accepted");
	CHECK(rewrite_parse("ip.src+=1", &a) && rewrite_parse("udp.sport=5-3", &a) &&
		      rewrite_parse("x=1", &a),
	      "bad specs accepted");
	CHECK(!addr_parse_range("2001:db8::/64", &r) && r.ipv6 && r.count == 0, "IPv6 /64");
	CHECK(addr_parse_range("198.18.64.0/33", &r) && addr_parse_range("2001:db8::/63", &r),
	      "bad ranges accepted");
	xr_verbosity = 0;
}

static void test_addr_dst(void)
{
	struct xr_dst d;

	CHECK(!addr_parse_dst("198.18.0.2:53", &d) && !d.ipv6 && d.port == 53 && d.addr[3] == 2,
	      "ADDR:PORT");
	CHECK(!addr_parse_dst("[2001:db8::1]:80", &d) && d.ipv6 && d.port == 80 && d.addr[15] == 1,
	      "[ADDR6]:PORT");
	d.port = 0;
	CHECK(!addr_parse_dst("2001:db8::1", &d) && d.ipv6 && d.port == 0, "a bare IPv6 address");
	CHECK(addr_parse_dst("198.18.0.2:0", &d) && addr_parse_dst("198.18.0.2:70000", &d) &&
		      addr_parse_dst("x:y", &d) && addr_parse_dst("[::1", &d),
	      "bad destinations accepted");
}

/* DNS queries (proto/dns/query.c): wire form, types, names files, captured questions. */
/* gen mqtt's packets byte for byte against the OASIS layouts (3.1.1 3.1, 3.3; 5.0 3.1, 3.3) */
static void test_mqtt_stream(void)
{
	/* CONNECT: 3.1.1, clean session + username + password, keep-alive 60, id xr-{c} */
	static const uint8_t connect4[] = {
		0x10, 31,  0,	4,   'M', 'Q', 'T', 'T', 4,   0xc2, 0, 60, 0,	13, 'x', 'r', '-',
		'0',  '0', '0', '0', '0', '0', '0', '0', '0', '0',  0, 1,  'u', 0,  1,	 'p'
	};
	/* two QoS-1 PUBLISHes to "a{c}" (ids 1, 2), 5.0 (no properties), 1 byte of payload (0) */
	static const uint8_t burst5[] = { 0x32, 17,  0,	  11,  'a', '0', '0', '0', '0', '0',
					  '0',	'0', '0', '0', '0', 0,	 1,   0,   0,	0x32,
					  17,	0,   11,  'a', '0', '0', '0', '0', '0', '0',
					  '0',	'0', '0', '0', 0,   2,	 0,   0 };
	struct mqtt_stream_opts o = { .client_id = "xr-{c}",
				      .username = "u",
				      .password = "p",
				      .topic = "t",
				      .version = 4,
				      .qos = 0,
				      .payload = 0,
				      .burst = 1,
				      .keepalive_s = 60 };
	struct xr_tcp_session sess = { .c32 = 4294967295u, .k = 0 };
	uint8_t *c = NULL, *b = NULL, buf[64];
	struct xr_mqtt_cfg cfg;
	size_t cl = 0, bl = 0;

	xr_verbosity = -1;
	CHECK(!mqtt_stream_build(&o, &c, &cl, &b, &bl, &cfg) && cl == sizeof(connect4) &&
		      !memcmp(c, connect4, cl),
	      "3.1.1 CONNECT: %zu bytes", cl);
	/* QoS 0: PUBLISH 30 03 00 01 't', then the PINGREQ */
	CHECK(b && bl == 7 && !memcmp(b, "\x30\x03\x00\x01t\xc0\x00", 7) && cfg.msg_len == 5,
	      "QoS-0 burst: %zu bytes", bl);
	/* the client id's digits, also when the segment starts inside them */
	memcpy(buf, c + 20, 7);
	mqtt_stream_patch(&cfg, &sess, buf, 20, 7);
	CHECK(cfg.cid_off == 17 && !memcmp(buf, "4967295", 7), "client id digits at %u",
	      cfg.cid_off);
	free(c);
	free(b);
	o = (struct mqtt_stream_opts){ .client_id = "{c}",
				       .topic = "a{c}",
				       .version = 5,
				       .qos = 1,
				       .payload = 1,
				       .burst = 2,
				       .keepalive_s = 1 };
	CHECK(!mqtt_stream_build(&o, &c, &cl, &b, &bl, &cfg) && bl == sizeof(burst5) &&
		      cfg.topic_off == 5 && cfg.stamp_off == XR_MQTT_NONE,
	      "5.0 QoS-1 burst: %zu bytes, topic at %u", bl, cfg.topic_off);
	CHECK(b && bl == sizeof(burst5) && !memcmp(b, burst5, bl), "5.0 QoS-1 burst bytes");
	free(c);
	free(b);
	/* too long for a request: refused with a message, not truncated */
	o.payload = XR_MQTT_REQUEST_MAX;
	CHECK(mqtt_stream_build(&o, &c, &cl, &b, &bl, &cfg) == -EINVAL && !c && !b,
	      "an oversized burst was built");
}

static void test_dns_queries(void)
{
	static const uint8_t want[] = { 0,   0,	  1,   0,   0, 1,   0,	 0,   0,   0,	0,
					0,   2,	  'n', '1', 5, 'b', 'e', 'n', 'c', 'h', 4,
					't', 'e', 's', 't', 0, 0,   28,	 0,   1 };
	struct dns_query_opts o = { .rd = true };
	struct dns_query_set set = {};
	struct dns_query q, w;
	uint8_t name[300];
	const char *text = "n1.bench.test AAAA\n# a comment\n\n  example.org\nfoo.test TYPE65\n";

	xr_verbosity = -1;
	CHECK(!dns_build_query("n1.bench.test.", 28, &o, &q) && q.len == sizeof(want) &&
		      !memcmp(q.msg, want, q.len),
	      "n1.bench.test AAAA: %u bytes", q.len);
	CHECK(dns_qtype("AAAA") == 28 && dns_qtype("mx") == 15 && dns_qtype("TYPE65") == 65 &&
		      dns_qtype("TYPE") < 0 && dns_qtype("TYPE70000") < 0 && dns_qtype("BOGUS") < 0,
	      "query types");
	CHECK(dns_encode_name("a..b", name, sizeof(name)) < 0 &&
		      dns_encode_name(".a", name, sizeof(name)) < 0 &&
		      dns_encode_name("a..", name, sizeof(name)) < 0,
	      "empty labels accepted");
	CHECK(dns_encode_name(".", name, sizeof(name)) == 1 && name[0] == 0, "the root");
	memset(name, 'a', 64);
	name[64] = 0;
	CHECK(dns_encode_name((char *)name, name + 100, 150) < 0, "a 64-byte label accepted");
	CHECK(!dns_names_parse(text, strlen(text), "t", 1, &o, &set) && set.n == 3,
	      "names file: %zu queries", set.n);
	CHECK(set.n == 3 && set.q[0].msg[set.q[0].len - 3] == 28 &&
		      set.q[1].msg[set.q[1].len - 3] == 1 && set.q[2].msg[set.q[2].len - 3] == 65,
	      "names file types");
	dns_set_free(&set);
	CHECK(dns_names_parse("a.test A extra\n", 15, "t", 1, &o, &set), "three fields accepted");
	dns_set_free(&set);
	/* a captured query with EDNS: the question is taken, the rest is ours */
	o.edns = 1232;
	CHECK(!dns_build_query("n1.bench.test", 28, &o, &w) && w.len == sizeof(want) + 11 &&
		      w.msg[11] == 1,
	      "EDNS OPT record");
	o.edns = 0;
	CHECK(!dns_query_from_wire(w.msg, w.len, &o, &q) && q.len == sizeof(want) &&
		      !memcmp(q.msg, want, q.len),
	      "the question of a captured query");
	w.msg[2] |= 0x80;
	CHECK(dns_query_from_wire(w.msg, w.len, &o, &q), "a response taken as a query");
	xr_verbosity = 0;
}

/* Departure times far out: a capture gap of 213.5 days, a rate run of a year (pacer.c). */
static void test_pacer_far(void)
{
	const uint64_t gap = 213ULL * 86400 * 1000000000ULL + 43200ULL * 1000000000ULL;
	struct xr_frame frames[2] = { { .ts_ns = 0 }, { .ts_ns = gap } };
	struct frameset fs = { .n = 2, .span_ns = gap + gap };
	struct engine_opts o = { .fs = &fs, .threads = 1, .pace = XR_PACE_PCAP, .multiplier = 1 };
	struct pacer p;
	uint64_t d;

	pacer_init(&p, &o, 0, 5, frames);
	d = pacer_due(&p, 1);
	CHECK(d == 5 + gap, "capture gap: %llu, expected %llu", (unsigned long long)d,
	      (unsigned long long)(5 + gap));
	o.multiplier = 0.5; /* twice as slow: 427 days, still inside 64 bits */
	pacer_init(&p, &o, 0, 0, frames);
	CHECK(pacer_due(&p, 1) == 2 * gap, "slowed capture gap");
	/* 1 pps for a year: k * 10^12 ps overflows 64 bits after 213 days; the split product does not */
	o.pace = XR_PACE_RATE;
	o.pps = 1;
	pacer_init(&p, &o, 0, 0, frames);
	d = pacer_due(&p, 365ULL * 86400);
	CHECK(d == 365ULL * 86400 * 1000000000ULL, "a year at 1 pps: %llu", (unsigned long long)d);
}

/*
 * A rate's departures are exact (pacer.c: pacer_period): --pps R --duration T
 * asks for exactly R x T frames when that is whole, whatever R, and frame k of
 * a long run leaves at k / R to the nanosecond. An interval kept in whole
 * picoseconds asked 30,000,301 of 30 Mpps in 1 s, and 3,000,004 of 3 Mpps.
 */
static void test_pacer_exact_rate(void)
{
	static const double rates[] = { 30e6, 3e6, 1e6, 7e6, 999983, 1e3, 3 };
	struct frameset fs = { .n = 1 };
	struct engine_opts o = { .fs = &fs,
				 .count = XR_FOREVER,
				 .pace = XR_PACE_RATE,
				 .duration_ns = 1000000000ULL };

	for (unsigned int i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		for (unsigned int threads = 1; threads <= 3; threads++) {
			uint64_t due = 0;

			o.pps = rates[i];
			o.threads = threads;
			for (unsigned int t = 0; t < threads; t++) {
				struct thread_plan tp;
				struct pacer p;

				pacer_init(&p, &o, t, 1000, NULL);
				thread_plan_init(&tp, &o, &p, t, 1000);
				due += tp.k_due;
			}
			CHECK(due == (uint64_t)rates[i],
			      "%.0f pps for 1 s with %u threads: %llu due", rates[i], threads,
			      (unsigned long long)due);
		}
	}
	{
		struct pacer p;
		uint64_t k = 123456789012ULL,
			 want = (uint64_t)((unsigned __int128)k * 1000000000 / 7000000);

		o.pps = 7e6;
		o.threads = 1;
		pacer_init(&p, &o, 0, 0, NULL);
		CHECK(pacer_due(&p, k) == want, "frame %llu at 7 Mpps: %llu ns, expected %llu",
		      (unsigned long long)k, (unsigned long long)pacer_due(&p, k),
		      (unsigned long long)want);
	}
}

/* Capture timing with --duration: the frames due before the end (pacer_k_at by halving). */
static void test_pacer_capture_due(void)
{
	/* frames 0, 10, 20 ms; the capture loops every 30 ms (the mean gap after the last frame) */
	struct xr_frame frames[3] = { { .ts_ns = 0 },
				      { .ts_ns = 10000000 },
				      { .ts_ns = 20000000 } };
	struct frameset fs = { .n = 3, .span_ns = 30000000 };
	struct engine_opts o = { .fs = &fs,
				 .threads = 1,
				 .pace = XR_PACE_PCAP,
				 .multiplier = 1,
				 .count = XR_FOREVER,
				 .duration_ns = 95000000 };
	struct thread_plan tp;
	struct pacer p;

	/* due at 0, 10, ..., 90 ms: ten frames before 95 ms */
	pacer_init(&p, &o, 0, 1000, frames);
	thread_plan_init(&tp, &o, &p, 0, 1000);
	CHECK(tp.k_due == 10, "capture timing: %llu due in 95 ms", (unsigned long long)tp.k_due);
	/* twice as fast: 0, 5, ..., 90: nineteen */
	o.multiplier = 2;
	pacer_init(&p, &o, 0, 1000, frames);
	thread_plan_init(&tp, &o, &p, 0, 1000);
	CHECK(tp.k_due == 19, "x2: %llu", (unsigned long long)tp.k_due);
	/* two threads take n = 0, 2, 4, ... and 1, 3, ...; each starts its first frame at t0: 10 each */
	o.threads = 2;
	pacer_init(&p, &o, 0, 1000, frames);
	thread_plan_init(&tp, &o, &p, 0, 1000);
	CHECK(tp.k_due == 10, "thread 0 of 2: %llu", (unsigned long long)tp.k_due);
	pacer_init(&p, &o, 1, 1000, frames);
	thread_plan_init(&tp, &o, &p, 1, 1000);
	CHECK(tp.k_due == 10, "thread 1 of 2: %llu", (unsigned long long)tp.k_due);
	/* every frame at one time: no schedule, nothing is due later */
	frames[1].ts_ns = frames[2].ts_ns = 0;
	fs.span_ns = 0;
	o.threads = 1;
	pacer_init(&p, &o, 0, 1000, frames);
	thread_plan_init(&tp, &o, &p, 0, 1000);
	CHECK(tp.k_due == XR_FOREVER, "one timestamp: %llu", (unsigned long long)tp.k_due);
}

/* The per-second series and the totals the live line shows (meter.c). */
/* A join storm's matcher on the published JoinAccept (selftest's join vector): by tmst, by trial, once. */
static void test_join_match(void)
{
	static const char *const ja =
		"{\"txpk\": {\"imme\":false,\"tmst\": %u, \"data\" : \"IE3YWuYIuH/EiJlwt9IELJ5ylZsAV67WCUsWAD3xLeFF\"}}";
	static const uint8_t key[16] = { 0xb6, 0xb5, 0x3f, 0x4a, 0x16, 0x8a, 0x7a, 0x88,
					 0xbd, 0xf7, 0xea, 0x13, 0x5c, 0xe9, 0xcf, 0xca };
	static const uint8_t nwk[16] = { 0x2c, 0x96, 0xf7, 0x02, 0x81, 0x84, 0xbb, 0x0b,
					 0xe8, 0xaa, 0x49, 0x27, 0x52, 0x90, 0xd4, 0xfc };
	struct lw_device dev[3] = {};
	struct lw_gateway gw[2] = {};
	struct lw_fleet f = { .dev = dev, .ndev = 3, .gw = gw, .ngw = 2, .heard_by = 1 };
	struct xr_lora_join st[3] = {};
	struct lw_join j;
	char js[256];

	/* device 2 holds the key; 0 and 1 share its gateway 1 and ask first */
	for (int d = 0; d < 3; d++) {
		dev[d].otaa = true;
		memset(dev[d].app_key, d + 1, 16);
		dev[d].gw[0] = 1;
		st[d] = (struct xr_lora_join){ .sent_ns = 1000 + d,
					       .tmst = 1000000 + d,
					       .requests = 1 };
	}
	memcpy(dev[2].app_key, key, 16);
	dev[2].dev_nonce = 0xcc85;
	if (lw_join_init(&j, &f, st)) {
		CHECK(0, "lw_join_init failed");
		return;
	}
	/* to gateway 0, which no device of it asked through: for none of ours */
	snprintf(js, sizeof(js), ja, 6000002);
	lw_join_accept(&j, 0, 5000, js, strlen(js));
	CHECK(j.unmatched == 1 && !atomic_load(&j.joined), "to the wrong gateway: %llu unmatched",
	      (unsigned long long)j.unmatched);
	/* RX2's delay (6 s) names device 2 by its tmst */
	lw_join_accept(&j, 1, 5000, js, strlen(js));
	CHECK(atomic_load(&j.joined) == 1 && j.by_trial == 0, "by tmst: %llu joined, %llu by trial",
	      (unsigned long long)atomic_load(&j.joined), (unsigned long long)j.by_trial);
	CHECK(j.sessions[2].dev_addr == 0x26012e43 &&
		      !memcmp(j.sessions[2].keys.nwk_s_key, nwk, 16) &&
		      j.sessions[2].join_ns == 5000 - 1002,
	      "device 2's session: DevAddr %08x, join %llu ns", j.sessions[2].dev_addr,
	      (unsigned long long)j.sessions[2].join_ns);
	/* the same answer again is a duplicate; without tmst it is found by trial among those waiting */
	lw_join_accept(&j, 1, 6000, js, strlen(js));
	CHECK(j.duplicates == 1, "duplicates %llu", (unsigned long long)j.duplicates);
	memset(&j.sessions[2], 0, sizeof(j.sessions[2]));
	snprintf(js, sizeof(js),
		 "{\"txpk\":{\"data\":\"IE3YWuYIuH/EiJlwt9IELJ5ylZsAV67WCUsWAD3xLeFF\"}}");
	lw_join_accept(&j, 1, 7000, js, strlen(js));
	CHECK(atomic_load(&j.joined) == 2 && j.by_trial == 1,
	      "by trial: %llu joined, %llu by trial", (unsigned long long)atomic_load(&j.joined),
	      (unsigned long long)j.by_trial);
	/* not a JoinAccept's length, no data, not JSON */
	snprintf(js, sizeof(js), "{\"txpk\":{\"data\":\"IE3YWuYI\"}}");
	lw_join_accept(&j, 1, 7000, js, strlen(js));
	lw_join_accept(&j, 1, 7000, "{\"txpk\":{}}", 11);
	lw_join_accept(&j, 1, 7000, "{\"txpk\"", 8);
	CHECK(j.malformed == 3 && j.accepts == 7, "malformed %llu of %llu",
	      (unsigned long long)j.malformed, (unsigned long long)j.accepts);
	lw_join_stop(&j);
	lw_join_free(&j);
}

/* A gateway's copies up to n (a stat's rxnb) against counting every sequence number's gateway. */
static void test_gw_copies(void)
{
	struct lw_gen_opts o = { .devices = 37,
				 .gateways = 5,
				 .heard_by = 3,
				 .seed = 9,
				 .region = "eu868",
				 .sf = 7,
				 .bw_khz = 125,
				 .payload_min = 4,
				 .payload_max = 4,
				 .fport = 1 };
	uint64_t count[5] = {}, bad = 0;
	struct lw_gw_index ix = {};
	struct lw_fleet f;

	if (lw_fleet_generate(&o, &f) || lw_gw_index_build(&f, &ix)) {
		CHECK(0, "fleet or index");
		return;
	}
	for (uint64_t n = 0; n <= 3 * 37 * 3 + 5; n++) {
		size_t d;
		unsigned int k;
		uint32_t fcnt;

		for (size_t g = 0; g < 5; g++)
			bad += lw_gw_copies(&f, &ix, g, n) != count[g];
		lw_of_n(&f, n, &d, &k, &fcnt);
		count[f.dev[d].gw[k]]++;
	}
	CHECK(!bad, "%llu counts differ", (unsigned long long)bad);
	lw_gw_index_free(&ix);
	lw_fleet_free(&f);
}

static void test_meter(void)
{
	struct engine_opts o = { .count = 100 };
	struct engine_result res = {};
	struct run_meter m;
	const uint64_t s = 1000000000ULL;

	meter_init(&m, &o, 0, 300);
	meter_tick(&m, s / 2, 50, 0, 60);
	meter_tick(&m, s, 100, 0, 60);
	meter_tick(&m, 2 * s + 1, 250, 0, 60);
	meter_finish(&m, 2 * s + s / 2, 300, &res);
	CHECK(res.nsec == 3 && res.per_sec[0] == 100 && res.per_sec[1] == 150 &&
		      res.per_sec[2] == 50,
	      "series: %u seconds, %llu %llu %llu", res.nsec,
	      (unsigned long long)(res.nsec ? res.per_sec[0] : 0),
	      (unsigned long long)(res.nsec > 1 ? res.per_sec[1] : 0),
	      (unsigned long long)(res.nsec > 2 ? res.per_sec[2] : 0));
	free(res.per_sec);
}

/*
 * --shard I/N: N shards, each with its own thread count, send every sequence
 * number of the whole run exactly once, a unit (an uplink's copies) goes to
 * one shard whole, and shard I owns the units u with u mod N = I whatever
 * the run's first sequence number.
 */
static void test_shards_partition(void)
{
	static uint8_t seen[4096];
	uint64_t state = 42;

	for (int c = 0; c < 3000; c++) {
		unsigned int shards = 1 + splitmix64(&state) % 7, unit = 1 + splitmix64(&state) % 4;
		uint64_t count = splitmix64(&state) % 1000,
			 first = splitmix64(&state) % 3 ? 0 : splitmix64(&state) % 100000 * unit;
		uint64_t total = 0, sent = 0;

		memset(seen, 0, sizeof(seen));
		for (unsigned int s = 0; s < shards; s++) {
			struct frameset fs = { .n = 1 };
			struct engine_opts o = { .fs = &fs,
						 .threads = 1 + splitmix64(&state) % 4,
						 .first_n = first,
						 .shard =
							 engine_shard_place(s, shards, first, unit),
						 .shards = shards,
						 .frame_div = unit };

			o.count = engine_shard_count(count, o.shard, shards, unit);
			total += o.count;
			for (unsigned int t = 0; t < o.threads; t++) {
				struct thread_plan tp;
				struct pacer p;

				pacer_init(&p, &o, t, 0, NULL);
				thread_plan_init(&tp, &o, &p, t, 0);
				for (uint64_t k = 0; k < tp.k_count; k++) {
					uint64_t n = engine_seq(&o, t, k) - first;

					CHECK(n < count && !seen[n],
					      "case %d: shard %u/%u sends n %llu %s", c, s, shards,
					      (unsigned long long)n,
					      n < count ? "twice" : "beyond the run");
					/* a shard owns its units whatever the run's first n */
					CHECK((first + n) / unit % shards == s,
					      "case %d: shard %u/%u sends n %llu of another's unit",
					      c, s, shards, (unsigned long long)(first + n));
					if (n >= count || seen[n] ||
					    (first + n) / unit % shards != s)
						return;
					seen[n] = 1 + s;
					sent++;
				}
			}
		}
		CHECK(total == count && sent == count, "case %d: %llu of %llu sent", c,
		      (unsigned long long)sent, (unsigned long long)count);
		for (uint64_t n = 0; n < count; n++)
			CHECK(seen[n] == seen[n - n % unit], "case %d: unit of n %llu split", c,
			      (unsigned long long)n);
	}
}

/*
 * gen tcp's books when the driver refused SYNs: their send times are kept,
 * so the retransmission thread sends them again, and an answered one is
 * no longer "not sent" (a mosquitto run once had 5 such: 5 unaccounted).
 */
static void test_tcp_books(void)
{
	static struct tcp t;
	struct engine_result res = { .asked = 200, .sent = 195 };
	struct tcp_books b;

	res.unsent.ring_full = 5;
	res.replies.st.answered = 200;
	res.replies.st.ctr[XR_TCP_COMPLETED] = 200;
	tcp_books(&t, &res, &b);
	CHECK(b.syn_recovered == 5 && b.not_sent == 0 && b.failed == 0 && b.unaccounted == 0,
	      "all 5 refused SYNs answered later: recovered %llu, not sent %llu, unaccounted %llu",
	      (unsigned long long)b.syn_recovered, (unsigned long long)b.not_sent,
	      (unsigned long long)b.unaccounted);
	/* 3 of them answered, 2 never sent after all; 1 session reset */
	res.replies.st.answered = 198;
	res.replies.st.ctr[XR_TCP_COMPLETED] = 197;
	res.replies.st.ctr[XR_TCP_RESET] = 1;
	tcp_books(&t, &res, &b);
	CHECK(b.syn_recovered == 3 && b.not_sent == 2 && b.failed == 3 && b.unaccounted == 0,
	      "3 of 5 answered later: recovered %llu, not sent %llu, failed %llu, unaccounted %llu",
	      (unsigned long long)b.syn_recovered, (unsigned long long)b.not_sent,
	      (unsigned long long)b.failed, (unsigned long long)b.unaccounted);
	/* no refusals: a SYN without an answer is just that */
	res = (struct engine_result){ .asked = 10, .sent = 10 };
	res.replies.st.answered = 9;
	res.replies.st.ctr[XR_TCP_COMPLETED] = 9;
	tcp_books(&t, &res, &b);
	CHECK(b.syn_recovered == 0 && b.no_answer == 1 && b.unaccounted == 0,
	      "one SYN unanswered: no answer %llu", (unsigned long long)b.no_answer);
}

static void test_words(void)
{
	char b[32];

	CHECK(!strcmp(words_count(3000, b, sizeof(b)), "3,000"), "3000 -> %s", b);
	CHECK(!strcmp(words_count(999, b, sizeof(b)), "999"), "999 -> %s", b);
	CHECK(!strcmp(words_count(188551, b, sizeof(b)), "189k"), "188551 -> %s", b);
	CHECK(!strcmp(words_count(1.6e6, b, sizeof(b)), "1.60M"), "1.6e6 -> %s", b);
	CHECK(!strcmp(words_rate(1000, b, sizeof(b)), "1,000/s"), "1000/s -> %s", b);
	CHECK(!strcmp(words_rate(19900, b, sizeof(b)), "19.9k/s"), "19900/s -> %s", b);
	CHECK(!strcmp(words_share(3000, 3000, b, sizeof(b)), "100%"), "all -> %s", b);
	/* cut, never rounded up to a whole */
	CHECK(!strcmp(words_share(99999, 100000, b, sizeof(b)), "99.99%"), "99999 -> %s", b);
	CHECK(!strcmp(words_share(2990, 3000, b, sizeof(b)), "99.66%"), "2990 -> %s", b);
	CHECK(!strcmp(words_share(1, 1e6, b, sizeof(b)), "under 0.01%"), "1 of 1M -> %s", b);
	CHECK(!strcmp(words_share(0, 5, b, sizeof(b)), "0%"), "none -> %s", b);
	CHECK(!strcmp(words_us(156, b, sizeof(b)), "156 us"), "156 us -> %s", b);
	CHECK(!strcmp(words_us(2500, b, sizeof(b)), "2.50 ms"), "2500 us -> %s", b);
}

/* headline_of on a JSON text: 0 and the sentence, or the error */
static int headline_text(const char *json, char *buf, size_t len)
{
	struct json_object *j = json_tokener_parse(json);
	int err = headline_of(j, buf, len);

	json_object_put(j);
	return err;
}

static void test_headline(void)
{
	static const struct {
		const char *json, *words;
	} cases[] = {
		{ "{\"command\":\"gen\",\"protocol\":\"syn\",\"asked\":3000,\"sent\":3000,"
		  "\"target\":{\"pace\":\"rate\",\"pps\":1000},\"replies_counted\":true,"
		  "\"replies\":{\"syn_acks\":2990,\"completed\":0,\"rtt_us\":{\"p99\":156.2}},"
		  "\"thresholds\":[{\"expr\":\"p99>2ms\",\"failed\":false},"
		  "{\"expr\":\"loss>0.1%\",\"failed\":true}]}",
		  "3,000 SYNs asked at 1,000/s, all sent; the server answered 2,990 (99.66%); "
		  "round trip p99 156 us; 1 of 2 thresholds failed (loss>0.1%)" },
		{ "{\"command\":\"gen\",\"protocol\":\"udp\",\"asked\":1000,\"sent\":900,"
		  "\"target\":{\"pace\":\"topspeed\"},\"failed_reasons\":{\"driver_refused\":100,"
		  "\"fell_behind\":0}}",
		  "1,000 datagrams asked at top speed, 900 sent (90%), 100 not sent, the most as "
		  "refused by the driver (100)" },
		{ "{\"command\":\"gen\",\"protocol\":\"tcp\",\"asked\":200,\"sent\":200,"
		  "\"target\":{\"pace\":\"rate\",\"pps\":100},\"replies_counted\":true,"
		  "\"sessions\":{\"asked\":200,\"completed\":150,\"failed\":50,"
		  "\"failed_by\":{\"no_syn_ack\":10,\"reset\":40}}}",
		  "200 sessions asked at 100/s, all sent; 150 of 200 sessions completed (75%), the "
		  "most as reset by the server (40)" },
		{ "{\"iface\":\"srv0\",\"matched\":2000,\"pps\":1000,\"xdp_dropped\":0,"
		  "\"attribution\":{},\"drop_reasons\":true,\"drops\":{\"inbound\":"
		  "{\"NO_SOCKET\":1500,\"NETFILTER_DROP\":500},\"inbound_total\":2000},"
		  "\"delivered\":0,\"books\":{\"unattributed\":0}}",
		  "2,000 arrived at 1,000/s; 2,000 dropped by the kernel: no socket on the port "
		  "(NO_SOCKET) 1,500, the firewall (NETFILTER_DROP) 500; none delivered to sockets" },
		/* count's filter names the port the sockets were missing on */
		{ "{\"iface\":\"srv0\",\"filter\":{\"protocol\":\"udp\",\"dst_port\":9},"
		  "\"matched\":1600000,\"pps\":20000,\"attribution\":{},\"drop_reasons\":true,\"drops\":{\"inbound\":"
		  "{\"NO_SOCKET\":1600000},\"inbound_total\":1600000},\"delivered\":0}",
		  "1.60M arrived at 20.0k/s; 1.60M dropped by the kernel: no socket on UDP port 9 "
		  "(NO_SOCKET); none delivered to sockets" },
		{ "{\"goals\":[{\"name\":\"NDR\",\"lower\":19900,\"never_saturated\":false},"
		  "{\"name\":\"PDR\",\"lower\":20100,\"never_saturated\":false}],\"stopped\":\"done\","
		  "\"trials\":[{\"offered_pps\":10000,\"sent\":10000,\"server_drops\":"
		  "{\"drop:NO_SOCKET\":10000,\"firewall_dropped\":0}},{\"offered_pps\":40000,"
		  "\"sent\":40000,\"server_drops\":{\"drop:NO_SOCKET\":20000,"
		  "\"firewall_dropped\":20000}}]}",
		  "NDR 19.9k/s, PDR 20.1k/s; above it the server dropped: the firewall (nftables)" },
	};
	static const char open_doc[] = "{\"command\":\"gen\",\"asked\":5,\"sent\":5";
	char b[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = headline_text(cases[i].json, b, sizeof(b));

		CHECK(!err && !strcmp(b, cases[i].words), "case %zu: %d '%.300s'", i, err, b);
	}
	CHECK(headline_text("{\"tool\":\"k6\",\"metrics\":{}}", b, sizeof(b)) == -EINVAL,
	      "another tool's JSON taken");
	CHECK(!headline_of_open(open_doc, strlen(open_doc), b, sizeof(b)) &&
		      !strcmp(b, "5 frames asked, all sent"),
	      "an open document: '%.300s'", b);
}

static void test_u_test(void)
{
	static const double a[] = { 1, 2, 3, 4 }, b[] = { 5, 6, 7, 8 },
			    c[] = { 1.5, 2.5, 3.5, 4.5 };
	static const double t1[] = { 1, 1, 2, 2 }, t2[] = { 1, 1, 2, 2 };
	double p;

	/* apart: the most extreme of C(8,4) = 70 orderings, both tails */
	p = compare_u_test(a, 4, b, 4);
	CHECK(fabs(p - 2.0 / 70) < 1e-12, "apart: p %g, expected %g", p, 2.0 / 70);
	p = compare_u_test(b, 4, a, 4);
	CHECK(fabs(p - 2.0 / 70) < 1e-12, "apart, swapped: p %g", p);
	/* interleaved: U = 10 of 16; P(U >= 10) = 24/70 (the 70 orderings enumerated by hand) */
	p = compare_u_test(c, 4, a, 4);
	CHECK(fabs(p - 2 * 24.0 / 70) < 1e-12, "interleaved: p %g, expected %g", p, 48.0 / 70);
	/* the same values on both sides: no change at all */
	p = compare_u_test(t1, 4, t2, 4);
	CHECK(p == 1, "ties alike: p %g", p);
	/* three rounds a side can never be beyond alpha 0.05: the least p is 2/20 */
	p = compare_u_test(a, 3, b, 3);
	CHECK(fabs(p - 0.1) < 1e-12, "three a side: p %g", p);
}

int main(void)
{
	run("parse_count", test_parse_count);
	run("parse_duration", test_parse_duration);
	run("parse_bitrate", test_parse_bitrate);
	run("fmt_si", test_fmt_si);
	run("words", test_words);
	run("headline", test_headline);
	run("u_test", test_u_test);
	run("json", test_json);
	run("prom", test_prom);
	run("spectrum", test_spectrum);
	run("pcapng_sample", test_pcapng_sample);
	run("pcap_gz_ns", test_pcap_gz_ns);
	run("hostile_captures", test_hostile);
	run("skipped_frames", test_skips);
	run("thread_account", test_thread_account);
	run("meter", test_meter);
	run("pacer_far", test_pacer_far);
	run("pacer_capture_due", test_pacer_capture_due);
	run("pacer_exact_rate", test_pacer_exact_rate);
	run("parse_strict", test_parse_strict);
	run("mlr_classify", test_mlr_classify);
	run("attribution", test_attribution);
	run("rewrite_specs", test_rewrite_specs);
	run("addr_dst", test_addr_dst);
	run("dns_queries", test_dns_queries);
	run("mqtt_stream", test_mqtt_stream);
	run("shards_partition", test_shards_partition);
	run("join_match", test_join_match);
	run("gw_copies", test_gw_copies);
	run("tcp_books", test_tcp_books);
	return nfail ? 1 : 0;
}
