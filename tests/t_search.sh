# SPDX-License-Identifier: GPL-2.0
# search against ground truths on the test bed.

# nstat in the server namespace: datagrams that got past the firewall to the (closed) port
noports_witness() {
	echo "cmd:ip netns exec $TB_NS_SRV nstat -az UdpNoPorts | awk '/UdpNoPorts/ {print \$2}'"
}

test_ndr_finds_firewall_limit() {
	command -v nft >/dev/null || skip "nft not installed"
	# two limits the server's stack keeps up with on one core of this test bed; at 50k/s the
	# stack's own work (an ICMP error per datagram) stalls the sender into bursts the bucket drops
	bed
	tb_srv nft add table inet fw || fail "nft"
	tb_srv nft 'add chain inet fw in { type filter hook input priority 0; }'
	for limit in 20000 10000; do
		tb_srv nft flush chain inet fw in
		# a burst of 1000 absorbs the sender's scheduling jitter (a stall of 50 ms at 20k/s; with
		# 300, a busy host's stalls twice burst past the bucket at 19.5k/s and the search found
		# 19,336; with 100, an 8 ms stall on a quiet CI host at 12.5k/s): a 1 s trial then passes
		# the rate and the burst, the ground truth below
		tb_srv nft add rule inet fw in udp dport 9 limit rate over $limit/second burst 1000 packets counter drop
		if [ $limit = 20000 ]; then
			# witness: a command (nstat on the server), frames past the firewall
			witness=(--witness "$(noports_witness)")
		else
			# witness: the server's counter over HTTP, which also attributes the drops
			count_start --udp --dport 9 --nft --listen "$TB_SRV_IP:9100" --duration 300s
			witness=(--witness "http://$TB_SRV_IP:9100/" --witness-field kernel.Udp.NoPorts)
		fi
		tb_gen "$XR" search "${witness[@]}" --goal NDR=0 --min 1000 --max 200000 \
			--trial 1s --width 0.01 --json "$WORK/s.json" --svg "$WORK/s.svg" -- \
			replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1 || fail "search exited $?"
		python3 - "$WORK/s.json" $limit <<-'PY' || fail "NDR for a $limit/s limit: $(tail -n 3 "$WORK/out")"
		import json, sys
		s = json.load(open(sys.argv[1]))
		ndr, limit = s["goals"][0]["lower"], float(sys.argv[2])
		# what passes a 1 s trial without loss: the rate, and the bucket's 1000 at its start; 3.5%
		# for the search's width and the sender's scheduling jitter on a busy 2-core VM
		assert abs(ndr - (limit + 1000)) <= 0.035 * limit, (ndr, limit)
		assert s["goals"][0]["upper"] > ndr and not s["goals"][0]["never_saturated"]
		if s["witness"].startswith("http"):
		    # every frame lost in a trial was dropped by the firewall, and the search says so
		    for t in s["trials"]:
		        assert t["server_drops"]["firewall_dropped"] == t["asked"] - t["received"], t
		    assert any(t["server_drops"]["firewall_dropped"] > 0 for t in s["trials"])
		PY
		[ $limit = 20000 ] || { kill -INT "$COUNT_PID"; count_wait; }
	done
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$WORK/s.svg" || fail "the plot is not SVG"
	rsvg-convert "$WORK/s.svg" -o "$WORK/s.png" || fail "the plot does not render"
	python3 - "$WORK/s.svg" <<-'PY' || fail "the plot"
	import re, sys, xml.dom.minidom as m
	d = m.parse(sys.argv[1])
	svg = d.documentElement
	W = float(svg.getAttribute("width"))
	texts = [(t, "".join(n.data for n in t.childNodes if n.nodeType == n.TEXT_NODE)) for t in d.getElementsByTagName("text")]
	alltext = " ".join(x for _, x in texts)
	# a title naming the test, the witness, the goals with their bounds, round ticks
	assert "Drop-point search: replay -i" in alltext and "witness" in alltext, alltext
	assert re.search(r"NDR \(loss <= 0%\): lower bound [0-9.]+k", alltext), alltext
	assert "on hover" not in alltext
	for t, x in texts:
	    if re.fullmatch(r"[0-9.]+[kMG]?", x):
	        assert re.fullmatch(r"(1|2|5|[0-9]+)(0*)[kMG]?|[0-9]+(\.[0-9])?[kMG]?", x), x
	# nothing past the right edge: a start-anchored label's end estimated at 7 px a character
	for t, x in texts:
	    if t.getAttribute("transform"):
	        continue  # the rotated axis title
	    tx = float(t.getAttribute("x") or 0)
	    tr = t.parentNode.getAttribute("transform") if t.parentNode.nodeName == "g" else ""
	    off = float(re.match(r"translate\(([0-9.]+)", tr).group(1)) if tr.startswith("translate") else 0
	    anchor = t.getAttribute("text-anchor") or "start"
	    width = 7 * len(x) * (0.5 if anchor == "middle" else 1)
	    end = off + tx + (width if anchor == "start" else width if anchor == "middle" else 0)
	    start = off + tx - (width if anchor == "end" else width if anchor == "middle" else 0)
	    assert -1 <= start and end <= W + 1, (x, start, end, W)
	PY
}

