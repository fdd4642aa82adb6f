// SPDX-License-Identifier: GPL-2.0
/* The server's kernel drops by reason: see drops.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "report/figures.h"
#include "util/prom.h"
#include "measure/drops.h"
#include "util/log.h"
#include "drops.skel.h"

/* not a kernel reason: a refused SYN is freed as consumed; the kernel's ListenDrops counts it */
#define LISTEN_DROP "TCP_LISTEN_DROPS"

struct drops {
	struct drops_bpf *skel;
	bool books_udp, books_tcp; /* the sockets' side of the books is traced */
	struct bpf_link *udp_iter; /* iter/udp: what the sockets still hold */
	uint32_t seq_bucket; /* count --seq: sequence numbers per bucket; 0 without --seq */
	char *names[XR_DROP_REASONS];
	/* kallsyms, sorted by address, loaded when a report needs a location */
	struct ksym {
		uint64_t addr;
		char *name;
	} *syms;
	size_t nsyms;
	bool syms_tried;
};

/* enum skb_drop_reason from the running kernel's BTF: a newer kernel's reasons need no code. */
static void load_names(struct drops *d)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id;

	if (!btf)
		return;
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (unsigned int i = 0; t && i < btf_vlen(t); i++) {
		const struct btf_enum *e = btf_enum(t) + i;
		const char *n = btf__name_by_offset(btf, e->name_off);

		if ((uint32_t)e->val >= XR_DROP_SUBSYS || !n)
			continue;
		if (!strncmp(n, "SKB_DROP_REASON_", 16))
			n += 16;
		d->names[e->val] = strdup(n);
	}
	btf__free(btf);
}

static void load_syms(struct drops *d);

/* [*lo, *hi) of kernel function name's text, or 0, 0 when kallsyms does not say. */
static void text_range(struct drops *d, const char *name, __u64 *lo, __u64 *hi)
{
	*lo = *hi = 0;
	if (!d->syms_tried)
		load_syms(d);
	for (size_t i = 0; i + 1 < d->nsyms; i++)
		if (!strcmp(d->syms[i].name, name)) {
			*lo = d->syms[i].addr;
			*hi = d->syms[i + 1].addr;
			return;
		}
}

int drops_tracepoint_args(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id, n = -ENOENT;

	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, "btf_trace_kfree_skb", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, btf__resolve_type(btf, id)) : NULL;
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	/* the first parameter is the tracepoint's own context */
	if (t && btf_is_func_proto(t))
		n = btf_vlen(t) - 1;
	btf__free(btf);
	return n;
}

/* Opens, loads and attaches: with the sockets' side of the books for UDP and TCP, or without. */
static int drops_load(struct drops *d, const struct xr_drops_cfg *dcfg, int args, bool udp,
		      bool tcp)
{
	struct drops_bpf *sk;
	struct bpf_program *p;

	d->skel = sk = drops_bpf__open();
	if (!sk)
		return -errno;
	sk->rodata->dcfg = *dcfg;
	sk->rodata->dcfg.books_tcp = tcp;
	bpf_object__for_each_program(p, sk->obj)
	{
		bool is_udp = p == sk->progs.xr_udp_read || p == sk->progs.xr_udp_queue;

		if (p == sk->progs.xr_kfree_skb || p == sk->progs.xr_kfree_skb_no_sk)
			bpf_program__set_autoload(p, (p == sk->progs.xr_kfree_skb) == (args > 3));
		else
			bpf_program__set_autoload(p, is_udp ? udp : tcp);
	}
	d->seq_bucket = dcfg->seq_kind ? dcfg->seq_bucket : 0;
	d->books_udp = udp;
	d->books_tcp = tcp;
	if (drops_bpf__load(sk))
		goto fail;
	/* an iterator is run on each read, not attached to an event */
	bpf_program__set_autoattach(sk->progs.xr_udp_queue, false);
	if (drops_bpf__attach(sk))
		goto fail;
	if (udp && !(d->udp_iter = bpf_program__attach_iter(sk->progs.xr_udp_queue, NULL)))
		goto fail;
	return 0;
fail:
	drops_bpf__destroy(sk);
	d->skel = NULL;
	return -errno ? -errno : -EINVAL;
}

