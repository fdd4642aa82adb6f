# SPDX-License-Identifier: GPL-2.0
# Per-packet rewrites: BPF against the reference, checksums the server accepts, bad specs refused.

test_bpf_equals_reference() {
	"$XR" selftest --cases 100 --seed "$RANDOM" >"$WORK/out" 2>&1 || fail "$(cat "$WORK/out")"
	grep -q "^selftest rewrite: .* 0 mismatches" "$WORK/out" || fail "$(cat "$WORK/out")"
	# every part ran (exit 0 says they agreed): the histograms' regions on every CPU among them
	for part in lorawan pacer "tcp reply" mqtt "mqtt deliveries" "mqtt calls" http hist; do
		grep -q "^selftest $part: .* 0 mismatches" "$WORK/out" || fail "selftest $part: $(cat "$WORK/out")"
	done
}

test_server_accepts_rewritten_frames() {
	bed
	# a payload counter changes the UDP checksum: the server's stack must accept every datagram
	count_start --udp --dport 9 --seq payload@8:4 --duration 30s --json "$WORK/c.json"
	sink_start --count 5000 --timeout 3 --rcvbuf 4000000
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 5000 --pps 20k --rewrite payload@8:4=seq \
		--rewrite ip.id+=7 --json "$WORK/r.json" "$TOP/pcaps/three.pcapng" || fail "replay exited $?"
	wait "$SINK_PID"
	kill -INT "$COUNT_PID"
	count_wait
	# every datagram passed the stack's checks: read by the application, or (on a busy
	# machine) dropped at its full socket buffer, which is counted
	expect_eq "$(( $(wc -l <"$WORK/sink.out") + $(jget "$WORK/c.json" attribution.udp_rcvbuf_errors) ))" 5000 \
		"datagrams read by the application + socket buffer drops"
	expect_eq "$(jget "$WORK/c.json" attribution.udp_other_errors)" 0 "UDP checksum and other errors"
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.InCsumErrors)" 0 "UDP InCsumErrors"
	expect_eq "$(jget "$WORK/c.json" sequence.lost)" 0 "lost (payload sequence)"
	expect_eq "$(jget "$WORK/c.json" sequence.received)" 5000 "received (payload sequence)"
}

test_bad_specs_refused() {
	bed
	# unknown field, width 3, bad values, modulus too large, no value, the IPv4 checksum itself,
	# past the frame, reversed range, a protocol or IP version the frame does not have
	for spec in "tcp.window=seq" "u24be@40=seq" "u32be@40=banana" "ip.id=seq%70000" "ip.id" \
		"u16be@24=seq" "u32be@100=seq" "payload@16:4=seq" "udp.sport=5-1" "tcp.sport=1-2" \
		"ip6.src=2001:db8::/64" "ip.src=300.1.1.1" "ip6.dst=2001:db8::/48" "u8@22=300" "u16be@24=5"; do
		tb_gen "$XR" replay -i "$TB_GEN_IF" --rewrite "$spec" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>"$WORK/err"
		expect_eq $? 2 "exit status for --rewrite $spec"
		expect_eq "$(wc -l <"$WORK/err")" 1 "one line for --rewrite $spec: $(cat "$WORK/err")"
		grep -q -- "$spec" "$WORK/err" || fail "the error does not name $spec: $(cat "$WORK/err")"
	done
	# nine per-packet ops (constants do not count)
	tb_gen "$XR" replay -i "$TB_GEN_IF" --rewrite ip.id=seq --rewrite udp.sport=seq --rewrite u8@22=9 \
		--rewrite payload@0:2=seq --rewrite payload@2:2=seq --rewrite payload@4:2=seq \
		--rewrite payload@6:2=seq --rewrite payload@8:2=seq --rewrite payload@10:2=seq \
		--rewrite payload@12:2=seq "$TOP/pcaps/udp-64.pcap" 2>"$WORK/err"
	expect_eq $? 2 "exit status for nine per-packet ops"
	grep -q "payload@12:2=seq: too many per-packet ops (8 at most" "$WORK/err" || fail "nine ops: $(cat "$WORK/err")"
	# a payload field on a frame captured too short to hold it
	tb_gen "$XR" replay -i "$TB_GEN_IF" --rewrite payload@0:4=seq --allow-truncated \
		"$WORK/hostile/snapped.pcap" 2>"$WORK/err"
	expect_eq $? 2 "exit status for a payload field on a truncated frame"
	grep -q "frame 1" "$WORK/err" || fail "the error does not name the frame: $(cat "$WORK/err")"
	# csum=auto on a frame that is not IP
	python3 - "$WORK/arp.pcap" <<-'PY'
	import struct, sys
	frame = bytes.fromhex("ffffffffffff0200c61200010806") + bytes(28)
	open(sys.argv[1], "wb").write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) +
	                              struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
	PY
	tb_gen "$XR" replay -i "$TB_GEN_IF" --rewrite csum=auto "$WORK/arp.pcap" 2>"$WORK/err"
	expect_eq $? 2 "exit status for csum=auto on a non-IP frame"
	grep -q "frame 1 is not IP" "$WORK/err" || fail "csum=auto error: $(cat "$WORK/err")"
	# nothing was sent
	expect_eq "$(tb_srv cat /sys/class/net/$TB_SRV_IF/statistics/rx_packets | awk '{print ($1 < 20)}')" 1 \
		"frames received after refused specs"
}

