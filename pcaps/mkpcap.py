#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the sample captures in pcaps/ and the malformed ones the tests use.

Written with the standard library only, so that the bytes of every sample are
known from this file alone (an independent source for the tests).

  mkpcap.py samples DIR      the committed samples (see pcaps/README.md)
  mkpcap.py hostile DIR      corrupt, truncated, empty and hostile files
  mkpcap.py udp OUT --count N --size S [--dport P] [--format pcap|pcap-ns|pcap-swapped|pcapng] [--gap-us U]
  mkpcap.py flows OUT        TCP flows as a capture has them, for replay --sessions (tcp_flows())
"""
import argparse
import gzip
import os
import struct
import sys

GEN_MAC = bytes.fromhex("0200c6120001")  # the test bed's gen0 (c6:12 = 198.18)
SRV_MAC = bytes.fromhex("0200c6120002")  # the test bed's srv0
GEN_IP = bytes([198, 18, 0, 1])
SRV_IP = bytes([198, 18, 0, 2])


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(size, sport=1024, dport=9, payload_tag=b"", ip_id=0, payload=None, bad_csum=False):
    """An Ethernet/IPv4/UDP frame of `size` bytes (without FCS), checksums right (or the UDP one wrong)."""
    if payload is not None:
        size = 14 + 20 + 8 + len(payload)
    plen = size - 14 - 20 - 8
    if plen < 0:
        raise ValueError("frame too small for UDP")
    if payload is None:
        payload = (payload_tag + bytes(range(256)) * 12)[:plen]
    ulen = 8 + plen
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, ip_id, 0x4000, 64, 17, 0, GEN_IP, SRV_IP)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    pseudo = GEN_IP + SRV_IP + struct.pack("!BBH", 0, 17, ulen)
    udp = struct.pack("!HHHH", sport, dport, ulen, 0) + payload
    c = csum(pseudo + udp) or 0xFFFF
    if bad_csum:
        c = c ^ 0x5555 or 0x1234
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    return SRV_MAC + GEN_MAC + b"\x08\x00" + ip + udp


def dns_query(name, qid, qtype=1):
    """A DNS query as dig sends it: RD set, one question, an EDNS(0) OPT record (RFC 1035, 6891)."""
    qname = b"".join(bytes([len(l)]) + l.encode() for l in name.rstrip(".").split(".")) + b"\0"
    opt = b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0)
    return struct.pack("!HHHHHH", qid, 0x0120, 1, 0, 0, 1) + qname + struct.pack("!HH", qtype, 1) + opt


def pcap_bytes(frames, ns=False, swapped=False, linktype=1, snaplen=65535):
    """frames: list of (ts_ns, data[, orig_len])."""
    e = ">" if swapped else "<"
    magic = 0xA1B23C4D if ns else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)]
    for f in frames:
        ts, data = f[0], f[1]
        orig = f[2] if len(f) > 2 else len(data)
        frac = ts % 10**9 if ns else (ts % 10**9) // 1000
        out.append(struct.pack(e + "IIII", ts // 10**9, frac, len(data), orig) + data)
    return b"".join(out)


def ng_block(btype, body):
    body += b"\0" * (-len(body) % 4)
    total = len(body) + 12
    return struct.pack("<II", btype, total) + body + struct.pack("<I", total)


def pcapng_bytes(frames, ifaces=((1, 6),)):
    """frames: list of (ts_ns, data, iface_id); ifaces: (linktype, tsresol)."""
    out = [ng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    for linktype, tsresol in ifaces:
        opts = b""
        if tsresol != 6:
            opts = struct.pack("<HHB3x", 9, 1, tsresol) + struct.pack("<HH", 0, 0)
        out.append(ng_block(1, struct.pack("<HHI", linktype, 0, 65535) + opts))
    for ts, data, ifid in frames:
        units = ts * 10**ifaces[ifid][1] // 10**9
        out.append(ng_block(6, struct.pack("<IIIII", ifid, units >> 32, units & 0xFFFFFFFF,
                                           len(data), len(data)) + data))
    return b"".join(out)


FOREIGN_SRC_MAC = bytes.fromhex("001b21aabb01")
FOREIGN_DST_MAC = bytes.fromhex("001b21aabb02")


def foreign_frames():
    """A capture made on another network: other MACs, 10.0.0.0/8, 802.1Q VLAN 100 on every frame.

    UDP to port 9 from 20 sources 10.0.64.1-20 to 10.0.0.2 in sizes 60..1018 (five of them with no
    UDP checksum), an ICMP echo request, an ARP request (10.0.0.1 asks for 10.0.0.2) and an IPv6
    UDP datagram, which IPv4 rewrites do not fit."""
    def vlan(frame):
        return frame[:12] + b"\x81\x00" + struct.pack("!H", 100) + frame[12:]

    def ipv4(src, proto, l4, ip_id):
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), ip_id, 0x4000, 64, proto, 0, src,
                         bytes([10, 0, 0, 2]))
        return ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + l4

    frames = []
    for i in range(40):
        src = bytes([10, 0, 64, 1 + i % 20])
        payload = (b"XRFOREIGN%03d" % i + bytes(range(256)) * 4)[:18 + i * 24]
        udp = struct.pack("!HHHH", 40000 + i, 9, 8 + len(payload), 0) + payload
        c = 0 if i % 8 == 7 else (csum(src + bytes([10, 0, 0, 2]) + struct.pack("!BBH", 0, 17, len(udp)) + udp)
                                  or 0xFFFF)
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
        frames.append(FOREIGN_DST_MAC + FOREIGN_SRC_MAC + b"\x08\x00" + ipv4(src, 17, udp, i))
    icmp = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1) + b"xdpreplay"
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    frames.append(FOREIGN_DST_MAC + FOREIGN_SRC_MAC + b"\x08\x00" + ipv4(bytes([10, 0, 0, 1]), 1, icmp, 40))
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, FOREIGN_SRC_MAC, bytes([10, 0, 0, 1]), bytes(6),
                      bytes([10, 0, 0, 2]))
    frames.append(b"\xff" * 6 + FOREIGN_SRC_MAC + b"\x08\x06" + arp + bytes(18))
    six = struct.pack("!HHHH", 40100, 9, 16, 0) + b"xdpreplay"[:8]
    ip6 = struct.pack("!IHBB16s16s", 0x60000000, len(six), 17, 64, bytes.fromhex("fd00" + "00" * 13 + "01"),
                      bytes.fromhex("fd00" + "00" * 13 + "02"))
    frames.append(FOREIGN_DST_MAC + FOREIGN_SRC_MAC + b"\x86\xdd" + ip6 + six)
    return [(i * 1000, vlan(f)) for i, f in enumerate(frames)]


def tcp_frame(src, dst, sport, dport, seq, ack, flags, payload=b"", vlan=None):
    """An Ethernet/IPv4/TCP frame between the bed's MACs, checksums right; flags as a string of
    S, A, P, F, R."""
    bits = sum({"F": 1, "S": 2, "R": 4, "P": 8, "A": 16}[c] for c in flags)
    th = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, bits,
                     64240, 0, 0) + payload
    c = csum(src + dst + struct.pack("!BBH", 0, 6, len(th)) + th)
    th = th[:16] + struct.pack("!H", c) + th[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(th), 0, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    tag = b"\x81\x00" + struct.pack("!H", vlan) if vlan is not None else b""
    to_srv = dst == SRV_IP
    return (SRV_MAC + GEN_MAC if to_srv else GEN_MAC + SRV_MAC) + tag + b"\x08\x00" + ip + th


def http_get(path):
    return b"GET %s HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: mkpcap\r\nAccept: */*\r\n\r\n" % path


def tcp_flows():
    """The frames of tcp-flows.pcap (pcaps/README.md): eight TCP flows of the bed's client
    198.18.0.1 with 198.18.0.2:80, as a capture has them, and two frames that are no IPv4 TCP.
    Three can be played: A (GET /index.html in three segments, the second captured before the
    first, the first captured twice; then GET / on the same connection), G (GET /big.html, an
    802.1Q tag on every frame) and H (A's pair again after A closed, a new ISN: GET /, the same bytes
    as A's second request). The others each fail one way: B began before the capture (no SYN), C's
    server spoke first, D sent nothing, E's capture lost 10 bytes of its request, F's request is
    70,000 bytes (over 68 KiB). Responses are HTTP/1.1 200 with a Content-Length."""
    C, S = GEN_IP, SRV_IP
    out = []

    def seg(sport, cseq, sseq, who, flags, data=b"", vlan=None):
        if who == "c":
            out.append(tcp_frame(C, S, sport, 80, cseq, sseq, flags, data, vlan))
        else:
            out.append(tcp_frame(S, C, 80, sport, sseq, cseq, flags, data, vlan))

    def response(n):
        body = b"b" * n
        return b"HTTP/1.1 200 OK\r\nServer: mkpcap\r\nContent-Length: %d\r\n\r\n" % n + body

    def flow(sport, isn, sisn, steps, vlan=None, split=None, lose=None, syn=True):
        """steps: (request, response) pairs in order; split: cut request 0 into these segments,
        the second captured before the first and the first twice; lose: bytes of request 0 left
        out of the capture"""
        c, s = isn + 1, sisn + 1
        if syn:
            seg(sport, isn, 0, "c", "S", vlan=vlan)
            seg(sport, c, sisn, "s", "SA", vlan=vlan)
            seg(sport, c, s, "c", "A", vlan=vlan)
        for i, (req, resp) in enumerate(steps):
            if i == 0 and split:
                parts, at = [], 0
                for n in split:
                    parts.append((c + at, req[at:at + n]))
                    at += n
                order = [parts[1], parts[0], parts[0]] + parts[2:]
                for q, d in order:
                    seg(sport, q, s, "c", "PA", d, vlan)
            elif i == 0 and lose:
                seg(sport, c, s, "c", "PA", req[:20], vlan)
                seg(sport, c + 20 + lose, s, "c", "PA", req[20 + lose:], vlan)
            else:
                for at in range(0, len(req), 1460):
                    seg(sport, c + at, s, "c", "PA", req[at:at + 1460], vlan)
            c += len(req)
            if resp:
                seg(sport, c, s, "s", "PA", resp, vlan)
                s += len(resp)
            seg(sport, c, s, "c", "A", vlan=vlan)
        seg(sport, c, s, "c", "FA", vlan=vlan)
        seg(sport, c + 1, s, "s", "FA", vlan=vlan)
        seg(sport, c + 1, s + 1, "c", "A", vlan=vlan)

    flow(40001, 1000, 5000, [(http_get(b"/index.html"), response(600)), (http_get(b"/"), response(600))],
         split=[10, 20, 1000])
    flow(40002, 2000, 6000, [(http_get(b"/"), response(600))], syn=False)  # B
    # C: the server's banner before any client byte
    seg(40003, 3000, 0, "c", "S")
    seg(40003, 3001, 7000, "s", "SA")
    seg(40003, 3001, 7001, "c", "A")
    seg(40003, 3001, 7001, "s", "PA", b"220 mkpcap ready\r\n")
    seg(40003, 3001, 7019, "c", "PA", b"QUIT\r\n")
    flow(40004, 4000, 8000, [])  # D
    flow(40005, 5000, 9000, [(http_get(b"/index.html"), response(600))], lose=10)  # E
    flow(40006, 6000, 10000, [(b"POST /post HTTP/1.1\r\nContent-Length: 69950\r\n\r\n".ljust(70000, b"p"),
                              response(3))])  # F
    flow(40007, 7000, 11000, [(http_get(b"/big.html"), response(2000))], vlan=100)  # G
    flow(40001, 900000, 12000, [(http_get(b"/"), response(600))])  # H: A's pair again
    # no IPv4 TCP: an IPv6 frame and a UDP datagram
    v6 = SRV_MAC + GEN_MAC + b"\x86\xdd" + struct.pack("!IHBB", 0x60000000, 20, 6, 64) + bytes(32) + bytes(20)
    out.append(v6)
    out.append(udp_frame(60))
    return [(i * 1_000_000, f) for i, f in enumerate(out)]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def samples(d):
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "udp-64.pcap"), pcap_bytes([(0, udp_frame(60))]))
    write(os.path.join(d, "udp-300.pcap"), pcap_bytes([(0, udp_frame(296))]))
    three = [(i * 10_000_000, udp_frame(60 + 4 * i, dport=9, payload_tag=b"XRSEQ%03d" % i, ip_id=i), 0)
             for i in range(3)]
    write(os.path.join(d, "three.pcapng"), pcapng_bytes(three))
    # one second of 100 frames, 10 ms apart, gzip-compressed: timing tests
    spaced = [(i * 10_000_000, udp_frame(60, payload_tag=b"XRSEQ%03d" % i, ip_id=i)) for i in range(100)]
    write(os.path.join(d, "spaced-100.pcap.gz"), gzip.compress(pcap_bytes(spaced, ns=True), mtime=0))
    # PROTOCOLS.md 4.3: lora-packet's uplink U1 in a PUSH_DATA the gateway bridge accepts (227 bytes)
    push_data = bytes.fromhex("027b00000102030405060708") + (
        b'{"rxpk":[{"time":"2024-01-01T00:00:00.000000Z","tmst":1000000,"chan":0,"rfch":0,"freq":868.1,'
        b'"stat":1,"modu":"LORA","datr":"SF7BW125","codr":"4/5","rssi":-50,"lsnr":9.5,"size":17,'
        b'"data":"QPF9vkkAAgABlUN4disR/w0="}]}')
    write(os.path.join(d, "foreign.pcap"), pcap_bytes(foreign_frames()))
    write(os.path.join(d, "lorawan-u1.pcap"), pcap_bytes([(0, udp_frame(0, sport=1700, dport=1700,
                                                                        payload=push_data))]))
    write(os.path.join(d, "tcp-flows.pcap"), pcap_bytes(tcp_flows()))


def hostile(d):
    os.makedirs(d, exist_ok=True)
    good = pcap_bytes([(0, udp_frame(60)), (1000, udp_frame(60))])
    write(os.path.join(d, "empty.pcap"), b"")
    write(os.path.join(d, "badmagic.pcap"), b"\x12\x34\x56\x78" + good[4:])
    write(os.path.join(d, "truncated-header.pcap"), good[:10])
    write(os.path.join(d, "truncated-record.pcap"), good[:-7])
    write(os.path.join(d, "truncated.pcap.gz"), gzip.compress(good, mtime=0)[:-12])
    huge = bytearray(pcap_bytes([(0, udp_frame(60))]))
    struct.pack_into("<I", huge, 24 + 8, 0x7FFFFFF0)  # caplen of the first record
    write(os.path.join(d, "huge-caplen.pcap"), bytes(huge))
    write(os.path.join(d, "non-ethernet.pcap"), pcap_bytes([(0, udp_frame(60)[14:])], linktype=101))
    ng = bytearray(pcapng_bytes([(0, udp_frame(60), 0)]))
    struct.pack_into("<I", ng, 28 + 4, 0xFFFFFFF0)  # block length of the IDB
    write(os.path.join(d, "bad-block.pcapng"), bytes(ng))
    write(os.path.join(d, "garbage.pcap"), bytes((i * 37 + 11) & 0xFF for i in range(4096)))
    # mixed link types in one pcapng: the raw-IP interface's frame is skipped and counted
    mixed = pcapng_bytes([(0, udp_frame(60), 0), (1000, udp_frame(60)[14:], 1), (2000, udp_frame(64), 0)],
                         ifaces=((1, 6), (101, 9)))
    write(os.path.join(d, "mixed-linktypes.pcapng"), mixed)
    # caplen < len: truncated frames
    write(os.path.join(d, "snapped.pcap"), pcap_bytes([(0, udp_frame(60)[:40], 60), (1000, udp_frame(60))]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["samples", "hostile", "udp", "dns", "flows"])
    ap.add_argument("--names", default="example.test", help="dns: comma-separated query names")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--size", type=int, default=60)
    ap.add_argument("--dport", type=int, default=9)
    ap.add_argument("--gap-us", type=int, default=0)
    ap.add_argument("--bad-udp-csum", action="store_true", help="udp: a wrong UDP checksum in every frame")
    ap.add_argument("--format", default="pcap", choices=["pcap", "pcap-ns", "pcap-swapped", "pcapng"])
    a = ap.parse_args()
    if a.what == "samples":
        samples(a.out)
    elif a.what == "hostile":
        hostile(a.out)
    elif a.what == "flows":
        write(a.out, pcap_bytes(tcp_flows()))
    elif a.what == "dns":
        names = a.names.split(",")
        frames = [(i * 1000000, udp_frame(0, sport=33000 + i, dport=53, payload=dns_query(n, 0x1000 + i)))
                  for i, n in enumerate(names)]
        # and one frame that is not a query (a UDP datagram to port 9): skipped, and said so
        frames.append((len(names) * 1000000, udp_frame(60)))
        write(a.out, pcap_bytes(frames))
    else:
        frames = [(i * a.gap_us * 1000, udp_frame(a.size, dport=a.dport, payload_tag=b"XRSEQ%08d" % i, ip_id=i & 0xFFFF,
                                                bad_csum=a.bad_udp_csum))
                  for i in range(a.count)]
        if a.format == "pcapng":
            data = pcapng_bytes([(t, f, 0) for t, f in frames], ifaces=((1, 9),))
        else:
            data = pcap_bytes(frames, ns=a.format == "pcap-ns", swapped=a.format == "pcap-swapped")
        if a.out.endswith(".gz"):
            data = gzip.compress(data, mtime=0)
        write(a.out, data)


if __name__ == "__main__":
    sys.exit(main())
