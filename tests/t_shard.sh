# SPDX-License-Identifier: GPL-2.0
# Many senders, one run: --shard I/N from N namespaces (tb_up --senders N) adds up at the server to
# exactly one unsharded run; --netns moves a sender into its namespace.

PY=/usr/bin/python3

# shards_run N CMD...: shard I of N runs CMD... --shard I/N --json $WORK/gI.json from sender I's
# namespace (entered with --netns), all at once; fails unless each exits 0
shards_run() {
	local n=$1 i pids=()
	shift
	for i in $(seq 0 $((n - 1))); do
		"$XR" "$@" -i "$TB_GEN_IF" --netns "$(tb_gen_ns "$i")" --shard "$i/$n" --json "$WORK/g$i.json" -q &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || fail "shard $i/$n exited $?"
	done
}

# shards_sum N KEY: KEY summed over the shards' JSON
shards_sum() {
	local i sum=0
	for i in $(seq 0 $(($1 - 1))); do sum=$((sum + $(jget "$WORK/g$i.json" "$2"))); done
	echo "$sum"
}

test_shard_replay_adds_up() {
	bed --senders 3
	count_start --udp --seq ip.id --idle 2s --duration 60s --json "$WORK/c.json"
	# 128 bytes of each frame (its headers): with whole frames (-s 0) each slot of the capture's
	# 32 MiB ring takes 256 KiB, too few slots to keep up with 10k pps on a busy host
	capture_start "$WORK/wire.pcap" -s 128 udp
	# 30,000 frames of one flow (the capture's), ip.id = n: three shards, 10k pps in all
	shards_run 3 replay --rewrite ip.id=seq --count 30000 --pps 10k "$TOP/pcaps/udp-64.pcap"
	count_wait
	capture_stop
	expect_eq "$(shards_sum 3 sent)" 30000 "frames the shards sent"
	expect_eq "$(jget "$WORK/g0.json" asked)" 10000 "shard 0's part"
	expect_eq "$(jget "$WORK/g2.json" shard.run_count)" 30000 "the whole run in each shard's JSON"
	expect_range "$(jget "$WORK/g1.json" target.pps)" 3333 3334 "each shard's part of the rate"
	# the server's sequence tracker sees one flow: every number once
	expect_eq "$(jget "$WORK/c.json" matched)" 30000 "frames counted at the server"
	expect_eq "$(jget "$WORK/c.json" sequence.received)" 30000 "sequence numbers received"
	expect_eq "$(jget "$WORK/c.json" sequence.lost)" 0 "sequence numbers lost"
	expect_eq "$(jget "$WORK/c.json" sequence.duplicated)" 0 "sequence numbers duplicated"
	# and the capture, read independently: ip.id 0..29999, each once, from the three senders
	PYTHONPATH="$TOP/tests" "$PY" - "$WORK/wire.pcap" <<-'PY' || fail "the capture's ip.ids"
	import sys
	from pcapfile import frames
	ids = sorted(int.from_bytes(f[18:20], "big") for f in frames(sys.argv[1]) if f[12:14] == b"\x08\x00")
	assert ids == list(range(30000)), (len(ids), sorted(set(range(30000)) - set(ids))[:20])
	PY
}

