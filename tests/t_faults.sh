# SPDX-License-Identifier: GPL-2.0
# Faults as outcomes: the device goes down or away in the middle of a run, the disk is full, a
# command is killed. Each ends promptly with exact accounting and a clear line, and leaves nothing.

# xr_bg ARGS...: xdpreplay in the generator namespace in the background, $! is xdpreplay itself
xr_bg() { ip netns exec "$TB_NS_GEN" "$XR" "$@" & }

test_interface_down_mid_run() {
	local engines=xsk
	live_frames && engines="kernel xsk"
	bed
	for engine in $engines; do
		xr_bg replay -i "$TB_GEN_IF" --engine $engine --pps 20k --duration 6s --json "$WORK/r.json" -q \
			"$TOP/pcaps/udp-64.pcap" 2>"$WORK/err"
		pid=$!
		sleep 1.5
		tb_gen ip link set "$TB_GEN_IF" down
		start=$(date +%s)
		wait "$pid"
		rc=$?
		took=$(($(date +%s) - start))
		tb_gen ip link set "$TB_GEN_IF" up
		[ "$rc" -eq 1 ] || [ "$rc" -eq 3 ] || fail "$engine: exit $rc with the interface down: $(cat "$WORK/err")"
		[ "$took" -le 7 ] || fail "$engine: took $took s to end after the interface went down"
		python3 - "$WORK/r.json" $engine <<-'PY' || fail "$engine: accounting with the interface down"
		import json, sys
		r, engine = json.load(open(sys.argv[1])), sys.argv[2]
		f = r["failed_reasons"]
		assert r["sent"] + r["failed"] == r["asked"] == 120000, r
		assert sum(f.values()) == r["failed"] and f["unaccounted"] == 0, f
		assert r["failed"] > 0, r
		# not sent because of the device, not "interrupted" (no signal) or "duration" (it was due)
		assert f["interrupted"] == 0 and f["duration_reached"] == 0, f
		PY
	done
}

test_veth_deleted_mid_run() {
	bed
	count_start --udp --dport 9 --duration 30s --json "$WORK/c.json"
	xr_bg replay -i "$TB_GEN_IF" --pps 20k --duration 6s --json "$WORK/r.json" -q "$TOP/pcaps/udp-64.pcap" \
		2>"$WORK/err"
	pid=$!
	sleep 1.5
	tb_gen ip link del "$TB_GEN_IF"
	wait "$pid"
	rc=$?
	[ "$rc" -eq 1 ] || [ "$rc" -eq 3 ] || fail "sender: exit $rc with the veth deleted: $(cat "$WORK/err")"
	python3 - "$WORK/r.json" <<-'PY' || fail "accounting with the veth deleted"
	import json, sys
	r = json.load(open(sys.argv[1]))
	assert r["sent"] + r["failed"] == r["asked"] and r["failed_reasons"]["unaccounted"] == 0, r
	PY
	# the counter's interface went with its peer: it says so and stops, long before its 30 s
	wait "$COUNT_PID"
	expect_eq $? 3 "count's exit status when its interface went away"
}

test_full_disk() {
	bed
	mkdir -p "$WORK/full"
	mount -t tmpfs -o size=4k tmpfs "$WORK/full" || skip "cannot mount a tmpfs"
	trap 'umount "$WORK/full" 2>/dev/null; tb_down' EXIT
	head -c 4096 /dev/zero >"$WORK/full/filler" 2>/dev/null
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 10 --json "$WORK/full/r.json" -q "$TOP/pcaps/udp-64.pcap" \
		2>"$WORK/err"
	expect_eq $? 3 "replay's exit status when its JSON cannot be written"
	grep -q "cannot write $WORK/full/r.json" "$WORK/err" || fail "no message: $(cat "$WORK/err")"
	"$XR" lorawan fleet --devices 5 --gateways 1 --out "$WORK/f" -q || fail "fleet"
	tb_gen "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/f" --server "$TB_SRV_IP" --pps 1k \
		--schedule "$WORK/full/s.json" -q 2>"$WORK/err"
	expect_eq $? 3 "lorawan send's exit status when its schedule cannot be written"
	count_start --udp --duration 1s --json "$WORK/full/c.json" 2>"$WORK/err"
	wait "$COUNT_PID"
	expect_eq $? 3 "count's exit status when its JSON cannot be written"
	"$XR" lorawan fleet --devices 500 --gateways 1 --out "$WORK/full/f" -q 2>"$WORK/err"
	rc=$?
	[ $rc -ne 0 ] || fail "lorawan fleet wrote to a full disk and exited 0"
}

