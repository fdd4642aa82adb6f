#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): LoRaWAN uplinks over Semtech UDP on the test bed, in one run.
#  1. Valid uplinks/s received at the server with one generator thread: xdpreplay lorawan send
#     (default: uplinks precomputed with AES-NI by a second thread into a ring the BPF program
#     reads; --no-precompute: FCnt, FRMPayload and MIC computed in BPF for every uplink) against
#     the same frames sent static (--static: the ceiling) and against a bash loop of `nc -w0 -u`
#     sending one PUSH_DATA per process (the published benchmark's method). Fleets of 300,000
#     devices and 2,000 gateways, each uplink heard by 1 gateway (a new uplink in every packet)
#     and by 3.
#  2. Fleet set-up: time from start to the first departure and peak memory for 300k x 2k.
#  3. Join requests/s: an OTAA fleet of 1M devices (2,000 gateways, heard by 1) sends one JoinRequest
#     each (valid MIC, distinct DevNonces) at top speed with `lorawan send --join`, received at the
#     server (nobody answers: the JoinAccept path is measured by tests/t_lorawan.sh).
#  4. LoRaWAN 1.1 (fleet --mac-version 1.1.0, the same 300k x 2k heard by 1): two CMACs per uplink,
#     precomputed and in BPF, against the 1.0 fleet's static frames (the same sizes).
#  Rows with the engine --engine auto takes; where that is the kernel engine, xsk rows beside them
#  (xdpreplay-xsk-lorawan and -static, heard by 1; bench_xsk_rows in bench-lib.sh).
# Results: a table on stdout and results/bench-lorawan.{txt,raw.tsv}.
#   BENCH_REPS=5 BENCH_SECS=3 scripts/bench-lorawan.sh     (BENCH_ONLY=join: the join rows alone;
#   BENCH_ONLY=v11: the 1.0 and 1.1 rows heard by 1)
. "$(dirname "$0")/bench-lib.sh"
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-3}
PY=/usr/bin/python3
bench_setup
COUNT_ARGS=(--udp --dport 1700)
READY=$WORK/ready.tsv
: >"$READY"

ONLY=${BENCH_ONLY:-}
HBS="1 3"
[ "$ONLY" = v11 ] && HBS=1
for hb in $HBS; do
	[ "$ONLY" = join ] && break
	"$XR" lorawan fleet --devices 300k --gateways 2k --heard-by $hb --seed 1 --out "$WORK/fleet$hb" -q
done
[ "$ONLY" = join ] || "$XR" lorawan fleet --devices 300k --gateways 2k --heard-by 1 --seed 1 \
	--mac-version 1.1.0 --out "$WORK/fleetv11" -q
[ "$ONLY" = v11 ] || "$XR" lorawan fleet --devices 1M --gateways 2k --otaa --seed 1 --out "$WORK/otaa" -q
# one valid PUSH_DATA (device 0, its first FCnt) for the netcat loop
[ -n "$ONLY" ] || "$PY" - "$WORK/fleet1" "$WORK/push_data.bin" <<-'PY'
import base64, csv, json, struct, sys
sys.path.insert(0, "tests")
from lorawan_check import aes_cmac, aes_ecb
d = next(csv.DictReader(open(sys.argv[1] + "/devices.csv")))
addr, fcnt, pl = int(d["dev_addr"], 16), int(d["fcnt_start"]), bytes.fromhex(d["payload"])
a = struct.pack("<I", addr)
s = aes_ecb(bytes.fromhex(d["app_s_key"]), bytes([1, 0, 0, 0, 0, 0]) + a + struct.pack("<I", fcnt) + bytes([0, 1]))
msg = bytes([0x40]) + a + bytes([0]) + struct.pack("<H", fcnt & 0xffff) + bytes([int(d["fport"])]) + \
    bytes(x ^ y for x, y in zip(pl, s))
b0 = bytes([0x49, 0, 0, 0, 0, 0]) + a + struct.pack("<I", fcnt) + bytes([0, len(msg)])
phy = msg + aes_cmac(bytes.fromhex(d["nwk_s_key"]), b0 + msg)[:4]
rx = {"tmst": 1000000000, "chan": 0, "rfch": 0, "freq": int(d["freq_hz"]) / 1e6, "stat": 1, "modu": "LORA",
      "datr": d["datr"], "codr": d["codr"], "rssi": int(d["rssi"]), "lsnr": float(d["lsnr"]), "size": len(phy),
      "data": base64.b64encode(phy).decode()}
gw = bytes.fromhex(d["gateways"].split(";")[0])
open(sys.argv[2], "wb").write(bytes([2, 0x12, 0x34, 0]) + gw + json.dumps({"rxpk": [rx]}).encode())
PY

nc_loop() { # one PUSH_DATA per nc process, as the published LoRaWAN benchmark sent its uplinks
	local end=$((SECONDS + SECS))
	while [ $SECONDS -lt $end ]; do nc -w0 -u "$TB_SRV_IP" 1700 <"$WORK/push_data.bin"; done
}
export -f nc_loop
export SECS TB_SRV_IP WORK

echo "== LoRaWAN uplinks, 1 thread, ${SECS}s runs, medians of $REPS" >&2
for rep in $(seq "$REPS"); do
	# a join storm's rate: the frames are built with their MICs, BPF writes what every copy gets
	[ "$ONLY" = v11 ] || measure "xdpreplay-join" "otaa" "$XR" lorawan send -i "$TB_GEN_IF" \
		--fleet "$WORK/otaa" --server "$TB_SRV_IP" --join --wait 0 -q --json "$WORK/j.json"
	[ "$ONLY" = join ] && continue
	measure "xdpreplay-lorawan" "hb1v11" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/fleetv11" \
		--server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q
	measure "xdpreplay-bpf-only" "hb1v11" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/fleetv11" \
		--server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q --no-precompute
	for hb in $HBS; do
		measure "xdpreplay-lorawan" "hb$hb" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/fleet$hb" \
			--server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q --json "$WORK/s.json"
		printf 'hb%s\t%s\t%s\n' $hb "$(jget "$WORK/s.json" lorawan.ready_s)" \
			"$(jget "$WORK/s.json" lorawan.peak_rss_mib)" >>"$READY"
		measure "xdpreplay-bpf-only" "hb$hb" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/fleet$hb" \
			--server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q --no-precompute
		measure "xdpreplay-static" "hb$hb" "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/fleet$hb" \
			--server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q --static
	done
	if bench_xsk_rows; then
		# xsk beside the kernel engine: uplinks finished in userspace from the ring, and the ceiling
		measure "xdpreplay-xsk-lorawan" "hb1" "$XR" lorawan send -i "$TB_GEN_IF" --engine xsk \
			--fleet "$WORK/fleet1" --server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q
		measure "xdpreplay-xsk-static" "hb1" "$XR" lorawan send -i "$TB_GEN_IF" --engine xsk \
			--fleet "$WORK/fleet1" --server "$TB_SRV_IP" --duration ${SECS}s --wait 0 -q --static
	fi
	[ -z "$ONLY" ] && [ "$rep" -le 2 ] && have nc && measure "nc-loop" "hb1" bash -c nc_loop
done
python3 scripts/bench_report.py lorawan "$RAW" "$READY" "$REPS" "$SECS" | tee results/bench-lorawan.txt
cp "$RAW" results/bench-lorawan.raw.tsv
