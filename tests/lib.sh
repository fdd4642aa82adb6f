# SPDX-License-Identifier: GPL-2.0
# Helpers for the test-bed tests; sourced by tests/run.sh in each test's subshell.
. "$TOP/scripts/testbed.sh"

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 249; }

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }
# expect_range ACTUAL LOW HIGH WHAT (numbers, inclusive)
expect_range() {
	python3 -c "import sys; v,lo,hi=map(float,sys.argv[1:4]); sys.exit(0 if lo<=v<=hi else 1)" "$1" "$2" "$3" ||
		fail "$4: got $1, expected $2..$3"
}
# run_bad EXPECTED_STATUS PATTERN ARGS...: the command fails with that status and one matching line
run_bad() {
	local want=$1 pat=$2 rc
	shift 2
	"$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	expect_eq "$rc" "$want" "exit status of: $*"
	expect_eq "$(wc -l <"$WORK/err")" 1 "lines on stderr of: $* ($(cat "$WORK/err"))"
	grep -qE -- "$pat" "$WORK/err" || fail "stderr of '$*' does not match '$pat': $(cat "$WORK/err")"
}

# jget FILE PATH...: the values of a JSON document at each dotted PATH (KEY.KEY, an array's index as
# a KEY), one line each, from one Python start: read -r -d '' a b < <(jget f sent replies.answered)
jget() {
	local f=$1
	shift
	python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
def at(path):
    v, parts = doc, path.split(".")
    while parts:
        if isinstance(v, list) and parts[0].isdigit():
            v, parts = v[int(parts[0])], parts[1:]
            continue
        # a key may itself contain dots (kernel.Udp.InCsumErrors): try the longest first
        for n in range(len(parts), 0, -1):
            k = ".".join(parts[:n])
            if isinstance(v, dict) and k in v:
                v, parts = v[k], parts[n:]
                break
        else:
            sys.exit(1)
    return v
for path in sys.argv[2:]:
    print(at(path))' "$f" "$@" || fail "no $* in $f: $(head -c 300 "$f")"
}

# sent_or_refused JSON ASKED STATUS: a run at top speed sent all ASKED frames, or the driver refused
# some (its ring full while the receiver's NAPI ran late: rare, ~1 run in 10 suites), each counted as
# not sent and the exit status 1 saying so. Sets SENT for the server's count to match.
sent_or_refused() {
	local refused
	SENT=$(jget "$1" sent)
	refused=$(jget "$1" failed_reasons.driver_refused)
	expect_eq "$((SENT + refused))" "$2" "sent + refused by the driver"
	expect_eq "$3" $((refused > 0 ? 1 : 0)) "exit status with $refused refused"
}

# live_frames: whether sends here go through the kernel engine: the host runs BPF_PROG_RUN with live
# frames (probed once per suite run) and XDPREPLAY_ENGINE does not ask for xsk
live_frames() {
	local probe=${LIVE_PROBE:-$WORK/live_probe.json}
	[ "${XDPREPLAY_ENGINE:-}" = xsk ] && return 1
	[ -f "$probe" ] || "$XR" probe --json "$probe" >/dev/null 2>&1
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["checks"]["live_frames"]["ok"] else 1)' \
		"$probe" 2>/dev/null
}
# in_vm: inside tests/vm/vmtest.sh's guest, under emulation that keeps no time
in_vm() { [ -n "${XR_IN_VM:-}" ]; }
# no_rates_in_vm WHAT: skips the rest of a test that judges rates or times, which a VM cannot keep
no_rates_in_vm() {
	in_vm && skip "$1: a rate check, and this VM cannot keep time (it runs on the host)"
	return 0
}
# need_live_frames: a test of the kernel engine itself (its back-off, batches, live-frames threads)
need_live_frames() {
	[ "${XDPREPLAY_ENGINE:-}" = xsk ] && skip "a test of the kernel engine itself: XDPREPLAY_ENGINE=xsk"
	live_frames || skip "a test of the kernel engine itself: this host refuses live frames"
}

