# SPDX-License-Identifier: GPL-2.0
# replay on the test bed: exact counts, order, timing, pacing, stopping, and drops attributed.

test_million_frames_exact() {
	bed
	count_start --udp --dport 9 --seq ip.id --idle 1s --duration 60s --json "$WORK/c.json"
	# the IPv4 ID carries the sequence number, so the server can tell loss, duplicates and order
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 1M --pps 400k --rewrite ip.id=seq --json "$WORK/r.json" \
		"$TOP/pcaps/udp-64.pcap" || fail "replay exited $?"
	count_wait
	expect_eq "$(jget "$WORK/r.json" sent)" 1000000 "sent"
	expect_eq "$(jget "$WORK/r.json" failed)" 0 "failed"
	expect_eq "$(jget "$WORK/c.json" matched)" 1000000 "counted at the server"
	expect_eq "$(jget "$WORK/c.json" matched_bytes)" 60000000 "bytes counted at the server"
	expect_eq "$(jget "$WORK/c.json" sequence.received)" 1000000 "in sequence"
	expect_eq "$(jget "$WORK/c.json" sequence.lost)" 0 "lost"
	expect_eq "$(jget "$WORK/c.json" sequence.duplicated)" 0 "duplicated"
	expect_eq "$(jget "$WORK/c.json" sequence.reordered)" 0 "reordered"
	# nobody listens on port 9: the stack says where every frame went
	expect_eq "$(jget "$WORK/c.json" attribution.udp_no_ports)" 1000000 "UDP NoPorts"
}

test_two_threads_exact() {
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
	bed --queues 2
	count_start --udp --dport 9 --drop --idle 1s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --threads 2 --count 500001 --json "$WORK/r.json" \
		"$TOP/pcaps/three.pcapng"
	status=$?
	sent_or_refused "$WORK/r.json" 500001 "$status"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" "$SENT" "counted at the server"
	# frame sizes 60, 64, 68 in turn: 166667 + 166667 + 166667 frames, when none was refused
	[ "$SENT" != 500001 ] || expect_eq "$(jget "$WORK/c.json" matched_bytes)" \
		$((166667 * 60 + 166667 * 64 + 166667 * 68)) "bytes"
}

# threads whose CPUs share the veth peer's one receive queue send less together than one alone
test_threads_one_per_veth_queue() {
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
	bed
	count_start --udp --dport 9 --drop --idle 1s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --threads 2 --count 300000 --json "$WORK/r.json" \
		"$TOP/pcaps/three.pcapng" 2>"$WORK/err"
	status=$?
	count_wait
	# the kernel engine: threads sharing the peer's one queue send less; xsk: a socket per queue
	grep -qE "(srv0 receives on 1 queue|gen0's queues, and it has 1).*sending with 1 thread" "$WORK/err" ||
		fail "no warning: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/r.json" threads)" 1 "threads"
	# at top speed on one queue; once in 9 suites the driver refused 64 frames
	sent_or_refused "$WORK/r.json" 300000 "$status"
	expect_eq "$(jget "$WORK/c.json" matched)" "$SENT" "counted at the server"
}

# threads_beside_pinned_napi NAPI_CPU THREADS: a 2-queue threaded bed, each NAPI thread pinned; gen --threads 2
threads_beside_pinned_napi() {
	[ "$(nproc)" -eq 2 ] || skip "needs exactly 2 CPUs (the placement's arithmetic)"
	need_live_frames
	bed --queues 2 --threaded --napi-cpu "$1"
	count_start --udp --dport 9 --drop --idle 1s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --threads 2 --count 200000 \
		--json "$WORK/g.json" 2>"$WORK/err"
	status=$?
	count_wait
	expect_eq "$(jget "$WORK/g.json" threads)" "$2" "threads"
	sent_or_refused "$WORK/g.json" 200000 "$status"
	expect_eq "$(jget "$WORK/c.json" matched)" "$SENT" "counted at the server"
}

# Each queue's NAPI thread on the CPU after its sender's: a second sender would sit on the first
# one's receiver, and is not started
test_threads_off_pinned_receivers() {
	threads_beside_pinned_napi next 1
	grep -q "NAPI threads pinned.*sending with 1 thread" "$WORK/err" || fail "no warning: $(cat "$WORK/err")"
}

# Each queue's NAPI thread on its own sender's CPU: both threads send, without a warning
test_threads_beside_pinned_receivers() {
	threads_beside_pinned_napi same 2
	grep -q "warning" "$WORK/err" && fail "a warning: $(cat "$WORK/err")"
	true
}

test_loop_keeps_order() {
	bed
	sink_start --count 15 --timeout 3
	tb_gen "$XR" replay -i "$TB_GEN_IF" --loop 5 --pps 1k "$TOP/pcaps/three.pcapng" || fail "replay exited $?"
	wait "$SINK_PID"
	expect_eq "$(tr '\n' ' ' <"$WORK/sink.out")" "000 001 002 000 001 002 000 001 002 000 001 002 000 001 002 " \
		"order at the server"
}

test_multiplier_halves_duration() {
	bed
	count_start --udp --dport 9 --idle 1s --duration 30s --json "$WORK/c.json"
	# 100 frames 10 ms apart: 0.99 s of capture, 0.495 s at --multiplier 2
	tb_gen "$XR" replay -i "$TB_GEN_IF" --multiplier 2 "$TOP/pcaps/spaced-100.pcap.gz" || fail "replay exited $?"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 100 "counted"
	expect_range "$(jget "$WORK/c.json" first_to_last_s)" 0.470 0.520 "first to last frame at the server"
}

