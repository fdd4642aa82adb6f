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
# jget FILE KEY[.KEY...]: one value of a JSON document
jget() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
parts = sys.argv[2].split(".")
while parts:
    # a key may itself contain dots (kernel.Udp.InCsumErrors): try the longest first
    for n in range(len(parts), 0, -1):
        k = ".".join(parts[:n])
        if isinstance(v, dict) and k in v:
            v, parts = v[k], parts[n:]
            break
    else:
        sys.exit(1)
print(v)' "$1" "$2" || fail "no $2 in $1: $(head -c 300 "$1")"
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
	for _ in $(seq 100); do
		[ -f "$WORK/ready.$$" ] && return 0
		kill -0 "$COUNT_PID" 2>/dev/null || fail "the counter exited before attaching"
		sleep 0.05
	done
	fail "the counter did not attach within 5 s"
}
count_wait() { wait "$COUNT_PID" || fail "the counter failed (exit $?)"; }

# sink_start ARGS...: tests/udp_sink.py in the server namespace, bound before it returns
sink_start() {
	rm -f "$WORK/sink.ready"
	tb_srv python3 "$TOP/tests/udp_sink.py" --ready "$WORK/sink.ready" --out "$WORK/sink.out" "$@" &
	SINK_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/sink.ready" ] && return 0; sleep 0.05; done
	fail "the UDP sink did not start"
}

# tcp_server_start ARGS...: tests/tcp_server.py in the server namespace, listening before it returns
tcp_server_start() {
	rm -f "$WORK/tcp.ready"
	tb_srv python3 "$TOP/tests/tcp_server.py" --ready "$WORK/tcp.ready" --out "$WORK/tcp.out" "$@" &
	TCP_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/tcp.ready" ] && return 0; sleep 0.05; done
	fail "the TCP listener did not start"
}