test_shard_syn_adds_up() {
	bed --senders 3
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=2 || fail "sysctl"
	# 12 source addresses: shard I owns those of index I mod 3, so the server routes each to its
	# sender (the SYN-ACKs must reach the shard that counts them)
	for j in $(seq 0 11); do
		tb_srv ip route add "198.18.64.$((1 + j))/32" via "$(tb_gen_ip $((j % 3)))" || fail "route"
	done
	local src=198.18.64.1-198.18.64.12 seed=$RANDOM
	# the whole run, unsharded, written instead of sent
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src "$src" --count 6000 --seed "$seed" \
		--pcap-out "$WORK/whole.pcap" -q || fail "gen syn --pcap-out"
	tcp_server_start --timeout 5
	count_start --tcp --dport 80 --idle 2s --duration 60s --json "$WORK/c.json"
	capture_start "$WORK/wire.pcap" 'tcp dst port 80'
	shards_run 3 gen syn --dst "$TB_SRV_IP:80" --src "$src" --seed "$seed" --count 6000 --pps 6k
	count_wait
	capture_stop
	wait "$TCP_PID"
	expect_eq "$(shards_sum 3 sent)" 6000 "SYNs the shards sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 6000 "SYNs counted at the server"
	# each shard matched the answers to its own SYNs: none crossed to another shard
	expect_eq "$(shards_sum 3 replies.syn_acks)" 6000 "SYN-ACKs matched by the shards"
	expect_eq "$(shards_sum 3 replies.unmatched)" 0 "SYN-ACKs no shard could match"
	for i in 0 1 2; do
		expect_eq "$(jget "$WORK/g$i.json" replies.syn_acks)" "$(jget "$WORK/g$i.json" sent)" "shard $i's answers"
	done
	# the union of what the shards sent is the whole run, SYN for SYN (address, port, ISN)
	PYTHONPATH="$TOP/tests" "$PY" - "$WORK/whole.pcap" "$WORK/wire.pcap" <<-'PY' || fail "the shards' SYNs against the whole run's"
	import sys
	from pcapfile import frames
	def syns(path):
	    return sorted((f[26:30], f[34:36], f[38:42]) for f in frames(path) if f[47] & 0x02)
	whole, wire = syns(sys.argv[1]), syns(sys.argv[2])
	assert len(whole) == 6000 and len(set(whole)) == 6000, len(set(whole))
	assert wire == whole, (len(wire), len(set(wire) ^ set(whole)))
	PY
}

test_shard_lorawan_devices_apart() {
	bed --senders 3
	"$XR" lorawan fleet --devices 1500 --gateways 20 --heard-by 2 --seed 11 --out "$WORK/f" -q || fail "fleet"
	rm -f "$WORK/lw.ready"
	tb_srv "$PY" "$TOP/tests/semtech_server.py" --bind "$TB_SRV_IP:1700" --ready "$WORK/lw.ready" \
		--out "$WORK/lw.out" --fleet "$WORK/f" --idle 3 &
	LW_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/lw.ready" ] && break; sleep 0.05; done
	capture_start "$WORK/wire.pcap" udp port 1700
	shards_run 3 lorawan send --fleet "$WORK/f" --server "$TB_SRV_IP" --pps 3k --rounds 2 --wait 5s
	wait "$LW_PID"
	capture_stop
	# 1500 devices x 2 gateways x 2 rounds: every uplink valid, frame counters in order
	expect_eq "$(shards_sum 3 sent)" 6000 "PUSH_DATA the shards sent"
	for k in rejected bad_mic bad_fcnt unknown_devaddr same_gateway; do
		expect_eq "$(jget "$WORK/lw.out" "$k")" 0 "server: $k"
	done
	expect_eq "$(jget "$WORK/lw.out" valid)" 6000 "valid uplinks at the server"
	expect_eq "$(jget "$WORK/lw.out" uplinks)" 3000 "distinct uplinks"
	expect_eq "$(jget "$WORK/lw.out" devices_seen)" 1500 "devices"
	expect_eq "$(shards_sum 3 replies.push_acks)" 6000 "PUSH_ACKs matched by the shards"
	# each device's uplinks, both copies, all from one sender: 500 devices each
	PYTHONPATH="$TOP/tests" "$PY" - "$WORK/wire.pcap" <<-'PY' || fail "devices per sender"
	import base64, collections, json, sys
	from pcapfile import frames
	owner = collections.defaultdict(set)
	for f in frames(sys.argv[1]):
	    for rx in json.loads(f[42 + 12:])["rxpk"]:
	        owner[base64.b64decode(rx["data"])[1:5]].add(f[26:30])
	assert len(owner) == 1500, len(owner)
	assert all(len(s) == 1 for s in owner.values()), [s for s in owner.values() if len(s) > 1][:3]
	per = collections.Counter(next(iter(s)) for s in owner.values())
	assert sorted(per.values()) == [500, 500, 500], per
	PY
}