test_source_pool_per_source_sequence() {
	bed
	# 512 sources taking turns, each with its own sequence in the IPv4 ID: n / 512
	count_start --udp --dport 9 --seq ip.id --drop --idle 1s --duration 30s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 51200 --pps 200k --rewrite ip.src=198.18.64.0/23 \
		--rewrite ip.id=seq/512 --rewrite udp.sport=5000-5000 --json "$WORK/r.json" \
		"$TOP/pcaps/udp-64.pcap" || fail "replay exited $?"
	count_wait
	expect_eq "$(jget "$WORK/c.json" sequence.flow_count)" 512 "flows (sources)"
	expect_eq "$(jget "$WORK/c.json" sequence.received)" 51200 "received in sequence"
	expect_eq "$(jget "$WORK/c.json" sequence.lost)" 0 "lost"
	expect_eq "$(jget "$WORK/c.json" sequence.duplicated)" 0 "duplicated"
	python3 - "$WORK/c.json" <<-'PY' || fail "per-source counts"
	import json, sys
	flows = json.load(open(sys.argv[1]))["sequence"]["flows"]
	srcs = sorted(f["src"] for f in flows)
	assert len(set(srcs)) == 512 and all(f["received"] == 100 and f["sport"] == 5000 for f in flows), flows[:3]
	assert srcs[0].startswith("198.18.64.") and all(s.startswith(("198.18.64.", "198.18.65.")) for s in srcs)
	PY
}

test_first_seq_continues() {
	bed
	# gen udp stamps n in the payload; a second run that starts where the first ended continues
	# the flow's sequence without a duplicate or a gap
	count_start --udp --dport 9 --seq payload@0:8 --drop --duration 30s --json "$WORK/c.json"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --sport 5000-5000 --count 1000 --pps 10k -q ||
		fail "first run"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --sport 5000-5000 --count 1000 --pps 10k -q \
		--first-seq 1000 || fail "second run"
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" sequence.received)" 2000 "received in sequence"
	expect_eq "$(jget "$WORK/c.json" sequence.lost)" 0 "lost"
	expect_eq "$(jget "$WORK/c.json" sequence.duplicated)" 0 "duplicated"
	expect_eq "$(jget "$WORK/c.json" sequence.flow_count)" 1 "flows"
}

