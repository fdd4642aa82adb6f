# SPDX-License-Identifier: GPL-2.0
# A stranger on count's HTTP endpoints: resets, malformed requests, slow and idle clients, floods,
# oversized bodies, the bind address, the token. count must neither die nor stall, and must end on
# time with its figures intact.

# client SCRIPT: python in the server namespace with the endpoint's port in $PORT
client() { tb_srv env PORT="$PORT" python3 -c "$1"; }

test_resets_and_garbage_do_not_kill_count() {
	bed
	PORT=9110
	count_start --udp --dport 9 --duration 30s --listen 127.0.0.1:$PORT --json "$WORK/c.json"
	client '
import os, socket, struct
port = int(os.environ["PORT"])
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    return s
def reset(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
for i in range(30):
    s = conn(); s.sendall(b"GET / HTTP/1.0\r\n\r\n"); reset(s)          # a request, then a reset
    s = conn(); s.sendall(b"GET / HTTP/1.0\n\n"); reset(s)              # bare LF
    s = conn(); s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"); reset(s)
    s = conn(); s.close()                                                 # connect and close
    s = conn(); s.sendall(os.urandom(200)); reset(s)                      # garbage
' || fail "the hostile client itself failed"
	kill -0 "$COUNT_PID" 2>/dev/null || fail "count died"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --count 100 "$TOP/pcaps/udp-64.pcap" -q || fail "replay"
	sleep 0.3
	client 'import os, urllib.request, json; print(json.load(urllib.request.urlopen("http://127.0.0.1:%s/" % os.environ["PORT"], timeout=3))["matched"])' \
		>"$WORK/live" || fail "GET after the attack"
	expect_eq "$(cat "$WORK/live")" 100 "matched, live after the attack"
	kill -INT "$COUNT_PID"
	count_wait
	expect_eq "$(jget "$WORK/c.json" matched)" 100 "final count"
}

test_slow_and_idle_clients_do_not_stall_count() {
	bed
	PORT=9111
	count_start --udp --dport 9 --duration 3s --listen 127.0.0.1:$PORT --json "$WORK/c.json"
	start=$(date +%s.%N)
	# the clients outlive the count: they must not hold it past its 3 s
	client '
import os, socket, threading, time, urllib.request
port = int(os.environ["PORT"])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]      # an idle flood
def slowloris():
    s = socket.create_connection(("127.0.0.1", port))
    for ch in b"GET / HTTP/1.1\r\nHost: x\r\n":
        try:
            s.send(bytes([ch]))
        except OSError:
            return
        time.sleep(0.8)
threading.Thread(target=slowloris, daemon=True).start()
def slow_reader():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    while s.recv(1):
        time.sleep(0.5)
threading.Thread(target=slow_reader, daemon=True).start()
time.sleep(1)
t = time.time()
urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=3).read()     # answered meanwhile
assert time.time() - t < 1.0, time.time() - t
time.sleep(5)
' >"$WORK/client.out" 2>&1 &
	cl=$!
	count_wait
	took=$(python3 -c "import sys, time; print(time.time() - float(sys.argv[1]))" "$start")
	wait "$cl" || fail "a GET beside slow and idle clients was not answered within 1 s: $(tail -n 3 "$WORK/client.out")"
	expect_range "$took" 2.5 4.5 "seconds count --duration 3s ran beside slow and idle clients"
}

