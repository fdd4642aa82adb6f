# SPDX-License-Identifier: GPL-2.0
# gen tcp: whole client sessions without sockets against nginx (Debian's, one worker), every
# session asked completed or failed with its reason, checked against nginx's access log and the
# server's TCP counters. The server runs xdpreplay count: besides its books, its XDP program is
# what makes veth deliver our XDP_TX'd segments at once (PLATFORM: a veth peer without an XDP
# program is not woken for XDP_TX frames; they wait for the next frame sent otherwise).

. "$TOP/scripts/nginx.sh"

# nginx_start [BACKLOG]: nginx on the bed's server address, stopped with the bed
# nginx_start [BACKLOG [ADDR]]: nginx on ADDR:80 (the server's IPv4 address; [IPV6] for IPv6)
nginx_start() {
	local addr=${2:-$TB_SRV_IP}
	command -v nginx >/dev/null || skip "nginx not installed (scripts/deps.sh installs it)"
	# its own directory: $$ is the same in every test of a run
	NGINX_DIR=$(mktemp -d "$WORK/nginx.XXXXXX")
	nginx_conf "$NGINX_DIR" "$addr" "${1:-4096}"
	tb_srv nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" 2>"$NGINX_DIR/stderr" &
	NGINX_PID=$!
	trap 'kill $NGINX_PID 2>/dev/null; wait $NGINX_PID 2>/dev/null; tb_down' EXIT
	nginx_wait "$TB_NS_SRV" "$addr" "$NGINX_PID" ||
		fail "nginx did not start: $(cat "$NGINX_DIR/error.log" "$NGINX_DIR/stderr" 2>/dev/null)"
	tb_srv nstat -n
}

# log_lines STATUS: lines of nginx's access log with that status
log_lines() { awk -v s="$1" '$2 == s' "$NGINX_DIR/access.log" | wc -l; }

# server_clean: the server's TCP counters since nginx_start show nothing we caused
server_clean() {
	tb_srv nstat -a >"$WORK/nstat" 2>/dev/null
	local k v
	for k in TcpRetransSegs TcpInErrs TcpInCsumErrors TcpExtTCPChallengeACK TcpExtTCPAbortOnData \
		TcpExtTCPAbortOnClose TcpExtTCPAbortOnTimeout TcpExtTCPSynRetrans TcpExtListenDrops; do
		v=$(awk -v k="$k" '$1 == k { print $2 }' "$WORK/nstat")
		expect_eq "${v:-0}" 0 "server $k"
	done
}

# lossy_firewall N: the server's firewall drops one in N of our segments to port 80, at random
# (table inet loss, with a counter)
lossy_firewall() {
	tb_srv nft -f - <<-NFT || fail "nft"
	table inet loss {
		chain in {
			type filter hook input priority 0;
			tcp dport 80 numgen random mod $1 == 0 counter drop
		}
	}
	NFT
}

# sessions_add_up: every session asked is completed or failed with a reason, none unaccounted
sessions_add_up() {
	python3 - "$WORK/g.json" <<-'PY' || fail "sessions do not add up"
	import json, sys
	g = json.load(open(sys.argv[1]))
	s = g["sessions"]
	print("sessions:", s, "segments:", g["segments"], "syn_acks:", g["replies"]["syn_acks"])
	assert s["unaccounted"] == 0, s
	assert s["completed"] + s["failed"] == s["asked"], s
	assert sum(s["failed_by"].values()) == s["failed"], s
	# second by second: completed, and failed as the server or protocol said, sum to the books
	ps = s["per_second"]
	assert sum(r["completed"] for r in ps) == s["completed"], ps
	told = ("refused", "reset", "table_full", "malformed", "closed_early",
	        "refused_after_handshake", "unexpected_packet")
	assert sum(r["failed"] for r in ps) == sum(s["failed_by"][k] for k in told), ps
	assert [r["second"] for r in ps] == list(range(len(ps))), ps
	assert all(r["span_s"] == 1 for r in ps[:-1]) and 0 < ps[-1]["span_s"] <= 2, ps
	PY
}

test_tcp_every_session_completed() {
	bed
	# an accept queue that absorbs a stall of nginx's one worker on a busy 2-core host (4096 at
	# 10k/s overflowed now and then: the server's loss, repaired by retransmissions, but not the
	# clean run this test is about)
	tb_srv sysctl -qw net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 || fail "sysctl"
	nginx_start 65535
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	# 100,000 sessions of one GET each, 10k/s, from 512 sources
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--pps 10k --count 100k --wait 3s --json "$WORK/g.json" --fail-if 'sessions_failed>0' >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	count_wait
	expect_eq "$(jget "$WORK/g.json" thresholds.0.value)" 0 "--fail-if sessions_failed>0: the sessions that failed"
	tb_gen ethtool -S "$TB_GEN_IF" | grep -v ": 0$"
	tb_srv ethtool -S "$TB_SRV_IF" | grep -v ": 0$"
	tb_srv ip -s link show "$TB_SRV_IF"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 100000 "sessions completed: $(grep -A2 sessions: "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" requests.status.2xx)" 100000 "responses 2xx"
	expect_eq "$(jget "$WORK/g.json" segments.again)" 0 "segments sent again"
	expect_eq "$(jget "$WORK/g.json" segments.stray)" 0 "stray segments"
	expect_eq "$(wc -l <"$NGINX_DIR/access.log")" 100000 "nginx's access log lines"
	# each with the whole index.html, and from 512 distinct sources
	expect_eq "$(awk '$2 == 200 && $4 == 600' "$NGINX_DIR/access.log" | wc -l)" 100000 "200s with 600 bytes"
	expect_eq "$(awk '{ print $1 }' "$NGINX_DIR/access.log" | sort -u | wc -l)" 512 "distinct sources"
	server_clean
	# SYN, the ACK with the request, the ACK of the response with our FIN, the last ACK
	expect_eq "$(jget "$WORK/c.json" kernel.Tcp.InSegs)" 400000 "segments the server received"
	books_balanced 400000
	grep -q "response (request to last byte): p50" "$WORK/out" || fail "no response times: $(cat "$WORK/out")"
}

