# SPDX-License-Identifier: GPL-2.0
# Every command once on each engine, at a low rate, with exact books: the smoke pass that
# tests/vm/matrix.sh runs inside a VM of each of Debian's kernels (docs/kernels.md). A command
# works (the server counted exactly what the sender says it sent), or is refused in one line
# naming what this kernel lacks; anything else fails. With XR_MATRIX=FILE each test adds its row:
# kernel, command, engine, and what happened, in words.
# Small counts: in a VM under emulation the gen object's load alone takes 5-25 s.

# matrix_row ROW ENGINE RESULT: the test's row of the matrix (XR_MATRIX), tab-separated
matrix_row() {
	[ -n "${XR_MATRIX:-}" ] || return 0
	printf '%s\t%s\t%s\t%s\n' "$(uname -r)" "$1" "$2" "$3" >>"$XR_MATRIX"
}

# smoke_expect ROW ENGINE ACTUAL EXPECTED WHAT: as expect_eq, the row saying what failed
smoke_expect() {
	[ "$3" = "$4" ] && return 0
	matrix_row "$1" "$2" "FAILED: $5: $3, expected $4"
	fail "$1 on $2: $5: got '$3', expected '$4'"
}

# smoke_send ROW ENGINE CMD...: CMD in the generator's namespace with --engine ENGINE and --json
# $WORK/g.json. Returns 0 when it ran to its end; 1 when it was refused in one line for what this
# kernel lacks (the kernel engine without live frames, a helper a protocol's program needs, room
# in its verifier), the row saying so; fails otherwise.
smoke_send() {
	local row=$1 engine=$2 rc line
	shift 2
	tb_gen "$@" --engine "$engine" --json "$WORK/g.json" -q >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ $rc -eq 0 ] && return 0
	line=$(head -n 1 "$WORK/err")
	# a refusal: the kernel engine where live frames are missing, a facility this kernel lacks,
	# named with the first kernel that has it, or its verifier's limit; in one line
	if { [ "$engine" = kernel ] && ! live_frames && [[ "$line" == *"the kernel engine cannot send"* ]]; } ||
		[[ "$line" =~ which\ came\ in\ Linux\ [0-9]+\.[0-9]+ ]] ||
		[[ "$line" == *"too complex for this kernel's verifier"* ]]; then
		smoke_expect "$row" "$engine" "$(wc -l <"$WORK/err")" 1 "lines of the refusal ($(cat "$WORK/err"))"
		matrix_row "$row" "$engine" "refused: ${line#*: }"
		return 1
	fi
	matrix_row "$row" "$engine" "FAILED (exit $rc): $line"
	fail "$row on $engine exited $rc: $(cat "$WORK/err")"
}

# smoke_stop: a refused run's counter stopped and waited for
smoke_stop() {
	kill -INT "$COUNT_PID"
	count_wait
}

# smoke_books ROW ENGINE ASKED: the sender sent ASKED and the server counted them all
smoke_books() {
	local sent matched
	sent=$(jget "$WORK/g.json" sent)
	matched=$(jget "$WORK/c.json" matched)
	if [ "$sent" != "$3" ] || [ "$matched" != "$3" ]; then
		matrix_row "$1" "$2" "FAILED: asked $3, sent $sent, the server counted $matched"
		fail "$1 on $2: asked $3, sent $sent, the server counted $matched"
	fi
	matrix_row "$1" "$2" "works: $sent sent, $matched counted at the server${SMOKE_MORE:+; $SMOKE_MORE}$(smoke_fallbacks)"
}

# smoke_fallbacks: what the run chose in place of what this kernel lacks, as its warnings said
smoke_fallbacks() {
	sed -n 's/^.*warning: this kernel lacks \([a-z_]*\) (Linux \([0-9.]*\)): \(.*\)$/; without \1 (\2): \3/p' "$WORK/err" |
		tr -d '\n'
}