test_server_never_saturated() {
	bed
	count_start --udp --dport 9 --drop --listen "$TB_SRV_IP:9100" --duration 120s
	# --fail-if on what was found: the limit is the whole --max (passes), not under 200k (fails: exit 5)
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --max 200k --trial 500ms --json "$WORK/s.json" \
		--fail-if 'limit<1*target' --fail-if 'short_trials>0' --fail-if 'limit>=200k' \
		--json-stream "$WORK/s.jsonl" -- \
		replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1
	expect_eq $? 5 "search's exit with one threshold failed ($(tail -n 4 "$WORK/out"))"
	grep -q "^  --fail-if limit>=200k: FAILED (limit 200k/s)" "$WORK/out" || fail "the verdict's line: $(tail -n 4 "$WORK/out")"
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["thresholds"]; assert [(x["failed"], x.get("value"), x["limit"]) for x in t] == [(False, 200000, 200000), (False, 0, 0), (True, 200000, 200000)], t' "$WORK/s.json" ||
		fail "the thresholds in JSON: $(jget "$WORK/s.json" thresholds)"
	# --json-stream: start, each trial as it ended (numbered), the result at the end
	python3 - "$WORK/s.jsonl" "$WORK/s.json" <<-'PY' || fail "the search's stream: $(cut -c1-300 "$WORK/s.jsonl")"
	import json, sys
	ev = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
	s = json.load(open(sys.argv[2]))
	assert [e["event"] for e in ev] == ["start", "trial", "trial", "end"], [e["event"] for e in ev]
	assert ev[0]["data"]["settings"]["max_pps"] == 200000 and ev[-1]["data"] == s, ev[0]
	for k, e in enumerate(ev[1:3]):
	    t = dict(e["data"])
	    assert t.pop("trial") == k + 1 and t == s["trials"][k], (t, s["trials"][k])
	PY
	kill -INT "$COUNT_PID"
	count_wait
	grep -q "never saturated" "$WORK/out" || fail "no 'never saturated': $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/s.json" goals.0.never_saturated)" True "NDR never saturated"
	expect_eq "$(jget "$WORK/s.json" goals.0.lower)" 200000 "NDR lower bound: the most offered"
	# the default goals judge a load on three trials' time, half of it allowed over: two lossless
	# trials at the maximum decide it
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s["trials"]) == 2 and all(t["loss"] == 0 for t in s["trials"]), s["trials"]; g=s["goals"][0]; assert g["lower_trials"] == {"counted": 2, "over_goal": 0, "sender_short": 0}, g' "$WORK/s.json" ||
		fail "two lossless trials at the maximum"
	grep -q "lower: 2 trials at 200k frames/s, 0 over the goal" "$WORK/out" || fail "the bound's trials: $(cat "$WORK/out")"
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert not any("server_cpu_s" in t for t in s["trials"]), s["trials"]' "$WORK/s.json" ||
		fail "a server's CPU without count --server-pid"
}

