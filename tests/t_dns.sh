# SPDX-License-Identifier: GPL-2.0
# gen dns against nsd (Debian's authoritative server, started here with RRL off): every query
# answered, matched by id and port in XDP, counted by RCODE; where one is not, the server's count
# says where it died (kernel drop reason), so that the books still balance exactly.

. "$TOP/scripts/nsd.sh"

# nsd_start N [CPU]: nsd serving bench.test. (names n0..n(N-1)) on the bed's address, stopped with
# the bed; with CPU, nsd and the server processes it forks run on that CPU only
# nsd_start N [CPU [ADDR]]: nsd with N names (on CPU; on ADDR, default the server's IPv4 address)
nsd_start() {
	local addr=${3:-$TB_SRV_IP}
	command -v nsd >/dev/null || skip "nsd not installed (scripts/deps.sh installs it)"
	nsd_conf "$WORK/nsd.$$" "$addr" "$1"
	tb_srv ${2:+taskset -c "$2"} nsd -d -c "$WORK/nsd.$$/nsd.conf" &
	NSD_PID=$!
	trap 'kill $NSD_PID 2>/dev/null; wait $NSD_PID 2>/dev/null; tb_down' EXIT
	nsd_wait "$TB_NS_SRV" "$addr" "$NSD_PID" || fail "nsd did not start: $(cat "$WORK/nsd.$$/nsd.log" 2>/dev/null)"
}

# answered_or_dropped SENT: what gen dns ($WORK/g.json) and the server's count ($WORK/c.json) say
# adds up: every query answered, or dropped at the server with a kernel reason (a busy host can
# overflow nsd's socket, or the answer's way back); at least 99% answered
answered_or_dropped() {
	local ans in out
	ans=$(jget "$WORK/g.json" replies.answers)
	in=$(jget "$WORK/c.json" drops.inbound_total)
	out=$(jget "$WORK/c.json" drops.outbound_total)
	expect_eq "$((ans + in + out))" "$1" "answers + queries dropped at the server + answers dropped there"
	[ $((ans * 100)) -ge $(($1 * 99)) ] || fail "only $ans of $1 answered: $(jget "$WORK/c.json" drops)"
	# and the server's own books: what nsd read (recvmmsg) + what died on the way in = what arrived
	books_balanced
}

# IPv6: 20,000 queries to nsd on 2001:2::2 from a pool of 16 sources, every answer matched by id
# and port and counted by RCODE
test_dns_ipv6_answers_counted() {
	bed --ipv6
	nsd_start 1000 "" "$TB_SRV_IP6"
	nsd_names 1000 "$WORK/names"
	tb_gen "$XR" gen dns -i "$TB_GEN_IF" --dst "[$TB_SRV_IP6]" --src 2001:2:0:1::/124 --names "$WORK/names" \
		--pps 5k --count 20k --json "$WORK/g.json" >"$WORK/out" 2>&1 || fail "gen dns exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	expect_eq "$(jget "$WORK/g.json" sent)" 20000 "queries sent"
	expect_eq "$(jget "$WORK/g.json" replies.answers)" 20000 "answers"
	expect_eq "$(jget "$WORK/g.json" replies.rcodes.NOERROR)" 20000 "NOERROR answers"
	expect_eq "$(jget "$WORK/g.json" replies.unmatched)" 0 "unmatched answers"
	expect_eq "$(jget "$WORK/g.json" replies.repeated)" 0 "repeated answers"
}

test_dns_every_query_answered() {
	bed
	nsd_start 1000
	nsd_names 1000 "$WORK/names"
	count_start --udp --dport 53 --idle 2s --duration 60s --json "$WORK/c.json"
	# 100k queries over 1000 names: ids wrap, every answer matched by id and port
	tb_gen "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --names "$WORK/names" --pps 10k --count 100k \
		--json "$WORK/g.json" || fail "gen dns exited $?"
	count_wait
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	expect_eq "$(jget "$WORK/g.json" sent)" 100000 "queries sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 100000 "queries at the server"
	answered_or_dropped 100000
	expect_eq "$(jget "$WORK/g.json" replies.rcodes.NOERROR)" "$(jget "$WORK/g.json" replies.answers)" \
		"NOERROR answers"
	expect_eq "$(jget "$WORK/g.json" replies.unmatched)" 0 "unmatched answers"
	expect_eq "$(jget "$WORK/g.json" replies.repeated)" 0 "repeated answers"
	expect_eq "$(jget "$WORK/g.json" protocol)" dns "protocol in the JSON"
	python3 - "$WORK/g.json" <<-'PY' || fail "round trips"
	import json, sys
	r = json.load(open(sys.argv[1]))["replies"]
	assert 1 < r["rtt_us"]["p50"] <= r["rtt_us"]["p99"] <= r["rtt_us"]["max"] < 1e6, r["rtt_us"]
	assert sum(s["answered"] for s in r["per_second"]) == r["answers"], r["per_second"]
	PY
}

