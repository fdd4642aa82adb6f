# SPDX-License-Identifier: GPL-2.0
# Kernel drop reasons at the server (count's skb:kfree_skb tracer): each scenario's cause is known,
# and its reason must be the one counted, exactly: with what the server read, it adds up to what
# was sent.

# drops_run COUNT_ARGS... -- GEN_ARGS...: a counter, then gen udp to port 9; JSON in $WORK/c.json
drops_run() {
	local cargs=()
	while [ "$1" != -- ]; do cargs+=("$1"); shift; done
	shift
	count_start --udp --dport 9 --idle 1s --duration 30s --json "$WORK/c.json" "${cargs[@]}"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 20k "$@" --json "$WORK/g.json" ||
		fail "gen udp exited $?"
	count_wait
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
}


test_drops_no_socket() {
	bed
	drops_run -- --count 10000
	expect_eq "$(jget "$WORK/c.json" passed)" 10000 "passed to the stack"
	expect_eq "$(jget "$WORK/c.json" drops.inbound.NO_SOCKET)" 10000 "NO_SOCKET drops"
	expect_eq "$(jget "$WORK/c.json" drops.inbound_total)" 10000 "inbound drops in all"
	books_balanced 0
}

# The timeline: second by second, what arrived and each reason's drops; each column sums to its total
# (the last row ends where the totals were read), and the report draws the reason over time
test_drops_per_second_sum_to_totals() {
	bed
	count_start --udp --dport 9 --idle 1s --duration 30s --json "$WORK/c.json"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 1000 --count 3000 -q \
		--json "$WORK/g.json" || fail "gen udp exited $?"
	count_wait
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	/usr/bin/python3 - "$WORK/c.json" "$WORK/g.json" <<-'PY' || fail "the timeline against the totals"
	import json, sys
	c = json.load(open(sys.argv[1]))
	g = json.load(open(sys.argv[2]))
	# what count matched, and the port its headline names; its clock beside the sender's
	assert c["filter"] == {"protocol": "udp", "dst_port": 9}, c["filter"]
	assert "dropped by the kernel: no socket on UDP port 9 (NO_SOCKET)" in c["summary"], c["summary"]
	assert 0 < g["start_unix"] - c["start_unix"] < 10, (g["start_unix"], c["start_unix"])
	t = c["timeline"]
	assert len(t["matched"]) >= 3, t
	assert sum(t["matched"]) == c["matched"] == 3000, (sum(t["matched"]), c["matched"])
	assert sum(t["passed"]) == c["passed"], (sum(t["passed"]), c["passed"])
	assert list(t["dropped_by_reason"]) == ["NO_SOCKET"], t["dropped_by_reason"].keys()
	assert sum(t["dropped_by_reason"]["NO_SOCKET"]) == c["drops"]["inbound"]["NO_SOCKET"] == 3000
	assert 0 <= t["last_interval_s"] < 1 and t["full"] is False, t
	PY
	"$XR" report "$WORK/c.json" -o "$WORK/c.html" || fail "report exited $?"
	grep -q "What arrived and where it went, per second" "$WORK/c.html" || fail "no timeline in the report"
	grep -q "dropped: NO_SOCKET" "$WORK/c.html" || fail "the timeline has no NO_SOCKET series"
	# the sender and its server on one chart, on the sender's clock
	"$XR" report "$WORK/g.json" "$WORK/c.json" -o "$WORK/both.html" || fail "report exited $?"
	grep -q "Offered, sent, arrived and dropped, per second" "$WORK/both.html" ||
		fail "no chart of both ends in the report of the two"
	! grep -q "Offered, sent, arrived" "$WORK/c.html" || fail "a chart of both ends from count alone"
}

test_drops_firewall_without_counter() {
	command -v nft >/dev/null || skip "nft not installed"
	bed
	# a rule with no counter statement: --nft cannot see it, the drop reason does
	tb_srv nft add table inet xr || fail "nft"
	tb_srv nft 'add chain inet xr in { type filter hook input priority 0; }'
	tb_srv nft add rule inet xr in udp dport 9 limit rate over 1000/second drop
	sink_start --port 9 --timeout 6
	drops_run -- --count 20000
	wait "$SINK_PID"
	fw=$(jget "$WORK/c.json" drops.inbound.NETFILTER_DROP)
	got=$(wc -l <"$WORK/sink.out")
	in=$(jget "$WORK/c.json" drops.inbound_total)
	# the rule's drops, and on a busy host a few in the sink's socket: all counted
	expect_eq "$((in + got))" 20000 "dropped + read by the sink"
	[ "$fw" -gt 15000 ] || fail "the rule dropped $fw of 20000 at 20k/s over 1000/s"
	[ "$fw" -eq "$in" ] || expect_eq "$(jget "$WORK/c.json" drops.inbound.SOCKET_RCVBUFF)" "$((in - fw))" \
		"drops besides the rule's: the socket's"
	books_balanced "$got"
}

