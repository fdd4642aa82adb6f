#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A small Semtech UDP server for the test bed (no LoRaWAN network server can be
built here): answers each PUSH_DATA whose JSON parses with a PUSH_ACK and each
PULL_DATA with a PULL_ACK, as chirpstack-gateway-bridge does, records the
addresses each gateway sent from, verifies every uplink (lorawan_check.Verifier),
acknowledges each confirmed uplink with a downlink (PULL_RESP) through the
gateway that heard it first, if that gateway sent PULL_DATA, counting the
TX_ACKs, answers each OTAA device's JoinRequest with a JoinAccept the same way
(a new DevAddr and session, against which its later uplinks are verified),
answers the MAC requests in an uplink's FOpts (LinkCheckReq, DeviceTimeReq) after
--mac-delay (its deduplication window, so that LinkCheckAns counts the gateways that
heard it), and, with --webhook, posts one ChirpStack-style JSON "up" event per
deduplicated uplink, as ChirpStack's HTTP integration does.

    semtech_server.py --bind 198.18.0.2:1700 --fleet DIR --out FILE
                      [--webhook http://A:P/ [--webhook-rate R]] [--ready F] [--idle 2] [--no-ack]

Writes the counters as JSON to --out when it ends (SIGTERM, or --idle seconds
without a datagram after the first one, or, with --idle, no datagram in the first
--first-within seconds: a sender whose datagrams all die on the way must not hang a test).
"""
import argparse
import base64
import http.client
import json
import os
import queue
import signal
import socket
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lorawan_check import Verifier, load_fleet  # noqa: E402


def poster(url, q, stats, rate):
    """Posts events one by one (ChirpStack posts each event on its own), over one kept-alive
    connection (opened again after an error), so that posting costs little beside the rate.
    With a rate, an application side of known capacity: each event takes 1/rate s, so that
    above the rate the queue (and each event's delay) grows for as long as the load lasts."""
    u = urllib.parse.urlsplit(url)
    conn = None
    free_at = 0.0
    while True:
        ev = q.get()
        if ev is None:
            return
        if rate:
            free_at = max(free_at, time.monotonic())
            time.sleep(max(0.0, free_at - time.monotonic()))
            free_at += 1.0 / rate
        body = json.dumps(ev).encode()
        # a kept-alive connection the receiver closed while idle fails once: then a new one
        for attempt in (0, 1):
            try:
                conn = conn or http.client.HTTPConnection(u.hostname, u.port or 80, timeout=5)
                conn.request("POST", (u.path or "/") + "?event=up", body=body,
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
                stats["webhook_posted" if r.status == 200 else "webhook_failed"] += 1
                break
            except (OSError, http.client.HTTPException):
                if conn:
                    conn.close()
                conn = None
                if attempt:
                    stats["webhook_failed"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", required=True)
    ap.add_argument("--fleet", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--webhook")
    ap.add_argument("--webhook-rate", type=float, default=0,
                    help="post at most this many events/s (a server whose application side has this capacity)")
    ap.add_argument("--ready")
    ap.add_argument("--idle", type=float, default=0)
    ap.add_argument("--first-within", type=float, default=30)
    ap.add_argument("--no-ack", action="store_true")
    ap.add_argument("--no-downlinks", action="store_true", help="no ACK downlinks to confirmed uplinks")
    ap.add_argument("--no-verify", action="store_true", help="only parse and answer, as the bridge does")
    ap.add_argument("--fcnt-down-start", type=int, default=0, help="each device's first downlink FCnt")
    ap.add_argument("--bad-dl-mic", type=int, default=0, help="every N-th ACK downlink with a wrong MIC")
    ap.add_argument("--app-downlink-every", type=int, default=0,
                    help="every N-th ACK downlink with data on FPort 1 (1.1: AFCntDown)")
    ap.add_argument("--mac-delay", type=float, default=0.05, help="seconds from an uplink to its MAC answers")
    ap.add_argument("--mac-frm-every", type=int, default=0, help="every N-th MAC downlink on FPort 0")
    ap.add_argument("--mac-other", action="store_true", help="a DevStatusReq before the answers")
    ap.add_argument("--mac-unknown-every", type=int, default=0, help="every N-th MAC downlink ends in CID 0x7f")
    a = ap.parse_args()

    host, port = a.bind.rsplit(":", 1)
    otaa = {}
    v = Verifier(load_fleet(a.fleet, otaa), verify=not a.no_verify, otaa=otaa)
    v.fcnt_down_start, v.bad_mic_every, v.app_every = a.fcnt_down_start, a.bad_dl_mic, a.app_downlink_every
    extra = {"acks_sent": 0, "pull_acks_sent": 0, "webhook_posted": 0, "webhook_failed": 0}
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # verifying costs more than receiving: hold a whole test's datagrams (root may exceed rmem_max)
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE (Linux), not in Python 3.11
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.bind((host, int(port)))
    s.settimeout(0.2)
    q, th = None, None
    if a.webhook:
        q = queue.Queue()
        th = threading.Thread(target=poster, args=(a.webhook, q, extra, a.webhook_rate), daemon=True)
        th.start()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    if a.ready:
        open(a.ready, "w").close()
    last = None
    started = time.monotonic()
    mac_due = []  # (when, device, DevAddr, gateway, rxpk, time it arrived): answers after the dedup window

    def answer_mac(now):
        while mac_due and mac_due[0][0] <= now:
            _, dev, addr, gw, rx, t_rx = mac_due.pop(0)
            k = v.c["mac_downlinks"] + 1
            dl, to = v.mac_downlink(dev, addr, gw, rx, t_rx,
                                    in_frm=bool(a.mac_frm_every and k % a.mac_frm_every == 0),
                                    other=a.mac_other,
                                    unknown=bool(a.mac_unknown_every and k % a.mac_unknown_every == 0))
            if dl:
                s.sendto(dl, to)

    while not stop:
        s.settimeout(0.01 if mac_due else 0.2)
        try:
            data, peer = s.recvfrom(65535)
            t_wall = time.time()
        except socket.timeout:
            answer_mac(time.monotonic())
            if a.idle and last and time.monotonic() - last > a.idle and not mac_due:
                break
            if a.idle and not last and time.monotonic() - started > a.first_within:
                break
            continue
        last = time.monotonic()
        ack = v.datagram(data, peer)
        if ack and not a.no_ack:
            s.sendto(ack, peer)
            extra["acks_sent" if ack[3] == 1 else "pull_acks_sent"] += 1
        for dev, nonce, gw, rx in v.joins if not a.no_downlinks else ():
            dl, to = v.join_accept(dev, nonce, gw, rx)
            if dl:
                s.sendto(dl, to)
        for dev, addr, fcnt, phy, gw, rx in v.new if not a.no_downlinks else ():
            if v.asks.get(addr):
                mac_due.append((last + a.mac_delay, dev, addr, gw, rx, t_wall))
            elif dev["confirmed"]:
                dl, to = v.ack_downlink(dev, addr, gw, rx, fcnt)
                if dl:
                    s.sendto(dl, to)
        # after this datagram's uplinks: a late server still counts the copy it was reading
        answer_mac(time.monotonic())
        for dev, addr, fcnt, phy, gw, rx in (v.new if q is not None else ()):
            # the fields of ChirpStack v4's UplinkEvent (api/proto/integration) in its JSON form
            q.put({"deduplicationId": f"{addr:08x}-{fcnt}",
                   "time": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
                   "deviceInfo": {"deviceName": dev["eui"], "devEui": dev["eui"], "tags": {}},
                   "devAddr": f"{addr:08x}", "adr": False, "dr": 5, "fCnt": fcnt & 0xffffffff,
                   "fPort": phy[8], "confirmed": dev["confirmed"],
                   "data": base64.b64encode(dev["payload"]).decode(),
                   "rxInfo": [{"gatewayId": gw, "uplinkId": 0, "rssi": rx["rssi"], "snr": rx["lsnr"]}],
                   "txInfo": {"frequency": dev["freq_hz"]}})
    if q is not None:
        q.put(None)
        th.join(timeout=30)
    with open(a.out, "w") as f:
        json.dump(dict(v.report(), **extra), f)


if __name__ == "__main__":
    main()