int drops_probe(bool *books)
{
	struct xr_drops_cfg dcfg = {};
	struct drops *d = calloc(1, sizeof(*d));
	int args = drops_tracepoint_args(), err;

	if (!d)
		return -ENOMEM;
	if (args >= 0 && args < 3) {
		err = -EOPNOTSUPP;
		goto out;
	}
	err = drops_load(d, &dcfg, args, true, true);
	*books = !err;
	if (err)
		err = drops_load(d, &dcfg, args, false, false);
out:
	drops_close(d);
	return err;
}

struct drops *drops_open(uint32_t netns_ino, uint32_t local_addr, const struct xr_count_cfg *cfg,
			 uint32_t seq_bucket)
{
	struct xr_drops_cfg dcfg = { .netns_ino = netns_ino,
				     .local_addr = local_addr,
				     .peer_addr = cfg->saddr,
				     .port = cfg->dport,
				     .peer_port = cfg->sport,
				     .proto = cfg->proto,
				     .seq_kind = cfg->seq_kind,
				     .seq_width = cfg->seq_width,
				     .seq_off = cfg->seq_off,
				     .seq_bucket = seq_bucket };
	/* the books are kept for UDP and TCP; a filter for any frame has no books */
	bool udp = cfg->proto == IPPROTO_UDP || !cfg->proto;
	bool tcp = cfg->proto == IPPROTO_TCP || !cfg->proto;
	struct drops *d = calloc(1, sizeof(*d));
	int err, args;

	if (!d)
		return NULL;
	/*
	 * Where skbs die before XDP: veth_xmit, when the peer's receive ring is
	 * full (the skb already belongs to the receiving device, in the
	 * counter's namespace); and where a SYN cookie's ACK dies that
	 * ListenDrops counts too
	 */
	text_range(d, "veth_xmit", &dcfg.pre_xdp_lo, &dcfg.pre_xdp_hi);
	text_range(d, "cookie_v4_check", &dcfg.cookie_lo, &dcfg.cookie_hi);
	args = drops_tracepoint_args();
	if (args >= 0 && args < 3) {
		pr_warn("warning: kernel drop reasons unavailable: skb:kfree_skb carries no reason "
			"before Linux 5.17; attribution from the kernel's counters only\n");
		goto fail_quiet;
	}
	err = drops_load(d, &dcfg, args, udp, tcp);
	if (err && (udp || tcp)) {
		pr_info("note: deliveries to sockets cannot be traced (%s): drops by reason only, "
			"and no unattributed figure\n",
			strerror(-err));
		err = drops_load(d, &dcfg, args, false, false);
	}
	if (err)
		goto fail;
	load_names(d);
	return d;
fail:
	pr_warn("warning: kernel drop reasons unavailable (skb:kfree_skb: %s); "
		"attribution from the kernel's counters only\n",
		strerror(-err));
fail_quiet:
	drops_close(d);
	return NULL;
}

/* Runs iter/udp: the datagrams the matching sockets hold unread. */
static int udp_queued(struct drops *d, uint64_t *out)
{
	char buf[64];
	int fd, n;

	d->skel->bss->udp_queued = 0;
	fd = bpf_iter_create(bpf_link__fd(d->udp_iter));
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	if (n < 0)
		return -errno;
	*out = d->skel->bss->udp_queued;
	return 0;
}

void drops_close(struct drops *d)
{
	if (!d)
		return;
	bpf_link__destroy(d->udp_iter);
	drops_bpf__destroy(d->skel);
	for (int i = 0; i < XR_DROP_REASONS; i++)
		free(d->names[i]);
	for (size_t i = 0; i < d->nsyms; i++)
		free(d->syms[i].name);
	free(d->syms);
	free(d);
}

