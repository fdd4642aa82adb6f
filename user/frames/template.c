// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in frame templates for `xdpreplay gen udp|syn`: one frame with valid
 * checksums, plus the rewrite plan that makes every packet distinct (source
 * address and port ranges, a sequence stamp, the SYN's ISN). The kernel
 * engine then sends it like any replayed capture.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <netinet/in.h>
#include "frames/template.h"
#include "frames/csum.h"
#include "util/log.h"
#include "util/units.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* ADDR, ADDR:PORT or [ADDR6]:PORT */
int gen_parse_dst(const char *s, const char *opt, struct gen_opts *g)
{
	char host[64];
	const char *colon;
	unsigned int port = 0;
	const char *end;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close - s - 1 >= (long)sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon)
			goto bad;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL; /* a bare IPv6 address */
		snprintf(host, sizeof(host), "%.*s", (int)(colon ? colon - s : (long)strlen(s)), s);
	}
	if (colon) {
		if (parse_uint(colon + 1, 65535, &port, &end) || *end || !port)
			goto bad;
		g->dport = port;
	}
	if (inet_pton(AF_INET, host, g->dst) == 1) {
		g->ipv6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, host, g->dst) == 1) {
		g->ipv6 = true;
		return 0;
	}
bad:
	pr_warn("%s: '%s' is not ADDR, ADDR:PORT or [ADDR6]:PORT\n", opt, s);
	return -EINVAL;
}