test_shard_bad_input() {
	bed
	local g=(gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --count 10)
	for bad in 3/3 -1/3 1/0 a/3 1/ /3 2/65537 0/3x; do
		run_bad 2 "--shard: '$bad' is not I/N" tb_gen "$XR" "${g[@]}" --shard "$bad"
	done
	# sources that do not split: replies would reach another shard's host
	run_bad 2 "--src's 10 addresses do not split into 3" \
		tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.1-198.18.64.10 --seed 1 --shard 0/3
	# shards with ISNs keyed apart would not be one run
	run_bad 2 "must share its ISN key: give each the same --seed" \
		tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --shard 0/3
	"$XR" lorawan fleet --devices 100 --gateways 4 --seed 1 --out "$WORK/f" -q || fail "fleet"
	run_bad 2 "the 100 devices do not split into 3" \
		tb_gen "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/f" --server "$TB_SRV_IP" --shard 2/3
	run_bad 2 "search.*--shard" "$XR" search --min 100 --max 1k --witness replies -- gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --shard 0/2
	run_bad 3 "--netns xr-no-such-ns-$$: cannot open /run/netns/xr-no-such-ns-$$" \
		"$XR" "${g[@]}" --netns "xr-no-such-ns-$$"
	run_bad 3 "--netns /dev/null: cannot enter it: not a network namespace" "$XR" "${g[@]}" --netns /dev/null
	# a shard with nothing to send says so and succeeds
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --count 2 --shard 2/3 --json "$WORK/g.json" 2>"$WORK/err" ||
		fail "an empty shard exited $?"
	grep -q "nothing to send" "$WORK/err" || fail "no warning for an empty shard: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/g.json" sent)" 0 "an empty shard's frames"
}

test_shard_start_at_together() {
	bed --senders 3
	count_start --udp --dport 9 --idle 2s --duration 60s --json "$WORK/c.json"
	# launched 0.4 s apart, as a slow launcher would: --start-at lines their first departures up
	local at i pids=()
	at=$(python3 -c 'import time; print("%.3f" % (time.time() + 2.5))')
	for i in 0 1 2; do
		"$XR" gen udp -i "$TB_GEN_IF" --netns "$(tb_gen_ns "$i")" --dst "$TB_SRV_IP:9" --count 6000 --pps 6k \
			--shard "$i/3" --start-at "$at" --json "$WORK/g$i.json" -q &
		pids+=($!)
		sleep 0.4
	done
	for i in "${pids[@]}"; do wait "$i" || fail "a shard exited $?"; done
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 6000 "frames counted at the server"
	python3 - "$WORK" "$at" <<-'PY' || fail "the shards' first departures"
	import json, sys
	starts = [json.load(open("%s/g%d.json" % (sys.argv[1], i)))["start_unix"] for i in range(3)]
	# shard I departs I/6k s after the others' start: 0, 167 and 333 us
	assert all(abs(s - float(sys.argv[2])) < 0.002 for s in starts), (sys.argv[2], starts)
	PY
	run_bad 2 "--start-at: '30' is not a UNIX time" tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" \
		--count 1 --start-at 30
	# its nanoseconds would overflow 64 bits (found by fuzz_sendopts; UBSan's error under san/)
	run_bad 2 "--start-at: '44444444444' is not a UNIX time" tb_gen "$XR" gen udp -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP:9" --count 1 --start-at 44444444444
	tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --count 10 --start-at 1700000000 -q 2>"$WORK/err" ||
		fail "a --start-at in the past exited $?"
	grep -q "start-at was .* ago when the engine was ready: starting now" "$WORK/err" ||
		fail "no warning for a --start-at in the past: $(cat "$WORK/err")"
}

test_netns_keeps_listen_outside() {
	bed
	local port=$((20000 + RANDOM % 20000))
	count_start --udp --dport 9 --idle 2s --duration 60s --json "$WORK/c.json"
	# from the host's namespace: the sender moves into the generator's, its --listen stays here
	"$XR" gen udp -i "$TB_GEN_IF" --netns "$TB_NS_GEN" --dst "$TB_SRV_IP:9" --pps 2k --count 4000 \
		--listen ":$port" -q --json "$WORK/g.json" &
	local pid=$!
	for _ in $(seq 40); do
		curl -sf "http://127.0.0.1:$port/" >"$WORK/live.json" 2>/dev/null && break
		sleep 0.05
	done
	[ -s "$WORK/live.json" ] || fail "no --listen of the sender in the host's namespace"
	expect_eq "$(jget "$WORK/live.json" interface)" "$TB_GEN_IF" "the live figures' interface"
	wait "$pid" || fail "gen udp --netns exited $?"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 4000 "frames counted at the server"
}