# The LoRaWAN rows first: the longest, started while the short ones fill the other jobs
# lorawan send: valid uplinks of an ABP fleet (FCnt, encryption and MIC per packet) through 4 gateways,
# each checked by a Semtech server (tests/semtech_server.py: every MIC, FCnt and payload) and
# PUSH_ACKed; on a kernel without bpf_xdp_store_bytes the xsk engine finishes them in userspace
smoke_lorawan() {
	. "$TOP/tests/t_lorawan.sh"
	bed
	"$XR" lorawan fleet --devices 100 --gateways 4 --out "$WORK/f" -q || fail "fleet"
	lw_server_start --fleet "$WORK/f" --idle 5
	count_start --udp --dport 1700 --idle 3s --duration 120s --no-drop-reasons --json "$WORK/c.json"
	smoke_send "lorawan send" "$1" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/f" --server "$TB_SRV_IP" \
		--pps 200 --count 500 --wait 10s || { smoke_stop; kill "$LW_PID"; wait "$LW_PID"; return 0; }
	wait "$LW_PID"
	count_wait
	local valid bad_mic acks
	{ read -r valid && read -r bad_mic; } < <(jget "$WORK/lw.out" valid bad_mic)
	acks=$(jget "$WORK/g.json" replies.push_acks)
	SMOKE_MORE="$valid valid at the server, $acks PUSH_ACKs matched"
	smoke_expect "lorawan send" "$1" "$valid" 500 "uplinks the server found valid"
	smoke_expect "lorawan send" "$1" "$bad_mic" 0 "uplinks with a bad MIC"
	smoke_expect "lorawan send" "$1" "$acks" 500 "PUSH_ACKs matched"
	smoke_books "lorawan send" "$1" 500
}
test_lorawan_kernel() { smoke_lorawan kernel; }
test_lorawan_xsk() { smoke_lorawan xsk; }

# lorawan send --join: an OTAA fleet joins through a Semtech server, every JoinAccept opened and
# TX_ACKed; on a kernel without bpf_xdp_load_bytes the xsk engine finishes the JoinRequests in
# userspace and its reply program copies the JoinAccepts out by direct loads
smoke_join() {
	. "$TOP/tests/t_lorawan.sh"
	bed
	"$XR" lorawan fleet --devices 200 --gateways 4 --otaa --out "$WORK/f" -q || fail "fleet"
	lw_server_start --fleet "$WORK/f" --idle 30
	# an XDP program on the server's veth: the TX_ACKs sent by XDP_TX arrive at once
	peer_xdp
	smoke_send "lorawan send --join" "$1" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/f" \
		--server "$TB_SRV_IP" --src 198.18.64.0/28 --sport 1700-1703 --keepalive 500ms --join \
		--pps 100 --wait 10s || return 0
	local joined accepts tx_acks
	{ read -r joined && read -r accepts && read -r tx_acks; } < <(jget "$WORK/g.json" lorawan.join.joined \
		lorawan.downlinks.join_accepts lorawan.downlinks.tx_acks)
	smoke_expect "lorawan send --join" "$1" "$joined" 200 "devices joined (JoinAccept opened, MIC right)"
	smoke_expect "lorawan send --join" "$1" "$accepts" 200 "JoinAccepts handed on by XDP"
	smoke_expect "lorawan send --join" "$1" "$tx_acks" 200 "TX_ACKs sent"
	matrix_row "lorawan send --join" "$1" "works: $joined of 200 devices joined, $tx_acks TX_ACKs$(smoke_fallbacks)"
}
test_lorawan_join_kernel() { smoke_join kernel; }
test_lorawan_join_xsk() { smoke_join xsk; }

# smoke_udp ROW ENGINE CMD...: CMD's frames to UDP port 9 of the server, counted there
smoke_udp() {
	local row=$1 engine=$2
	shift 2
	bed
	count_start --udp --dport 9 --idle 2s --duration 120s --no-drop-reasons --json "$WORK/c.json"
	smoke_send "$row" "$engine" "$@" --count 2000 --pps 2k || { smoke_stop; return 0; }
	count_wait
	smoke_books "$row" "$engine" 2000
}