# IPv6 (the bed's 2001:2::/48, RFC 5180): 5,000 sessions of one GET at 2k/s from 256 sources of
# 2001:2:0:1::/64, 200 POSTs of a 10 KB body (the server's IPv6 MSS, 1440, in every segment), nginx's
# log and counters clean; then gen syn's SYN-ACKs from it, counted and completed
test_tcp_ipv6_sessions() {
	bed --ipv6
	tb_srv sysctl -qw net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 || fail "sysctl"
	nginx_start 65535 "[$TB_SRV_IP6]"
	# the XDP program on the server's side that takes our XDP_TX segments at once (veth)
	count_start --any -q --duration 10m
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "[$TB_SRV_IP6]:80" --src 2001:2:0:1::/120 --http 'GET /' \
		--pps 2k --count 5000 --wait 3s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 5000 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" requests.status.2xx)" 5000 "responses 2xx"
	expect_eq "$(jget "$WORK/g.json" segments.again)" 0 "segments sent again"
	expect_eq "$(jget "$WORK/g.json" segments.stray)" 0 "stray segments"
	expect_eq "$(awk '$2 == 200 && $4 == 600' "$NGINX_DIR/access.log" | wc -l)" 5000 "200s with 600 bytes"
	expect_eq "$(awk '$1 ~ /^2001:2:0:1::[0-9a-f]*$/ { print $1 }' "$NGINX_DIR/access.log" | sort -u | wc -l)" 256 \
		"distinct sources of the pool"
	head -c 10240 /dev/urandom >"$WORK/body"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "[$TB_SRV_IP6]:80" --src 2001:2:0:1::/120 \
		--http 'POST /post' --body "$WORK/body" --pps 200 --count 200 --wait 5s --json "$WORK/g.json" \
		>"$WORK/out" 2>&1 || fail "gen tcp (POST) exited $?: $(cat "$WORK/out")"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 200 "POST sessions completed"
	local len
	len=$(jget "$WORK/g.json" requests.bytes)
	expect_eq "$(awk -v l="$len" '$2 == 200 && $3 == l' "$NGINX_DIR/access.log" | wc -l)" 200 \
		"POSTs of $len bytes answered 200"
	expect_eq "$(jget "$WORK/g.json" segments.sent)" $((200 * ((len + 1439) / 1440))) \
		"segments of at most 1440 bytes for 200 requests of $len"
	server_clean
	# gen syn: each SYN-ACK counted and answered with the handshake's ACK
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "[$TB_SRV_IP6]:80" --src 2001:2:0:1::/120 --pps 1k \
		--count 500 --complete --json "$WORK/s.json" >"$WORK/out" 2>&1 ||
		fail "gen syn exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	expect_eq "$(jget "$WORK/s.json" replies.syn_acks)" 500 "SYN-ACKs"
	expect_eq "$(jget "$WORK/s.json" replies.unmatched)" 0 "unmatched replies"
	expect_eq "$(jget "$WORK/s.json" replies.completed)" 500 "handshakes completed"
	kill -INT "$COUNT_PID"
	wait "$COUNT_PID"
	return 0
}

test_tcp_keepalive_and_rst() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	# 1,000 sessions of 100 requests each, closed with a RST
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--requests-per-session 100 --close rst --pps 500 --count 1000 --wait 5s \
		--json "$WORK/g.json" >"$WORK/out" 2>&1 || fail "gen tcp exited $?: $(cat "$WORK/out")"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 1000 "sessions completed: $(grep -A2 sessions: "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" requests.responses)" 100000 "responses"
	expect_eq "$(log_lines 200)" 100000 "200s in nginx's access log"
	# the 100th request of each session came on the same connection as its first
	expect_eq "$(awk '$5 == 100' "$NGINX_DIR/access.log" | wc -l)" 1000 "100th requests of a connection"
	# a RST with the exact sequence number is taken (not a challenge ACK), and aborts nothing
	# nginx had to say
	server_clean
	expect_eq "$(tb_srv nstat -az TcpExtTCPAbortOnData | awk 'NR > 1 { print $2 }')" 0 "aborts on data"
	books_balanced
}

# A closed loop: 8 sessions of 50 requests open at once, 200 in all, each started as another
# ended. Held against the server's own count of its connections (nginx's stub_status, read while
# the run runs: a connection counts from its accept to nginx's close, which comes after our FIN,
# so nginx never holds more than we have open; the reading's own connection is one of them). An
# open loop would open all 200 at once. (A socket dump, ss, is no witness here: it walks the hash
# table while sockets come and go, and saw 9 for a loop that never had more than 8.)
test_tcp_closed_loop() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	tb_srv python3 - "$WORK/closed_loop_max" <<-'PY' &
	import sys, time, urllib.request
	top = -1
	while True:
	    with urllib.request.urlopen("http://127.0.0.1:8081/status") as r:
	        n = int(r.read().split(b"\n")[0].split(b":")[1]) - 1
	    if n > top:
	        top = n
	        open(sys.argv[1], "w").write("%d\n" % top)
	    time.sleep(0.002)
	PY
	local sampler=$!
	# the run lasts ~0.3 s: it starts once the sampler has read the status once (CI saw it start
	# after the run had ended: "at most 0 connections")
	wait_ready "$WORK/closed_loop_max" "$sampler" "the connection sampler" 200
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--requests-per-session 50 --concurrency 8 --count 200 --wait 5s \
		--json "$WORK/g.json" >"$WORK/out" 2>&1
	local rc=$?
	kill "$sampler"
	wait "$sampler" 2>/dev/null
	[ "$rc" = 0 ] || fail "gen tcp exited $rc: $(cat "$WORK/out")"
	count_wait
	sessions_add_up
	grep "closed loop" "$WORK/out"
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 200 "sessions completed: $(grep -A2 sessions: "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" requests.responses)" 10000 "responses"
	expect_eq "$(log_lines 200)" 10000 "200s in nginx's access log"
	expect_eq "$(awk '$5 == 50' "$NGINX_DIR/access.log" | wc -l)" 200 "50th requests of a connection"
	expect_eq "$(jget "$WORK/g.json" sessions.concurrency.limit)" 8 "the closed loop's limit"
	expect_eq "$(jget "$WORK/g.json" sessions.concurrency.open_peak)" 8 "sessions open at the most, as the sender saw them"
	local seen
	seen=$(cat "$WORK/closed_loop_max" 2>/dev/null || echo 0)
	echo "nginx's connections at once, at the most: $seen"
	[ "$seen" -le 8 ] || fail "the server held $seen connections at once, more than --concurrency 8"
	[ "$seen" -ge 4 ] || fail "the server held at most $seen connections at once: the loop never filled"
	server_clean
	books_balanced
}

# --concurrency is a closed loop: a rate, a search, or the xsk engine with it is refused in one line
test_tcp_closed_loop_bad_usage() {
	local out rc
	out=$("$XR" gen tcp -i lo --dst 198.18.0.2 --http 'GET /' --concurrency 8 --pps 1k 2>&1)
	rc=$?
	expect_eq "$rc" 2 "--concurrency with --pps: exit status ($out)"
	expect_eq "$(printf '%s\n' "$out" | wc -l)" 1 "one line: $out"
	for bad in 0 -1 2M x; do
		out=$("$XR" gen tcp -i lo --dst 198.18.0.2 --http 'GET /' --concurrency "$bad" 2>&1)
		expect_eq "$?" 2 "--concurrency $bad: exit status ($out)"
	done
	out=$("$XR" gen syn -i lo --dst 198.18.0.2 --concurrency 8 2>&1)
	expect_eq "$?" 2 "gen syn has no sessions to loop ($out)"
	out=$("$XR" search --witness replies -- gen tcp -i lo --dst 198.18.0.2 --http 'GET /' --concurrency 8 2>&1)
	expect_eq "$?" 2 "search with a closed loop: exit status ($out)"
	echo "$out" | grep -q "closed loop" || fail "search does not say why: $out"
}