int drops_read(struct drops *d, uint64_t listen_drops, struct drops_totals *t)
{
	uint64_t cookie_drops = 0;
	int ncpu = libbpf_num_possible_cpus();
	struct xr_drops_stats *per = calloc(ncpu, sizeof(*per));
	__u32 zero = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.drop_stats), &zero, per)) {
		err = -errno;
		goto out;
	}
	t->books = d->books_udp || d->books_tcp;
	for (int c = 0; c < ncpu; c++) {
		for (int dir = 0; dir < 2; dir++) {
			for (int r = 0; r < XR_DROP_REASONS; r++)
				t->dropped[dir][r] += per[c].dropped[dir][r];
		}
		/* unsigned sums: a CPU may undo what another counted */
		t->delivered_udp += per[c].delivered[XR_DELIVERED_UDP];
		t->delivered_tcp += per[c].delivered[XR_DELIVERED_TCP];
		t->pre_xdp += per[c].pre_xdp;
		cookie_drops += per[c].cookie_drops;
	}
	if (d->books_udp) {
		err = udp_queued(d, &t->queued_udp);
		if (err)
			goto out;
	}
	if (d->books_tcp) {
		/*
		 * ListenDrops also counts the handshake ACKs an overflowing accept
		 * queue drops, which are freed with TCP_LISTEN_OVERFLOW (or, a SYN
		 * cookie's, NO_SOCKET in cookie_v4_check) and counted there: the
		 * SYNs refused (freed as consumed) are the rest
		 */
		uint64_t overflow = cookie_drops;

		for (int r = 0; r < XR_DROP_REASONS; r++)
			if (d->names[r] && !strcmp(d->names[r], "TCP_LISTEN_OVERFLOW"))
				overflow += t->dropped[XR_DROP_IN][r];
		t->listen_dropped = listen_drops > overflow ? listen_drops - overflow : 0;
	}
	for (int r = 0; r < XR_DROP_REASONS; r++) {
		t->in_total += t->dropped[XR_DROP_IN][r];
		t->out_total += t->dropped[XR_DROP_OUT][r];
	}
	t->in_total += t->listen_dropped;
out:
	free(per);
	return err;
}

const char *drops_reason_name(const struct drops *d, unsigned int r)
{
	static char buf[32];

	if (r == XR_DROP_SUBSYS)
		return "SUBSYSTEM";
	if (r < XR_DROP_REASONS && d->names[r])
		return d->names[r];
	snprintf(buf, sizeof(buf), "REASON_%u", r);
	return buf;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_syms(struct drops *d)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;

	d->syms_tried = true;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr ||
		    (type != 't' && type != 'T'))
			continue;
		if (d->nsyms == cap) {
			struct ksym *n = realloc(d->syms, (cap ? cap * 2 : 65536) * sizeof(*n));

			if (!n)
				break;
			d->syms = n;
			cap = cap ? cap * 2 : 65536;
		}
		d->syms[d->nsyms].addr = addr;
		d->syms[d->nsyms].name = strdup(name);
		if (d->syms[d->nsyms].name)
			d->nsyms++;
	}
	fclose(f);
	qsort(d->syms, d->nsyms, sizeof(*d->syms), cmp_sym);
}

/* "function+0xoff" of a kernel address, or the address when kallsyms cannot say. */
static const char *symbolize(struct drops *d, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi;

	if (!d->syms_tried)
		load_syms(d);
	hi = d->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		snprintf(buf, len, "%s+0x%llx", d->syms[lo - 1].name,
			 (unsigned long long)(addr - d->syms[lo - 1].addr));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}