smoke_replay() { smoke_udp replay "$1" "$XR" replay -i "$TB_GEN_IF" "$TOP/pcaps/three.pcapng"; }
test_replay_kernel() { smoke_replay kernel; }
test_replay_xsk() { smoke_replay xsk; }

smoke_rewrite() {
	smoke_udp "replay --rewrite" "$1" "$XR" replay -i "$TB_GEN_IF" --rewrite 'ip.src=198.18.64.0/23' \
		"$TOP/pcaps/three.pcapng"
}
test_rewrite_kernel() { smoke_rewrite kernel; }
test_rewrite_xsk() { smoke_rewrite xsk; }

smoke_gen_udp() { smoke_udp "gen udp" "$1" "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --src 198.18.64.0/23; }
test_gen_udp_kernel() { smoke_gen_udp kernel; }
test_gen_udp_xsk() { smoke_gen_udp xsk; }

# gen syn: every SYN counted at the server and its SYN-ACK matched (SYN cookies: one answer each)
smoke_syn() {
	bed
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=2 || fail "sysctl"
	tcp_server_start --timeout 20
	count_start --tcp --dport 80 --idle 2s --duration 120s --no-drop-reasons --json "$WORK/c.json"
	smoke_send "gen syn" "$1" "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 \
		--pps 1k --count 1000 || { smoke_stop; return 0; }
	count_wait
	local syn_acks
	syn_acks=$(jget "$WORK/g.json" replies.syn_acks)
	SMOKE_MORE="$syn_acks SYN-ACKs matched"
	smoke_expect "gen syn" "$1" "$syn_acks" 1000 "SYN-ACKs matched to their SYN"
	smoke_books "gen syn" "$1" 1000
}
test_gen_syn_kernel() { smoke_syn kernel; }
test_gen_syn_xsk() { smoke_syn xsk; }

# count: where the frames went, with the kernel's drop reasons where the kernel has them
test_count_drop_reasons() {
	bed
	count_start --udp --dport 9 --idle 2s --duration 120s --json "$WORK/c.json" 2>"$WORK/count.err"
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --engine xsk --dst "$TB_SRV_IP:9" --pps 2k --count 2000 -q ||
		fail "gen udp exited $?"
	count_wait
	smoke_expect count "" "$(jget "$WORK/c.json" matched)" 2000 "frames counted at the server"
	if [ "$(jget "$WORK/c.json" drop_reasons)" = True ]; then
		smoke_expect count "" "$(jget "$WORK/c.json" drops.inbound.NO_SOCKET)" 2000 "NO_SOCKET drops"
		# the sockets' side of the books where the kernel has its tracepoints (sock_recv_length)
		if python3 -c 'import json,sys; sys.exit("books" not in json.load(open(sys.argv[1])))' "$WORK/c.json"; then
			books_balanced 0
			matrix_row count "" "works: 2000 counted, 2000 dropped by the kernel: NO_SOCKET; books balanced"
		else
			grep -q "deliveries to sockets cannot be traced" "$WORK/count.err" ||
				fail "no books, and no word why: $(cat "$WORK/count.err")"
			matrix_row count "" "works: 2000 counted, 2000 dropped by the kernel: NO_SOCKET; deliveries to sockets not traced (no unattributed figure)"
		fi
	else
		matrix_row count "" "works without drop reasons: 2000 counted ($(grep -m1 -o "drop reasons unavailable.*" "$WORK/count.err"))"
	fi
}

smoke_icmp() {
	bed
	count_start --proto 1 --idle 2s --duration 120s --no-drop-reasons --json "$WORK/c.json"
	smoke_send "gen icmp" "$1" "$XR" gen icmp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--pps 1k --count 1000 || { smoke_stop; return 0; }
	count_wait
	smoke_books "gen icmp" "$1" 1000
}
test_gen_icmp_kernel() { smoke_icmp kernel; }
test_gen_icmp_xsk() { smoke_icmp xsk; }

# gen dns against nsd: every query counted at the server and every answer matched
smoke_dns() {
	. "$TOP/tests/t_dns.sh"
	bed
	nsd_start 100
	nsd_names 100 "$WORK/names"
	count_start --udp --dport 53 --idle 2s --duration 120s --no-drop-reasons --json "$WORK/c.json"
	smoke_send "gen dns" "$1" "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --names "$WORK/names" \
		--pps 500 --count 1000 || { smoke_stop; return 0; }
	count_wait
	local answers
	answers=$(jget "$WORK/g.json" replies.answers)
	SMOKE_MORE="$answers answers matched"
	smoke_expect "gen dns" "$1" "$answers" 1000 "answers matched by id and port"
	smoke_books "gen dns" "$1" 1000
}
test_gen_dns_kernel() { smoke_dns kernel; }
test_gen_dns_xsk() { smoke_dns xsk; }

# smoke_sessions ROW ENGINE ASKED: a protocol on the socket-less TCP sessions completed every one
smoke_sessions() {
	local done
	done=$(jget "$WORK/g.json" sessions.completed)
	if [ "$done" != "$3" ]; then
		matrix_row "$1" "$2" "FAILED: $done of $3 sessions completed: $(tr '\n' ' ' <"$WORK/err")"
		fail "$1 on $2: $done of $3 sessions completed"
	fi
	matrix_row "$1" "$2" "works: $done of $3 sessions completed${SMOKE_MORE:+; $SMOKE_MORE}"
}

# gen tcp against nginx: each session's GET answered, nginx's log holding one line each
smoke_tcp() {
	. "$TOP/tests/t_tcp.sh"
	bed
	nginx_start
	peer_xdp
	smoke_send "gen tcp" "$1" "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--http 'GET /' --pps 100 --count 200 --wait 5s || return 0
	SMOKE_MORE="$(wc -l <"$NGINX_DIR/access.log") requests in nginx's log"
	smoke_expect "gen tcp" "$1" "$(wc -l <"$NGINX_DIR/access.log")" 200 "nginx's access log lines"
	smoke_sessions "gen tcp" "$1" 200
}
test_gen_tcp_kernel() { smoke_tcp kernel; }
test_gen_tcp_xsk() { smoke_tcp xsk; }

# gen mqtt against mosquitto: QoS 1, every message PUBACKed
smoke_mqtt() {
	. "$TOP/tests/t_mqtt.sh"
	bed
	mosquitto_start
	peer_xdp
	smoke_send "gen mqtt" "$1" "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--username "$MQ_USER" --password "$MQ_PASS" --qos 1 --messages 10 --pps 50 --count 100 \
		--wait 10s || return 0
	local acked
	acked=$(jget "$WORK/g.json" messages.acked)
	SMOKE_MORE="$acked PUBACKs"
	smoke_expect "gen mqtt" "$1" "$acked" 1000 "PUBACKs"
	smoke_sessions "gen mqtt" "$1" 100
}
test_gen_mqtt_kernel() { smoke_mqtt kernel; }
test_gen_mqtt_xsk() { smoke_mqtt xsk; }

# gen redis against redis-server: every PING run by the server and its PONG read
smoke_redis() {
	. "$TOP/tests/t_redis.sh"
	bed
	redis_start
	peer_xdp
	local before
	before=$(redis_calls ping)
	smoke_send "gen redis" "$1" "$XR" gen redis -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --requests-per-session 5 \
		--pps 100 --count 100 --wait 5s || return 0
	SMOKE_MORE="$(($(redis_calls ping) - before)) PINGs run by redis-server"
	smoke_expect "gen redis" "$1" "$(($(redis_calls ping) - before))" 500 "PINGs redis-server ran"
	smoke_sessions "gen redis" "$1" 100
}
test_gen_redis_kernel() { smoke_redis kernel; }
test_gen_redis_xsk() { smoke_redis xsk; }