# mpi_search ARGS... -- TRIAL...: mpiexec with one rank per sender namespace, each entering its own
# with --netns; output in $WORK/out
mpi_search() {
	local search=() trial=() parts=() i
	while [ "$1" != -- ]; do search+=("$1"); shift; done
	shift
	trial=("$@")
	for i in 0 1 2; do
		[ "$i" = 0 ] || parts+=(:)
		parts+=(-n 1 "$XR" search "${search[@]}" -- "${trial[@]}" --netns "$(tb_gen_ns "$i")")
	done
	timeout 300 mpiexec "${parts[@]}" </dev/null >"$WORK/out" 2>&1
}

# a firewall that admits 5000 new connections a second, its bucket 300 deep, before a listener
syn_firewall() {
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=2 || fail "sysctl"
	tb_srv nft add table inet fw || fail "nft"
	tb_srv nft 'add chain inet fw in { type filter hook input priority 0; }'
	tb_srv nft add rule inet fw in tcp dport 80 ct state new limit rate over 5000/second burst 300 packets \
		counter drop || fail "nft rule"
	tcp_server_start --no-accept --timeout 250
}

test_mpi_search_finds_firewall_limit() {
	command -v mpiexec >/dev/null || fail "mpiexec is missing (scripts/deps.sh installs mpich)"
	bed --senders 3
	syn_firewall
	local src=198.18.64.1-198.18.64.12 j
	local search=(--witness replies --goal NDR=0 --min 1000 --max 20000 --trial 1s --width 0.01)
	local trial=(gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src "$src" --seed 99 --wait 300ms)
	# one sender: every source routed to it
	for j in $(seq 0 11); do tb_srv ip route add "198.18.64.$((1 + j))/32" via "$(tb_gen_ip 0)" || fail "route"; done
	tb_geni 0 "$XR" search "${search[@]}" --json "$WORK/one.json" -- "${trial[@]}" >"$WORK/out" 2>&1 ||
		fail "one sender's search exited $?: $(tail -n 3 "$WORK/out")"
	# three ranks, a shard each: each source routed to the rank that owns it (index mod 3); other
	# (address, port) pairs than the first search's, whose connections the firewall still tracks
	for j in $(seq 0 11); do tb_srv ip route replace "198.18.64.$((1 + j))/32" via "$(tb_gen_ip $((j % 3)))"; done
	mpi_search "${search[@]}" --json "$WORK/three.json" -- "${trial[@]}" --first-seq 1000000 ||
		fail "the MPI search exited $?: $(tail -n 5 "$WORK/out")"
	grep -q "3 ranks (MPI)" "$WORK/out" || fail "not a search across 3 ranks: $(head -n 3 "$WORK/out")"
	python3 - "$WORK/one.json" "$WORK/three.json" <<-'PY' || fail "NDR of one sender against three ranks: $(tail -n 4 "$WORK/out")"
	import json, sys
	one, three = (json.load(open(p)) for p in sys.argv[1:3])
	n1, n3 = one["goals"][0]["lower"], three["goals"][0]["lower"]
	# the limit, and the bucket's 300 at a 1 s trial's start (3.5%: see test_ndr_finds_firewall_limit)
	for n in (n1, n3):
	    assert abs(n - 5300) <= 0.035 * 5000, (n1, n3)
	assert abs(n3 - n1) <= 0.02 * n1, (n1, n3)
	assert three["ranks"] == 3 and one["ranks"] == 1
	for t in three["trials"]:
	    r = t["ranks"]
	    assert len(r) == 3 and "rank_failed" not in t, t
	    # every rank sent its third; the figures are their sums
	    assert sum(x["asked"] for x in r) == t["asked"] and sum(x["sent"] for x in r) == t["sent"], t
	    assert max(x["asked"] for x in r) - min(x["asked"] for x in r) <= 1, r
	# the ranks start together once the margin covers their set-up (one host, one clock)
	assert sorted(t["start_skew_us"] for t in three["trials"])[len(three["trials"]) // 2] < 1000, three["trials"]
	PY
}

test_mpi_rank_that_cannot_send() {
	command -v mpiexec >/dev/null || fail "mpiexec is missing (scripts/deps.sh installs mpich)"
	bed --senders 3
	# sender 2's link is down: its shard of every trial fails
	tb_geni 2 ip link set "$TB_GEN_IF" down || fail "link down"
	mpi_search --witness replies --goal NDR=0 --min 1000 --max 5000 --trial 500ms --json "$WORK/s.json" -- \
		gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --seed 1 --wait 100ms
	expect_eq "$?" 1 "exit status of a search stopped by a rank"
	grep -q "RANK 2 FAILED" "$WORK/out" || fail "no trial flagged: $(tail -n 5 "$WORK/out")"
	python3 - "$WORK/s.json" <<-'PY' || fail "the flagged trials: $(tail -n 5 "$WORK/out")"
	import json, sys
	s = json.load(open(sys.argv[1]))
	assert len(s["trials"]) == 2, s["trials"]
	for t in s["trials"]:
	    assert t["rank_failed"] == 2 and t["ranks"][2]["exit"] != 0 and t["ranks"][2]["why"], t
	    assert t["ranks"][0]["sent"] > 0 and t["ranks"][1]["sent"] > 0, t
	assert "rank 2 could not send twice" in s["stopped"], s.get("stopped")
	assert all(g["lower"] == 0 and g["upper"] == 0 for g in s["goals"]), s["goals"]
	PY
}

test_shard_tcp_sessions_add_up() {
	command -v nginx >/dev/null || skip "nginx not installed (scripts/deps.sh installs it)"
	. "$TOP/scripts/nginx.sh"
	bed --senders 3
	NGINX_DIR=$(mktemp -d "$WORK/nginx.XXXXXX")
	nginx_conf "$NGINX_DIR" "$TB_SRV_IP" 4096
	tb_srv nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" 2>"$NGINX_DIR/stderr" &
	# not local: the EXIT trap runs after this function has returned
	NGINX_PID=$!
	trap 'kill $NGINX_PID 2>/dev/null; wait $NGINX_PID 2>/dev/null; tb_down' EXIT
	nginx_wait "$TB_NS_SRV" "$TB_SRV_IP" "$NGINX_PID" || fail "nginx did not start"
	local j
	for j in $(seq 0 11); do
		tb_srv ip route add "198.18.64.$((1 + j))/32" via "$(tb_gen_ip $((j % 3)))" || fail "route"
	done
	count_start --tcp --dport 80 --duration 60s --idle 3s --json "$WORK/c.json"
	# 3,000 sessions of 5 requests each, in three shards: each shard's sessions complete at its own
	# sender, and nginx sees every session's requests on one connection
	shards_run 3 gen tcp --dst "$TB_SRV_IP" --src 198.18.64.1-198.18.64.12 --seed 5 --http 'GET /' \
		--requests-per-session 5 --pps 1500 --count 3000 --wait 5s
	count_wait
	expect_eq "$(shards_sum 3 sessions.asked)" 3000 "sessions the shards asked"
	expect_eq "$(shards_sum 3 sessions.completed)" 3000 "sessions completed"
	expect_eq "$(shards_sum 3 requests.responses)" 15000 "responses"
	expect_eq "$(awk '$2 == 200' "$NGINX_DIR/access.log" | wc -l)" 15000 "200s in nginx's access log"
	expect_eq "$(awk '$5 == 5' "$NGINX_DIR/access.log" | wc -l)" 3000 "5th requests of a connection"
}

# the shards of a run that starts anywhere (--first-seq) and does not split evenly: with
# --pcap-out (nothing sent), their union is the unsharded run's frames, each once
test_shard_union_from_any_first_seq() {
	bed
	local n i
	for n in 1 2 3 4; do
		for i in $(seq 0 $((n - 1))); do
			tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --count 10 --first-seq 7 --pps 1k \
				--shard "$i/$n" --pcap-out "$WORK/s$n-$i.pcap" -q || fail "shard $i/$n exited $?"
		done
	done
	PYTHONPATH="$TOP/tests" python3 - "$WORK" <<-'PY' || fail "the shards' union"
	import sys
	from pcapfile import frames
	for n in range(1, 5):
	    parts = [[int.from_bytes(f[42:50], "big") for f in frames("%s/s%d-%d.pcap" % (sys.argv[1], n, i))] for i in range(n)]
	    assert sorted(sum(parts, [])) == list(range(7, 17)), (n, parts)
	    # shard i owns the numbers with n mod N = i, whatever the first
	    assert all(x % n == i for i, p in enumerate(parts) for x in p), (n, parts)
	PY
}
