# SPDX-License-Identifier: GPL-2.0
# probe on the test bed: what works on veth, and a peer that is not ready.

test_veth_ready() {
	bed
	tb_gen "$XR" probe -i "$TB_GEN_IF" --json "$WORK/p.json" || fail "probe exited $?"
	if live_frames; then
		expect_eq "$(jget "$WORK/p.json" checks.live_frames.ok)" True "live frames"
		expect_eq "$(jget "$WORK/p.json" checks.xdp_xmit.ok)" True "xdp_xmit to a ready peer"
	else
		# a host that refuses them: the errno and what it means, and that xsk does the rest
		expect_eq "$(jget "$WORK/p.json" checks.live_frames.ok)" False "live frames"
		jget "$WORK/p.json" checks.live_frames.detail | grep -qE "refused: EPERM|no live-frames mode" ||
			fail "what refusing means: $(jget "$WORK/p.json" checks.live_frames.detail)"
		jget "$WORK/p.json" checks.live_frames.fix | grep -q "the xsk engine" ||
			fail "the fix: $(jget "$WORK/p.json" checks.live_frames.fix)"
		jget "$WORK/p.json" checks.live_frames.fix | grep -q "kernel >=" && fail "advice about the version"
		expect_eq "$(jget "$WORK/p.json" usable)" True "usable through xsk"
	fi
	expect_eq "$(jget "$WORK/p.json" checks.afxdp_zerocopy.ok)" False "zero-copy on veth"
	jget "$WORK/p.json" checks.afxdp_zerocopy.fix | grep -q "veth has no zero-copy" || fail "zero-copy reason"
	expect_eq "$(jget "$WORK/p.json" checks.afxdp_copy.ok)" True "AF_XDP copy mode"
	# the probe's test frame reached the peer and the probe left no program behind
	tb_srv ip -o link show "$TB_SRV_IF" | grep -q xdp && fail "XDP left on the peer"
	tb_gen ip -o link show "$TB_GEN_IF" | grep -q xdp && fail "XDP left on the generator"
	# GRO gives the peer NAPI, not an XDP program: what a TCP session sends by XDP_TX would wait
	expect_eq "$(jget "$WORK/p.json" checks.veth_peer_xdp.ok)" False "the peer's XDP program (GRO only)"
	jget "$WORK/p.json" checks.veth_peer_xdp.detail | grep -q "peer $TB_SRV_IF has no XDP program" ||
		fail "the check names the peer: $(jget "$WORK/p.json" checks.veth_peer_xdp.detail)"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --http "GET /" --count 2 --wait 1s \
		>"$WORK/out" 2>&1
	grep -q "veth peer $TB_SRV_IF has no XDP program" "$WORK/out" || fail "gen tcp's warning: $(cat "$WORK/out")"
	count_start --any -q --duration 60s
	tb_gen "$XR" probe -i "$TB_GEN_IF" --json "$WORK/p.json" || fail "probe exited $?"
	expect_eq "$(jget "$WORK/p.json" checks.veth_peer_xdp.ok)" True "the peer's XDP program (count)"
	# the peer's program gone during a run: said at its end
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --http "GET /" --pps 10 --duration 2s \
		--wait 1s >"$WORK/out" 2>&1 &
	local gen=$!
	sleep 1
	kill -INT "$COUNT_PID"
	wait "$COUNT_PID"
	wait "$gen"
	grep -q "has no XDP program" "$WORK/out" && fail "warned at the start with a program there: $(cat "$WORK/out")"
	grep -q "veth peer $TB_SRV_IF lost its XDP program during the run" "$WORK/out" ||
		fail "no line for the program gone: $(cat "$WORK/out")"
	return 0
}

test_peer_not_ready() {
	bed --no-gro
	if live_frames; then
		tb_gen "$XR" probe -i "$TB_GEN_IF" --json "$WORK/p.json" >"$WORK/out"
		expect_eq "$(jget "$WORK/p.json" checks.xdp_xmit.ok)" False "xdp_xmit to a peer without NAPI"
		jget "$WORK/p.json" checks.xdp_xmit.fix | grep -q "peer has no NAPI" || fail "fix names the peer"
		# the kernel engine refuses rather than sending into the void...
		tb_gen "$XR" replay -i "$TB_GEN_IF" --engine kernel --count 10 "$TOP/pcaps/udp-64.pcap" 2>"$WORK/err"
		expect_eq $? 3 "replay --engine kernel exit status to a peer that is not ready"
		grep -q "veth peer has no NAPI" "$WORK/err" || fail "replay error: $(cat "$WORK/err")"
	fi
	# ...and auto falls back to AF_XDP, whose copy mode needs nothing on the peer, for captures and
	# for frames built per packet alike
	before=$(tb_srv cat /sys/class/net/$TB_SRV_IF/statistics/rx_packets)
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 10 --json "$WORK/r.json" "$TOP/pcaps/udp-64.pcap" 2>"$WORK/err" ||
		fail "replay with --engine auto exited $?: $(cat "$WORK/err")"
	grep -q "engine: xsk" "$WORK/err" || fail "auto did not say it chose xsk: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/r.json" sent)" 10 "sent by the xsk engine"
	after=$(tb_srv cat /sys/class/net/$TB_SRV_IF/statistics/rx_packets)
	expect_eq "$((after - before))" 10 "frames received by the peer"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --count 10 --json "$WORK/g.json" 2>"$WORK/err" ||
		fail "gen syn with --engine auto exited $?: $(cat "$WORK/err")"
	grep -q "engine: xsk" "$WORK/err" || fail "auto did not say it chose xsk: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/g.json" sent)" 10 "SYNs sent by the xsk engine"
}