# A capture made on another network (other MACs, 10.0.0.0/8, a VLAN tag on every frame; see
# pcaps/README.md) replays onto the test bed with one command: the server takes every frame with
# valid checksums, and the frames that reach it are byte for byte those that tcprewrite (--pnat,
# --enet-vlan=del, --enet-smac/dmac, --fixcsum) and tcpreplay deliver from the same capture.
test_static_rewrites_match_tcprewrite() {
	command -v tcprewrite >/dev/null && command -v tcpreplay >/dev/null || skip "tcpreplay not installed"
	bed
	local r
	for r in ours theirs; do
		# --immediate-mode is TPACKET_V2, a slot per frame of the snapshot length: with -s 0 (256 KiB)
		# and the default 2 MiB ring, 8 slots, which a busy host's tcpdump let overflow (24 of 54
		# dropped) or drained 10 s late; the capture's frames are at most 1522 bytes
		ip netns exec "$TB_NS_SRV" tcpdump -i "$TB_SRV_IF" --immediate-mode -B 8192 -Q in -w "$WORK/$r.pcap" -s 2048 -U -q 'not ip6' 2>"$WORK/$r.log" &
		eval "TD_$r=\$!"
		tcpdump_ready "$WORK/$r.log" "$!"
	done
	count_start --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --pps 1k --vlan-strip --map-ip 10.0.0.0/8=198.18.0.0/15 \
		--src-mac auto --dst-mac "$TB_SRV_MAC" --misfit skip --json "$WORK/r.json" "$TOP/pcaps/foreign.pcap" ||
		fail "replay exited $?"
	# tcpdump -U writes each frame as it comes: it is done when the file has them all (a busy host's
	# tcpdump was still behind 0.5 s after the last frame)
	wait_until 10 "tcpdump wrote the 42 frames" pcap_has "$WORK/ours.pcap" 42
	kill -INT "$TD_ours"
	wait "$TD_ours"
	expect_eq "$(jget "$WORK/r.json" sent)" 43 "frames sent (the IPv6 one too: its tag and MACs changed)"
	expect_eq "$(jget "$WORK/r.json" static_rewrites.misfits_skipped)" 0 "misfits left out"
	expect_eq "$(jget "$WORK/r.json" static_rewrites.changed)" 43 "frames changed"
	# the server took them all: 40 UDP datagrams to port 9, one echo request answered, one ARP request
	expect_eq "$(tb_srv nstat -asz UdpNoPorts | awk '/UdpNoPorts/ {print $2}')" 40 "UDP datagrams to port 9 (no socket)"
	expect_eq "$(tb_srv nstat -asz IcmpInEchos | awk '/IcmpInEchos/ {print $2}')" 1 "echo requests the server took"
	# the same capture through tcprewrite and tcpreplay
	tcprewrite --infile="$TOP/pcaps/foreign.pcap" --outfile="$WORK/tr.pcap" --enet-vlan=del \
		--pnat=10.0.0.0/8:198.18.0.0/15 --enet-smac="$TB_GEN_MAC" --enet-dmac="$TB_SRV_MAC" --fixcsum \
		>"$WORK/tr.out" 2>&1 || fail "tcprewrite exited $?: $(cat "$WORK/tr.out")"
	tb_gen tcpreplay -i "$TB_GEN_IF" --pps 1000 "$WORK/tr.pcap" >"$WORK/tp.out" 2>&1 ||
		fail "tcpreplay exited $?: $(cat "$WORK/tp.out")"
	# --dst-mac auto: each IPv4 frame's destination from the neighbour table (the ARP request keeps
	# its broadcast address)
	tb_gen "$XR" replay -i "$TB_GEN_IF" --pps 1k --vlan-strip --map-ip 10.0.0.0/8=198.18.0.0/15 \
		--src-mac auto --dst-mac auto --misfit skip --json "$WORK/r2.json" "$TOP/pcaps/foreign.pcap" ||
		fail "replay with --dst-mac auto exited $?"
	wait_until 10 "tcpdump wrote the 126 frames" pcap_has "$WORK/theirs.pcap" 126
	kill -INT "$TD_theirs"
	wait "$TD_theirs"
	# (tcpdump in --immediate mode: TPACKET_V3 hands over a block only when it fills or times out)
	kill -INT "$COUNT_PID"
	count_wait
	# three runs of 40 datagrams, 1 echo request, 1 ARP request, and but for --dst-mac auto's (no IPv6
	# neighbour lookup: a misfit, left out) the IPv6 datagram
	expect_eq "$(jget "$WORK/r2.json" static_rewrites.misfits_skipped)" 1 "--dst-mac auto: misfits left out (IPv6)"
	expect_eq "$(jget "$WORK/c.json" matched)" $((3 * 41 + 2)) "IP frames the server counted"
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.InCsumErrors)" 0 "UDP InCsumErrors"
	expect_eq "$(jget "$WORK/c.json" kernel.Ip.InHdrErrors)" 0 "IP InHdrErrors"
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.NoPorts)" 120 "UDP datagrams to port 9 (no socket)"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/ours.pcap" "$WORK/theirs.pcap" <<-'PY' || fail "the frames differ"
	import sys
	from pcapfile import frames
	ours, theirs = frames(sys.argv[1]), frames(sys.argv[2])
	# the second saw all three runs: ours, tcpreplay's, ours with --dst-mac auto
	assert len(ours) == 42 and len(theirs) == 126, (len(ours), len(theirs))
	for name, b in (("tcpreplay", theirs[42:84]), ("--dst-mac auto", theirs[84:])):
	    bad = [i for i in range(42) if ours[i] != b[i] and not (name != "tcpreplay" and i == 41)]
	    assert not bad, "%s: frames %s differ, first: %s / %s" % (name, bad, ours[bad[0]].hex(), b[bad[0]].hex())
	assert theirs[84 + 41][:6] == b"\xff" * 6, "--dst-mac auto changed the ARP request's broadcast address"
	PY
}