# count --respond: the stateless HTTP server in XDP that benchmarks use when the server must not be
# the limit. gen tcp's sessions against it complete whole (keep-alive, then one request each with the
# server's FIN on the response), every answer counted; a kernel client reads its 200 too.
test_count_respond() {
	live_frames || skip "count --respond answers in the request's own frame, and on veth the xsk engine's frames arrive in buffers without room for a response"
	bed
	count_start --tcp --dport 80 --respond --respond-body 600 --duration 60s --idle 2s --json "$WORK/c.json"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--requests-per-session 3 --pps 20k --count 20k --wait 3s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 20000 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" requests.status.2xx)" 60000 "200s read"
	expect_eq "$(jget "$WORK/c.json" respond.syn_acks)" 20000 "SYN-ACKs from XDP"
	expect_eq "$(jget "$WORK/c.json" respond.responses)" 60000 "responses from XDP"
	expect_eq "$(jget "$WORK/c.json" respond.fin_acks)" 20000 "FIN-ACKs from XDP"
	expect_eq "$(jget "$WORK/c.json" respond.no_room)" 0 "answers that did not fit"
	# the stack saw none of it
	expect_eq "$(jget "$WORK/c.json" passed)" 0 "passed to the server's stack"

	# idle 10 s, not 2: the kernel client below comes after the sender-side counter's start, which
	# took longer than 2 s on a busy CI host (the responder had gone: the SYN met a RST)
	count_start --tcp --dport 80 --respond-close --duration 60s --idle 10s --json "$WORK/c.json"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--pps 20k --count 20k --first-seq 20000 --wait 3s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 20000 "sessions completed (the server closing)"
	# a kernel client (Python's): its SYN-ACK comes by XDP_TX, which veth delivers at once to a
	# peer with an XDP program
	rm -f "$WORK/gen.ready"
	ip netns exec "$TB_NS_GEN" "$XR" count -i "$TB_GEN_IF" --any --no-drop-reasons -q --duration 30s \
		--ready-file "$WORK/gen.ready" &
	local gen_count=$!
	wait_ready "$WORK/gen.ready" "$gen_count" "the sender-side counter" 200
	local body
	body=$(tb_gen python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://%s/" % sys.argv[1], timeout=5).read().decode())' "$TB_SRV_IP")
	kill -INT "$gen_count"
	wait "$gen_count"
	expect_eq "$body" "xx" "the kernel client's body"
	count_wait
	expect_eq "$(jget "$WORK/c.json" respond.responses)" 20001 "responses from XDP"
	expect_eq "$(jget "$WORK/c.json" respond.fin_acks)" 20001 "client FINs acknowledged"
}

test_count_respond_bad_usage() {
	local a
	for a in "--respond" "--udp --dport 80 --respond" "--tcp --respond" "--tcp --dport 80 --respond --drop" \
		"--tcp --dport 80 --respond-body 10" "--tcp --dport 80 --respond --respond-body 1359" \
		"--tcp --dport 80 --respond --respond-body x"; do
		# shellcheck disable=SC2086
		out=$("$XR" count -i lo $a --duration 1s 2>&1)
		expect_eq "$?" 2 "count $a: exit status ($out)"
		expect_eq "$(printf '%s\n' "$out" | wc -l)" 1 "count $a: one line ($out)"
	done
}

test_tcp_large_post() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	head -c 10240 /dev/urandom >"$WORK/body"
	# 10 KB bodies: several segments each, never more than the server's MSS and window
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'POST /post' \
		--body "$WORK/body" --pps 200 --count 200 --wait 5s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 200 "sessions completed: $(grep -A2 sessions: "$WORK/out")"
	local len
	len=$(jget "$WORK/g.json" requests.bytes)
	[ "$len" -gt 10240 ] || fail "request of $len bytes"
	# every request arrived whole: nginx counted all its bytes
	expect_eq "$(awk -v l="$len" '$2 == 200 && $3 == l' "$NGINX_DIR/access.log" | wc -l)" 200 \
		"POSTs of $len bytes answered 200"
	# full segments of the server's MSS (1460 on the bed), built by the pump: on veth the server's
	# frame leaves XDP_TX room for ~192 bytes only (no tailroom), so nothing goes in place
	expect_eq "$(jget "$WORK/g.json" segments.sent)" $((200 * ((len + 1459) / 1460))) \
		"segments for 200 requests of $len bytes"
	expect_eq "$(jget "$WORK/g.json" segments.pump.asked)" $((200 * ((len + 1459) / 1460))) "segments asked of the pump"
	expect_eq "$(jget "$WORK/g.json" segments.pump.sent)" $((200 * ((len + 1459) / 1460))) "segments the pump sent"
	python3 - "$WORK/g.json" <<-'PY' || fail "the pump's books"
	import json, sys
	p = json.load(open(sys.argv[1]))["segments"]["pump"]
	assert p["asked"] == p["sent"] + p["stale"] + p["send_errors"] + p["left_at_end"], p
	PY
	expect_eq "$(jget "$WORK/g.json" segments.again)" 0 "segments sent again"
	# several in flight: the server acknowledges at once, no 40 ms delayed ACK per segment
	expect_range "$(jget "$WORK/g.json" requests.response_us.p99)" 0 40000 "response time p99 (us)"
	server_clean
	books_balanced
}

test_tcp_large_post_lossy() {
	bed
	nginx_start
	peer_xdp
	# one in 50 of our segments dropped at the server's firewall: lost segments inside a window of
	# the pump's are sent again on the third duplicate ACK, or after a timeout
	lossy_firewall 50
	head -c 10240 /dev/urandom >"$WORK/body"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'POST /post' \
		--body "$WORK/body" --pps 500 --count 1000 --wait 15s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	sessions_add_up
	local completed len
	completed=$(jget "$WORK/g.json" sessions.completed)
	len=$(jget "$WORK/g.json" requests.bytes)
	# a session whose SYN dies three times (1 in 125,000) fails, named
	expect_range "$completed" 999 1000 "sessions completed"
	[ "$(jget "$WORK/g.json" segments.after_duplicate_acks)" -gt 0 ] || fail "nothing sent again on duplicate ACKs"
	# every POST of a completed session arrived whole, once
	expect_eq "$(awk -v l="$len" '$2 == 200 && $3 == l' "$NGINX_DIR/access.log" | wc -l)" "$completed" \
		"POSTs of $len bytes answered 200"
	expect_eq "$(wc -l <"$NGINX_DIR/access.log")" "$completed" "lines in nginx's access log"
}

