# SPDX-License-Identifier: GPL-2.0
# gen redis: Redis clients on the socket-less TCP sessions against Debian's redis-server, every
# command asked counted by the server itself (INFO commandstats, DBSIZE). gen redis is an
# application added to the TCP core by its own file alone (user/proto/redis/redis.c); this file
# is its proof that the core carries such a one as it carries gen tcp.

# redis_start: redis-server on the bed's server address (no persistence), stopped with the bed
redis_start() {
	command -v redis-server >/dev/null || skip "redis-server not installed (scripts/deps.sh installs it)"
	REDIS_DIR=$(mktemp -d "$WORK/redis.XXXXXX")
	tb_srv sysctl -qw net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 || fail "sysctl"
	tb_srv redis-server --bind "$TB_SRV_IP" --port 6379 --save '' --appendonly no \
		--protected-mode no --dir "$REDIS_DIR" --tcp-backlog 65535 --maxclients 60000 \
		--logfile "$REDIS_DIR/log" "$@" &
	REDIS_PID=$!
	trap 'kill $REDIS_PID 2>/dev/null; wait $REDIS_PID 2>/dev/null; tb_down' EXIT
	wait_until 10 "redis-server answering PING" redis_answers
}

# redis_answers: redis-server answers a PING on the bed (NOAUTH counts: it is up)
redis_answers() { tb_srv redis-cli -h "$TB_SRV_IP" ping 2>/dev/null | grep -qE 'PONG|NOAUTH'; }

# redis_calls CMD: how many times redis-server ran CMD (INFO commandstats)
redis_calls() {
	tb_srv redis-cli -h "$TB_SRV_IP" info commandstats | tr -d '\r' |
		sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p" | grep . || echo 0
}

# 10,000 sessions of 3 SETs each at 2k/s from 256 sources: every command ran once at the server,
# each session's own key (its number's digits) holds the value, every session completed
test_redis_set_every_session() {
	bed
	redis_start
	count_start --tcp --dport 6379 --duration 60s --idle 3s --json "$WORK/c.json"
	tb_gen "$XR" gen redis -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/24 --command set \
		--value-size 100 --requests-per-session 3 --pps 2k --count 10k --wait 3s \
		--json "$WORK/g.json" --fail-if 'sessions_failed>0' >"$WORK/out" 2>&1 ||
		fail "gen redis exited $?: $(cat "$WORK/out")"
	count_wait
	read -r -d '' done failed sent replies asked < <(jget "$WORK/g.json" sessions.completed \
		sessions.failed commands.sent commands.replies sessions.asked)
	expect_eq "$asked" 10000 "sessions asked"
	expect_eq "$done" 10000 "sessions completed: $(grep -A3 sessions: "$WORK/out")"
	expect_eq "$failed" 0 "sessions failed"
	expect_eq "$sent" 30000 "SETs sent whole"
	expect_eq "$replies" 30000 "replies read"
	expect_eq "$(jget "$WORK/g.json" commands.ok)" 30000 "replies +OK"
	expect_eq "$(redis_calls set)" 30000 "SETs redis-server ran"
	expect_eq "$(tb_srv redis-cli -h "$TB_SRV_IP" dbsize)" 10000 "keys (one per session)"
	expect_eq "$(tb_srv redis-cli -h "$TB_SRV_IP" strlen xr:0000009999)" 100 "session 9999's value"
	expect_eq "$(tb_srv redis-cli -h "$TB_SRV_IP" exists xr:0000010000)" 0 "no session 10000"
	grep -q "reply (command to reply): p50" "$WORK/out" || fail "no reply times: $(cat "$WORK/out")"
	books_balanced
}

# A closed loop: 200 sessions of 50 PINGs each, at most 20 open at once, every PING run once
test_redis_ping_closed_loop() {
	bed
	redis_start
	peer_xdp
	local before
	before=$(redis_calls ping) # redis_start's own
	tb_gen "$XR" gen redis -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --requests-per-session 50 \
		--concurrency 20 --count 200 --wait 3s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen redis exited $?: $(cat "$WORK/out")"
	read -r -d '' done replies cmd < <(jget "$WORK/g.json" sessions.completed commands.replies commands.command)
	expect_eq "$cmd" ping "the command"
	expect_eq "$done" 200 "sessions completed: $(cat "$WORK/out")"
	expect_eq "$replies" 10000 "PONGs read"
	expect_eq "$(($(redis_calls ping) - before))" 10000 "PINGs redis-server ran"
}

# A server that refuses (requirepass: -NOAUTH to every command): every reply counted as an error,
# none as a success, and the run exits 1 with one line saying so
test_redis_refusing_server() {
	bed
	redis_start --requirepass secret
	peer_xdp
	tb_gen "$XR" gen redis -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --command set --count 50 --pps 1k \
		--wait 2s --json "$WORK/g.json" >"$WORK/out" 2>&1
	expect_eq "$?" 1 "exit status: $(cat "$WORK/out")"
	grep -q "every reply of 50 was an error" "$WORK/out" || fail "no line saying why: $(cat "$WORK/out")"
	read -r -d '' ok errors asked < <(jget "$WORK/g.json" commands.ok commands.errors sessions.asked)
	expect_eq "$asked" 50 "sessions asked"
	expect_eq "$ok" 0 "replies that succeeded"
	expect_eq "$errors" 50 "replies that were errors: $(cat "$WORK/out")"
	expect_eq "$(redis_calls set)" 0 "SETs redis-server ran"
}

test_redis_bad_input() {
	run_bad 2 "--command: ping or set, not 'get'" "$XR" gen redis -i lo --dst 198.18.0.2 --command get
	run_bad 2 "--value-size: 1 to" "$XR" gen redis -i lo --dst 198.18.0.2 --command set --value-size 0
	run_bad 2 "--value-size: 1 to" "$XR" gen redis -i lo --dst 198.18.0.2 --command set --value-size 1M
	run_bad 2 "--value-size goes with --command set" "$XR" gen redis -i lo --dst 198.18.0.2 --value-size 10
	run_bad 2 "requests-per-session must be between 1 and 65535" "$XR" gen redis -i lo \
		--dst 198.18.0.2 --requests-per-session 0
}