test_webhook_floods_bodies_and_tokens() {
	bed
	"$XR" lorawan fleet --devices 50 --gateways 2 --seed 4 --out "$WORK/f" -q || fail "fleet"
	echo "tok-$$" >"$WORK/token"
	PORT=9112
	webhook_start tb_srv --webhook 127.0.0.1:$PORT --fleet "$WORK/f" --schedule "$WORK/sched.json" \
		--token-file "$WORK/token" --duration 60s --idle 2s --json "$WORK/w.json" -q
	# the sender's run, as lorawan send --schedule appends it; then a line torn and one not JSON
	echo '{"t0_unix":1.0,"pps":1000,"first_n":0}' >>"$WORK/sched.json"
	printf 'not json\n{"t0_unix":' >>"$WORK/sched.json"
	eui=$(sed -n 2p "$WORK/f/devices.csv" | cut -d, -f1)
	tb_srv env PORT=$PORT EUI="$eui" TOKEN="tok-$$" python3 - <<-'PY' || fail "webhook client"
	import http.client, os, urllib.error, urllib.request
	port, eui, tok = int(os.environ["PORT"]), os.environ["EUI"], os.environ["TOKEN"]
	url = "http://127.0.0.1:%d/?event=up" % port
	def post(body, token=tok):
	    h = {"Authorization": "Bearer " + token} if token else {}
	    return urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST", headers=h), timeout=5)
	for token in (None, "wrong"):
	    try:
	        post(b"{}", token)
	        raise SystemExit("a POST without the right token was taken")
	    except urllib.error.HTTPError as e:
	        assert e.code == 401, e.code
	try:
	    post(b"x" * (2 << 20))
	    raise SystemExit("a 2 MiB body was taken")
	except (urllib.error.HTTPError, ConnectionError) as e:
	    assert getattr(e, "code", 413) == 413, e
	# a forged FCnt far ahead is a jump, not two billion lost uplinks; an FCnt of the wrong type is unreadable
	for f in (0, 1, 2147483647):
	    post(b'{"deviceInfo": {"devEui": "%s"}, "fCnt": %d}' % (eui.encode(), f))
	post(b'{"deviceInfo": {"devEui": "%s"}, "fCnt": "3"}' % eui.encode())
	post(b'{"deviceInfo": {"devEui": "%s"}, "fCnt": 1.5e300}' % eui.encode())
	# many events in a row, over one connection each
	c = 0
	for i in range(3000):
	    post(b'{"deviceInfo": {"devEui": "%s"}, "fCnt": %d}' % (eui.encode(), 2147483648 + i))
	PY
	wait "$WH" || fail "count --webhook exited $?"
	expect_eq "$(jget "$WORK/w.json" webhook.uplinks)" 3003 "uplinks counted"
	expect_eq "$(jget "$WORK/w.json" webhook.lost)" 0 "lost (the jump is not loss)"
	expect_eq "$(jget "$WORK/w.json" webhook.fcnt_jumps)" 1 "FCnt jumps"
	expect_eq "$(jget "$WORK/w.json" webhook.unreadable)" 2 "FCnts of the wrong type"
	# every arrival timed into a bounded histogram; none lost track of
	expect_eq "$(jget "$WORK/w.json" webhook.latency_ms.timed)" 3003 "arrivals timed"
}

test_bind_address() {
	bed
	# :PORT is loopback only; ADDR:PORT is that address
	"$XR" lorawan fleet --devices 2 --gateways 1 --out "$WORK/f" -q || fail "fleet"
	count_start --udp --duration 30s --listen :9113 --webhook "$TB_SRV_IP:9114" --fleet "$WORK/f"
	tb_srv ss -Hltn >"$WORK/ss"
	grep -q "127.0.0.1:9113 " "$WORK/ss" || fail "--listen :9113 is not on loopback: $(cat "$WORK/ss")"
	grep -q "$TB_SRV_IP:9114 " "$WORK/ss" || fail "--webhook not on $TB_SRV_IP: $(cat "$WORK/ss")"
	grep -q "0.0.0.0:911" "$WORK/ss" && fail "something listens on every address: $(cat "$WORK/ss")"
	kill -INT "$COUNT_PID"
	count_wait
	run_bad 2 "--listen: '1.2.3.4.5:80' is not ADDR:PORT" "$XR" count -i lo --listen 1.2.3.4.5:80
	run_bad 2 "--webhook: ':0' is not ADDR:PORT" "$XR" count --webhook :0 --fleet "$WORK/f"
}