# raw_response PATH: the response nginx gives to one GET of PATH, headers lower-cased, in $WORK/raw
raw_response() {
	tb_gen python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 80), timeout=5)
s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % sys.argv[2].encode())
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
sys.stdout.write(head.decode().lower() + "\n\nbody %d\n" % len(body))' "$TB_SRV_IP" "$1" >"$WORK/raw" ||
		fail "GET $1 from nginx"
}

test_tcp_chunked_and_long_header() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	# what nginx sends: a 100 KB body in chunks, and a header of more than two segments
	raw_response /chunked/big.html
	grep -q "^transfer-encoding: chunked" "$WORK/raw" || fail "not chunked: $(head -c 300 "$WORK/raw")"
	raw_response /long-header
	[ "$(head -c 4000 "$WORK/raw" | wc -c)" -gt 3000 ] || fail "the header is short: $(head -c 300 "$WORK/raw")"
	: >"$NGINX_DIR/access.log"
	# three requests a session: each response must end exactly where it does for the next to be read
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /chunked/big.html' \
		--requests-per-session 3 --pps 200 --count 300 --wait 10s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp (chunked) exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 300 "sessions with chunked responses completed"
	expect_eq "$(jget "$WORK/g.json" requests.status.2xx)" 900 "chunked responses read"
	expect_eq "$(log_lines 200)" 900 "chunked 200s in nginx's access log"
	[ "$(jget "$WORK/g.json" requests.first_byte_us.p50)" != 0 ] || fail "no first-byte times"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /long-header' \
		--requests-per-session 3 --pps 200 --count 300 --wait 10s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp (long header) exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 300 "sessions with 3 KB headers completed"
	expect_eq "$(jget "$WORK/g.json" requests.status.2xx)" 900 "responses with 3 KB headers read"
	expect_eq "$(log_lines 200)" 1800 "200s in nginx's access log"
	count_wait
	server_clean
}

test_tcp_fields() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	# every request its own: the session's number and the request's in the URI
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--http 'GET /index.html?c={c}&k={k}' --requests-per-session 3 --pps 2k --count 1000 \
		--wait 5s --json "$WORK/g.json" >"$WORK/out" 2>&1 || fail "gen tcp exited $?: $(cat "$WORK/out")"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 1000 "sessions completed"
	expect_eq "$(awk '$2 == 200 { print $6 }' "$NGINX_DIR/access.log" | sort -u | wc -l)" 3000 "distinct URIs"
	# session c's requests k = 0, 1, 2 in order on one connection, c in 10 digits
	awk '$2 == 200 { print $5, $6 }' "$NGINX_DIR/access.log" | python3 -c '
import re, sys
seen = set()
for line in sys.stdin:
    n, uri = line.split()
    m = re.fullmatch(r"/index.html\?c=(\d{10})&k=(\d{10})", uri)
    assert m, uri
    c, k = int(m.group(1)), int(m.group(2))
    assert c < 1000 and k == int(n) - 1, line
    seen.add((c, k))
assert len(seen) == 3000, len(seen)' || fail "URIs not each session's and request's own"
	# the same through the pump (a 10 KB body: no segment fits in place) and its retransmissions
	head -c 10240 /dev/urandom >"$WORK/body"
	: >"$NGINX_DIR/access.log"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'POST /post?c={c}' \
		--body "$WORK/body" --pps 500 --count 500 --wait 5s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 500 "POST sessions completed"
	expect_eq "$(awk '$2 == 200 { print $6 }' "$NGINX_DIR/access.log" | sort -u | grep -cE '^/post\?c=0000000[0-9]{3}$')" \
		500 "distinct POST URIs"
	count_wait
	server_clean
	run_bad 2 "at most 4 \\{c\\} and \\{k\\} fields" "$XR" gen tcp -i lo --dst 198.18.0.2 \
		--http 'GET /{c}{c}{k}{k}{c}'
}

test_tcp_http_selftest() {
	# the HTTP reader in XDP against user/proto/http/http.c: random responses, random segments
	"$XR" selftest --only http --cases 2000 --seed "$RANDOM" >"$WORK/out" 2>&1 || fail "$(cat "$WORK/out")"
	cat "$WORK/out"
	grep -qE "^selftest http: 2000 responses .* in [0-9]{4,} segments, 0 mismatches" "$WORK/out" || fail "$(cat "$WORK/out")"
	[ "$(grep -c "^selftest" "$WORK/out")" = 1 ] || fail "--only ran other parts: $(cat "$WORK/out")"
	run_bad 2 "selftest: --only: .*not 'nope'" "$XR" selftest --only nope
}

test_tcp_failures_attributed() {
	bed
	nginx_start
	# a closed port: every SYN refused with a RST; no session completed is a failed run, one line why
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:81" --src 198.18.64.0/23 --http 'GET /' \
		--pps 1k --count 1000 --json "$WORK/g.json" >"$WORK/out" 2>&1
	expect_eq "$?" 1 "exit when no session completed"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.refused)" 1000 "sessions refused"
	grep -q "refused (RST to the SYN) 1000" "$WORK/out" || fail "no reason given: $(cat "$WORK/out")"
	grep -q "no session of 1000 completed: 1000 failed as refused (RST to the SYN)" "$WORK/out" ||
		fail "no verdict line: $(cat "$WORK/out")"
	# the same without a report or JSON: the exit says it
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:81" --src 198.18.64.0/23 --http 'GET /' \
		--pps 1k --count 10 -q >"$WORK/out" 2>&1
	expect_eq "$?" 1 "exit when no session completed (-q)"
	expect_eq "$(grep -c "no session of 10 completed" "$WORK/out")" 1 "the verdict's line (-q)"
	# a response that never ends where we were told it would: counted, not waited for forever, and
	# each session reset when the run ends, so that nginx lets go of it then (its keep-alive
	# timeout would have held them 75 s): every one of its connections reset in ESTABLISHED
	count_start --tcp --dport 80 --duration 60s --idle 3s
	local resets
	resets=$(tb_srv nstat -az TcpEstabResets | awk '/TcpEstabResets/ {print $2}')
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--response 100k --pps 1k --count 1000 --wait 1s --json "$WORK/g.json" >"$WORK/out" 2>&1
	expect_eq "$?" 1 "exit when no response completed"
	kill -INT "$COUNT_PID"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.stalled_response)" 1000 "responses never complete"
	grep -q "response never complete 1000" "$WORK/out" || fail "no reason given: $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" sessions.reset_at_end)" 1000 "sessions reset at the end"
	grep -q "still open when the run ended: 1000 reset (RST)" "$WORK/out" || fail "no reset line: $(cat "$WORK/out")"
	expect_eq "$(($(tb_srv nstat -az TcpEstabResets | awk '/TcpEstabResets/ {print $2}') - resets))" 1000 \
		"nginx's connections reset"
	expect_eq "$(tb_srv ss -Htn state established '( sport = :80 )' | wc -l)" 0 "nginx's connections left open"
	# no route back to the sources: no SYN-ACK, and the report says where to look
	tb_srv ip route del "$TB_POOL" || fail "route"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--pps 1k --count 500 --wait 300ms --json "$WORK/g.json" >"$WORK/out" 2>&1
	expect_eq "$?" 1 "exit when no SYN was answered"
	grep -q "no session of 500 completed: 500 failed as no SYN-ACK" "$WORK/out" ||
		fail "no verdict line: $(cat "$WORK/out")"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.no_syn_ack)" 500 "sessions without a SYN-ACK"
	grep -q "route back to the sources" "$WORK/out" || fail "no hint at the route: $(cat "$WORK/out")"
}