/* Calls fn for each location the unspecific reasons were taken at. */
static void each_location(struct drops *d,
			  void (*fn)(void *ctx, const char *where, const struct xr_drop_loc *k,
				     uint64_t n),
			  void *ctx)
{
	int fd = bpf_map__fd(d->skel->maps.drop_locs);
	struct xr_drop_loc key, next;
	char where[300];
	void *prev = NULL;
	__u64 v;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &v))
			fn(ctx, symbolize(d, next.location, where, sizeof(where)), &next, v);
		key = next;
		prev = &key;
	}
}

static void print_loc(void *ctx, const char *where, const struct xr_drop_loc *k, uint64_t n)
{
	fprintf(ctx, "      %llu %s at %s\n", (unsigned long long)n,
		k->dir ? "outbound" : "inbound", where);
}

void drops_report(struct drops *d, const struct drops_totals *t, FILE *f)
{
	static const char *const dirs[] = { "inbound", "outbound" };

	for (int dir = 0; dir < 2; dir++) {
		fprintf(f, "    kernel drops %s (by reason): %llu", dirs[dir],
			(unsigned long long)(dir ? t->out_total : t->in_total));
		const char *sep = ":";

		for (int r = 0; r < XR_DROP_REASONS; r++) {
			if (!t->dropped[dir][r])
				continue;
			fprintf(f, "%s %s %llu", sep, drops_reason_name(d, r),
				(unsigned long long)t->dropped[dir][r]);
			sep = ",";
		}
		if (dir == XR_DROP_IN && t->listen_dropped)
			fprintf(f,
				"%s " LISTEN_DROP
				" %llu (SYNs a listener refused: queue full or no route back)",
				sep, (unsigned long long)t->listen_dropped);
		fputc('\n', f);
	}
	if (t->pre_xdp)
		fprintf(f,
			"    freed before XDP: %llu (veth_xmit: the veth's receive ring was full; not "
			"passed to the stack, so not in the books)\n",
			(unsigned long long)t->pre_xdp);
	if (t->dropped[0][XR_DROP_NOT_SPECIFIED] || t->dropped[1][XR_DROP_NOT_SPECIFIED] ||
	    t->dropped[0][XR_DROP_SUBSYS] || t->dropped[1][XR_DROP_SUBSYS])
		each_location(d, print_loc, f);
}

static void json_loc(void *ctx, const char *where, const struct xr_drop_loc *k, uint64_t n)
{
	struct json *j = ctx;

	json_open(j, NULL, '{');
	json_str(j, "where", where);
	json_str(j, "direction", k->dir ? "outbound" : "inbound");
	json_u64(j, "reason", k->reason);
	json_u64(j, "packets", n);
	json_close(j, '}');
}

void drops_json(struct drops *d, const struct drops_totals *t, struct json *j)
{
	static const char *const dirs[] = { "inbound", "outbound" };

	json_open(j, "drops", '{');
	for (int dir = 0; dir < 2; dir++) {
		json_open(j, dirs[dir], '{');
		for (int r = 0; r < XR_DROP_REASONS; r++)
			if (t->dropped[dir][r])
				json_u64(j, drops_reason_name(d, r), t->dropped[dir][r]);
		if (dir == XR_DROP_IN && t->listen_dropped)
			json_u64(j, LISTEN_DROP, t->listen_dropped);
		json_close(j, '}');
	}
	json_u64(j, "inbound_total", t->in_total);
	json_u64(j, "before_xdp", t->pre_xdp);
	json_u64(j, "outbound_total", t->out_total);
	json_open(j, "locations", '[');
	each_location(d, json_loc, j);
	json_close(j, ']');
	json_close(j, '}');
}