# Hostile values on the command line and in files: refused with one line, never a crash.
test_hostile_values_refused() {
	run_bad 2 "--rewrite 'u32be@-2\+=3': unknown field" "$XR" replay -i lo --rewrite 'u32be@-2+=3' \
		"$TOP/pcaps/udp-64.pcap"
	run_bad 2 "past the largest frame" "$XR" gen udp -i lo --dst 127.0.0.1 --dst-mac 02:00:00:00:00:01 \
		--rewrite 'u8@4294967295=seq'
	run_bad 2 "past the largest frame" "$XR" replay -i lo --rewrite 'payload@4294967290:8=seq' "$TOP/pcaps/udp-64.pcap"
	run_bad 2 "--rewrite 'udp.sport=-1'" "$XR" replay -i lo --rewrite 'udp.sport=-1' "$TOP/pcaps/udp-64.pcap"
	run_bad 2 "is not a duration" "$XR" replay -i lo --duration 99999999999h "$TOP/pcaps/udp-64.pcap"
	"$XR" lorawan fleet --devices 4 --gateways 1 --out "$WORK/f" -q || fail "fleet"
	run_bad 2 "--rounds 9223372036854775808: .* more than a run can count" "$XR" lorawan send -i lo \
		--fleet "$WORK/f" --server 127.0.0.1 --rounds 9223372036854775808
	# an SNR of nan in the CSV: refused, naming the line
	awk -F, -v OFS=, 'NR == 2 { $13 = "nan" } { print }' "$WORK/f/devices.csv" >"$WORK/f/nan.csv"
	mv "$WORK/f/nan.csv" "$WORK/f/devices.csv"
	run_bad 2 "devices.csv:2: lsnr 'nan' is not an SNR" "$XR" lorawan send -i lo --fleet "$WORK/f" --server 127.0.0.1
	# a frame set larger than --max-memory; a gzip file that expands 1000 times
	run_bad 2 "take more than --max-memory" "$XR" replay -i lo --max-memory 100 "$TOP/pcaps/three.pcapng"
	python3 - "$WORK/bomb.pcap.gz" <<-'PY'
	import gzip, struct, sys
	with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
	    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
	    rec = struct.pack("<IIII", 0, 0, 60, 60) + b"\0" * 60
	    f.write(rec * (1500000))
	PY
	run_bad 2 "expands to more than 200 times" "$XR" replay -i lo "$WORK/bomb.pcap.gz"
}

# A witness whose count goes down restarted: its trial is set aside, never read as a zero-loss pass.
# And a witness's answer of any size is read whole (a count --seq with thousands of flows).
test_witness_reset_and_large_answers() {
	bed
	# first a huge count, then 0 for ever: the first trial sees the count go down
	rm -f "$WORK/w.state"
	cat >"$WORK/w.sh" <<-EOF2
	#!/bin/sh
	if [ -f "$WORK/w.state" ]; then echo 0; else touch "$WORK/w.state"; echo 1000000; fi
	EOF2
	chmod +x "$WORK/w.sh"
	tb_gen "$XR" search --witness "cmd:$WORK/w.sh" --min 1k --max 4k --trial 200ms --settle 50ms --width 0.5 \
		--json "$WORK/s.json" -- replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1
	grep -q "WITNESS RESET" "$WORK/out" || fail "no WITNESS RESET: $(cat "$WORK/out")"
	python3 - "$WORK/s.json" <<-'PY' || fail "a trial with a witness reset: $(cat "$WORK/out")"
	import json, sys
	s = json.load(open(sys.argv[1]))
	t = s["trials"]
	assert t[0]["witness_reset"] and not any(x["witness_reset"] for x in t[1:]), t
	# never read as a pass: nothing was received after it, so no load is a lower bound
	assert s["goals"][0]["lower"] == 0, s["goals"]
	PY
	# an answer of 1 MiB with the figure at its end
	python3 - "$WORK/big.json" <<-'PY'
	import json, sys
	json.dump({"pad": "x" * (1 << 20), "flows": [{"id": i} for i in range(2048)], "matched": 7}, open(sys.argv[1], "w"))
	PY
	tb_gen python3 -m http.server 9130 --bind 127.0.0.1 --directory "$WORK" >/dev/null 2>&1 &
	srv=$!
	sleep 1
	tb_gen "$XR" search --witness "http://127.0.0.1:9130/big.json" --min 1k --max 2k --trial 200ms --settle 50ms \
		--width 0.5 --json "$WORK/s2.json" -- replay -i "$TB_GEN_IF" "$TOP/pcaps/udp-64.pcap" >"$WORK/out" 2>&1
	kill "$srv"
	grep -q "has no field" "$WORK/out" && fail "a large answer was cut: $(cat "$WORK/out")"
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["trials"]; assert t and all(x["received"] == 0 for x in t), t' \
		"$WORK/s2.json" || fail "trials read from a large answer: $(cat "$WORK/out")"
}