# --pcap-out writes, without sending, the frames a run would send: byte for byte those that reach
# the server when the same command sends them (static rewrites, per-packet ops, --misfit skip)
test_pcap_out_equals_the_wire() {
	bed
	local args=(-i "$TB_GEN_IF" --pps 2k --count 300 --vlan-strip --map-ip 10.0.0.0/8=198.18.0.0/15
		--src-mac auto --dst-mac "$TB_SRV_MAC" --rewrite ip.id=seq --rewrite udp.sport=5000-5099
		--misfit skip "$TOP/pcaps/foreign.pcap")
	tb_gen "$XR" replay "${args[@]}" --pcap-out "$WORK/out.pcap" >"$WORK/dry.out" 2>&1 ||
		fail "replay --pcap-out exited $?: $(cat "$WORK/dry.out")"
	grep -q "wrote 300 frames" "$WORK/dry.out" || fail "$(cat "$WORK/dry.out")"
	count_start --udp --dport 9 --duration 30s --json "$WORK/c.json"
	capture_start "$WORK/wire.pcap" udp
	tb_gen "$XR" replay "${args[@]}" --json "$WORK/r.json" -q || fail "replay exited $?"
	capture_stop
	kill -INT "$COUNT_PID"
	count_wait
	# 40 of the capture's 43 frames fit udp.sport: the echo request, the ARP request and IPv6 do not
	expect_eq "$(jget "$WORK/r.json" rewrite_misfits.left_out)" 3 "frames the ops do not fit, left out"
	expect_eq "$(jget "$WORK/r.json" sent)" 300 "frames sent"
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.InCsumErrors)" 0 "UDP InCsumErrors"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/out.pcap" "$WORK/wire.pcap" <<-'PY' || fail "--pcap-out's frames are not the wire's"
	import sys
	from pcapfile import frames
	dry, wire = frames(sys.argv[1]), frames(sys.argv[2])
	assert len(dry) == 300 and len(wire) == 300, (len(dry), len(wire))
	bad = [i for i in range(300) if dry[i] != wire[i]]
	assert not bad, "frames %s differ, first: %s / %s" % (bad[:10], dry[bad[0]].hex(), wire[bad[0]].hex())
	PY
	# a protocol that builds its frames in BPF as it sends them cannot write them ahead
	"$XR" lorawan fleet --devices 10 --gateways 1 --out "$WORK/f" -q || fail "fleet"
	run_bad 2 "--pcap-out: lorawan send builds each frame" tb_gen "$XR" lorawan send -i "$TB_GEN_IF" \
		--fleet "$WORK/f" --server "$TB_SRV_IP" --pcap-out "$WORK/x.pcap"
	[ ! -e "$WORK/x.pcap" ] || fail "lorawan send wrote $WORK/x.pcap"
}

