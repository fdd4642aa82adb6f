# SPDX-License-Identifier: GPL-2.0
"""The test captures, read and written with the standard library: the frames of a pcap (either
byte order, micro- or nanosecond stamps), and the Internet checksum (RFC 1071).

The tests' Python runs with PYTHONPATH=$TOP/tests: from pcapfile import frames, checksum.
"""
import struct


def frames(path):
    """The captured bytes of each record of the pcap at path, in order."""
    d = open(path, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(d):
        cap = struct.unpack(e + "I", d[off + 8:off + 12])[0]
        out.append(d[off + 16:off + 16 + cap])
        off += 16 + cap
    return out


def write(path, frames_):
    """A microsecond pcap of Ethernet frames, all stamped 0."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for f in frames_:
        out.append(struct.pack("<IIII", 0, 0, len(f), len(f)) + f)
    open(path, "wb").write(b"".join(out))


def checksum(b):
    """The Internet checksum of b: the value to store, or 0 when b (with its checksum) verifies."""
    b += b"\0" * (len(b) % 2)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF
