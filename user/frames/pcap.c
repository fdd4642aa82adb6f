// SPDX-License-Identifier: GPL-2.0
/*
 * pcap and pcapng reader. zlib's gzread reads gzip and plain files alike (it
 * detects gzip by its magic), so one code path serves .pcap, .pcapng and
 * their .gz forms. libpcap is not used here: it refuses a pcapng file whose
 * interfaces have different link types, where we must skip and count the
 * frames of non-Ethernet interfaces and go on.
 *
 * Every length read from the file is checked before it is used: a hostile
 * file gets one error line, never a huge allocation or a read past a buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "frames/frameset.h"
#include "frames/static.h"
#include "util/log.h"

#define LINKTYPE_ETHERNET 1
#define PCAP_MAX_CAPLEN (256 * 1024) /* larger than any sane snaplen */
#define PCAPNG_MAX_BLOCK (16 * 1024 * 1024)
#define PCAPNG_MAX_IFACES 4096

#define PCAP_MAGIC_US 0xa1b2c3d4
#define PCAP_MAGIC_NS 0xa1b23c4d
#define PCAPNG_SHB 0x0a0d0d0a
#define PCAPNG_BOM 0x1a2b3c4d
#define PCAPNG_IDB 1
#define PCAPNG_OPB 2 /* obsolete packet block */
#define PCAPNG_SPB 3
#define PCAPNG_EPB 6

struct reader {
	gzFile gz;
	const char *path;
	bool swap;
	uint64_t record; /* 1-based index of the record being read */
	struct frameset *fs;
	const struct fs_load_opts *o;
	struct fs_skips *skips;
	/* capture times: the file's first frame maps to base_ns in the set */
	bool have_first;
	uint64_t first_ns, base_ns, last_ns, cut_ns;
	uint8_t *buf;
	size_t buf_cap;
	uint8_t *edit_buf; /* a frame after the static rewrites (PCAP_MAX_CAPLEN + 4 bytes) */
	uint64_t in_bytes,
		out_bytes; /* the file's size, and what was read from it (decompressed) */
};

struct ng_iface {
	uint16_t linktype;
	uint32_t snaplen;
	uint64_t ts_units; /* per second */
	int64_t ts_offset_s;
};