# --dst-mac auto without a neighbour entry for a frame's destination: one line naming it, exit 3
test_dst_mac_auto_without_neighbour() {
	bed
	tb_gen ip neigh del "$TB_SRV_IP" dev "$TB_GEN_IF" || fail "cannot delete the neighbour entry"
	run_bad 3 "--dst-mac auto: frame 1: no neighbour entry for 198.18.0.2 on $TB_GEN_IF" tb_gen "$XR" replay \
		-i "$TB_GEN_IF" --count 5 --vlan-strip --map-ip 10.0.0.0/8=198.18.0.0/15 --dst-mac auto \
		"$TOP/pcaps/foreign.pcap"
}

# The other static rewrites against tcprewrite's, frame by frame through --pcap-out: an 802.1Q
# tag pushed (VID 7, priority 3), port 9 mapped to 7, TTL + 5, IPv4 packets cut to a 576-byte MTU.
# Where the two differ by design: a cut UDP datagram's length field (tcprewrite keeps 906 > 548,
# which a server drops; ours says 556) and so its checksum; IPv6 (tcprewrite also changes its hop
# limit and ports, ours leaves it: a misfit).
test_static_rewrites_vlan_ttl_ports_mtu() {
	command -v tcprewrite >/dev/null || skip "tcpreplay not installed"
	bed
	tcprewrite --infile="$TOP/pcaps/foreign.pcap" --outfile="$WORK/base.pcap" --enet-vlan=del \
		--pnat=10.0.0.0/8:198.18.0.0/15 --fixcsum >/dev/null 2>&1 || fail "tcprewrite (base)"
	tcprewrite --infile="$WORK/base.pcap" --outfile="$WORK/theirs.pcap" --enet-vlan=add --enet-vlan-tag=7 \
		--enet-vlan-pri=3 --enet-vlan-cfi=0 --portmap=9:7 --ttl=+5 --mtu-trunc --mtu=576 --fixcsum \
		>/dev/null 2>&1 || fail "tcprewrite"
	tb_gen ip link set "$TB_GEN_IF" mtu 576 || fail "mtu"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --vlan-push 7:3 --map-port 9=7 --ttl +5 --mtu-trunc \
		--pcap-out "$WORK/ours.pcap" "$WORK/base.pcap" >"$WORK/out" 2>&1 ||
		fail "replay --pcap-out exited $?: $(cat "$WORK/out")"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/ours.pcap" "$WORK/theirs.pcap" <<-'PY' || fail "the frames differ"
	import struct, sys
	from pcapfile import checksum, frames
	ours, theirs = frames(sys.argv[1]), frames(sys.argv[2])
	assert len(ours) == len(theirs) == 43, (len(ours), len(theirs))
	cut = 0
	for i, (a, b) in enumerate(zip(ours, theirs)):
	    if struct.unpack("!H", a[16:18])[0] == 0x86DD:
	        continue  # IPv6: a misfit here
	    ip = 18
	    if a[16:18] == b"\x08\x00" and struct.unpack("!H", b[ip + 2:ip + 4])[0] == 576 and len(a) > 500:
	        cut += 1
	        # all the same but the UDP length and checksum; ours whole and verifying
	        assert a[:ip + 24] == b[:ip + 24] and a[ip + 28:] == b[ip + 28:], i
	        assert struct.unpack("!H", a[ip + 24:ip + 26])[0] == 556, i
	        if a[ip + 26:ip + 28] != b"\0\0":
	            assert not checksum(a[ip + 12:ip + 20] + struct.pack("!BBH", 0, 17, 556) + a[ip + 20:]), i
	        continue
	    assert a == b, "frame %d: %s / %s" % (i + 1, a.hex(), b.hex())
	assert cut == 17, cut  # the datagrams of 24 to 40, 596 to 982 bytes of IP
	PY
}

