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
}

test_drops_other_host() {
	bed
	# frames to another MAC reach the veth peer, XDP sees them, the stack drops them as not ours
	drops_run -- --count 5000 --dst-mac 02:00:00:00:00:99
	expect_eq "$(jget "$WORK/c.json" matched)" 5000 "matched at XDP"
	expect_eq "$(jget "$WORK/c.json" drops.inbound.OTHERHOST)" 5000 "OTHERHOST drops"
	expect_eq "$(jget "$WORK/c.json" drops.inbound_total)" 5000 "inbound drops in all"
}

test_drops_none_when_read() {
	bed
	sink_start --port 9 --timeout 5
	drops_run -- --count 7000
	wait "$SINK_PID"
	got=$(wc -l <"$WORK/sink.out")
	in=$(jget "$WORK/c.json" drops.inbound_total)
	# a busy host may let the sink fall behind: whatever it did not read died in its socket, counted
	expect_eq "$((got + in))" 7000 "read by the sink + dropped"
	[ "$in" -eq 0 ] || expect_eq "$(jget "$WORK/c.json" drops.inbound.SOCKET_RCVBUFF)" "$in" \
		"the drops are the socket's"
	[ "$got" -ge 6900 ] || fail "the sink read only $got of 7000"
}

test_drops_reason_in_metrics() {
	bed
	count_start --udp --dport 9 --idle 1s --duration 30s --listen 127.0.0.1:9100
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --pps 20k --count 3000 || fail "gen udp"
	sleep 0.5
	tb_srv python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=5).read().decode(), end="")' >"$WORK/metrics" || fail "GET /metrics"
	kill -INT "$COUNT_PID"
	count_wait
	grep -q 'xdpreplay_drops_total' "$WORK/metrics" || skip "kernel drop reasons unavailable here"
	grep -qx 'xdpreplay_drops_total{iface="srv0",direction="inbound",reason="NO_SOCKET"} 3000' "$WORK/metrics" ||
		fail "NO_SOCKET in /metrics: $(grep drops_total "$WORK/metrics")"
}