# A close the server never acknowledges (its firewall drops our FINs): each session's FIN goes again
# after 0.2, 0.4 ... 6.4 s, then the session is given up, and counted once, as a timeout (not also
# as a close that never completed)
test_tcp_fin_unanswered() {
	bed
	nginx_start
	tb_srv nft -f - <<-NFT || fail "nft"
	table inet finloss {
		chain in {
			type filter hook input priority 0;
			tcp dport 80 tcp flags & fin == fin counter drop
		}
	}
	NFT
	count_start --tcp --dport 80 --duration 60s --idle 20s
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--pps 100 --count 5 --wait 20s --json "$WORK/g.json" >"$WORK/out" 2>&1
	expect_eq "$?" 1 "exit when no session completed ($(cat "$WORK/out"))"
	grep -q "no answer to 6 retransmissions 5$" "$WORK/out" || fail "no reason given: $(cat "$WORK/out")"
	kill -INT "$COUNT_PID"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.timeout)" 5 "closes given up"
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.stalled_close)" 0 "closes counted again as stalled"
	expect_eq "$(log_lines 200)" 5 "200s in nginx's access log"
}

test_tcp_lossy_server() {
	bed
	nginx_start
	# one in 100 of our segments dropped at the server's firewall, SYNs included
	lossy_firewall 100
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--requests-per-session 3 --pps 2k --count 5000 --wait 10s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen tcp exited $?: $(cat "$WORK/out")"
	count_wait
	sessions_add_up
	local completed dropped
	completed=$(jget "$WORK/g.json" sessions.completed)
	# every loss is repaired, by the server's retransmission or by ours after a timeout (a SYN
	# after 1 s and 3 s; a session whose SYN dies three times, one in a million, fails named)
	expect_range "$completed" 4998 5000 "sessions completed: $(grep -A1 sessions: "$WORK/out")"
	[ "$(jget "$WORK/g.json" segments.after_timeout)" -gt 0 ] || fail "nothing retransmitted after a timeout"
	expect_range "$(jget "$WORK/g.json" segments.syns_again)" 10 150 "SYNs sent again (about 1 in 100)"
	# every request of a completed session is in nginx's log once: no request was doubled
	expect_eq "$(log_lines 200)" $((completed * 3)) "200s in nginx's access log"
	dropped=$(tb_srv nft list table inet loss | grep -oE 'packets [0-9]+' | awk '{ print $2 }')
	expect_eq "$(jget "$WORK/c.json" drops.inbound.NETFILTER_DROP)" "$dropped" "drops attributed to the firewall"
	# (count's books are not held here: under loss about 1 segment in 30,000 is consumed where
	# its tracer does not look yet, e.g. by a closing socket; issue notes)
	cat "$WORK/out"
}

test_tcp_overload_books() {
	bed
	# twice what nginx takes (~18k/s here: 20k/s once left no session failed in CI, with 19 listen
	# drops that SYN retransmissions mended), into a listen backlog of 16 (SYN cookies on, as by
	# default): sessions fail, and both sides' books still add up (cookie ACKs without room for their
	# socket are freed as NO_SOCKET and are in ListenDrops too; the veth's full ring frees skbs before XDP)
	nginx_start 16
	count_start --tcp --dport 80 --duration 60s --idle 4s --json "$WORK/c.json"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--pps 40k --count 30k --wait 2s --json "$WORK/g.json" >"$WORK/out" 2>&1
	# 1: some SYNs not sent (the server's full veth ring refused them): counted among the failed
	local rc=$?
	[ $rc -le 1 ] || fail "gen tcp exited $rc: $(cat "$WORK/out")"
	count_wait
	sessions_add_up
	[ "$(jget "$WORK/g.json" sessions.failed)" -gt 0 ] || fail "no session failed: not an overload"
	[ "$(jget "$WORK/c.json" attribution.tcp_listen_drops)" -gt 0 ] || fail "no listen drops: not an overload"
	books_balanced
}

test_tcp_search() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 120s --idle 30s
	# below what nginx takes here (about 18k sessions/s): never saturated, every session completed
	tb_gen "$XR" search --witness replies --preset quick --min 1k --max 8k --max-trials 8 \
		--json "$WORK/s.json" -- gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--http 'GET /' --wait 3s >"$WORK/out" 2>&1 || fail "search exited $?: $(tail -n 5 "$WORK/out")"
	kill -INT "$COUNT_PID"
	count_wait
	# the witness is the sessions completed: each trial's sessions, all of them
	search_all_completed 8000
	expect_eq "$(wc -l <"$NGINX_DIR/access.log")" "$(python3 -c 'import json,sys; print(sum(t["asked"] for t in json.load(open(sys.argv[1]))["trials"]))' "$WORK/s.json")" \
		"nginx's access log lines: one per session of every trial"
}