void drops_metrics(struct drops *d, const struct drops_totals *t, uint64_t passed, struct prom *p)
{
	static const char *const dirs[] = { "inbound", "outbound" };

	prom_family(p, "xdpreplay_drops", PROM_COUNTER,
		    "The server's kernel drops by reason (skb:kfree_skb).");
	for (int dir = 0; dir < 2; dir++)
		for (int r = 0; r < XR_DROP_REASONS; r++)
			if (t->dropped[dir][r])
				prom_u64(p, t->dropped[dir][r], "direction", dirs[dir], "reason",
					 drops_reason_name(d, r), NULL);
	if (t->listen_dropped)
		prom_u64(p, t->listen_dropped, "direction", "inbound", "reason", LISTEN_DROP, NULL);
	if (!t->books)
		return;
	figure_prom_family(p, "xdpreplay_delivered", PROM_COUNTER);
	prom_u64(p, t->delivered_udp + t->queued_udp, "proto", "udp", NULL);
	prom_u64(p, t->delivered_tcp, "proto", "tcp", NULL);
	/* a gauge: frames still on their way up count here until they land */
	figure_prom_family(p, "xdpreplay_unattributed", PROM_GAUGE);
	prom_double(p, (double)drops_unattributed(t, passed), NULL);
}

int64_t drops_unattributed(const struct drops_totals *t, uint64_t passed)
{
	return (int64_t)(passed - t->delivered_udp - t->queued_udp - t->delivered_tcp -
			 t->in_total);
}

void drops_books(const struct drops_totals *t, uint64_t passed, FILE *f)
{
	if (!t->books) {
		fprintf(f, "    books: deliveries to sockets not traced on this kernel: no "
			   "unattributed figure\n");
		return;
	}
	fprintf(f,
		"    books: passed to the stack %llu = delivered %llu (UDP read by the application %llu, "
		"still queued %llu; TCP taken by sockets %llu) + dropped inbound %llu + unattributed "
		"%lld\n",
		(unsigned long long)passed,
		(unsigned long long)(t->delivered_udp + t->queued_udp + t->delivered_tcp),
		(unsigned long long)t->delivered_udp, (unsigned long long)t->queued_udp,
		(unsigned long long)t->delivered_tcp, (unsigned long long)t->in_total,
		(long long)drops_unattributed(t, passed));
}

void drops_books_json(const struct drops_totals *t, uint64_t passed, struct json *j)
{
	if (!t->books)
		return;
	json_u64(j, "delivered", t->delivered_udp + t->queued_udp + t->delivered_tcp);
	json_open(j, "books", '{');
	json_u64(j, "passed", passed);
	json_u64(j, "udp_read", t->delivered_udp);
	json_u64(j, "udp_queued", t->queued_udp);
	json_u64(j, "tcp_taken", t->delivered_tcp);
	json_u64(j, "dropped", t->in_total);
	json_i64(j, "unattributed", drops_unattributed(t, passed));
	json_close(j, '}');
}

/* count --seq: a peer's dropped sequence numbers by reason, adjacent buckets merged */
struct seq_range {
	struct xr_seq_drop_key k; /* bucket: the first one */
	uint32_t last_bucket;
	uint64_t n;
};

static int cmp_seq_key(const void *a, const void *b)
{
	const struct xr_seq_drop_key *x = a, *y = b;

	if (x->peer != y->peer)
		return ntohl(x->peer) < ntohl(y->peer) ? -1 : 1;
	if (x->peer_port != y->peer_port)
		return ntohs(x->peer_port) < ntohs(y->peer_port) ? -1 : 1;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* The map's buckets as ranges, sorted by peer, reason and sequence; *n of them (free the array). */
static struct seq_range *seq_ranges(struct drops *d, size_t *n)
{
	struct {
		struct xr_seq_drop_key k;
		uint64_t v;
	} *e = NULL;
	int fd = bpf_map__fd(d->skel->maps.seq_drops);
	struct xr_seq_drop_key key, next;
	struct seq_range *r = NULL;
	size_t ne = 0, cap = 0, nr = 0;
	void *prev = NULL;
	__u64 v;

	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &v)) {
			if (ne == cap) {
				void *m = realloc(e, (cap = cap ? cap * 2 : 256) * sizeof(*e));

				if (!m)
					goto out;
				e = m;
			}
			e[ne].k = next;
			e[ne++].v = v;
		}
		key = next;
		prev = &key;
	}
	if (!ne)
		goto out;
	qsort(e, ne, sizeof(*e), cmp_seq_key);
	r = calloc(ne, sizeof(*r));
	if (!r)
		goto out;
	for (size_t i = 0; i < ne; i++) {
		struct seq_range *l = nr ? &r[nr - 1] : NULL;

		if (l && l->k.peer == e[i].k.peer && l->k.peer_port == e[i].k.peer_port &&
		    l->k.proto == e[i].k.proto && l->k.reason == e[i].k.reason &&
		    l->last_bucket + 1 == e[i].k.bucket) {
			l->last_bucket = e[i].k.bucket;
			l->n += e[i].v;
			continue;
		}
		r[nr].k = e[i].k;
		r[nr].last_bucket = e[i].k.bucket;
		r[nr++].n = e[i].v;
	}
	*n = nr;