static uint16_t rd16(const struct reader *r, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(const struct reader *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct reader *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return r->swap ? __builtin_bswap64(v) : v;
}

/* 0: read all, 1: clean end of file before the first byte, <0: error (printed). */
static int read_exact(struct reader *r, void *buf, size_t len, const char *what)
{
	int n, errnum;

	n = gzread(r->gz, buf, len);
	if (n > 0)
		r->out_bytes += n;
	/* a small file that expands without end is a gzip bomb, not a capture */
	if (r->o->max_ratio && r->in_bytes && r->out_bytes > (64ULL << 20) &&
	    r->out_bytes > r->o->max_ratio * r->in_bytes) {
		pr_warn("%s: expands to more than %.0f times its %llu bytes (a gzip bomb?); --max-ratio allows more\n",
			r->path, r->o->max_ratio, (unsigned long long)r->in_bytes);
		return -E2BIG;
	}
	if (n == (int)len)
		return 0;
	if (n == 0 && gzeof(r->gz))
		return 1;
	if (n < 0) {
		const char *msg = gzerror(r->gz, &errnum);

		pr_warn("%s: cannot read %s: %s\n", r->path, what,
			errnum == Z_ERRNO ? strerror(errno) : msg);
		return -EIO;
	}
	pr_warn("%s: truncated: file ends inside %s of record %llu\n", r->path, what,
		(unsigned long long)r->record);
	return -EINVAL;
}

static int ensure_buf(struct reader *r, size_t len)
{
	uint8_t *nb;

	if (len <= r->buf_cap)
		return 0;
	nb = realloc(r->buf, len);
	if (!nb)
		return -ENOMEM;
	r->buf = nb;
	r->buf_cap = len;
	return 0;
}

/* Takes one captured frame into the set, or counts why not. */
static int take_frame(struct reader *r, uint16_t linktype, const uint8_t *data, uint32_t caplen,
		      uint32_t origlen, uint64_t ts_ns)
{
	uint64_t rel;

	if (linktype != LINKTYPE_ETHERNET) {
		r->skips->linktype++;
		return 0;
	}
	if (caplen < 14) {
		r->skips->too_short++;
		return 0;
	}
	if (caplen < origlen && !r->o->allow_truncated) {
		r->skips->truncated++;
		return 0;
	}
	if (r->o->edit) {
		int err;

		/* a pcapng block may hold more than the edit buffer: no interface sends such a frame */
		if (caplen > PCAP_MAX_CAPLEN) {
			r->skips->too_long++;
			return 0;
		}

		if (!r->edit_buf && !(r->edit_buf = malloc(PCAP_MAX_CAPLEN + 4)))
			return -ENOMEM;
		err = static_frame(r->o->edit, data, caplen, origlen, r->edit_buf, &caplen,
				   &origlen, r->fs->n + 1);
		if (err)
			return err < 0 ? err : 0;
		data = r->edit_buf;
	}
	if (caplen > r->o->max_len) {
		r->skips->too_long++;
		return 0;
	}
	if (r->o->max_frames && r->fs->n >= r->o->max_frames)
		return 1;
	/* what the set would hold with this frame: its bytes and its record */
	if (r->o->max_memory &&
	    r->fs->bytes_len + caplen + (r->fs->n + 1) * sizeof(struct fs_frame) >
		    r->o->max_memory) {
		pr_warn("%s: the frames up to record %llu take more than --max-memory %llu MiB (%zu frames loaded); "
			"give --preload N or a larger --max-memory\n",
			r->path, (unsigned long long)r->record,
			(unsigned long long)(r->o->max_memory >> 20), r->fs->n);
		return -E2BIG;
	}
	if (!r->have_first) {
		r->have_first = true;
		r->first_ns = ts_ns;
	}
	/* keep time monotonic: a frame stamped before its predecessor leaves with it */
	rel = ts_ns >= r->first_ns ? ts_ns - r->first_ns : 0;
	rel = rel + r->base_ns > rel ? rel + r->base_ns : rel;
	rel = rel > r->cut_ns ? rel - r->cut_ns : 0;
	if (rel < r->last_ns) {
		r->skips->ts_backwards++;
		rel = r->last_ns;
	}
	if (r->fs->n && r->o->max_gap_ns && rel - r->last_ns > r->o->max_gap_ns) {
		/* this gap and every later time move up by what is cut */
		r->cut_ns += rel - r->last_ns - r->o->max_gap_ns;
		rel = r->last_ns + r->o->max_gap_ns;
		r->skips->gaps_cut++;
	}
	if (r->fs->n && rel - r->last_ns > r->skips->max_gap_ns) {
		r->skips->max_gap_ns = rel - r->last_ns;
		r->skips->max_gap_frame = r->fs->n + 1;
	}
	r->last_ns = rel;
	if (frameset_add(r->fs, data, caplen, origlen, rel)) {
		pr_warn("%s: out of memory at record %llu (%zu frames, %zu bytes loaded)\n",
			r->path, (unsigned long long)r->record, r->fs->n, r->fs->bytes_len);
		return -ENOMEM;
	}
	return 0;
}

static int read_pcap(struct reader *r, uint32_t magic)
{
	uint8_t hdr[20], rec[16];
	uint32_t linktype, caplen, origlen, frac;
	uint64_t ts_ns;
	bool ns;
	int err;

	ns = magic == PCAP_MAGIC_NS;
	err = read_exact(r, hdr, sizeof(hdr), "the file header");
	if (err)
		return err > 0 ? (pr_warn("%s: truncated file header\n", r->path), -EINVAL) : err;
	if (rd16(r, hdr) != 2) {
		pr_warn("%s: unsupported pcap version %u.%u\n", r->path, rd16(r, hdr),
			rd16(r, hdr + 2));
		return -EINVAL;
	}
	/* the upper bits carry FCS information; the link type is the low 16 */
	linktype = rd32(r, hdr + 16) & 0xffff;
	for (;;) {
		r->record++;
		err = read_exact(r, rec, sizeof(rec), "the record header");
		if (err)
			return err > 0 ? 0 : err;
		frac = rd32(r, rec + 4);
		caplen = rd32(r, rec + 8);
		origlen = rd32(r, rec + 12);
		if (caplen > PCAP_MAX_CAPLEN) {
			pr_warn("%s: record %llu: captured length %u is larger than %u: corrupt file\n",
				r->path, (unsigned long long)r->record, caplen, PCAP_MAX_CAPLEN);
			return -EINVAL;
		}
		if (frac >= (ns ? 1000000000U : 1000000U)) {
			pr_warn("%s: record %llu: sub-second timestamp %u out of range: corrupt file\n",
				r->path, (unsigned long long)r->record, frac);
			return -EINVAL;
		}
		if (ensure_buf(r, caplen ? caplen : 1))
			return -ENOMEM;
		err = read_exact(r, r->buf, caplen, "the frame data");
		if (err)
			return err > 0 ? (pr_warn("%s: truncated: record %llu has no data\n",
						  r->path, (unsigned long long)r->record),
					  -EINVAL) :
					 err;
		ts_ns = (uint64_t)rd32(r, rec) * 1000000000ULL + (ns ? frac : frac * 1000ULL);
		err = take_frame(r, linktype, r->buf, caplen, origlen, ts_ns);
		if (err)
			return err > 0 ? 0 : err;
	}
}

/* Walks the options of an IDB for if_tsresol (9) and if_tsoffset (14). */
static void idb_options(struct reader *r, const uint8_t *p, size_t len, struct ng_iface *ifc)
{
	while (len >= 4) {
		uint16_t code = rd16(r, p), olen = rd16(r, p + 2);
		size_t padded = ((size_t)olen + 3) & ~3UL;

		if (code == 0 || padded + 4 > len)
			break;
		if (code == 9 && olen >= 1) {
			uint8_t v = p[4], e = v & 0x7f;
			uint64_t u = 1;

			/* 2^e or 10^e units per second; beyond ns we cannot represent anyway */
			if (v & 0x80)
				u = e < 63 ? 1ULL << e : 0;
			else
				for (int i = 0; i < e && u; i++)
					u = u > UINT64_MAX / 10 ? 0 : u * 10;
			ifc->ts_units = u;
		} else if (code == 14 && olen >= 8) {
			ifc->ts_offset_s = (int64_t)rd64(r, p + 4);
		}
		p += 4 + padded;
		len -= 4 + padded;
	}
}

static uint64_t ng_ts_ns(const struct ng_iface *ifc, uint32_t hi, uint32_t lo)
{
	uint64_t t = ((uint64_t)hi << 32) | lo, s = t / ifc->ts_units, frac = t % ifc->ts_units;
	unsigned __int128 ns = (unsigned __int128)frac * 1000000000ULL / ifc->ts_units;

	int64_t secs;
	uint64_t out;

	/* a hostile if_tsoffset or resolution must not wrap: such a time saturates */
	if (__builtin_add_overflow((int64_t)s, ifc->ts_offset_s, &secs) || secs < 0 ||
	    __builtin_mul_overflow((uint64_t)secs, 1000000000ULL, &out) ||
	    __builtin_add_overflow(out, (uint64_t)ns, &out))
		return s > (uint64_t)INT64_MAX || ifc->ts_offset_s > 0 ? UINT64_MAX / 2 : 0;
	return out;
}

/* The interfaces of a pcapng section (IDBs), by their id. */
struct ng_section {
	struct ng_iface *ifaces;
	uint32_t n;
};

/* A read that found the end of the file (1) inside a block: -EINVAL, said; others as they are. */
static int ng_truncated(const struct reader *r, int err)
{
	if (err <= 0)
		return err;
	pr_warn("%s: truncated: file ends inside block %llu\n", r->path,
		(unsigned long long)r->record);
	return -EINVAL;
}

/* An SHB's byte-order magic: the section's byte order, and no interfaces yet. 0 or -errno, said. */
static int ng_section_start(struct reader *r, struct ng_section *sec)
{
	uint8_t bom[4];
	uint32_t v;
	int err = read_exact(r, bom, 4, "the byte-order magic");

	if (err)
		return ng_truncated(r, err);
	memcpy(&v, bom, 4);
	if (v != PCAPNG_BOM && v != __builtin_bswap32(PCAPNG_BOM)) {
		pr_warn("%s: block %llu: bad pcapng byte-order magic 0x%08x\n", r->path,
			(unsigned long long)r->record, v);
		return -EINVAL;
	}
	r->swap = v != PCAPNG_BOM;
	sec->n = 0;
	return 0;
}

/*
 * The next block: its type, and its body in r->buf without the trailing
 * length (*len). 0, 1 at the end of the file, or -errno, said. The first
 * block is the SHB whose type the magic check consumed.
 */
static int ng_block(struct reader *r, bool first, struct ng_section *sec, uint32_t *type,
		    uint32_t *len)
{
	uint8_t hdr[8];
	uint32_t total;
	int err;

	*type = PCAPNG_SHB;
	if (!first) {
		err = read_exact(r, hdr, 4, "the block header");
		if (err)
			return err;
		memcpy(type, hdr, 4);
		if (*type != PCAPNG_SHB)
			*type = rd32(r, hdr);
	}
	err = read_exact(r, hdr + 4, 4, "the block length");
	if (err)
		return ng_truncated(r, err);
	if (*type == PCAPNG_SHB) {
		err = ng_section_start(r, sec);
		if (err)
			return err;
	}
	total = rd32(r, hdr + 4);
	if (total < 12 || total % 4 || total > PCAPNG_MAX_BLOCK ||
	    (*type == PCAPNG_SHB && total < 28)) {
		pr_warn("%s: block %llu: invalid block length %u: corrupt file\n", r->path,
			(unsigned long long)r->record, total);
		return -EINVAL;
	}
	/* the body and the trailing length; for an SHB the magic is read already */
	*len = total - 8 - (*type == PCAPNG_SHB ? 4 : 0);
	if (ensure_buf(r, *len))
		return -ENOMEM;
	err = read_exact(r, r->buf, *len, "the block body");
	if (err)
		return ng_truncated(r, err);
	if (rd32(r, r->buf + *len - 4) != total) {
		pr_warn("%s: block %llu: trailing length does not match: corrupt file\n", r->path,
			(unsigned long long)r->record);
		return -EINVAL;
	}
	*len -= 4;
	return 0;
}

/* An IDB's interface, the section's next. 0 or -errno, said. */
static int ng_idb(struct reader *r, struct ng_section *sec, const uint8_t *b, uint32_t len)
{
	struct ng_iface *ni, *ifc;

	if (len < 8 || sec->n >= PCAPNG_MAX_IFACES) {
		pr_warn("%s: block %llu: bad interface description\n", r->path,
			(unsigned long long)r->record);
		return -EINVAL;
	}
	ni = realloc(sec->ifaces, (sec->n + 1) * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	sec->ifaces = ni;
	ifc = &ni[sec->n++];
	ifc->linktype = rd16(r, b);
	ifc->snaplen = rd32(r, b + 4);
	ifc->ts_units = 1000000;
	ifc->ts_offset_s = 0;
	idb_options(r, b + 8, len - 8, ifc);
	if (!ifc->ts_units) {
		pr_warn("%s: block %llu: unsupported timestamp resolution\n", r->path,
			(unsigned long long)r->record);
		return -EINVAL;
	}
	return 0;
}

/* A packet block (EPB, OPB, SPB) into the set: take_frame's result, or -EINVAL, said. */
static int ng_packet(struct reader *r, const struct ng_section *sec, uint32_t type,
		     const uint8_t *b, uint32_t len)
{
	const struct ng_iface *ifc;
	uint32_t id, caplen, origlen;

	if (type == PCAPNG_SPB) {
		if (len < 4 || !sec->n)
			goto bad;
		ifc = &sec->ifaces[0];
		origlen = rd32(r, b);
		caplen = ifc->snaplen && origlen > ifc->snaplen ? ifc->snaplen : origlen;
		if (caplen > len - 4)
			caplen = len - 4;
		/* a simple packet block has no timestamp: it departs with the previous one */
		return take_frame(r, ifc->linktype, b + 4, caplen, origlen,
				  r->have_first ? r->last_ns - r->base_ns + r->first_ns : 0);
	}
	if (len < 20)
		goto bad;
	id = type == PCAPNG_EPB ? rd32(r, b) : rd16(r, b);
	caplen = rd32(r, b + 12);
	origlen = rd32(r, b + 16);
	if (id >= sec->n || caplen > len - 20)
		goto bad;
	ifc = &sec->ifaces[id];
	return take_frame(r, ifc->linktype, b + 20, caplen, origlen,
			  ng_ts_ns(ifc, rd32(r, b + 4), rd32(r, b + 8)));
bad:
	pr_warn("%s: block %llu: packet block with bad interface or length: corrupt file\n",
		r->path, (unsigned long long)r->record);
	return -EINVAL;
}

static int read_pcapng(struct reader *r)
{
	struct ng_section sec = {};
	uint32_t type, len;
	int err;

	for (bool first = true;; first = false) {
		r->record++;
		err = ng_block(r, first, &sec, &type, &len);
		if (err)
			break;
		if (type == PCAPNG_SHB && rd16(r, r->buf) != 1) {
			pr_warn("%s: unsupported pcapng version %u\n", r->path, rd16(r, r->buf));
			err = -EINVAL;
		} else if (type == PCAPNG_IDB) {
			err = ng_idb(r, &sec, r->buf, len);
		} else if (type == PCAPNG_EPB || type == PCAPNG_OPB || type == PCAPNG_SPB) {
			err = ng_packet(r, &sec, type, r->buf, len);
		}
		/* other blocks (name resolution, statistics, custom) carry nothing to send */
		if (err)
			break;
	}
	free(sec.ifaces);
	/* > 0: the end of the file, or take_frame had all it wanted */
	return err > 0 ? 0 : err;
}

int pcap_load(const char *path, struct frameset *fs, const struct fs_load_opts *o,
	      struct fs_skips *skips)
{
	struct reader r = {
		.path = path,
		.fs = fs,
		.o = o,
		.skips = skips,
		.base_ns = fs->n ? fs->frames[fs->n - 1].ts_ns : 0,
	};
	size_t before = fs->n;
	struct stat st;
	uint32_t magic;
	int err;

	r.last_ns = r.base_ns;
	if (!stat(path, &st))
		r.in_bytes = st.st_size;
	r.gz = gzopen(path, "rb");
	if (!r.gz) {
		err = errno ? -errno : -ENOMEM;
		pr_warn("%s: cannot open: %s\n", path, strerror(-err));
		return err;
	}
	gzbuffer(r.gz, o->io_buffer ? o->io_buffer : 256 * 1024);
	err = read_exact(&r, &magic, 4, "the magic number");
	if (err > 0) {
		pr_warn("%s: empty file\n", path);
		err = -EINVAL;
		goto out;
	} else if (err) {
		goto out;
	}
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS) {
		err = read_pcap(&r, magic);
	} else if (magic == __builtin_bswap32(PCAP_MAGIC_US) ||
		   magic == __builtin_bswap32(PCAP_MAGIC_NS)) {
		r.swap = true;
		err = read_pcap(&r, __builtin_bswap32(magic));
	} else if (magic == PCAPNG_SHB) {
		err = read_pcapng(&r);
	} else {
		pr_warn("%s: not a pcap or pcapng file (magic 0x%08x)\n", path, magic);
		err = -EINVAL;
	}
	if (!err && fs->n == before)
		pr_debug("%s: no frame taken\n", path);
out:
	gzclose(r.gz);
	free(r.buf);
	free(r.edit_buf);
	return err;
}