test_tcp_bad_input() {
	bed
	local g=(ip netns exec "$TB_NS_GEN" "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --count 1)
	: >"$WORK/empty"
	head -c 70000 /dev/zero >"$WORK/big"
	{ head -c 66000 /dev/zero; printf '{c}'; } >"$WORK/late-field"
	run_bad 2 "say what to send" "${g[@]}"
	run_bad 2 "empty" "${g[@]}" --request "$WORK/empty"
	run_bad 2 "more than the 69632 bytes" "${g[@]}" --request "$WORK/big"
	run_bad 2 "more than the 69632 bytes" "${g[@]}" --http 'POST /' --body "$WORK/big"
	run_bad 2 "a field at byte 66000: fields go in the first 65525 bytes" "${g[@]}" --request "$WORK/late-field"
	run_bad 2 "no-such-file" "${g[@]}" --request "$WORK/no-such-file"
	run_bad 2 "METHOD /path" "${g[@]}" --http 'GET'
	run_bad 2 "METHOD /path" "${g[@]}" --http 'GET index.html'
	run_bad 2 "fin or rst" "${g[@]}" --http 'GET /' --close later
	run_bad 2 "between 1 and 65535" "${g[@]}" --http 'GET /' --requests-per-session 0
	run_bad 2 "http, or a size" "${g[@]}" --http 'GET /' --response 0
	run_bad 2 "goes with --http" "${g[@]}" --request "$WORK/big" --body "$WORK/big"
	run_bad 2 "requests per second, above 0" "${g[@]}" --http 'GET /' --request-rate 0
	run_bad 2 "requests-per-session 2 or more" "${g[@]}" --http 'GET /' --request-rate 1k
	run_bad 2 "no --duration" "${g[@]}" --http 'GET /' --requests-per-session 5 --request-rate 1k \
		--duration 2s
	run_bad 2 "give '--request-rate search'" "$XR" search --witness replies -- gen tcp \
		-i "$TB_GEN_IF" --dst "$TB_SRV_IP" --http 'GET /' --requests-per-session 5 --request-rate 1k
	run_bad 2 "for search's trials" "${g[@]}" --http 'GET /' --count 5 --request-rate search
	run_bad 2 "give none" "$XR" search --witness replies -- gen tcp -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP" --http 'GET /' --count 5 --requests-per-session 5 --request-rate search
	run_bad 2 "give --count" "$XR" search --witness replies -- gen tcp -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP" --http 'GET /' --request-rate search
	run_bad 2 "raise --count" "$XR" search --witness replies --max 1G -- gen tcp -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP" --http 'GET /' --count 2 --request-rate search
}

# --request-rate: a precise total request rate over keep-alive sessions (as wrk2 -R): 20 sessions
# have their first request answered, then their other 100 requests each go at 2,000/s in all, so the
# paced 2,000 take 1 s; every one sent once (at its departure, or late as the one before is
# answered), all 2,020 in nginx's log, the 101st of each on its connection
test_tcp_request_rate() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	tb_gen "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --http 'GET /' \
		--requests-per-session 101 --request-rate 2k --count 20 --wait 5s \
		--json "$WORK/g.json" >"$WORK/out" 2>&1 || fail "gen tcp exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 20 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" requests.responses)" 2020 "responses"
	expect_eq "$(log_lines 200)" 2020 "200s in nginx's access log"
	expect_eq "$(awk '$5 == 101' "$NGINX_DIR/access.log" | wc -l)" 20 "101st requests of a connection"
	python3 - "$WORK/g.json" <<-'PY' || fail "the paced requests: $(cat "$WORK/out")"
	import json, sys
	p = json.load(open(sys.argv[1]))["requests"]["pace"]
	print("pace:", p)
	assert p["departures"] == 2000 and p["reached"] == 2000, p
	assert p["at_departure"] + p["late"] == 2000 and p["gate_mismatched"] == 0, p
	assert abs(p["per_s"] - 2000) < 1e-6, p
	# a test bed's margins: the 1 s schedule, answered at about the rate asked
	assert 0.9 < p["seconds"] < 2 and 1000 < p["answered_per_s"] < 2100, p
	assert p["at_departure"] >= 1000, p
	PY
	grep -q "paced: 2000 requests at 2.00k/s over 1.000 s" "$WORK/out" || fail "no pace line: $(cat "$WORK/out")"
	server_clean
	books_balanced
}

# search over --request-rate: each trial paces its rate over its own 16 sessions (1 + rate x time
# / 16 requests each); below nginx's limit every paced request of every trial is answered, and
# nginx logged each trial's requests, the first of each session included
test_tcp_request_rate_search() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 120s --idle 5s --json "$WORK/c.json"
	tb_gen "$XR" search --witness replies --preset quick --min 1k --max 4k --max-trials 3 \
		--json "$WORK/s.json" -- gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--http 'GET /' --count 16 --request-rate search >"$WORK/out" 2>&1 ||
		fail "search exited $?: $(tail -n 5 "$WORK/out")"
	cat "$WORK/out"
	search_all_completed 4000
	grep -q "search: 1.00k to 4.00k requests/s" "$WORK/out" || fail "no load unit: $(head -n 2 "$WORK/out")"
	python3 - "$WORK/s.json" "$(log_lines 200)" <<-'PY' || fail "the paced trials: $(cat "$WORK/out")"
	import json, math, sys
	s = json.load(open(sys.argv[1]))
	assert s["settings"]["load_unit"] == "requests", s["settings"]
	logged = 0
	for t in s["trials"]:
	    # each of the 16 sessions: its first request, then rate x 0.5 s / 16 paced ones
	    per = math.ceil(t["offered_pps"] * 0.5 / 16)
	    assert t["asked"] == 16 * per and t["sent"] == t["asked"], t
	    assert t["received_over_s"] >= 0.5, t
	    logged += t["asked"] + 16
	assert logged == int(sys.argv[2]), (logged, sys.argv[2])
	PY
	count_wait
	server_clean
	books_balanced
}