test_sigkill_leaves_nothing() {
	bed
	count_start --udp --duration 60s
	tcp_server_start --timeout 10
	xr_bg replay -i "$TB_GEN_IF" --pps 10k --duration 30s -q "$TOP/pcaps/udp-64.pcap"
	r=$!
	sleep 1
	kill -9 "$r" "$COUNT_PID"
	wait "$r" "$COUNT_PID" 2>/dev/null
	xr_bg gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --pps 1k --duration 30s -q
	g=$!
	sleep 1
	kill -9 "$g"
	wait "$g" 2>/dev/null
	sleep 0.5
	for ns in "$TB_NS_GEN" "$TB_NS_SRV"; do
		ip -n "$ns" -d link show | grep -qE 'prog/xdp|xdpgeneric|xdpdrv' &&
			fail "XDP left attached in $ns: $(ip -n "$ns" -d link show | grep -E 'xdp')"
	done
	# BPF links die with their process: none of ours is left
	bpftool link list 2>/dev/null | grep -qE 'xr_(gen|count|replies|xmit|redirect_err)' &&
		fail "BPF links left: $(bpftool link list | grep -E 'xr_')"
	return 0
}

# Where no BPF program may be loaded (Docker's default capabilities: CAP_NET_RAW, no CAP_BPF,
# CAP_NET_ADMIN, CAP_IPC_LOCK or CAP_SYS_RESOURCE), the xsk engine still sends what userspace builds
# through a TX-only socket, within the locked-memory limit, and says the answers are not counted;
# what needs the gen program (sessions answered in XDP) is refused in one line
test_no_bpf_allowed() {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	local drop=(setpriv --bounding-set=-bpf,-sys_admin,-perfmon,-net_admin,-ipc_lock,-sys_resource)
	bed
	count_start --any --duration 60s --json "$WORK/c.json"
	ip netns exec "$TB_NS_GEN" "${drop[@]}" "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --count 1000 \
		--src 198.18.64.0/24 --json "$WORK/u.json" 2>"$WORK/err" || fail "gen udp without BPF: $(cat "$WORK/err")"
	grep -q "refuses to load BPF (EPERM)" "$WORK/err" || fail "no line about BPF: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/u.json" sent)" 1000 "gen udp sent without BPF"
	ip netns exec "$TB_NS_GEN" "${drop[@]}" "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --count 500 \
		--json "$WORK/s.json" 2>"$WORK/err" || fail "gen syn without BPF: $(cat "$WORK/err")"
	grep -q "answers are not counted" "$WORK/err" || fail "no line about the answers: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/s.json" sent)" 500 "gen syn sent without BPF"
	expect_eq "$(jget "$WORK/s.json" replies_counted)" False "replies counted"
	ip netns exec "$TB_NS_GEN" "${drop[@]}" "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --complete \
		--count 10 -q 2>"$WORK/err"
	expect_eq $? 3 "gen syn --complete without BPF"
	grep -q "may not load BPF" "$WORK/err" || fail "the refusal: $(cat "$WORK/err")"
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 1500 "frames at the server"
}

# Runs one after another where the locked-memory limit holds their UMEM (a container with Docker's
# default capabilities, 8 MiB): the kernel releases a run's UMEM a moment after its process exits,
# still counted against the same user, and the next run waits for it rather than failing (it
# failed 2 runs of 6 so, alternating replay --rewrite and gen udp)
test_no_bpf_back_to_back() {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	local drop=(prlimit --memlock=8388608 setpriv
		--bounding-set=-bpf,-sys_admin,-perfmon,-net_admin,-ipc_lock,-sys_resource) i
	bed
	count_start --any --duration 120s --json "$WORK/c.json"
	for i in 1 2 3 4 5 6; do
		if [ $((i % 2)) = 1 ]; then
			ip netns exec "$TB_NS_GEN" "${drop[@]}" "$XR" replay -i "$TB_GEN_IF" --rewrite ip.id=seq \
				--count 1000 --json "$WORK/r$i.json" -q "$TOP/pcaps/three.pcapng" 2>"$WORK/err"
		else
			ip netns exec "$TB_NS_GEN" "${drop[@]}" "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" \
				--src 198.18.64.0/24 --count 1000 --json "$WORK/r$i.json" -q 2>"$WORK/err"
		fi
		expect_eq $? 0 "run $i's exit status ($(cat "$WORK/err"))"
		expect_eq "$(jget "$WORK/r$i.json" sent)" 1000 "run $i sent"
	done
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 6000 "frames at the server"
}
