# SPDX-License-Identifier: GPL-2.0
# The connection-rate test: SYNs from a pool of sources, answers counted and matched.

test_syn_every_one_answered() {
	bed
	# SYN cookies always: no request sockets, so no bursts of retransmitted SYN-ACKs (4096 at
	# once after 1 s) overflowing the return path's veth ring, and exactly one answer per SYN
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=2 || fail "sysctl"
	tcp_server_start --timeout 4
	count_start --tcp --dport 80 --duration 60s --idle 2s --json "$WORK/c.json"
	# 100,000 SYNs from 512 sources (each its own address, ports cycled)
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 50k --count 100k \
		--json "$WORK/g.json" || fail "gen syn exited $?"
	count_wait
	wait "$TCP_PID"
	expect_eq "$(jget "$WORK/g.json" sent)" 100000 "SYNs sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 100000 "SYNs counted at the server"
	expect_eq "$(jget "$WORK/g.json" replies.syn_acks)" 100000 "SYN-ACKs matched to their SYN"
	expect_eq "$(jget "$WORK/g.json" replies.unmatched)" 0 "unmatched replies"
	expect_eq "$(jget "$WORK/g.json" replies.rsts)" 0 "RSTs"
	expect_eq "$(jget "$WORK/g.json" replies.retransmits)" 0 "retransmitted SYN-ACKs"
	expect_eq "$(jget "$WORK/c.json" attribution.tcp_syncookies_sent)" 100000 "SYN cookies sent"
	# nothing got past the listener: no handshake was completed, so nothing was accepted
	expect_eq "$(cat "$WORK/tcp.out")" 0 "connections accepted without --complete"
	# our kernel never answered a SYN-ACK with a RST
	expect_eq "$(jget "$WORK/c.json" kernel.Tcp.InSegs)" 100000 "segments the server received"
	books_balanced 100000
	python3 - "$WORK/g.json" <<-'PY' || fail "round-trip histograms"
	import json, sys
	r = json.load(open(sys.argv[1]))["replies"]
	assert 0.1 < r["rtt_us"]["p50"] <= r["rtt_us"]["p90"] <= r["rtt_us"]["p99"] <= r["rtt_us"]["max"] < 1e6, r["rtt_us"]
	assert sum(s["answered"] for s in r["per_second"]) == 100000, r["per_second"]
	assert len(r["per_second"]) >= 2, r["per_second"]
	PY
}

test_syn_complete_accepted() {
	bed
	tcp_server_start --timeout 3
	count_start --tcp --dport 80 --duration 60s --idle 2s --json "$WORK/c.json"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --complete --pps 5k \
		--count 5000 --json "$WORK/g.json" || fail "gen syn --complete exited $?"
	wait "$TCP_PID"
	count_wait
	expect_eq "$(jget "$WORK/g.json" replies.syn_acks)" 5000 "SYN-ACKs"
	expect_eq "$(jget "$WORK/g.json" replies.completed)" 5000 "handshakes completed"
	expect_eq "$(cat "$WORK/tcp.out")" 5000 "connections the server accepted"
	expect_eq "$(jget "$WORK/c.json" kernel.Tcp.PassiveOpens)" 5000 "server PassiveOpens"
	expect_eq "$(jget "$WORK/g.json" replies.closed)" 5000 "server closes answered"
	expect_eq "$(jget "$WORK/c.json" kernel.Tcp.InCsumErrors)" 0 "TCP checksum errors at the server"
	books_balanced
}

test_syn_through_firewall() {
	command -v nft >/dev/null || skip "nft not installed"
	bed
	# a stateful firewall that admits 2000 new connections a second. Its bucket holds 100 (50 ms):
	# with the default 5 (2.5 ms), a sender preempted for a few ms on a busy 2-core host sends the
	# frames it owes in a burst that finds the bucket full, and 5-25% fewer got through
	tb_srv nft add table inet fw || fail "nft"
	tb_srv nft 'add chain inet fw in { type filter hook input priority 0; }'
	tb_srv nft add rule inet fw in ct state established,related accept
	tb_srv nft add rule inet fw in tcp dport 80 ct state new limit rate over 2000/second burst 100 packets \
		counter drop
	tcp_server_start --timeout 3
	count_start --tcp --dport 80 --nft --duration 60s --idle 2s --json "$WORK/c.json"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --complete --pps 10k \
		--count 20000 --json "$WORK/g.json" || fail "gen syn exited $?"
	wait "$TCP_PID"
	count_wait
	answered=$(jget "$WORK/g.json" replies.syn_acks)
	fw=$(jget "$WORK/c.json" attribution.firewall_dropped)
	# two seconds at 2000/s (and the limit's burst of 100) get through
	expect_range "$answered" 3800 4400 "SYN-ACKs through a 2000/s firewall"
	expect_eq "$((answered + fw))" 20000 "answered + firewall drops == SYNs sent"
	expect_eq "$(cat "$WORK/tcp.out")" "$(jget "$WORK/g.json" replies.completed)" "accepted == completed"
	# the server's books: each SYN, handshake ACK and RST taken, or dropped by the rule
	[ "$(jget "$WORK/c.json" drop_reasons)" = True ] || return 0
	expect_eq "$(jget "$WORK/c.json" drops.inbound.NETFILTER_DROP)" "$fw" "NETFILTER_DROP = the rule's counter"
	books_balanced
}