# count --server-pid as the witness has it: each trial's CPU of the server process, here a shell that
# spins (for at most 30 s) in the server's stead, so a core's worth of each trial's time
test_search_server_cpu() {
	bed
	bash -c 'end=$((SECONDS + 30)); while [ $SECONDS -lt $end ]; do :; done' &
	local spin=$!
	count_start --udp --dport 9 --drop --listen "$TB_SRV_IP:9100" --duration 120s --server-pid "$spin"
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --max 10k --trial 500ms --max-trials 2 \
		--json "$WORK/s.json" -- replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1 ||
		fail "search exited $?: $(cat "$WORK/out")"
	kill -INT "$COUNT_PID"
	count_wait
	kill "$spin"
	wait "$spin" 2>/dev/null
	grep -Eq "trial  1: .* server CPU [0-9.]+ s \([0-9.]+ of a core\)" "$WORK/out" ||
		fail "no server CPU in the trial's line: $(cat "$WORK/out")"
	python3 - "$WORK/s.json" <<-'PY' || fail "each trial's server CPU"
	import json, sys
	trials = json.load(open(sys.argv[1]))["trials"]
	assert trials, "no trial"
	for t in trials:
	    # the trial (0.5 s) and its settle, read to read: at least the trial's worth of a spinning core
	    assert 0.4 <= t["server_cpu_s"] <= 5, t
	    assert 0.7 <= t["server_cores"] <= 1.1, t
	PY
}

test_search_bad_input() {
	"$XR" search --witness replies >"$WORK/out" 2>"$WORK/err"
	expect_eq $? 2 "exit status without a trial command"
	grep -q "give the trial after --" "$WORK/err" || fail "$(cat "$WORK/err")"
	"$XR" search --witness replies -- replay -i lo --pps 10 x.pcap 2>"$WORK/err"
	expect_eq $? 2 "exit status when the trial sets its own rate"
	grep -q "the trial's --pps is the search's to set" "$WORK/err" || fail "$(cat "$WORK/err")"
	"$XR" search -- replay -i lo x.pcap 2>"$WORK/err"
	expect_eq $? 2 "exit status without a witness"
	run_bad 2 "--max-trials must be between 1 and 256" "$XR" search --witness replies --max-trials 0 -- replay -i lo x.pcap
	run_bad 2 "--max-trials must be between 1 and 256" "$XR" search --witness replies --max-trials 999 -- replay -i lo x.pcap
	run_bad 2 "--max-time: 'soon' is not a duration" "$XR" search --witness replies --max-time soon -- replay -i lo x.pcap
	run_bad 2 "'p99>1ms' is not METRIC<VALUE.*METRIC: limit, short_trials" "$XR" search --witness replies \
		--fail-if 'p99>1ms' -- replay -i lo x.pcap
	run_bad 2 "the trial's --fail-if is the search's to set" "$XR" search --witness replies -- \
		gen syn -i lo --dst 198.18.0.2:80 --fail-if 'loss>0'
}

