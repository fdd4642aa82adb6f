# SPDX-License-Identifier: GPL-2.0
# Per-packet rewrites: BPF against the reference, checksums the server accepts, bad specs refused.

test_bpf_equals_reference() {
	"$XR" selftest --cases 100 --seed "$RANDOM" >"$WORK/out" 2>&1 || fail "$(cat "$WORK/out")"
	grep -q "^selftest rewrite: .* 0 mismatches" "$WORK/out" || fail "$(cat "$WORK/out")"
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
		"ip6.src=2001:db8::/64" "ip.src=300.1.1.1" "ip6.dst=2001:db8::/48"; do
		tb_gen "$XR" replay -i "$TB_GEN_IF" --rewrite "$spec" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>"$WORK/err"
		expect_eq $? 2 "exit status for --rewrite $spec"
		expect_eq "$(wc -l <"$WORK/err")" 1 "one line for --rewrite $spec: $(cat "$WORK/err")"
		grep -q -- "$spec" "$WORK/err" || fail "the error does not name $spec: $(cat "$WORK/err")"
	done
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