test_dns_rcodes_and_capture() {
	bed
	nsd_start 10
	# a name nsd has (NOERROR), one inside its zone it has not (NXDOMAIN), one outside (REFUSED)
	count_start --udp --dport 53 --idle 2s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --query n1.bench.test --query nope.bench.test \
		--query www.example.org/AAAA --count 3000 --pps 5k --json "$WORK/g.json" || fail "gen dns exited $?"
	count_wait
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || skip "kernel drop reasons unavailable here"
	answered_or_dropped 3000
	# the three questions take turns (n mod 3): each answer has its question's RCODE
	for rc in NOERROR NXDOMAIN REFUSED; do
		[ "$(jget "$WORK/g.json" replies.rcodes.$rc)" -ge 990 ] || fail "$rc: $(jget "$WORK/g.json" replies.rcodes)"
	done
	expect_eq "$(($(jget "$WORK/g.json" replies.rcodes.NOERROR) + $(jget "$WORK/g.json" replies.rcodes.NXDOMAIN) +
		$(jget "$WORK/g.json" replies.rcodes.REFUSED)))" "$(jget "$WORK/g.json" replies.answers)" "answers by RCODE"
	# the same questions from a capture of queries (dig's, written by pcaps/mkpcap.py)
	python3 "$TOP/pcaps/mkpcap.py" dns "$WORK/q.pcap" --names n1.bench.test,nope.bench.test || fail "mkpcap dns"
	count_start --udp --dport 53 --idle 2s --duration 60s --json "$WORK/c.json"
	tb_gen "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --queries "$WORK/q.pcap" --count 2000 --pps 5k \
		--json "$WORK/g.json" || fail "gen dns --queries exited $?"
	count_wait
	answered_or_dropped 2000
	for rc in NOERROR NXDOMAIN; do
		[ "$(jget "$WORK/g.json" replies.rcodes.$rc)" -ge 990 ] || fail "$rc from the capture: $(jget "$WORK/g.json" replies.rcodes)"
	done
}

test_dns_unanswered_counted() {
	bed
	# nothing listens: every query unanswered, none matched by mistake
	tb_gen "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --query a.test --count 1000 --pps 10k --wait 200ms \
		--json "$WORK/g.json" || fail "gen dns exited $?"
	expect_eq "$(jget "$WORK/g.json" replies.answers)" 0 "answers"
	expect_eq "$(jget "$WORK/g.json" replies.unanswered)" 1000 "unanswered"
}

test_dns_bad_input() {
	printf 'n1.test A\nbad..name A\n' >"$WORK/bad-names"
	run_bad 2 "bad-names:2: 'bad..name' is not a domain name" "$XR" gen dns -i lo --dst 127.0.0.1 \
		--dst-mac 02:00:00:00:00:01 --names "$WORK/bad-names"
	printf 'n1.test BOGUS\n' >"$WORK/bad-type"
	run_bad 2 "bad-type:1: 'BOGUS' is not a query type" "$XR" gen dns -i lo --dst 127.0.0.1 \
		--dst-mac 02:00:00:00:00:01 --names "$WORK/bad-type"
	run_bad 2 "gen dns: --sport: 1, 2, 4, 8 or 16 ports" "$XR" gen dns -i lo --dst 127.0.0.1 --query a.test \
		--sport 1000-1002
	run_bad 2 "gen dns: say what to ask" "$XR" gen dns -i lo --dst 127.0.0.1
	run_bad 2 "gen dns: --qtype: 'XX' is not a query type" "$XR" gen dns -i lo --dst 127.0.0.1 --qtype XX --query a
	run_bad 2 "--query: 'a\.\.b' is not NAME" "$XR" gen dns -i lo --dst 127.0.0.1 --dst-mac 02:00:00:00:00:01 \
		--query a..b
}

test_dns_search_replies() {
	bed
	nsd_start 100
	nsd_names 100 "$WORK/names"
	# the replies witness of gen dns: what nsd answered, found without a counter on the server
	tb_gen "$XR" search --witness replies --min 2000 --max 20000 --trial 500ms --settle 200ms --preset quick \
		--json "$WORK/s.json" -- gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --names "$WORK/names" \
		--wait 300ms >"$WORK/out" 2>&1 || fail "search exited $?: $(tail -n 5 "$WORK/out")"
	python3 - "$WORK/s.json" <<-'PY' || fail "search over gen dns: $(cat "$WORK/out")"
	import json, sys
	s = json.load(open(sys.argv[1]))
	assert s["trials"] and all(t["received"] > 0 for t in s["trials"]), s["trials"]
	ndr = [g for g in s["goals"] if g["name"] == "NDR"][0]
	assert ndr["lower"] >= 2000, ndr
	PY
}