test_search_stops_at_its_limits() {
	bed
	count_start --udp --dport 9 --drop --listen "$TB_SRV_IP:9100" --duration 120s
	# a load judged on 3 s of 300 ms trials needs ten: three are not enough, so the bounds so far,
	# and why it stopped
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --goal NDR=0,dsum=3s --min 1k --max 200k --trial 300ms \
		--max-trials 3 --json "$WORK/s.json" -- replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1
	expect_eq $? 1 "exit status at the trial limit"
	expect_eq "$(jget "$WORK/s.json" stopped)" "trial limit reached" "why it stopped"
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s["trials"]) <= 3, s["trials"]' "$WORK/s.json" ||
		fail "more than 3 trials"
	grep -q "stopped: trial limit reached" "$WORK/out" || fail "no stop line: $(cat "$WORK/out")"
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --goal NDR=0,dsum=3s --min 1k --max 200k --trial 300ms \
		--max-time 1s --json "$WORK/s.json" -- replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1
	expect_eq $? 1 "exit status at the time limit"
	expect_eq "$(jget "$WORK/s.json" stopped)" "time limit reached" "why it stopped"
	kill -INT "$COUNT_PID"
	count_wait
}

test_ndr_finds_slow_server() {
	bed
	# a server that can read 2,000 datagrams a second, with a 112 KiB socket buffer: about 150
	# datagrams, 75 ms of them. With 64 KiB (40 ms) a sender or sink preempted that long on a
	# busy 2-core host lost datagrams below the rate (CI: NDR 1,865); the sink also runs at a
	# real-time priority, so that it reads when it is due
	sink_start --rate 2000 --rcvbuf 114688 --timeout 120
	chrt -f -p 10 "$SINK_PID" || fail "chrt"
	count_start --udp --dport 9 --listen "$TB_SRV_IP:9100" --duration 300s
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --witness-field kernel.Udp.InDatagrams \
		--goal NDR=0 --min 200 --max 10000 --trial 2s --width 0.01 --json "$WORK/s.json" -- \
		replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1 || fail "search exited $?"
	kill -INT "$COUNT_PID"
	count_wait
	kill "$SINK_PID" 2>/dev/null
	# the server takes 2,000/s and what its socket buffer holds: the most a lossy trial got through in
	# its 2 s (4,150 with the kernel engine's page-sized skbs, ~4,280 with the xsk engine's smaller
	# ones). The NDR is within 5% below that capacity: the search brackets the limit between the rates
	# its trials ran at (NDR 2,109 against a capacity of 2,161 in one CI rehearsal)
	python3 - "$WORK/s.json" <<-'PY' || fail "NDR of a 2,000/s server ($(grep -c trial "$WORK/out") trials)"
	import json, sys
	s = json.load(open(sys.argv[1]))
	ndr = s["goals"][0]["lower"]
	cap = max(t["received"] for t in s["trials"] if t["loss"] > 0) / 2
	print("NDR", ndr, "capacity", cap)
	assert 2000 <= cap <= 2250, cap
	assert 0.95 * cap <= ndr <= cap, (ndr, cap)
	PY
	# what the application did not read was dropped at its full socket buffer, and the search says so
	python3 - "$WORK/s.json" <<-'PY' || fail "attribution to the socket buffer"
	import json, sys
	s = json.load(open(sys.argv[1]))
	lossy = [t for t in s["trials"] if t["loss"] > 0]
	assert lossy, s["trials"]
	for t in lossy:
	    assert t["server_drops"]["udp_rcvbuf_errors"] == t["asked"] - t["received"], t
	PY
}

test_latency_goal_with_replies() {
	bed
	tcp_server_start --timeout 60
	# answers take microseconds here: a 50 ms p99 bound holds up to the most offered
	tb_gen "$XR" search --witness replies --latency-goal p99=50ms --goal NDR=0 --min 1000 --max 10000 \
		--trial 500ms --width 0.05 --json "$WORK/s.json" -- \
		gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --wait 300ms >"$WORK/out" 2>&1 ||
		fail "search exited $?"
	kill "$TCP_PID" 2>/dev/null
	expect_eq "$(jget "$WORK/s.json" goals.0.name)" p99 "the latency goal"
	expect_eq "$(jget "$WORK/s.json" goals.0.never_saturated)" True "p99 within 50 ms at 10k SYN/s"
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["trials"][0]
assert 0 < t["p99_us"] < 50000 and t["received"] == t["asked"], t' "$WORK/s.json" || fail "trial: $(cat "$WORK/s.json")"
}