# capture_curl PCAP: curl's own connections to nginx from the bed's sender, recorded by tcpdump
# there as a user would record them: GET /; three requests on one keep-alive connection (a
# 600-byte page, a 100 KB one, the same chunked); a POST of a 10 KB body. Their access-log lines
# go to $WORK/curl.log, and the log starts empty.
capture_curl() {
	command -v tcpdump >/dev/null || skip "tcpdump not installed (scripts/deps.sh installs it)"
	command -v curl >/dev/null || skip "curl not installed (scripts/deps.sh installs it)"
	local u="http://$TB_SRV_IP" tpid i
	# not through tb_gen: $! must be tcpdump itself, for the signal that ends it
	ip netns exec "$TB_NS_GEN" tcpdump -i "$TB_GEN_IF" -U -w "$1" "tcp port 80" 2>"$WORK/tcpdump.err" &
	tpid=$!
	for i in $(seq 100); do
		grep -q "listening on" "$WORK/tcpdump.err" && break
		sleep 0.05
	done
	head -c 10000 /dev/zero | tr '\0' 'p' >"$WORK/body"
	tb_gen curl -sf -o /dev/null "$u/" || fail "curl GET /"
	tb_gen curl -sf -o /dev/null -o /dev/null -o /dev/null "$u/index.html" "$u/big.html" \
		"$u/chunked/big.html" || fail "curl keep-alive"
	tb_gen curl -sf -o /dev/null --data-binary @"$WORK/body" "$u/post" || fail "curl POST"
	# until tcpdump has written the three connections' FINs and nothing more for 0.2 s (it
	# lags what it has received, and a SIGINT then loses the rest)
	local n last=-1
	for i in $(seq 50); do
		n=$(tcpdump -nr "$1" 2>/dev/null | wc -l)
		[ "$(tcpdump -nr "$1" 2>/dev/null | grep -c "Flags \[F")" -ge 6 ] && [ "$n" = "$last" ] && break
		last=$n
		sleep 0.2
	done
	kill -INT "$tpid"
	wait "$tpid"
	cp "$NGINX_DIR/access.log" "$WORK/curl.log"
	: >"$NGINX_DIR/access.log"
}

# uri_lines URI [STATUS]: lines of nginx's access log for that URI (with that status)
uri_lines() { awk -v u="$1" -v s="${2:-}" '$6 == u && (s == "" || $2 == s)' "$NGINX_DIR/access.log" | wc -l; }

# replay_sessions SRC ARGS...: replay --sessions from the sender's interface to nginx, sources SRC,
# JSON to $WORK/g.json, its lines to $WORK/out (and the log)
replay_sessions() {
	local src=$1
	shift
	tb_gen "$XR" replay --sessions -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src "$src" --wait 3s \
		--json "$WORK/g.json" "$@" >"$WORK/out" 2>&1 || fail "replay --sessions $* exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
}

# A capture of curl's connections becomes a load: each of its three flows played 100 times over
# fresh connections, every request arriving whole (nginx's request_length is the capture's), every
# response read to its end (HTTP/1.x: Content-Length, chunked), the server's counters clean.
test_tcp_replay_sessions() {
	bed
	nginx_start
	capture_curl "$WORK/web.pcap"
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	replay_sessions 198.18.64.0/23 --count 300 --pps 1k "$WORK/web.pcap"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" flows.played)" 3 "flows played"
	expect_eq "$(jget "$WORK/g.json" flows.skipped)" 0 "flows skipped"
	expect_eq "$(jget "$WORK/g.json" flows.requests)" 5 "the capture's requests"
	expect_eq "$(jget "$WORK/g.json" flows.response)" http "responses read as"
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 300 "sessions completed: $(grep -A2 sessions: "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" requests.responses)" 500 "responses"
	local u len
	for u in / /index.html /big.html /chunked/big.html /post; do
		expect_eq "$(uri_lines "$u" 200)" 100 "200s for $u in nginx's access log"
		# the request as curl sent it, byte for byte as many
		len=$(awk -v u="$u" '$6 == u { print $3 }' "$WORK/curl.log")
		expect_eq "$(awk -v u="$u" -v l="$len" '$6 == u && $3 == l' "$NGINX_DIR/access.log" | wc -l)" 100 "$u requests of $len bytes"
	done
	# the keep-alive flow's three requests came on one connection each time
	expect_eq "$(awk '$6 == "/chunked/big.html" && $5 == 3' "$NGINX_DIR/access.log" | wc -l)" 100 "third requests of a connection"
	server_clean
	# count's books too: sessions with 100 KB responses (their ACKs coalesced in the server's
	# backlog) were off by about one segment a session while count read the TCP header 4 bytes early
	books_balanced
	# a response ends after the bytes the capture saw (nginx says the same again: the same files,
	# the same header lengths)
	: >"$NGINX_DIR/access.log"
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	replay_sessions 198.18.66.0/23 --response capture --count 30 --pps 1k "$WORK/web.pcap"
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" flows.response)" capture "responses read as"
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 30 "sessions completed (--response capture)"
	expect_eq "$(jget "$WORK/g.json" requests.responses)" 50 "responses (--response capture)"
	expect_eq "$(log_lines 200)" 50 "200s in nginx's access log (--response capture)"
	count_wait
	server_clean
	books_balanced
}

# pcaps/tcp-flows.pcap (mkpcap.py tcp_flows()): eight flows as a capture has them. Three are played
# (one put together from segments captured out of order and twice, one behind an 802.1Q tag, one
# on the first one's pair after it closed); each of the others is counted by why it is not
# (no SYN, the server spoke first, no client data, bytes missing, a request over 68 KiB).
test_tcp_replay_sessions_flows() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	replay_sessions 198.18.64.0/23 --count 300 --pps 1k "$TOP/pcaps/tcp-flows.pcap"
	count_wait
	sessions_add_up
	python3 - "$WORK/g.json" <<-'PY' || fail "the capture's books"
	import json, sys
	f = json.load(open(sys.argv[1]))["flows"]
	print(f)
	want = {"frames": 118, "tcp_frames": 116, "other_frames": 2, "seen": 8, "played": 3, "skipped": 5,
	        "requests": 4, "distinct_requests": 3, "response": "http",
	        "skipped_by": {"no_syn": 1, "server_first": 1, "no_client_data": 1, "gap": 1,
	                       "request_too_long": 1, "too_many_requests": 0, "stream_too_long": 0,
	                       "distinct_requests_full": 0}}
	for k, v in want.items():
	    assert f[k] == v, (k, f[k], v)
	PY
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 300 "sessions completed: $(grep -A2 sessions: "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" requests.responses)" 400 "responses"
	expect_eq "$(uri_lines /index.html 200)" 100 "/index.html (flow A's first request, put together)"
	expect_eq "$(uri_lines / 200)" 200 "/ (A's second request, and H's)"
	expect_eq "$(uri_lines /big.html 200)" 100 "/big.html (G, behind its VLAN tag)"
	expect_eq "$(awk '$6 == "/index.html" && $3 == 79' "$NGINX_DIR/access.log" | wc -l)" 100 "whole 79-byte requests"
	server_clean
	books_balanced
	# --duration asks for what the rate gives in that time, not one pass over the flows
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	replay_sessions 198.18.66.0/23 --pps 1k --duration 0.3s "$TOP/pcaps/tcp-flows.pcap"
	count_wait
	expect_eq "$(jget "$WORK/g.json" sessions.asked)" 300 "sessions asked in 0.3 s at 1k/s"
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 300 "sessions completed in 0.3 s at 1k/s"
}