test_dns_search_on_a_busy_host() {
	bed
	# a busy neighbour, as on the issue's host: one CPU-bound process through the whole test
	# (bounded by timeout; a global, not a local, so that the EXIT trap still sees it). It shares
	# the server's CPU and the sender has the other: unpinned, the scheduler moves the hog between
	# the two CPUs and the capacity it leaves nsd jumps between two levels from run to run
	# (measured: 0% to 39% loss in five 1 s runs at 100k/s), a server no search can bound;
	# pinned, it is a steady busy host whose trials are still noisy (0 to 0.4% loss at 85k/s)
	local srv_cpu=$(($(nproc) - 1))
	[ "$srv_cpu" -ge 1 ] || skip "a busy host needs two CPUs"
	nsd_start 100 "$srv_cpu"
	nsd_names 100 "$WORK/names"
	# two of them, so that nsd has a third of its CPU: with one, a fast host's nsd took more than
	# the sender could offer (113k/s, 0.03% lost, in a CI run) and the search found no limit
	taskset -c "$srv_cpu" timeout 600 sh -c 'while :; do :; done' &
	HOG_PID=$!
	taskset -c "$srv_cpu" timeout 600 sh -c 'while :; do :; done' &
	HOG2_PID=$!
	trap 'kill $HOG_PID $HOG2_PID 2>/dev/null; kill $NSD_PID 2>/dev/null; wait $NSD_PID 2>/dev/null; tb_down' EXIT
	# The host's capacity also drifts over tens of seconds in a whole suite's CI run (whatever else the
	# machine runs meanwhile shares these CPUs): a PDR of 40k found, then 0% lost
	# three times at 60k. So a disagreement gets one more search and confirmation; a search that is
	# wrong, not unlucky, disagrees twice
	local attempt why=
	for attempt in 1 2; do
		busy_host_search_confirmed && return 0
		echo "attempt $attempt: $why"
	done
	fail "$why"
}

# one search on the busy host, then runs at fixed rates that confirm its PDR; sets why and
# returns 1 when they disagree
busy_host_search_confirmed() {
	tb_gen taskset -c 0 "$XR" search --witness replies --min 5k --max 400k --trial 1s --settle 200ms --max-trials 100 \
		--json "$WORK/s.json" -- gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --names "$WORK/names" \
		--wait 300ms >"$WORK/out" 2>&1 || fail "search exited $?: $(tail -n 8 "$WORK/out")"
	pdr=$(python3 - "$WORK/s.json" <<-'PY'
	import json, sys
	s = json.load(open(sys.argv[1]))
	g = [g for g in s["goals"] if g["name"] == "PDR"][0]
	assert 5000 < g["lower"] < g["upper"], g
	# a trial whose sender fell short is flagged, and none of them made a bound
	for t in s["trials"]:
	    assert t["sender_short"] == (t["fell_behind"] > 0), t
	print(int(g["lower"]))
	PY
	) || {
		# a search that found no limit (the sender fell short first) is unlucky, as one that disagrees
		why="the search's answer: $(tail -n 8 "$WORK/out")"
		return 1
	}
	# runs at fixed rates confirm the bound, judged as the goal is (exceed ratio 0.5: what most of
	# the time does): at 0.75 of it at most two runs of five lose over 0.5%, at 1.5 times two of
	# three. 0.85 was too near under the sanitizers: the busy host's capacity moved between the
	# search and these runs (PDR 77.9k, then 1.4% and 1.7% lost at 66k in a CI run); three runs at
	# 0.75x were too few in a whole suite's CI run (PDR 75k, then 5.7%, 0% and 29% lost at 56k;
	# alone, the test passed at once)
	local f i over loss losses
	for f in 75 150; do
		over=0 losses=
		for i in $(seq "$([ $f = 75 ] && echo 5 || echo 3)"); do
			tb_gen taskset -c 0 "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --names "$WORK/names" \
				--pps $((pdr * f / 100)) --duration 1s --wait 300ms --json "$WORK/g.json" >/dev/null 2>&1
			loss=$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); print("%.3f" % (100 * (1 - g["replies"]["answers"] / g["sent"])))' "$WORK/g.json")
			losses="$losses $loss%"
			over=$((over + $(python3 -c "print(int($loss > 0.5))")))
		done
		echo "at ${f}% of PDR $pdr: lost$losses"
		if [ $f = 75 ] && [ $over -gt 2 ]; then
			why="PDR $pdr: $over of 5 runs at 0.75x lost over 0.5% ($losses); $(tail -n 8 "$WORK/out")"
			return 1
		elif [ $f = 150 ] && [ $over -lt 2 ]; then
			why="PDR $pdr: only $over of 3 runs at 1.5x lost over 0.5% ($losses)"
			return 1
		fi
	done
	return 0
}