out:
	free(e);
	return r;
}

static const char *proto_name(uint8_t p)
{
	return p == IPPROTO_UDP ? "udp" : p == IPPROTO_TCP ? "tcp" : "ip";
}

void drops_seq_report(struct drops *d, FILE *f)
{
	size_t n;
	struct seq_range *r;

	if (!d->seq_bucket)
		return;
	r = seq_ranges(d, &n);
	fprintf(f, "  sequence numbers of the drops (in buckets of %u)%s\n", d->seq_bucket,
		n ? ":" : ": none dropped");
	for (size_t i = 0; i < n; i++) {
		char a[INET_ADDRSTRLEN];
		bool same = i && r[i].k.peer == r[i - 1].k.peer &&
			    r[i].k.peer_port == r[i - 1].k.peer_port &&
			    r[i].k.proto == r[i - 1].k.proto && r[i].k.reason == r[i - 1].k.reason;

		if (!same)
			fprintf(f, "%s    %s:%u %s %s:", i ? "\n" : "",
				inet_ntop(AF_INET, &r[i].k.peer, a, sizeof(a)),
				ntohs(r[i].k.peer_port), proto_name(r[i].k.proto),
				drops_reason_name(d, r[i].k.reason));
		fprintf(f, "%s n %llu-%llu: %llu", same ? "," : "",
			(unsigned long long)r[i].k.bucket * d->seq_bucket,
			((unsigned long long)r[i].last_bucket + 1) * d->seq_bucket - 1,
			(unsigned long long)r[i].n);
	}
	if (n)
		fputc('\n', f);
	if (d->skel->bss->seq_drops_lost)
		fprintf(f, "    (%llu drops beyond the %d buckets kept: not placed)\n",
			(unsigned long long)d->skel->bss->seq_drops_lost, XR_SEQ_DROP_BUCKETS);
	free(r);
}

void drops_seq_json(struct drops *d, struct json *j)
{
	size_t n;
	struct seq_range *r;

	if (!d->seq_bucket)
		return;
	r = seq_ranges(d, &n);
	json_u64(j, "drops_bucket", d->seq_bucket);
	json_u64(j, "drops_not_placed", d->skel->bss->seq_drops_lost);
	json_open(j, "drops", '[');
	for (size_t i = 0; i < n; i++) {
		char a[INET_ADDRSTRLEN];

		json_open(j, NULL, '{');
		json_str(j, "peer", inet_ntop(AF_INET, &r[i].k.peer, a, sizeof(a)));
		json_u64(j, "port", ntohs(r[i].k.peer_port));
		json_str(j, "proto", proto_name(r[i].k.proto));
		json_str(j, "reason", drops_reason_name(d, r[i].k.reason));
		json_u64(j, "first", (uint64_t)r[i].k.bucket * d->seq_bucket);
		json_u64(j, "last", ((uint64_t)r[i].last_bucket + 1) * d->seq_bucket - 1);
		json_u64(j, "dropped", r[i].n);
		json_close(j, '}');
	}
	json_close(j, ']');
	free(r);
}