# --multiplier: each session starts when its flow did in the capture (A at 0, G at 98 ms, H at 107 ms;
# the next round one mean gap after H, at 160.5 ms), here 10 times slower: the SYNs the server saw
# are 0, 0.98, 1.07, 1.605, 2.585 and 2.675 s after the first
test_tcp_replay_sessions_captured_times() {
	bed
	nginx_start
	# an XDP program on the server's end, so that the sessions' XDP_TX frames reach it at once
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	# it stops by itself: after the 6 SYNs, or 12 s
	tb_srv timeout -s INT 12 tcpdump -i "$TB_SRV_IF" -n -c 6 -w "$WORK/syn.pcap" -U \
		'tcp[13] == 2 and dst port 80' 2>/dev/null &
	local dump=$!
	sleep 1
	replay_sessions 198.18.68.0/23 --multiplier 0.1 --count 6 "$TOP/pcaps/tcp-flows.pcap"
	wait "$dump"
	count_wait
	sessions_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 6 "sessions completed"
	python3 - "$WORK/syn.pcap" <<-'PY' || fail "the SYNs' times"
	import struct, sys
	d = open(sys.argv[1], "rb").read()
	e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
	div = 1e9 if d[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1e6
	at, seen, off = [], set(), 24
	while off + 16 <= len(d):
	    s, frac, cap, _ = struct.unpack(e + "IIII", d[off:off + 16])
	    f = d[off + 16:off + 16 + cap]
	    off += 16 + cap
	    pair = (f[26:30], f[34:36])
	    if pair not in seen:  # a SYN sent again is not a new session
	        seen.add(pair)
	        at.append(s + frac / div)
	rel = [round(t - at[0], 3) for t in at]
	want = [0, 0.98, 1.07, 1.605, 2.585, 2.675]
	print("SYNs at", rel, "want", want)
	assert len(rel) == 6 and all(abs(a - b) < 0.05 for a, b in zip(rel, want)), rel
	PY
}

# replay --sessions on bad input: one line naming the problem, exit 2, nothing sent
test_tcp_replay_sessions_bad_input() {
	bed
	local r=(ip netns exec "$TB_NS_GEN" "$XR" replay --sessions -i "$TB_GEN_IF" --dst "$TB_SRV_IP")
	local f
	for f in empty badmagic truncated-header truncated-record huge-caplen garbage; do
		"${r[@]}" "$WORK/hostile/$f.pcap" >"$WORK/out" 2>"$WORK/err"
		expect_eq $? 2 "exit status for $f.pcap"
		expect_eq "$(wc -l <"$WORK/err")" 1 "error lines for $f.pcap: $(cat "$WORK/err")"
		grep -q "$f.pcap: " "$WORK/err" || fail "error does not name $f.pcap: $(cat "$WORK/err")"
	done
	run_bad 2 "no TCP flow to play in $TOP/pcaps/udp-64.pcap: 1 frames, 0 IPv4 TCP segments, 0 flows" \
		"${r[@]}" "$TOP/pcaps/udp-64.pcap"
	run_bad 2 "missing capture FILE" "${r[@]}"
	run_bad 2 "http or capture" "${r[@]}" --response 100 "$TOP/pcaps/tcp-flows.pcap"
	run_bad 2 "fin or rst" "${r[@]}" --close later "$TOP/pcaps/tcp-flows.pcap"
	run_bad 2 "IPv4 only" ip netns exec "$TB_NS_GEN" "$XR" replay --sessions -i "$TB_GEN_IF" \
		--dst 2001:db8::1 "$TOP/pcaps/tcp-flows.pcap"
	run_bad 2 "missing --dst" ip netns exec "$TB_NS_GEN" "$XR" replay --sessions -i "$TB_GEN_IF" \
		"$TOP/pcaps/tcp-flows.pcap"
	# flows of the capture to two ports, and no port given
	python3 - "$TOP/pcaps/tcp-flows.pcap" "$WORK/two-ports.pcap" <<-'PY' || fail "two-ports.pcap"
	import struct, sys
	sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
	import mkpcap
	frames = mkpcap.tcp_flows()
	# flow G (its frames carry the 802.1Q tag) goes to port 8080 instead
	def to8080(f):
	    if f[12:14] != b"\x81\x00":
	        return f
	    ip = f[18:]
	    th = bytearray(ip[20:])
	    c2s = ip[16:20] == mkpcap.SRV_IP
	    sport, dport = struct.unpack("!HH", th[:4])
	    th[0:4] = struct.pack("!HH", sport, 8080) if c2s else struct.pack("!HH", 8080, dport)
	    return mkpcap.tcp_frame(ip[12:16], ip[16:20], *struct.unpack("!HHII", th[:12]),
	                            "".join(c for b, c in ((1, "F"), (2, "S"), (8, "P"), (16, "A")) if th[13] & b),
	                            bytes(th[20:]), vlan=100)
	open(sys.argv[2], "wb").write(mkpcap.pcap_bytes([(t, to8080(f)) for t, f in frames]))
	PY
	run_bad 2 "several server ports: say which with --dst ADDR:PORT" "${r[@]}" "$WORK/two-ports.pcap"
	expect_eq "$(wc -l <"$WORK/err")" 1 "error lines: $(cat "$WORK/err")"
	# 1,100 flows of distinct requests: the first 1,024 distinct ones are played, the rest counted
	# (one session, to a port nobody listens on: refused, its books are not this part's)
	python3 - "$TOP/pcaps" "$WORK/many.pcap" <<-'PY' || fail "many.pcap"
	import sys
	sys.path.insert(0, sys.argv[1])
	import mkpcap
	C, S, out = mkpcap.GEN_IP, mkpcap.SRV_IP, []
	for i in range(1100):
	    out += [mkpcap.tcp_frame(C, S, 20000 + i, 80, 1000, 0, "S"),
	            mkpcap.tcp_frame(S, C, 80, 20000 + i, 5000, 1001, "SA"),
	            mkpcap.tcp_frame(C, S, 20000 + i, 80, 1001, 5001, "PA", mkpcap.http_get(b"/item/%d" % i))]
	open(sys.argv[2], "wb").write(mkpcap.pcap_bytes([(k * 1000, f) for k, f in enumerate(out)]))
	PY
	"${r[@]}" --src 198.18.64.0/23 --count 1 --wait 1s --json "$WORK/g.json" "$WORK/many.pcap" >"$WORK/out" 2>&1
	[ -s "$WORK/g.json" ] || fail "many distinct requests: no JSON: $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" flows.played)" 1024 "flows played"
	expect_eq "$(jget "$WORK/g.json" flows.distinct_requests)" 1024 "distinct requests"
	expect_eq "$(jget "$WORK/g.json" flows.skipped_by.distinct_requests_full)" 76 "flows past 1,024 distinct requests"
}

# search drives replay --sessions as it does gen tcp: the witness is the sessions completed, each
# trial a capture's flows played at the trial's rate
test_tcp_replay_sessions_search() {
	bed
	nginx_start
	count_start --tcp --dport 80 --duration 120s --idle 30s
	tb_gen "$XR" search --witness replies --preset quick --min 500 --max 2k --max-trials 3 \
		--json "$WORK/s.json" -- replay --sessions -i "$TB_GEN_IF" --dst "$TB_SRV_IP" \
		--src 198.18.64.0/23 --wait 3s "$TOP/pcaps/tcp-flows.pcap" >"$WORK/out" 2>&1 ||
		fail "search exited $?: $(tail -n 5 "$WORK/out")"
	kill -INT "$COUNT_PID"
	count_wait
	search_all_completed 2000
	# session c plays flow c mod 3, and flow A asks twice: a third of a trial's sessions, give or
	# take one (where its numbers start)
	python3 - "$WORK/s.json" "$(wc -l <"$NGINX_DIR/access.log")" <<-'PY' || fail "nginx's access log lines: not the requests of every trial's sessions"
	import json, sys
	t = json.load(open(sys.argv[1]))["trials"]
	lo, hi, got = sum(x["asked"] + x["asked"] // 3 for x in t), sum(x["asked"] + (x["asked"] + 2) // 3 for x in t), int(sys.argv[2])
	print(lo, got, hi)
	assert lo <= got <= hi
	PY
}