# wait_until SECONDS WHAT CMD...: until CMD succeeds (looked at every 50 ms), failing with WHAT
# after SECONDS: readiness by a condition, never by a sleep
# prom_valid FILE [openmetrics]: FILE is an exposition Prometheus reads: promtool's lint of the
# text format (HELP and TYPE on every family, names as its conventions want them), or with
# openmetrics the strict OpenMetrics parser of the Python client (python3-prometheus-client)
prom_valid() {
	if [ "${2:-}" = openmetrics ]; then
		local why
		why=$(/usr/bin/python3 -c '
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
assert fams, "no families"
' "$1" 2>&1) || fail "not OpenMetrics: $(echo "$why" | tail -n 1)"
	else
		promtool check metrics <"$1" >"$1.lint" 2>&1 || fail "promtool check metrics: $(head -n 5 "$1.lint")"
	fi
	prom_help_from_schema "$1"
}

# prom_help_from_schema FILE: each family of FILE that carries a figure of the schema (report
# --figures' Prometheus column) says in its HELP what the schema says, "label: meaning (JSON path)"
prom_help_from_schema() {
	"$XR" report --figures >"$1.figures" || fail "report --figures exited $?"
	python3 - "$1" "$1.figures" <<-'PY' || fail "a HELP that is not the schema's"
	import re, sys
	want = {}
	for row in open(sys.argv[2]):
	    c = [x.strip() for x in row.strip().strip("|").split("|")]
	    if len(c) == 5 and c[4].startswith("`xdpreplay_"):
	        want[c[4].strip("`")] = "%s: %s (JSON %s)" % (c[1], c[3], c[0].strip("`"))
	seen = 0
	for line in open(sys.argv[1]):
	    m = re.match(r"# HELP (\S+) (.*)$", line)
	    if not m:
	        continue
	    name = re.sub("_total$", "", m.group(1))
	    if name in want:
	        seen += 1
	        assert m.group(2) == want[name], (name, m.group(2), want[name])
	print("HELP from the schema:", seen, "families")
	PY
}

# prom_sample FILE NAME LABELS: the value of NAME's sample whose labels, less run="...", are LABELS
prom_sample() {
	sed -nE "s/^$2\{run=\"[0-9a-f]{16}\",?$3\} (.*)$/\1/p" "$1"
}

# pcap_has FILE N: a capture being written (tcpdump -U) holds at least N frames yet
pcap_has() {
	[ "$(PYTHONPATH="$TOP/tests" python3 -c 'import sys
from pcapfile import frames
try:
    print(len(frames(sys.argv[1])))
except Exception:
    print(0)' "$1" 2>/dev/null)" -ge "$2" ]
}

wait_until() {
	local secs=$1 what=$2 end=$((SECONDS + $1))
	shift 2
	until "$@"; do
		[ $SECONDS -lt $end ] || fail "$what: not within $secs s"
		sleep 0.05
	done
}

# A test bed for this test, torn down however the test ends.
bed() {
	tb_up "$@" || fail "cannot set up the test bed"
	trap 'tb_down' EXIT
}

# count_start ARGS...: runs the counter in the server namespace; waits until it is attached
count_start() {
	rm -f "$WORK/ready.$$"
	# not through tb_srv: $! must be the counter itself, so that signals reach it
	ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --ready-file "$WORK/ready.$$" "$@" &
	COUNT_PID=$!
	wait_ready "$WORK/ready.$$" "$COUNT_PID" "the counter" 100
}

# wait_ready FILE PID WHAT TRIES: until FILE exists (TRIES x 50 ms), failing if PID ends first
wait_ready() {
	for _ in $(seq "$4"); do
		[ -f "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || fail "$3 exited before it was ready"
		sleep 0.05
	done
	fail "$3 was not ready within $(($4 / 20)) s"
}
# webhook_start [tb_srv] ARGS...: count --webhook ARGS (in the server namespace with tb_srv); returns once
# it listens (and has taken its schedule's offset), with its pid in WH. A sleep was not enough on a
# busy CI host: lines appended to the schedule before count read it were taken as an earlier session's
webhook_start() {
	local ns=()
	[ "$1" = tb_srv ] && ns=(ip netns exec "$TB_NS_SRV") && shift
	rm -f "$WORK/wh.ready"
	"${ns[@]}" "$XR" count --ready-file "$WORK/wh.ready" "$@" &
	WH=$!
	wait_ready "$WORK/wh.ready" "$WH" "count --webhook" 200
}
count_wait() { wait "$COUNT_PID" || fail "the counter failed (exit $?)"; }
# peer_xdp: an XDP program (count, passing all) on the server's veth end, as sessions need there:
# what the sender's reply program sends by XDP_TX reaches the server at once only then, and the xsk
# engine's own frames do not flush it as live frames do (xdpfeat.c: iface_warn_veth_peer_xdp)
peer_xdp() { count_start --any --no-drop-reasons -q --duration 900s; }
# peer_xdp_start I: an XDP program (count) on the bridge port of sender I. A veth delivers the
# frames its end sends by XDP_TX (the sessions' ACKs and requests) at once only to a peer with an XDP
# program: with GRO alone they wait in the peer's ring for its next ordinary packet (6.18's
# veth_xdp_flush kicks the peer's NAPI only when it has a program), here the retransmission 200 ms on.
# It stays for the whole test (tb_down ends it): it ended after 10 s idle once, between two steps
# of a slow CI run, and the next step's sessions then waited on the retransmissions of their ACKs
PEER_XDP_PIDS=()
peer_xdp_start() {
	rm -f "$WORK/peer$1.ready"
	# not through tb_srv: $! must be the counter itself, so that a test's kill -INT reaches it
	ip netns exec "$TB_NS_SRV" "$XR" count -i "srvp$1" --any --no-drop-reasons -q --duration 30m \
		--ready-file "$WORK/peer$1.ready" &
	PEER_XDP_PIDS+=($!)
	wait_ready "$WORK/peer$1.ready" "$!" "count on srvp$1" 200
}

# helper_start NAME SCRIPT ARGS...: tests/SCRIPT in the server namespace, with --ready and --out
# files named after NAME; returns once it is ready, with its pid in HELPER_PID
helper_start() {
	local name=$1 script=$2
	shift 2
	rm -f "$WORK/$name.ready"
	tb_srv python3 "$TOP/tests/$script" --ready "$WORK/$name.ready" --out "$WORK/$name.out" "$@" &
	HELPER_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/$name.ready" ] && return 0; sleep 0.05; done
	fail "tests/$script did not start"
}

# sink_start ARGS...: tests/udp_sink.py, bound; what it read goes to $WORK/sink.out
sink_start() { helper_start sink udp_sink.py "$@"; SINK_PID=$HELPER_PID; }

# tcp_server_start ARGS...: tests/tcp_server.py, listening; how many it accepted goes to $WORK/tcp.out
tcp_server_start() { helper_start tcp tcp_server.py "$@"; TCP_PID=$HELPER_PID; }

# search_all_completed LOWER: in $WORK/s.json, every goal's lower bound is LOWER (the search's
# maximum: never saturated) and every trial's witness (sessions completed) is all it asked
search_all_completed() {
	python3 - "$WORK/s.json" "$1" <<-'PY' || fail "the search's answer: $(tail -n 8 "$WORK/out")"
	import json, sys
	s = json.load(open(sys.argv[1]))
	for g in s["goals"]:
	    assert g["lower"] == float(sys.argv[2]), g
	for t in s["trials"]:
	    assert t["received"] == t["asked"] > 0, t
	    assert t["p99_us"] > 0, t
	PY
}

# books_balanced [DELIVERED]: in count's $WORK/c.json, what passed to the stack was delivered or dropped, nothing unattributed
books_balanced() {
	expect_eq "$(jget "$WORK/c.json" books.unattributed)" 0 "unattributed"
	[ -z "${1:-}" ] || expect_eq "$(jget "$WORK/c.json" delivered)" "$1" "delivered to sockets"
	expect_eq "$(($(jget "$WORK/c.json" delivered) + $(jget "$WORK/c.json" drops.inbound_total)))" \
		"$(jget "$WORK/c.json" passed)" "delivered + dropped = passed"
}

# capture_start FILE [FILTER...]: tcpdump on the server's interface (what arrives) into FILE;
# capture_stop ends it, and fails if tcpdump dropped any frame (a 32 MiB ring, -B, keeps up on
# this bed). --immediate-mode (TPACKET_V2, a slot of the snapshot length per frame): without it
# TPACKET_V3 hands over a block only when it fills or times out, so the last frames would be lost
# to a stop soon after them.
capture_start() {
	local file=$1
	shift
	# not through tb_srv: $! must be tcpdump itself, so that SIGINT reaches it
	ip netns exec "$TB_NS_SRV" tcpdump -i "$TB_SRV_IF" --immediate-mode -B 32768 -Q in -w "$file" -s 0 -U -q "$@" \
		2>"$file.log" &
	CAPTURE_PID=$!
	CAPTURE_FILE=$file
	tcpdump_ready "$file.log" "$CAPTURE_PID"
}
# tcpdump_ready LOG PID: waits until the tcpdump writing LOG has its filter in place (it says
# "listening on" after that); a fixed second can be too short on a busy machine, and frames sent
# before it would be missing from the capture
tcpdump_ready() {
	local i
	for i in $(seq 100); do
		grep -q "listening on" "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || fail "tcpdump ended: $(tr '\n' ' ' <"$1")"
		sleep 0.1
	done
	fail "tcpdump not listening after 10 s: $(tr '\n' ' ' <"$1")"
}
capture_stop() {
	sleep 0.5
	kill -INT "$CAPTURE_PID"
	wait "$CAPTURE_PID"
	grep -q "^0 packets dropped by kernel" "$CAPTURE_FILE.log" ||
		fail "the capture dropped frames: $(tr '\n' ' ' <"$CAPTURE_FILE.log")"
}
