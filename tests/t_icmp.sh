# SPDX-License-Identifier: GPL-2.0
# gen icmp: echo requests, each taken by the server's stack (checksums right) and answered.

test_icmp_every_echo_answered() {
	bed
	count_start --proto 1 --duration 30s --idle 1s --json "$WORK/c.json"
	tb_gen "$XR" gen icmp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --size 200 --pps 20k \
		--count 5000 --json "$WORK/g.json" -q || fail "gen icmp exited $?"
	count_wait
	expect_eq "$(jget "$WORK/g.json" sent)" 5000 "echo requests sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 5000 "ICMP frames the server counted"
	expect_eq "$(tb_srv nstat -asz IcmpInEchos | awk '/IcmpInEchos/ {print $2}')" 5000 "echo requests the server took"
	expect_eq "$(tb_srv nstat -asz IcmpInCsumErrors | awk '/IcmpInCsumErrors/ {print $2}')" 0 "ICMP checksum errors"
	expect_eq "$(tb_srv nstat -asz IcmpOutEchoReps | awk '/IcmpOutEchoReps/ {print $2}')" 5000 "echo replies"
	# the frames: sources n mod 512, identifier 0x5852, sequence number n, n in the payload
	tb_gen "$XR" gen icmp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --size 200 --count 600 \
		--pcap-out "$WORK/i.pcap" -q || fail "--pcap-out exited $?"
	python3 - "$WORK/i.pcap" <<-'PY' || fail "the echo requests"
	import struct, sys
	d = open(sys.argv[1], "rb").read()
	e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
	off, n = 24, 0
	while off + 16 <= len(d):
	    cap = struct.unpack(e + "I", d[off + 8:off + 12])[0]
	    f = d[off + 16:off + 16 + cap]
	    off += 16 + cap
	    assert len(f) == 196 and f[23] == 1 and f[34] == 8, f[:40].hex()
	    src = struct.unpack("!I", f[26:30])[0]
	    assert src == 0xC6124000 + n % 512, (n, hex(src))
	    assert struct.unpack("!HHQ", f[38:40] + f[40:42] + f[42:50]) == (0x5852, n, n), (n, f[34:50].hex())
	    n += 1
	assert n == 600, n
	PY
}