# FIELD=CONST specs are written once into the frames as the set is built (any offset, even 0),
# checksums fixed, beside 8 per-packet ops: the server takes every datagram
test_constants_beside_per_packet_ops() {
	bed
	count_start --udp --dport 7 --duration 30s --json "$WORK/c.json"
	capture_start "$WORK/wire.pcap" udp
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 500 --pps 5k --rewrite u32be@0=0x0200c612 \
		--rewrite u8@22=33 --rewrite payload@0:4=0xdeadbeef --rewrite udp.dport=7 --rewrite ip.id=seq \
		--rewrite udp.sport=seq --rewrite payload@4:4=seq --rewrite payload@8:2+=3 --rewrite payload@10:1=seq%7 \
		--rewrite ip.dst=198.18.0.2 --rewrite payload@12:4=seq/2 --json "$WORK/r.json" -q "$TOP/pcaps/udp-64.pcap" ||
		fail "replay exited $?"
	capture_stop
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 500 "datagrams the server counted"
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.InCsumErrors)" 0 "UDP InCsumErrors"
	expect_eq "$(jget "$WORK/c.json" kernel.Ip.InHdrErrors)" 0 "IP InHdrErrors"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/wire.pcap" <<-'PY' || fail "the frames on the wire"
	import struct, sys
	from pcapfile import frames
	n = 0
	for f in frames(sys.argv[1]):
	    assert f[:4] == bytes.fromhex("0200c612") and f[22] == 33 and f[42:46] == bytes.fromhex("deadbeef"), f.hex()
	    assert struct.unpack("!HHI", f[34:36] + f[36:38] + f[46:50]) == (n, 7, n), (n, f.hex())
	    assert f[52] == n % 7 and struct.unpack("!I", f[54:58])[0] == n // 2, (n, f.hex())
	    assert struct.unpack("!H", f[50:52])[0] == (0x0809 + 3 * n) & 0xFFFF, (n, f.hex())
	    n += 1
	assert n == 500, n
	PY
}

