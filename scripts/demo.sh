#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The main job on the embedded default: a test bed of two namespaces, a counter on the
# server, a sample capture replayed at top speed and at a precise rate, and what the
# server saw. Run by `sudo make demo` after the build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/testbed.sh
XR=$PWD/xdpreplay
WORK=$(mktemp -d /tmp/xdpreplay-demo.XXXXXX)
cleanup() { tb_down; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# jget FILE KEY: one value of a JSON file, or nothing when the file or the key is missing
jget() { python3 -c 'import json,sys
try:
    v=json.load(open(sys.argv[1]))
    for k in sys.argv[2].split("."): v=v[k]
except Exception: sys.exit(1)
print(v)' "$1" "$2" 2>/dev/null; }

# Every step's exit status is kept: a step that fails says so in one line, the demo goes on,
# and its own exit status at the end says whether every step ran.
failed=()
step_status() { # label status
	[ "$2" -eq 0 ] && return 0
	echo "   step failed: $1 (exit status $2; its own message is above)"
	failed+=("$1")
}

tb_up
echo "== test bed $TB_NAME: $TB_NS_GEN/$TB_GEN_IF ($TB_GEN_IP) <-> $TB_NS_SRV/$TB_SRV_IF ($TB_SRV_IP)"
echo
echo "== xdpreplay probe -i $TB_GEN_IF"
tb_gen "$XR" probe -i "$TB_GEN_IF" || true

run() { # label, count args, replay args...
	local label=$1 cargs=$2
	shift 2
	rm -f "$WORK/ready" "$WORK/r.json" "$WORK/c.json"
	ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --udp --dport 9 --idle 1s --duration 60s $cargs \
		--ready-file "$WORK/ready" --json "$WORK/c.json" 2>"$WORK/count.txt" &
	local cpid=$!
	for _ in $(seq 100); do [ -f "$WORK/ready" ] && break; sleep 0.05; done
	echo
	echo "== $label: xdpreplay replay -i $TB_GEN_IF $*"
	local rc=0
	tb_gen "$XR" replay -i "$TB_GEN_IF" --json "$WORK/r.json" "$@" || rc=$?
	wait $cpid || true
	sed 's/^/   server| /' "$WORK/count.txt"
	local sent counted
	sent=$(jget "$WORK/r.json" sent) || { step_status "$label" "$((rc ? rc : 1))"; return 0; }
	counted=$(jget "$WORK/c.json" matched) || counted=0
	# exit status 1: frames not sent, each counted and shown above
	[ "$rc" -le 1 ] || step_status "$label" "$rc"
	printf '   result: asked %s, sent %s, not sent %s; the server counted %s (lost in between: %s)\n' \
		"$(jget "$WORK/r.json" asked)" "$sent" "$(jget "$WORK/r.json" failed)" "$counted" \
		"$((sent - counted))"
	return 0
}

echo
echo "== the main job: where does this server start dropping, and where?"
echo "The server has a firewall that drops UDP to port 9 above 20,000 frames/s (nftables limit)."
echo "xdpreplay search runs trials at chosen rates, reads what got through from the server's counter"
echo "(count --listen, with the nftables counters), and bisects to the highest lossless rate."
tb_srv nft add table inet demo
tb_srv nft 'add chain inet demo in { type filter hook input priority 0; }'
tb_srv nft add rule inet demo in udp dport 9 limit rate over 20000/second burst 100 packets counter drop
rm -f "$WORK/ready"
ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --udp --dport 9 --nft --listen "$TB_SRV_IP:9100" \
	--duration 300s -q --ready-file "$WORK/ready" &
cpid=$!
for _ in $(seq 100); do [ -f "$WORK/ready" ] && break; sleep 0.05; done
mkdir -p results
rc=0
tb_gen "$XR" search --witness "http://$TB_SRV_IP:9100/" --witness-field kernel.Udp.NoPorts \
	--goal NDR=0 --goal PDR=0.005 --min 1000 --max 100000 --trial 1s --width 0.01 \
	--json "$WORK/s.json" --svg results/demo-search.svg -- replay -i "$TB_GEN_IF" pcaps/udp-64.pcap || rc=$?
kill -INT $cpid 2>/dev/null; wait $cpid || true
tb_srv nft delete table inet demo
step_status "the drop-point search" "$rc"
[ -s "$WORK/s.json" ] && python3 - "$WORK/s.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for g in s["goals"]:
    print("   result: %s (loss <= %g): %.0f frames/s taken without exceeding it; %.0f is too much"
          % (g["name"], g["loss"], g["lower"], g["upper"]))
drops = {}
for t in s["trials"]:
    for k, v in t["server_drops"].items():
        if v and k not in ("udp_delivered", "udp_no_ports", "iface_rx_dropped"):
            drops[k] = drops.get(k, 0) + v
print("   where the server dropped, over all trials: %s" % (", ".join("%s %d" % kv for kv in drops.items()) or "nowhere"))
PY
[ -s results/demo-search.svg ] && echo "   plot: results/demo-search.svg"

echo
echo "== a tour of the rest"
echo "First the counter drops in XDP (a sink) to show the sender's speed; then it passes the"
echo "frames to the server's stack, which answers each datagram to a closed port with an ICMP"
echo "error and, sharing the sender's core on this test bed, slows the sender down instead."
run "top speed into a sink" --drop --count 5M pcaps/udp-64.pcap
run "top speed into the stack" "" --count 2M pcaps/udp-64.pcap
run "precise rate" "" --pps 100k --duration 2s pcaps/three.pcapng
run "capture timing x4" "" --multiplier 4 pcaps/spaced-100.pcap.gz
echo
echo "Each frame can carry its sequence number (here in the IPv4 ID, rewritten in BPF with the"
echo "header checksum): the server's counter then tells loss, duplicates and reordering per flow."
run "sequence-stamped" "--seq ip.id" --pps 100k --count 200k --rewrite ip.id=seq pcaps/udp-64.pcap

echo
echo "== connection rate: 40,000 SYNs at 20k/s from 512 sources to a Linux listener on port 80"
ip netns exec "$TB_NS_SRV" python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.0.2", 80)); s.listen(4096); time.sleep(6)' &
sleep 0.3
rc=0
tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 20k --count 40k || rc=$?
wait
step_status "connection rate" "$rc"

echo
echo "== LoRaWAN: 5,000 ABP devices, each heard by 2 of 50 gateways, 2 rounds at 10k PUSH_DATA/s"
echo "FCnt, the encrypted payload and the MIC of every uplink are computed per packet (AES-NI ahead"
echo "of the sender, or AES in BPF); a Semtech UDP server in the server namespace answers PUSH_ACKs"
echo "and checks every uplink (MIC, decryption, FCnt order) the way a network server would."
LW=$WORK/lw
mkdir -p "$LW"
rc=0
"$XR" lorawan fleet --devices 5000 --gateways 50 --heard-by 2 --seed 1 --out "$LW/fleet" || rc=$?
ip netns exec "$TB_NS_SRV" /usr/bin/python3 tests/semtech_server.py --bind "$TB_SRV_IP:1700" --fleet "$LW/fleet" \
	--out "$LW/server.json" --ready "$LW/ready" --idle 2 &
for _ in $(seq 100); do [ -f "$LW/ready" ] && break; sleep 0.05; done
[ "$rc" -eq 0 ] && { tb_gen "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$LW/fleet" --server "$TB_SRV_IP" \
	--pps 10k --rounds 2 || rc=$?; }
wait
step_status "LoRaWAN" "$rc"
[ -s "$LW/server.json" ] && python3 - "$LW/server.json" <<-'PY'
import json, sys
s = json.load(open(sys.argv[1]))
bad = sum(s[k] for k in ("bad_json", "bad_field", "bad_mic", "bad_payload", "bad_fcnt", "unknown_devaddr"))
print("  server: %d PUSH_DATA, %d valid uplinks (%d distinct, %d copies from a second gateway), %d invalid"
      % (s["push_data"], s["valid"], s["uplinks"], s["copies"], bad))
PY

echo
if [ ${#failed[@]} -eq 0 ]; then
	echo "== demo: every step ran"
else
	echo "== demo: ${#failed[@]} step(s) failed: ${failed[*]}"
	exit 1
fi