test_drops_socket_buffer_full() {
	bed
	# a receive buffer of a few datagrams, read only after the burst: the rest die at the socket
	sink_start --port 9 --rcvbuf 4096 --hold 2 --timeout 1
	count_start --udp --dport 9 --idle 4s --duration 30s --json "$WORK/c.json"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 20k --count 5000 || fail "gen udp"
	count_wait
	wait "$SINK_PID"
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	got=$(wc -l <"$WORK/sink.out")
	full=$(jget "$WORK/c.json" drops.inbound.SOCKET_RCVBUFF)
	expect_eq "$((full + got))" 5000 "SOCKET_RCVBUFF + read by the sink"
	[ "$got" -lt 1000 ] || fail "the sink read $got: the buffer was not the limit"
	books_balanced "$got"
}

test_drops_other_host() {
	bed
	# frames to another MAC reach the veth peer, XDP sees them, the stack drops them as not ours
	drops_run -- --count 5000 --dst-mac 02:00:00:00:00:99
	expect_eq "$(jget "$WORK/c.json" matched)" 5000 "matched at XDP"
	expect_eq "$(jget "$WORK/c.json" drops.inbound.OTHERHOST)" 5000 "OTHERHOST drops"
	expect_eq "$(jget "$WORK/c.json" drops.inbound_total)" 5000 "inbound drops in all"
	books_balanced 0
}

test_drops_none_when_read() {
	bed
	# a socket buffer that holds the whole run (7000 datagrams of about 768 bytes of truesize):
	# a sink that falls behind on a busy host still loses nothing (with the default 208 KiB, CI
	# once saw 108 SOCKET_RCVBUFF drops, exactly counted), so any drop here is a wrong one
	sink_start --port 9 --timeout 5 --rcvbuf 16777216
	drops_run -- --count 7000
	wait "$SINK_PID"
	got=$(wc -l <"$WORK/sink.out")
	expect_eq "$(jget "$WORK/c.json" drops.inbound_total)" 0 "inbound drops"
	expect_eq "$got" 7000 "datagrams the sink read"
	books_balanced 7000
}

metrics_settled() {
	tb_srv python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=5).read().decode(), end="")' >"$WORK/metrics" 2>/dev/null || return 1
	! grep -q '^xdpreplay_drops_total' "$WORK/metrics" && ! grep -q '^# TYPE xdpreplay_drops_total' "$WORK/metrics" && return 0
	grep -qE 'reason="NO_SOCKET"\} 3000$' "$WORK/metrics"
}

test_drops_reason_in_metrics() {
	bed
	# it ends by the INT below: an idle end (1 s, before) could come before the GET on a slow run
	count_start --udp --dport 9 --idle 20s --duration 30s --listen 127.0.0.1:9100
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 20k --count 3000 || fail "gen udp"
	# the last datagrams' drops are traced as the server's stack gets to them
	wait_until 10 "3000 NO_SOCKET drops in /metrics (or no drop reasons here)" metrics_settled
	kill -INT "$COUNT_PID"
	count_wait
	grep -q 'xdpreplay_drops_total' "$WORK/metrics" || skip "kernel drop reasons unavailable here"
	expect_eq "$(prom_sample "$WORK/metrics" xdpreplay_drops_total 'iface="srv0",direction="inbound",reason="NO_SOCKET"')" \
		3000 "NO_SOCKET in /metrics: $(grep drops_total "$WORK/metrics")"
	prom_valid "$WORK/metrics"
}

