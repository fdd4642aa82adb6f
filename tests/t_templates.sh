# SPDX-License-Identifier: GPL-2.0
# gen's templates beyond UDP: ICMP echo requests, 802.1Q-tagged frames; each taken by the server's stack.

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
	PYTHONPATH="$TOP/tests" python3 - "$WORK/i.pcap" <<-'PY' || fail "the echo requests"
	import struct, sys
	from pcapfile import frames
	n = 0
	for f in frames(sys.argv[1]):
	    assert len(f) == 196 and f[23] == 1 and f[34] == 8, f[:40].hex()
	    src = struct.unpack("!I", f[26:30])[0]
	    assert src == 0xC6124000 + n % 512, (n, hex(src))
	    assert struct.unpack("!HHQ", f[38:40] + f[40:42] + f[42:50]) == (0x5852, n, n), (n, f[34:50].hex())
	    n += 1
	assert n == 600, n
	PY
}

# --vlan: tagged frames, every field where it belongs, each one reaching the server's interface
# (this kernel has no 802.1Q devices, CONFIG_VLAN_8021Q unset: the server's XDP counter, which
# passes them on, and a capture see them; its stack cannot take them)
test_vlan_tagged_frames() {
	bed
	# --idle 3s: two senders, one after the other; the second's start (loading its programs) can
	# take more than a second on a busy machine
	count_start --any --duration 30s --idle 3s --json "$WORK/c.json"
	capture_start "$WORK/v.pcap" vlan
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --src 198.18.64.0/23 --vlan 42:3 --size 128 \
		--pps 10k --count 1000 -q --json "$WORK/u.json" || fail "gen udp --vlan exited $?"
	tb_gen "$XR" gen icmp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --vlan 42 --pps 10k --count 500 -q ||
		fail "gen icmp --vlan exited $?"
	capture_stop
	count_wait
	expect_eq "$(jget "$WORK/u.json" sent)" 1000 "tagged datagrams sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 1500 "frames at the server's interface"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/v.pcap" <<-'PY' || fail "the tagged frames"
	import struct, sys
	from pcapfile import checksum, frames
	udp, icmp = 0, 0
	for f in frames(sys.argv[1]):
	    tpid, tci, etype = struct.unpack("!HHH", f[12:18])
	    ip = f[18:]
	    assert tpid == 0x8100 and etype == 0x0800 and not checksum(ip[:20]), f[:40].hex()
	    if ip[9] == 17:
	        assert tci == 3 << 13 | 42 and len(f) == 124, (hex(tci), len(f))
	        seg = ip[20:struct.unpack("!H", ip[2:4])[0]]
	        assert not checksum(ip[12:20] + struct.pack("!BBH", 0, 17, len(seg)) + seg), f.hex()
	        udp += 1
	    else:
	        assert tci == 42 and ip[9] == 1 and not checksum(ip[20:struct.unpack("!H", ip[2:4])[0]]), f.hex()
	        icmp += 1
	assert (udp, icmp) == (1000, 500), (udp, icmp)
	PY
	run_bad 2 "--vlan: '4096' is not VID" "$XR" gen udp -i lo --dst 198.18.0.2 --vlan 4096
	run_bad 2 "unknown option '--vlan'" "$XR" gen syn -i lo --dst 198.18.0.2 --vlan 5
}