# --flags: TCP segments with other flags than a SYN's (hping3's letters); a listener answers each
# bare ACK with a RST, counted in XDP; a FIN+PSH+URG segment carries no MSS option
test_syn_flags() {
	bed
	tcp_server_start --timeout 4 --backlog 64
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --flags A --pps 5k \
		--count 500 --json "$WORK/g.json" -q || fail "gen syn --flags A exited $?"
	expect_eq "$(jget "$WORK/g.json" sent)" 500 "ACKs sent"
	expect_eq "$(jget "$WORK/g.json" replies.rsts)" 500 "RSTs counted"
	expect_eq "$(jget "$WORK/g.json" replies.syn_acks)" 0 "SYN-ACKs"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --flags FPU --count 3 --pcap-out "$WORK/f.pcap" -q ||
		fail "--pcap-out exited $?"
	PYTHONPATH="$TOP/tests" python3 - "$WORK/f.pcap" <<-'PY' || fail "the FIN+PSH+URG segments"
	import sys
	from pcapfile import frames
	n = 0
	for f in frames(sys.argv[1]):
	    assert len(f) == 54 and f[46] >> 4 == 5 and f[47] == 0x29, f.hex()
	    n += 1
	assert n == 3, n
	PY
	run_bad 2 "--flags: 'SX' is not TCP flags" "$XR" gen syn -i lo --dst 198.18.0.2 --flags SX
	run_bad 2 "--complete answers SYN-ACKs: --flags must hold S and not A" tb_gen "$XR" gen syn \
		-i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --flags SA --complete --count 1
}

# --fail-if: a verdict for CI on the run's figures, in the summary, in JSON and in the exit status (5)
test_fail_if_thresholds() {
	bed
	tcp_server_start --timeout 10 --backlog 4096
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 5k --count 500 \
		--fail-if 'p99>10s' --fail-if 'loss>50%' --fail-if 'unsent>0' --fail-if 'rate<0.5*target' \
		--latency-spectrum "$WORK/s.hgrm" --latency-log "$WORK/r.hlog" --json "$WORK/g.json" 2>"$WORK/err" ||
		fail "thresholds that hold: exit $?: $(cat "$WORK/err")"
	latency_spectrum_checked "$WORK/s.hgrm" "$WORK/g.json"
	latency_log_checked "$WORK/r.hlog" "$WORK/g.json"
	python3 - "$WORK/g.json" <<-'PY' || fail "thresholds in JSON"
	import json, sys
	g = json.load(open(sys.argv[1]))
	t = {x["expr"]: x for x in g["thresholds"]}
	assert [x["failed"] for x in g["thresholds"]] == [False] * 4, g["thresholds"]
	assert t["rate<0.5*target"]["limit"] == 2500, t
	assert t["loss>50%"]["value"] == 1 - g["replies"]["syn_acks"] / g["sent"], (t, g["replies"])
	assert t["p99>10s"]["limit"] == 10e9 and 0 < t["p99>10s"]["value"] < 10e9, t
	PY
	grep -q "^  --fail-if p99>10s: passed (p99 " "$WORK/err" || fail "the summary's line: $(cat "$WORK/err")"
	# a round trip below a second always: this one fails, and says so
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 5k --count 500 \
		--first-seq 500 --fail-if 'p50<1s' --json "$WORK/g.json" 2>"$WORK/err"
	expect_eq $? 5 "exit status of a failed threshold"
	grep -q "^  --fail-if p50<1s: FAILED (p50 " "$WORK/err" || fail "the summary's line: $(cat "$WORK/err")"
	expect_eq "$(jget "$WORK/g.json" thresholds.0.failed)" True "the JSON's verdict"
	wait "$TCP_PID"
	# what a run cannot judge, and what is not a threshold, is refused before anything is sent
	run_bad 2 "--fail-if p99>1ms: this run counts no answers" tb_gen "$XR" gen udp -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP:9" --count 10 --fail-if 'p99>1ms'
	run_bad 2 "a target rate is --pps or --rate" tb_gen "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" \
		--count 10 --fail-if 'rate<0.9*target'
	run_bad 2 "'p99=1ms' is not METRIC<VALUE" "$XR" gen udp -i lo --dst 198.18.0.2 --fail-if 'p99=1ms'
	run_bad 2 "'2' is not a fraction" "$XR" gen udp -i lo --dst 198.18.0.2 --fail-if 'loss>2'
	run_bad 2 "'fast' is not a time" "$XR" gen udp -i lo --dst 198.18.0.2 --fail-if 'p99<fast'
	run_bad 2 "--fail-if sessions_failed>0: this run has no sessions" tb_gen "$XR" gen syn -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP:80" --count 10 --fail-if 'sessions_failed>0'
	run_bad 2 "--latency-spectrum: this run counts no answers" tb_gen "$XR" gen udp -i "$TB_GEN_IF" \
		--dst "$TB_SRV_IP:9" --count 10 --latency-spectrum "$WORK/x.hgrm"
}