test_drops_listen_overflow() {
	bed
	# a backlog of 4 that nobody accepts from, no SYN cookies: the 5th SYN on finds the queue full
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=0 || fail "sysctl"
	tcp_server_start --backlog 4 --no-accept --timeout 4
	count_start --tcp --dport 80 --duration 60s --idle 1s --json "$WORK/c.json"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 10k --count 2000 \
		--json "$WORK/g.json" || fail "gen syn exited $?"
	count_wait
	wait "$TCP_PID"
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	expect_eq "$(jget "$WORK/c.json" passed)" 2000 "SYNs passed to the stack"
	answered=$(jget "$WORK/c.json" books.tcp_taken)
	refused=$(jget "$WORK/c.json" drops.inbound.TCP_LISTEN_DROPS)
	[ "$answered" -ge 4 ] && [ "$answered" -le 16 ] || fail "SYNs answered: $answered, not about the backlog of 4"
	expect_eq "$((answered + refused))" 2000 "answered + refused by the listener"
	books_balanced
	# the sender's own view of the same: one SYN-ACK per answered SYN, retransmissions apart
	expect_eq "$(($(jget "$WORK/g.json" replies.syn_acks)))" "$answered" "SYN-ACKs the sender matched"
}

test_drops_udp_checksum() {
	bed
	python3 "$TOP/pcaps/mkpcap.py" udp "$WORK/bad.pcap" --bad-udp-csum || fail "mkpcap"
	count_start --udp --dport 9 --idle 1s --duration 30s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --pps 20k --count 4000 "$WORK/bad.pcap" || fail "replay exited $?"
	count_wait
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	# checked before the socket lookup: a wrong checksum, not a closed port
	expect_eq "$(jget "$WORK/c.json" drops.inbound.UDP_CSUM)" 4000 "UDP_CSUM drops"
	expect_eq "$(jget "$WORK/c.json" drops.inbound_total)" 4000 "inbound drops in all"
	books_balanced 0
}

test_drops_rp_filter() {
	bed
	# strict reverse-path filter, and the pool routed out of another interface: its sources are spoofed
	tb_srv ip link add xrside0 type veth peer name xrside1 || fail "side link"
	tb_srv ip link set xrside0 up
	tb_srv ip route add 198.19.7.0/24 dev xrside0 || fail "route"
	tb_srv sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf."$TB_SRV_IF".rp_filter=1 || fail "sysctl"
	drops_run -- --count 3000 --src 198.19.7.0/24
	expect_eq "$(jget "$WORK/c.json" drops.inbound.IP_RPFILTER)" 3000 "IP_RPFILTER drops"
	expect_eq "$(jget "$WORK/c.json" drops.inbound_total)" 3000 "inbound drops in all"
	books_balanced 0
}

test_drops_no_route_back() {
	bed
	# SYNs from a pool the server has no route to: it cannot build the SYN-ACKs, refuses the SYNs
	tcp_server_start --timeout 3
	count_start --tcp --dport 80 --duration 60s --idle 1s --json "$WORK/c.json"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.19.9.0/24 --pps 10k --count 2000 \
		--json "$WORK/g.json" >"$WORK/gen.out" 2>&1
	count_wait
	wait "$TCP_PID"
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	expect_eq "$(jget "$WORK/g.json" replies.syn_acks)" 0 "SYN-ACKs"
	expect_eq "$(jget "$WORK/c.json" drops.inbound.TCP_LISTEN_DROPS)" 2000 "SYNs refused"
	expect_eq "$(jget "$WORK/c.json" kernel.Ip.OutNoRoutes)" 2000 "answers without a route"
	books_balanced 0
	grep -q "route back" "$WORK/gen.out" || fail "gen syn said nothing about the route back: $(cat "$WORK/gen.out")"
}

# tcp_books SERVER_ARGS -- CLIENT_ARGS: connections from the generator's namespace through the
# kernel's TCP, the books of the server's count: every segment taken by a socket or dropped
tcp_books() {
	local sargs=()
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	bed
	tcp_server_start --echo --timeout 3 "${sargs[@]}"
	count_start --tcp --dport 80 --duration 60s --idle 1s --json "$WORK/c.json"
	tb_gen python3 "$TOP/tests/tcp_client.py" --addr "$TB_SRV_IP" "$@" >"$WORK/client.out" ||
		fail "the client failed"
	count_wait
	wait "$TCP_PID"
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	# at least 4 segments a connection (SYN, ACK, request, FIN): the kernel may fold the 5th, an ACK,
	# into another (a CI run saw 999 of 200 connections)
	[ "$(jget "$WORK/c.json" passed)" -ge 800 ] || fail "only $(jget "$WORK/c.json" passed) segments"
	if [ -n "${TCP_BOOKS_UNATTRIBUTED_MAX:-}" ]; then
		expect_range "$(jget "$WORK/c.json" books.unattributed)" 0 "$TCP_BOOKS_UNATTRIBUTED_MAX" "unattributed"
	else
		books_balanced
	fi
}