test_pps_low_and_high() {
	bed
	for rate in 20000 300000; do
		count_start --udp --dport 9 --drop --idle 1s --duration 30s --json "$WORK/c.json"
		tb_gen "$XR" replay -i "$TB_GEN_IF" --pps $rate --count $rate --json "$WORK/r.json" \
			"$TOP/pcaps/udp-64.pcap" || fail "replay exited $?"
		count_wait
		expect_eq "$(jget "$WORK/c.json" matched)" $rate "counted at $rate pps"
		# a second's worth at the asked rate: wide margins, machines are noisy
		expect_range "$(jget "$WORK/c.json" first_to_last_s)" 0.95 1.05 "duration at $rate pps"
	done
}

test_sigint_stops_cleanly() {
	bed
	count_start --udp --dport 9 --duration 30s --idle 1s --json "$WORK/c.json"
	ip netns exec "$TB_NS_GEN" "$XR" replay -i "$TB_GEN_IF" --loop 0 --pps 2k --json "$WORK/r.json" \
		"$TOP/pcaps/udp-64.pcap" &
	pid=$!
	sleep 1
	kill -INT $pid
	wait $pid
	expect_eq $? 4 "exit status after SIGINT (interrupted)"
	expect_eq "$(jget "$WORK/r.json" interrupted)" True "interrupted in the JSON"
	count_wait
	sent=$(jget "$WORK/r.json" sent)
	# a busy machine may take a good part of that second to load and start: a wide margin
	expect_range "$sent" 100 4000 "frames sent in about a second at 2k pps"
	expect_eq "$(jget "$WORK/c.json" matched)" "$sent" "counted equals sent"
	tb_gen ip -o link show "$TB_GEN_IF" | grep -q xdp && fail "XDP left behind"
	return 0
}

test_count_stops_on_duration() {
	bed
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 100M --pps 1k --duration 500ms --json "$WORK/r.json" \
		"$TOP/pcaps/udp-64.pcap"
	expect_eq $? 1 "exit status when frames asked for were not sent"
	sent=$(jget "$WORK/r.json" sent)
	expect_eq "$(( sent + $(jget "$WORK/r.json" failed_reasons.duration_reached) ))" 100000000 \
		"sent + not sent (duration) == asked"
}

test_socket_drops_attributed() {
	bed
	count_start --udp --dport 9 --duration 60s --json "$WORK/c.json"
	# a receiver with a tiny buffer that reads only after the burst: its socket overflows
	sink_start --rcvbuf 4096 --hold 1.5 --timeout 1
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 20000 --json "$WORK/r.json" "$TOP/pcaps/udp-64.pcap" ||
		fail "replay exited $?"
	wait "$SINK_PID"
	kill -INT "$COUNT_PID"
	count_wait
	sent=$(jget "$WORK/r.json" sent)
	read_by_app=$(wc -l <"$WORK/sink.out")
	rcvbuf=$(jget "$WORK/c.json" attribution.udp_rcvbuf_errors)
	expect_eq "$sent" 20000 "sent"
	expect_eq "$(jget "$WORK/c.json" matched)" "$sent" "counted at the server"
	[ "$rcvbuf" -gt 0 ] || fail "no socket buffer drops attributed"
	expect_eq "$(jget "$WORK/c.json" attribution.udp_delivered)" "$read_by_app" "delivered == read by the app"
	expect_eq "$((sent - read_by_app))" "$rcvbuf" "sent - received == socket buffer drops"
}

test_xsk_engine_exact() {
	bed --queues 2
	count_start --udp --dport 9 --drop --idle 1s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --engine xsk --pps 200k --count 200k --json "$WORK/r.json" \
		"$TOP/pcaps/three.pcapng" || fail "replay exited $?"
	count_wait
	case "$(jget "$WORK/r.json" engine)" in xsk*) ;; *) fail "engine: $(jget "$WORK/r.json" engine)" ;; esac
	expect_eq "$(jget "$WORK/r.json" sent)" 200000 "sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 200000 "counted at the server"
	expect_range "$(jget "$WORK/c.json" first_to_last_s)" 0.95 1.05 "a second at 200k pps"
	[ "$(nproc)" -ge 2 ] || return 0
	count_start --udp --dport 9 --drop --idle 1s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --engine xsk --threads 2 --count 100001 --json "$WORK/r.json" \
		"$TOP/pcaps/three.pcapng" || fail "replay with 2 threads exited $?"
	count_wait
	expect_eq "$(( $(jget "$WORK/r.json" sent) + $(jget "$WORK/r.json" failed) ))" 100001 "sent + failed"
	expect_eq "$(jget "$WORK/c.json" matched)" "$(jget "$WORK/r.json" sent)" "counted == sent, 2 threads"
	# veth has no zero-copy: each socket says which mode it got, and the name says the truth
	expect_eq "$(jget "$WORK/r.json" engine)" "xsk copy" "engine and mode of 2 threads on veth"
}

# Runs one after another on the same queues, as a search's trials come: the queue an xsk socket
# just left stays busy for about a second, and the next run waits for it rather than failing
# (it failed every second run, with 1 or 2 threads)
test_xsk_back_to_back() {
	local threads=1
	[ "$(nproc)" -ge 2 ] && threads=2
	bed --queues 2
	count_start --udp --dport 9 --drop --duration 60s --json "$WORK/c.json"
	for i in 1 2 3 4; do
		tb_gen "$XR" replay -i "$TB_GEN_IF" --engine xsk --threads $threads --count 1000 --json "$WORK/r$i.json" \
			-q "$TOP/pcaps/udp-64.pcap" 2>"$WORK/err" || fail "run $i exited $?: $(cat "$WORK/err")"
		expect_eq "$(jget "$WORK/r$i.json" sent)" 1000 "run $i sent"
	done
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 4000 "counted at the server"
}