/* The destination MAC from the neighbour table (/proc/net/arp), for IPv4. */
int gen_neigh_mac(const struct gen_opts *g, const char *ifname, uint8_t *mac)
{
	char line[256], ip[64], hw[32], dev[32], want[INET_ADDRSTRLEN];
	unsigned int m[6], flags;
	FILE *f;

	if (g->ipv6)
		return -ENOENT;
	inet_ntop(AF_INET, g->dst, want, sizeof(want));
	f = fopen("/proc/net/arp", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %*s %x %31s %*s %31s", ip, &flags, hw, dev) == 4 && !strcmp(ip, want) &&
		    !strcmp(dev, ifname) && (flags & 2) &&
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6) {
			for (int i = 0; i < 6; i++)
				mac[i] = m[i];
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

/* The interface's first address of the family, as the default source. */
int gen_iface_addr(const char *ifname, bool ipv6, uint8_t *addr)
{
	struct ifaddrs *ifa, *i;
	int err = -ENOENT;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (!ipv6 && i->ifa_addr->sa_family == AF_INET) {
			memcpy(addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			err = 0;
			break;
		}
		if (ipv6 && i->ifa_addr->sa_family == AF_INET6) {
			memcpy(addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			err = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return err;
}

/* x with x * a == 1 mod 2^32, for odd a (Newton's iteration doubles the good bits). */
static uint32_t inverse32(uint32_t a)
{
	uint32_t x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

int gen_build(struct gen_opts *g, const struct iface *ifc, struct frameset *fs, struct rewrite_spec *specs,
	      int *nspecs, struct xr_replies_cfg *rpl)
{
	uint32_t l3len = g->ipv6 ? 40 : 20, l4len = g->syn ? 24 : 8, len = g->size - 4, payload, isn_step;
	uint8_t f[XR_MAX_FRAME] = {}, *ip = f + 14, *l4 = ip + l3len, src[16];
	uint8_t proto = g->syn ? IPPROTO_TCP : IPPROTO_UDP;
	char spec[128], a[INET6_ADDRSTRLEN];
	uint64_t pool, ports;
	uint32_t sum;
	int err;

	if (len < 14 + l3len + l4len)
		len = 14 + l3len + l4len;
	if (g->syn)
		len = 14 + l3len + l4len; /* a SYN carries no data */
	if (len > (uint32_t)ifc->mtu + 14 || len > XR_MAX_FRAME) {
		pr_warn("--size %u is more than %s's MTU allows\n", g->size, ifc->name);
		return -EINVAL;
	}
	payload = len - 14 - l3len - l4len;
	if (!g->have_mac && gen_neigh_mac(g, ifc->name, g->dst_mac)) {
		inet_ntop(g->ipv6 ? AF_INET6 : AF_INET, g->dst, a, sizeof(a));
		pr_warn("no neighbour entry for %s on %s: give --dst-mac\n", a, ifc->name);
		return -ENOENT;
	}
	/* after any --rewrite the user gave: room is checked by the caller's array (GEN_MAX_SPECS) */
	if (*nspecs > GEN_MAX_SPECS - 3) {
		pr_warn("too many --rewrite ops\n");
		return -EINVAL;
	}
	if (g->src) {
		struct rewrite_spec *sp = &specs[(*nspecs)++];

		snprintf(spec, sizeof(spec), "%s=%s", g->ipv6 ? "ip6.src" : "ip.src", g->src);
		if (rewrite_parse_opt(spec, "--src", sp))
			return -EINVAL;
		/* the template starts at the range's first address (for IPv6 the plan checks the prefix) */
		if (g->ipv6) {
			memcpy(src, sp->ip6_high, 8);
			for (int i = 0; i < 8; i++)
				src[8 + i] = sp->op.base >> (56 - 8 * i);
		} else {
			uint32_t a = htonl(sp->op.base);

			memcpy(src, &a, 4);
		}
	} else if (gen_iface_addr(ifc->name, g->ipv6, src)) {
		pr_warn("%s has no %s address: give --src\n", ifc->name, g->ipv6 ? "IPv6" : "IPv4");
		return -ENOENT;
	}
	memcpy(f, g->dst_mac, 6);
	memcpy(f + 6, ifc->mac, 6);
	if (g->ipv6) {
		put16(f + 12, 0x86dd);
		ip[0] = 0x60;
		put16(ip + 4, l4len + payload);
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, src, 16);
		memcpy(ip + 24, g->dst, 16);
	} else {
		put16(f + 12, 0x0800);
		ip[0] = 0x45;
		put16(ip + 2, l3len + l4len + payload);
		put16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, src, 4);
		memcpy(ip + 16, g->dst, 4);
		put16(ip + 10, csum_fold(csum_add(ip, 20, 0)));
	}
	put16(l4, 1024);
	put16(l4 + 2, g->dport);
	if (g->syn) {
		l4[12] = (l4len / 4) << 4;
		l4[13] = 0x02; /* SYN */
		put16(l4 + 14, 64240);
		/* MSS 1460: what a Linux client offers on Ethernet */
		l4[20] = 2;
		l4[21] = 4;
		put16(l4 + 22, 1460);
	} else {
		put16(l4 + 4, l4len + payload);
		memcpy(l4 + 8, "XRGEN", payload < 5 ? payload : 5);
	}
	sum = g->ipv6 ? csum_add(ip + 8, 32, 0) : csum_add(ip + 12, 8, 0);
	sum = csum_add(l4, l4len + payload, sum + proto + l4len + payload);
	put16(l4 + (g->syn ? 16 : 6), csum_fold(sum) ? csum_fold(sum) : 0xffff);
	err = frameset_add(fs, f, len, len, 0);
	if (err)
		return err;
	frameset_finish(fs);

	snprintf(spec, sizeof(spec), "%s.sport=%s", g->syn ? "tcp" : "udp", g->sport ? g->sport : "1024-65535");
	if (rewrite_parse_opt(spec, "--sport", &specs[*nspecs]))
		return -EINVAL;
	/*
	 * The address takes n mod pool, the port (n / pool) mod ports: every
	 * (address, port) pair comes once before any repeats. With both taking
	 * n mod their own size, only lcm(pool, ports) pairs would be distinct.
	 */
	pool = g->src ? specs[*nspecs - 1].op.modulus : 1;
	if (pool > 1) {
		struct rewrite_spec *sp = &specs[*nspecs];

		sp->op.divisor = pool;
		snprintf(sp->text + strlen(sp->text), sizeof(sp->text) - strlen(sp->text), "/%llu",
			 (unsigned long long)pool);
	}
	ports = specs[*nspecs].op.modulus;
	g->tuples = pool && ports && pool <= UINT64_MAX / ports ? pool * ports : 0;
	(*nspecs)++;
	if (!g->syn && payload >= 8) {
		/* the sequence number, for count --seq payload@0:8 */
		if (rewrite_parse("payload@0:8=seq", &specs[(*nspecs)++]))
			return -EINVAL;
	}
	if (g->syn) {
		struct rewrite_spec *isn = &specs[(*nspecs)++];
		uint32_t key[2];

		/* ISN = base + n * step (step odd): distinct per n, and n comes back with the SYN-ACK */
		if (getrandom(key, sizeof(key), 0) != sizeof(key))
			key[0] = 0x9e3779b9, key[1] = 0x7f4a7c15;
		isn_step = key[1] | 1;
		memset(isn, 0, sizeof(*isn));
		snprintf(isn->text, sizeof(isn->text), "tcp.seq (ISN)");
		isn->op = (struct xr_op){ .kind = XR_OP_COUNTER, .width = 4, .flags = XR_OPF_BIG_ENDIAN,
					  .base = key[0], .step = isn_step };
		isn->where = 0; /* absolute */
		isn->field_off = 14 + l3len + 4;
		if (g->ipv6) {
			pr_warn("replies are counted for IPv4 only; the SYNs go out uncounted\n");
		} else {
			__u64 base, count;
			int i = 0;

			memset(rpl, 0, sizeof(*rpl));
			memcpy(&rpl->server_addr, g->dst, 4);
			rpl->server_port = htons(g->dport);
			rpl->complete = g->complete;
			rpl->isn_base = key[0];
			rpl->isn_inv = inverse32(isn_step);
			rpl->src_base = ntohl(*(uint32_t *)src);
			rpl->src_count = 1;
			for (i = 0; i < *nspecs; i++) {
				base = specs[i].op.base;
				count = specs[i].op.modulus ? specs[i].op.modulus : 1;
				if (!strncmp(specs[i].text, "ip.src=", 7)) {
					rpl->src_base = base;
					rpl->src_count = count;
				} else if (!strncmp(specs[i].text, "tcp.sport=", 10)) {
					rpl->sport_base = base;
					rpl->sport_count = count;
				}
			}
		}
	}
	return 0;
}

static uint64_t percentile(const uint64_t *h, unsigned int nb, uint64_t total, double q)
{
	uint64_t want = (uint64_t)(q * total + 0.5), acc = 0;

	if (!total)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned int b = 0; b < nb; b++) {
		acc += h[b];
		if (acc >= want)
			return rtt_bucket_floor(b);
	}
	return rtt_bucket_floor(nb - 1);
}

static uint64_t hist_max(const uint64_t *h, unsigned int nb)
{
	for (unsigned int b = nb; b-- > 0;)
		if (h[b])
			return rtt_bucket_floor(b + 1);
	return 0;
}

void gen_report(const struct engine_result *res, FILE *human, struct json *j)
{
	const struct engine_replies *r = &res->replies;
	uint64_t total[XR_RTT_BUCKETS] = {}, n = 0;
	double dur = (res->end_ns - res->start_ns) / 1e9;
	char x[16], y[16];

	if (!r->hist)
		return;
	for (unsigned int s = 0; s < r->seconds && s < XR_RTT_SECS; s++)
		for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++) {
			total[b] += r->hist[s * XR_RTT_BUCKETS + b];
			n += r->hist[s * XR_RTT_BUCKETS + b];
		}
	if (human && r->lora) {
		fprintf(human, "  replies: %llu PUSH_ACKs (%s/s), %llu duplicated, %llu unmatched\n",
			(unsigned long long)r->st.push_acks, fmt_si(dur > 0 ? r->st.push_acks / dur : 0, x, sizeof(x)),
			(unsigned long long)r->st.push_ack_dups, (unsigned long long)r->st.unmatched);
	} else if (human) {
		fprintf(human, "  replies: %llu SYN-ACKs (%s/s), %llu SYNs unanswered, %llu RSTs, %llu retransmitted, "
			"%llu unmatched", (unsigned long long)r->st.syn_acks,
			fmt_si(dur > 0 ? r->st.syn_acks / dur : 0, x, sizeof(x)),
			(unsigned long long)(res->sent > r->st.syn_acks ? res->sent - r->st.syn_acks : 0),
			(unsigned long long)r->st.rsts, (unsigned long long)r->st.retransmits,
			(unsigned long long)r->st.unmatched);
		if (r->st.acks_sent)
			fprintf(human, "; completed %llu (%s/s), closed %llu", (unsigned long long)r->st.acks_sent,
				fmt_si(dur > 0 ? r->st.acks_sent / dur : 0, y, sizeof(y)), (unsigned long long)r->st.fins);
		fputc('\n', human);
	}
	if (human) {
		fprintf(human, "  round trip: p50 %s, p90 %s, p99 %s, max %s\n",
			fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.5), x, sizeof(x)),
			fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.9), y, sizeof(y)),
			fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.99), (char[16]){}, 16),
			fmt_duration(hist_max(total, XR_RTT_BUCKETS), (char[16]){}, 16));
	}
	if (!j)
		return;
	json_open(j, "replies", '{');
	if (r->lora) {
		json_u64(j, "push_acks", r->st.push_acks);
		json_u64(j, "push_ack_dups", r->st.push_ack_dups);
		json_double(j, "push_acks_per_s", dur > 0 ? r->st.push_acks / dur : 0);
		json_u64(j, "unmatched", r->st.unmatched);
	} else {
		json_u64(j, "syn_acks", r->st.syn_acks);
		json_u64(j, "unanswered", res->sent > r->st.syn_acks ? res->sent - r->st.syn_acks : 0);
		json_u64(j, "rsts", r->st.rsts);
		json_u64(j, "retransmits", r->st.retransmits);
		json_u64(j, "unmatched", r->st.unmatched);
		json_u64(j, "completed", r->st.acks_sent);
		json_u64(j, "closed", r->st.fins);
		json_double(j, "syn_acks_per_s", dur > 0 ? r->st.syn_acks / dur : 0);
		json_double(j, "completed_per_s", dur > 0 ? r->st.acks_sent / dur : 0);
	}
	json_open(j, "rtt_us", '{');
	json_double(j, "p50", percentile(total, XR_RTT_BUCKETS, n, 0.5) / 1e3);
	json_double(j, "p90", percentile(total, XR_RTT_BUCKETS, n, 0.9) / 1e3);
	json_double(j, "p99", percentile(total, XR_RTT_BUCKETS, n, 0.99) / 1e3);
	json_double(j, "max", hist_max(total, XR_RTT_BUCKETS) / 1e3);
	json_close(j, '}');
	json_open(j, "per_second", '[');
	for (unsigned int s = 0; s < r->seconds && s < XR_RTT_SECS; s++) {
		const uint64_t *h = r->hist + (size_t)s * XR_RTT_BUCKETS;
		uint64_t c = 0, within10 = 0, within50 = 0;

		for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++) {
			c += h[b];
			/* a bucket counts as within a bound when all of it is */
			if (rtt_bucket_floor(b + 1) <= 10000000ULL)
				within10 += h[b];
			if (rtt_bucket_floor(b + 1) <= 50000000ULL)
				within50 += h[b];
		}
		json_open(j, NULL, '{');
		json_u64(j, "second", s);
		json_u64(j, "answered", c);
		json_u64(j, "within_10ms", within10);
		json_u64(j, "within_50ms", within50);
		json_double(j, "p50_us", percentile(h, XR_RTT_BUCKETS, c, 0.5) / 1e3);
		json_double(j, "p90_us", percentile(h, XR_RTT_BUCKETS, c, 0.9) / 1e3);
		json_double(j, "p99_us", percentile(h, XR_RTT_BUCKETS, c, 0.99) / 1e3);
		json_double(j, "max_us", hist_max(h, XR_RTT_BUCKETS) / 1e3);
		json_close(j, '}');
	}
	json_close(j, ']');
	json_close(j, '}');
}