test_drops_tcp_books_client_closes() {
	# data both ways on established sockets; the client's FIN, then the last ACK in LAST_ACK
	tcp_books -- --count 200 --lines 3
	expect_eq "$(cat "$WORK/client.out")" 600 "answers"
}

test_drops_tcp_books_server_closes() {
	# the server closes first: the client's ACK and FIN reach it in FIN_WAIT1/FIN_WAIT2
	# Up to 3 of 1,000 segments unattributed: two CI runs showed 1 and 3, each beside one
	# NOT_SPECIFIED drop at tcp_v4_rcv+0x91 (a path with no tracepoint that tells delivery,
	# probably a segment to a closing or TIME_WAIT socket); they are reported as unattributed,
	# which is the tool telling the truth; finding that path is left to later drop-reason work
	TCP_BOOKS_UNATTRIBUTED_MAX=3 tcp_books --close-first -- --count 200 --wait-close
	expect_eq "$(cat "$WORK/client.out")" 200 "answers"
}

test_drops_by_sequence() {
	command -v nft >/dev/null || skip "nft not installed"
	bed
	# the frames numbered 3000-3999 (their IP id) die in a rule, the rest at the closed port
	tb_srv nft add table inet xr || fail "nft"
	tb_srv nft 'add chain inet xr in { type filter hook input priority 0; }'
	tb_srv nft add rule inet xr in ip id 3000-3999 drop
	# one flow: one source port
	drops_run --seq ip.id --seq-bucket 1000 -- --count 10000 --sport 5000-5000 --rewrite ip.id=seq
	python3 - "$WORK/c.json" <<-'PY' || fail "the drops by sequence number: $(jget "$WORK/c.json" sequence.drops | head -c 600)"
	import json, sys
	s = json.load(open(sys.argv[1]))["sequence"]
	assert s["drops_bucket"] == 1000 and s["drops_not_placed"] == 0, s
	got = {(d["reason"], d["first"], d["last"]): d["dropped"] for d in s["drops"]}
	assert got == {("NO_SOCKET", 0, 2999): 3000, ("NETFILTER_DROP", 3000, 3999): 1000,
	               ("NO_SOCKET", 4000, 9999): 6000}, got
	assert {(d["peer"], d["port"]) for d in s["drops"]} == {("198.18.0.1", 5000)}, s["drops"][:5]
	PY
}

# count --fail-if: a verdict on what the server did, in the report, the JSON and the exit status (5)
test_count_fail_if() {
	bed
	count_start --udp --dport 9 --idle 1s --duration 30s --json "$WORK/c.json" --fail-if 'dropped>0' \
		--fail-if 'matched<5000' --fail-if 'unattributed>0' 2>"$WORK/err"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 20k --count 5000 -q || fail "gen udp exited $?"
	wait "$COUNT_PID"
	expect_eq $? 5 "count's exit with a threshold failed"
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	python3 - "$WORK/c.json" <<-'PY' || fail "the thresholds in JSON"
	import json, sys
	t = {x["metric"]: x for x in json.load(open(sys.argv[1]))["thresholds"]}
	assert t["dropped"]["failed"] and t["dropped"]["value"] == 5000, t
	assert not t["matched"]["failed"] and t["matched"]["value"] == 5000, t
	assert not t["unattributed"]["failed"] and t["unattributed"]["value"] == 0, t
	PY
	grep -q "^  --fail-if dropped>0: FAILED (dropped 5000)" "$WORK/err" || fail "the report's line: $(cat "$WORK/err")"
	# the same frames, every one of them matched and attributed: 0
	count_start --udp --dport 9 --idle 1s --duration 30s -q --fail-if 'matched<5000' --fail-if 'unattributed>0'
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 20k --count 5000 -q || fail "gen udp exited $?"
	count_wait
	run_bad 2 "--fail-if loss>1%: loss is what --seq finds" "$XR" count -i lo --fail-if 'loss>1%'
	run_bad 2 "dropped needs the kernel's drop reasons" "$XR" count -i lo --drop --fail-if 'dropped>0'
	run_bad 2 "'matched>x': 'x' is not a number" "$XR" count -i lo --fail-if 'matched>x'
}