# IPv6 static rewrites through --pcap-out, held against frames built from scratch here: the maps
# on both addresses (fd00::/64 into 2001:db8:1::/48: the bits below /48 kept), UDP port 9 to 7, hop
# limit 10; the UDP, TCP and ICMPv6 checksums (pseudo-headers) right
test_static_rewrites_ipv6() {
	bed
	PYTHONPATH="$TOP/tests" python3 - "$WORK" <<-'PY' || fail "cannot write the IPv6 capture"
	import ipaddress, struct, sys
	from pcapfile import checksum, write
	def frame(src, dst, nh, l4, hlim):
	    s, d = ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed
	    at = {17: 6, 6: 16, 58: 2}[nh]
	    l4 = l4[:at] + b"\0\0" + l4[at + 2:]
	    c = checksum(s + d + struct.pack("!IxxxB", len(l4), nh) + l4) or (0xFFFF if nh == 17 else 0)
	    l4 = l4[:at] + struct.pack("!H", c) + l4[at + 2:]
	    ip = struct.pack("!IHBB", 0x60000000, len(l4), nh, hlim) + s + d
	    return bytes.fromhex("0200c61200020200c6120001") + b"\x86\xdd" + ip + l4
	def frames(src, dst, sport, dport, hlim):
	    udp = struct.pack("!HHHH", sport, dport, 8 + 20, 0) + bytes(range(20))
	    tcp = struct.pack("!HHIIBBHHH", sport, 80, 12345, 0, 0x50, 0x02, 64240, 0, 0)
	    icmp = struct.pack("!BBHHH", 128, 0, 0, 0x5852, 7) + b"xdpreplay"
	    return [frame(src, dst, 17, udp, hlim), frame(src, dst, 6, tcp, hlim), frame(src, dst, 58, icmp, hlim)]
	write(sys.argv[1] + "/v6.pcap", frames("fd00::1:2", "fd00::2", 40000, 9, 64))
	# what the rewrites must give: built from scratch, checksums computed here
	write(sys.argv[1] + "/want.pcap", frames("2001:db8:1:0:0:0:1:2", "2001:db8:1::2", 40000, 7, 10))
	PY
	tb_gen "$XR" replay -i "$TB_GEN_IF" --map-ip fd00::/64=2001:db8:1::/48 --map-port 9=7 --ttl 10 \
		--pcap-out "$WORK/out.pcap" "$WORK/v6.pcap" >"$WORK/out" 2>&1 || fail "replay exited $?: $(cat "$WORK/out")"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/out.pcap" "$WORK/want.pcap" <<-'PY' || fail "the IPv6 frames"
	import sys
	from pcapfile import frames
	got, want = frames(sys.argv[1]), frames(sys.argv[2])
	assert len(got) == len(want) == 3, (len(got), len(want))
	for i, (a, b) in enumerate(zip(got, want)):
	    assert a == b, "frame %d: %s / %s" % (i + 1, a.hex(), b.hex())
	PY
	run_bad 2 "--map-ip: 'fd00::/64=10.0.0.0/8' is not FROM=TO" "$XR" replay -i lo --map-ip fd00::/64=10.0.0.0/8 x.pcap
}

# --misfit send with per-packet ops: the frames the ops do not fit (the echo request, the ARP request,
# the IPv6 datagram) go as they are, the others rewritten; what reaches the server is what
# --pcap-out wrote, and the misfits are byte for byte the static rewrites' frames alone
test_misfit_send_with_ops() {
	bed
	local base=(-i "$TB_GEN_IF" --vlan-strip --map-ip 10.0.0.0/8=198.18.0.0/15 --src-mac auto
		--dst-mac "$TB_SRV_MAC" --misfit send "$TOP/pcaps/foreign.pcap")
	local ops=(--rewrite udp.sport=5000-5099 --rewrite ip.id=seq)
	tb_gen "$XR" replay "${base[@]}" "${ops[@]}" --count 86 --pcap-out "$WORK/dry.pcap" -q || fail "--pcap-out exited $?"
	tb_gen "$XR" replay "${base[@]}" --count 43 --pcap-out "$WORK/static.pcap" -q || fail "--pcap-out (static) exited $?"
	count_start --duration 30s --json "$WORK/c.json"
	capture_start "$WORK/wire.pcap"
	tb_gen "$XR" replay "${base[@]}" "${ops[@]}" --count 86 --pps 2k --json "$WORK/r.json" -q || fail "replay exited $?"
	capture_stop
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/r.json" sent)" 86 "frames sent"
	expect_eq "$(jget "$WORK/r.json" rewrite_misfits.sent_as_they_were)" 3 "frames the ops do not fit, sent as they are"
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.InCsumErrors)" 0 "UDP InCsumErrors"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/dry.pcap" "$WORK/wire.pcap" "$WORK/static.pcap" <<-'PY' || fail "the frames"
	import struct, sys
	from pcapfile import frames
	dry, static = frames(sys.argv[1]), frames(sys.argv[3])
	# what reached the server from us (no answers: -Q in), in order
	wire = [f for f in frames(sys.argv[2]) if f[6:12] == bytes.fromhex("0200c6120001")]
	assert len(dry) == 86 and len(wire) == 86 and len(static) == 43, (len(dry), len(wire), len(static))
	for i in range(86):
	    assert dry[i] == wire[i], "frame %d: %s / %s" % (i, dry[i].hex(), wire[i].hex())
	    udp4 = static[i % 43][12:14] == b"\x08\x00" and static[i % 43][23] == 17
	    if udp4:
	        assert dry[i] != static[i % 43] and struct.unpack("!H", dry[i][18:20])[0] == i, i
	    else:
	        assert dry[i] == static[i % 43], "misfit %d changed: %s" % (i, dry[i].hex())
	PY
}