# latency_log_checked HLOG JSON: the HdrHistogram interval log read by a decoder of its own (the V2
# compressed encoding: base64, zlib, ZigZag LEB128 counts with zero runs): a line a second, each
# second's counts those of the JSON's per_second, its max the JSON's, every answer in it
latency_log_checked() {
	python3 - "$1" "$2" <<-'PY' || fail "the latency log: $(head -n 4 "$1" | cut -c1-120)"
	import base64, json, struct, sys, zlib
	lines = open(sys.argv[1]).read().splitlines()
	g = json.load(open(sys.argv[2]))
	assert lines[0] == "#[Histogram log format version 1.3]" and lines[1].startswith("#[StartTime: "), lines[:2]
	assert lines[2] == '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
	def counts_of(b64):
	    raw = base64.b64decode(b64)
	    cookie, n = struct.unpack(">iI", raw[:8])
	    assert cookie == 0x1c849314, hex(cookie)
	    inner = zlib.decompress(raw[8:8 + n])
	    c, plen, norm, digits, lowest, highest, ratio = struct.unpack(">iIiiqqd", inner[:40])
	    assert (c, norm, digits, lowest, highest, ratio) == (0x1c849313, 0, 1, 1, 2**35 - 1, 1.0), (c, digits, highest)
	    out, p = [], 40
	    while p < 40 + plen:
	        v = shift = 0
	        for k in range(9):
	            b = inner[p]; p += 1
	            if k == 8:
	                v |= b << 56; break
	            v |= (b & 0x7f) << shift; shift += 7
	            if b < 0x80: break
	        v = (v >> 1) ^ -(v & 1)
	        out += [0] * -v if v < 0 else [v]
	    return out
	def value_of(i):  # HdrHistogram's index -> value: 32 sub-buckets, unit 1 ns
	    return i if i < 32 else (i % 16 + 16) << (i // 16 - 1)
	total = 0
	per_s = {p["second"]: p for p in g["replies"]["per_second"] if p["answered"]}
	rows = [l.split(",") for l in lines[3:]]
	assert [float(r[0]) for r in rows] == sorted(float(s) for s in per_s), (rows, per_s.keys())
	for start, length, mx, b64 in rows:
	    c = counts_of(b64)
	    sec = per_s[int(float(start))]
	    assert float(length) == 1.0 and sum(c) == sec["answered"] and c[-1] > 0, (start, sum(c), sec)
	    top = value_of(len(c)) - 1
	    assert mx == "%.3f" % (top / 1e6) and abs(sec["max_us"] - (top + 1) / 1e3) < 1e-6, (mx, top, sec)
	    total += sum(c)
	assert total == g["replies"]["syn_acks"] > 0, (total, g["replies"])
	PY
}

# latency_spectrum_checked HGRM JSON: the spectrum in wrk2's layout, its percentiles HdrHistogram's
# (5 ticks per half distance, computed here on their own), to the max and every answer, and the
# JSON's rtt_spectrum the same points; p99 <= p99.9 <= p99.99 <= max in the summary
latency_spectrum_checked() {
	python3 - "$1" "$2" <<-'PY' || fail "the latency spectrum: $(head -n 6 "$1")"
	import json, math, sys
	lines = open(sys.argv[1]).read().split("\n")
	g = json.load(open(sys.argv[2]))
	assert lines[0].split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"] and lines[1] == "", lines[:2]
	rows = [l.split() for l in lines[2:] if l and not l.startswith("#")]
	levels, l = [], 0.0
	while len(levels) < len(rows) - 1:
	    levels.append(l)
	    l += 100 / (5 * 2 ** (int(math.log(100 / (100 - l)) / math.log(2)) + 1))
	assert [r[1] for r in rows] == ["%f" % (x / 100) for x in levels] + ["1.000000"], rows
	assert rows[-1][3] == "inf" and [r[3] for r in rows[:-1]] == ["%.2f" % (1 / (1 - x / 100)) for x in levels], rows
	values, counts = [float(r[0]) for r in rows], [int(r[2]) for r in rows]
	answered = g["replies"]["syn_acks"]
	assert values == sorted(values) and counts == sorted(counts) and counts[-1] == answered > 0, rows
	foot = [l for l in lines if l.startswith("#[")]
	assert "Total count    = %12d]" % answered in foot[1] and float(foot[1].split()[2].rstrip(",")) == values[-1], foot
	js = g["replies"]["rtt_spectrum"]
	assert [(round(p["value_us"] / 1e3, 3), p["count"]) for p in js] == list(zip(values, counts)), js[:3]
	r = g["replies"]["rtt_us"]
	assert r["p99"] <= r["p99.9"] <= r["p99.99"] <= r["max"], r
	PY
}