test_duration_sum_and_exceed_ratio() {
	bed
	count_start --udp --dport 9 --drop --listen "$TB_SRV_IP:9100" --duration 120s
	# a load is judged on 3 s of trials, of which at most half may miss the goal: two lossless
	# 1 s trials decide it (after one, 2 s unknown could still be all bad)
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --goal NDR=0,exceed=0.5,dsum=3s --max 100k \
		--trial 1s --warmup 500ms --pause 100ms --json "$WORK/s.json" -- \
		replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1 || fail "search exited $?"
	kill -INT "$COUNT_PID"
	count_wait
	grep -q "warm-up: 0.5 s" "$WORK/out" || fail "no warm-up: $(cat "$WORK/out")"
	python3 - "$WORK/s.json" <<-'PY' || fail "trials: $(cat "$WORK/out")"
	import json, sys
	s = json.load(open(sys.argv[1]))
	assert [t["offered_pps"] for t in s["trials"]] == [100000, 100000], s["trials"]
	g = s["goals"][0]
	assert g["never_saturated"] and g["lower"] == 100000, g
	assert abs(g["conditional_throughput"] - 100000) < 1000, g
	PY
	"$XR" search --witness replies --goal "X=0,exceed=2" -- replay -i lo x.pcap 2>"$WORK/err"
	expect_eq $? 2 "exit status for an exceed ratio of 2"
}

test_default_witness_is_delivered() {
	command -v nft >/dev/null || skip "nft not installed"
	# the issue's case: a limit rule without a counter, and a reader behind it. The default
	# witness reads what the server's sockets took, not what reached its XDP hook
	bed
	tb_srv nft add table inet fw || fail "nft"
	tb_srv nft 'add chain inet fw in { type filter hook input priority 0; }'
	# a burst of 300, as ndr_finds_firewall_limit's: with 100, a stall of the sender over ~11 ms at
	# 9.4k/s broke the bucket (CI rehearsals on either engine found 8.94k and 9.33k)
	tb_srv nft add rule inet fw in udp dport 9 limit rate over 10000/second burst 300 packets drop
	# a socket that holds the whole run: a reader the scheduler delays must not add drops of its
	# own (CI once saw 45 SOCKET_RCVBUFF in a 10k/s trial, exactly counted, but not the rule's)
	sink_start --port 9 --timeout 20 --rcvbuf 16777216
	count_start --udp --dport 9 --listen "$TB_SRV_IP:9100" --duration 300s
	tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --goal NDR=0 --min 1000 --max 100000 \
		--trial 1s --width 0.01 --json "$WORK/s.json" -- \
		replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1 || fail "search exited $?"
	kill -INT "$COUNT_PID"
	count_wait
	kill "$SINK_PID" 2>/dev/null
	python3 - "$WORK/s.json" <<-'PY' || fail "NDR behind a 10k/s rule: $(tail -n 5 "$WORK/out")"
	import json, sys
	s = json.load(open(sys.argv[1]))
	g = s["goals"][0]
	# what passes a 1 s trial without loss: the rate, and the bucket's 300 at its start
	assert abs(g["lower"] - 10300) <= 350, g
	assert g["upper"] > g["lower"] and not g["never_saturated"], g
	lossy = 0
	for t in s["trials"]:
	    if t["sent"] != t["asked"]:
	        continue
	    d = t["server_drops"]
	    # every frame the server did not take is a drop with its reason, nothing unattributed
	    died = sum(v for k, v in d.items() if k.startswith("drop:"))
	    assert died == t["asked"] - t["received"], t
	    assert d.get("unattributed", 0) == 0, t
	    lossy += died > 0
	    if died:
	        assert d.get("drop:NETFILTER_DROP", 0) > 0, t
	assert lossy, s["trials"]
	PY
}