# The same run through each engine puts the same frames on the wire, byte for byte: plan ops on a
# capture, a SYN pool, LoRaWAN uplinks (the clock's tmst and the checksum over it aside; count's
# UDP InCsumErrors holds every checksum). Where live frames work, kernel against xsk; elsewhere two
# xsk runs (the same frames run to run, and the comparison itself exercised)
test_engines_send_the_same_frames() {
	local engines=(xsk xsk) run e
	live_frames && engines=(kernel xsk)
	bed
	"$XR" lorawan fleet --devices 50 --gateways 6 --heard-by 2 --seed 9 --out "$WORK/f" -q || fail "fleet"
	count_start --any --duration 120s --json "$WORK/c.json"
	for run in 0 1; do
		e=${engines[$run]}
		capture_start "$WORK/wire$run.pcap" udp or tcp
		tb_gen "$XR" replay -i "$TB_GEN_IF" --engine "$e" --pps 5k --count 300 --rewrite ip.id=seq \
			--rewrite udp.sport=5000-5099 -q "$TOP/pcaps/three.pcapng" || fail "replay ($e) exited $?"
		tb_gen "$XR" gen syn -i "$TB_GEN_IF" --engine "$e" --dst "$TB_SRV_IP:80" --src 198.18.64.0/26 \
			--seed 7 --pps 5k --count 200 --wait 0 -q || fail "gen syn ($e) exited $?"
		tb_gen "$XR" lorawan send -i "$TB_GEN_IF" --engine "$e" --fleet "$WORK/f" --server "$TB_SRV_IP" \
			--pps 5k --count 200 --wait 0 -q || fail "lorawan send ($e) exited $?"
		capture_stop
	done
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" kernel.Udp.InCsumErrors)" 0 "UDP InCsumErrors"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/wire0.pcap" "$WORK/wire1.pcap" "${engines[@]}" <<-'PY' ||
	import re, sys
	from pcapfile import frames
	def ours(f):
	    # the run's frames, not the server's answers (its RSTs) nor a Semtech server's
	    return f[26:30] != bytes([198, 18, 0, 2])
	def masked(f):
	    if len(f) > 44 and f[36:38] == bytes([0x06, 0xa4]):  # to UDP port 1700: a PUSH_DATA
	        f = re.sub(rb'"tmst":[0-9]{10}', b'"tmst":0000000000', f)
	        f = f[:40] + b"\0\0" + f[42:]
	    return f
	a = [masked(f) for f in frames(sys.argv[1]) if ours(f)]
	b = [masked(f) for f in frames(sys.argv[2]) if ours(f)]
	assert len(a) == len(b) == 700, (len(a), len(b))
	bad = [i for i in range(700) if a[i] != b[i]]
	assert not bad, "%s and %s: frames %s differ, first: %s / %s" % (sys.argv[3], sys.argv[4], bad[:10],
	                                                                 a[bad[0]].hex(), b[bad[0]].hex())
	print("%s and %s: 700 frames, byte for byte" % (sys.argv[3], sys.argv[4]))
	PY
		fail "the engines' frames differ"
}
