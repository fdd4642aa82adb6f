#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Independent checks of xdpreplay's LoRaWAN uplinks (Python, `cryptography`).

Parses a Semtech UDP v2 datagram the way chirpstack-gateway-bridge does
(PROTOCOLS.md §1.3) and verifies every uplink in it against the fleet's CSV:
JSON types, standard padded base64, size, DevAddr known, MIC (AES-CMAC over
B0 | msg with the 32-bit FCnt rebuilt as ChirpStack does), FRMPayload
decrypting to the fleet's payload, and FCnt strictly increasing per device
across rounds (the copies of one uplink from other gateways are identical).

As a program it checks a pcap capture:
    lorawan_check.py --fleet DIR --pcap FILE [--port 1700] [--json]
"""
import argparse
import base64
import binascii
import calendar
import csv
import json
import re
import struct
import sys
import time

from cryptography.hazmat.primitives import cmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

# device-to-server MAC commands (LoRaWAN 1.0.3 §5): CID -> payload bytes
MAC_UP_LEN = {0x02: 0, 0x03: 1, 0x04: 0, 0x05: 1, 0x06: 2, 0x07: 1, 0x08: 0, 0x09: 0, 0x0a: 1, 0x0d: 0}
LINK_CHECK, DEVICE_TIME = 0x02, 0x0d
GPS_EPOCH_UNIX, GPS_LEAP = 315964800, 18
CODR = {"4/5", "4/6", "4/7", "4/8", "3/8", "1/3", "2/6", "1/4", "1/6", "5/6", "4/5LI", "4/6LI", "4/8LI"}
DATR = re.compile(r"^SF(\d+)BW(\d+)$")


def load_fleet(d, otaa=None):
    """Devices with a session by DevAddr; OTAA devices (session or not) also into otaa, by DevEUI."""
    devices = {}
    with open(f"{d}/devices.csv") as f:
        for row in csv.DictReader(f):
            dev = {
                "eui": row["dev_eui"],
                "fcnt_start": int(row["fcnt_start"]),
                "fport": int(row["fport"]),
                "confirmed": row["confirmed"] == "1",
                "payload": bytes.fromhex(row["payload"]),
                "freq_hz": int(row["freq_hz"]),
                "datr": row["datr"],
                "gateways": set(row["gateways"].split(";")),
            }
            if row.get("app_key") and otaa is not None:
                otaa[row["dev_eui"]] = dict(dev, app_key=bytes.fromhex(row["app_key"]),
                                            join_eui=row["join_eui"])
                if row.get("nwk_key"):
                    # a 1.1 device: NwkKey signs its JoinRequest and makes the network's keys
                    otaa[row["dev_eui"]]["nwk_key"] = bytes.fromhex(row["nwk_key"])
            if row["dev_addr"]:
                devices[int(row["dev_addr"], 16)] = dict(dev, nwk=bytes.fromhex(row["nwk_s_key"]),
                                                         app=bytes.fromhex(row["app_s_key"]))
                if (row.get("mac_version") or "1.0.3").startswith("1.1"):
                    # a 1.1 session: nwk_s_key is its FNwkSIntKey
                    devices[int(row["dev_addr"], 16)].update(
                        v11=True, s_nwk=bytes.fromhex(row["s_nwk_s_int_key"]),
                        nwk_enc=bytes.fromhex(row["nwk_s_enc_key"]))
    return devices


def aes_ecb(key, block):
    e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return e.update(block) + e.finalize()


def aes_ecb_decrypt(key, data):
    d = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    return d.update(data) + d.finalize()


def aes_cmac(key, msg):
    c = cmac.CMAC(algorithms.AES(key))
    c.update(msg)
    return c.finalize()


EU868_CHANNELS = (868100000, 868300000, 868500000, 867100000, 867300000, 867500000, 867700000, 867900000)


def tx_dr_ch(freq_hz, datr):
    """The data rate and channel index a network server derives from an rxpk (ChirpStack's get_uplink_dr
    and get_uplink_ch; EU868's channels in its configuration's order, US915's 64 + 8), for 1.1's B1."""
    sf, bw = (int(x) for x in DATR.match(datr).groups())
    if 863000000 <= freq_hz <= 870000000:
        dr = 12 - sf if bw == 125 else 6
        return dr, EU868_CHANNELS.index(freq_hz)
    if bw == 500:
        return 4, 64 + (freq_hz - 903000000) // 1600000
    return 10 - sf, (freq_hz - 902300000) // 200000


def mic11(f_key, s_key, conf_fcnt, tx_dr, tx_ch, phy, fcnt):
    """LoRaWAN 1.1 uplink MIC: cmacS[0:2] | cmacF[0:2], B1 = B0 with ConfFCnt, TxDr, TxCh (§4.4)."""
    msg = phy[:-4]
    tail = phy[1:5] + struct.pack("<I", fcnt & 0xffffffff) + bytes([0, len(msg)])
    b0 = bytes([0x49, 0, 0, 0, 0, 0]) + tail
    b1 = bytes([0x49]) + struct.pack("<H", conf_fcnt) + bytes([tx_dr, tx_ch, 0]) + tail
    return aes_cmac(s_key, b1 + msg)[:2] + aes_cmac(f_key, b0 + msg)[:2]


def full_fcnt(next_expected, fcnt16):
    """ChirpStack's get_full_f_cnt_up (storage/device.rs)."""
    if (next_expected % 65536) - 1 == fcnt16 or (next_expected % 65536 == 0 and fcnt16 == 65535
                                                    and next_expected > 0):
        return next_expected - 1
    return next_expected + ((fcnt16 - next_expected % 65536) % 65536)


class Verifier:
    COUNTERS = ("datagrams", "push_data", "pull_data", "stats", "bad_stat", "downlinks_sent", "downlink_no_gateway", "tx_acks",
                "tx_ack_bad", "not_push_data", "rejected", "rxpk", "valid", "uplinks", "copies",
                "unknown_devaddr", "bad_mic", "bad_payload", "bad_json", "bad_fcnt", "bad_field", "same_gateway",
                "join_requests", "join_copies", "join_unknown_dev", "join_bad_mic", "join_nonce_reused",
                "join_accepts_sent", "sessions", "downlinks_bad_mic", "bad_fopts", "mac_uplinks",
                "link_check_reqs", "device_time_reqs", "mac_downlinks", "mac_in_frm", "app_downlinks")

    def __init__(self, fleet, verify=True, otaa=None):
        self.fleet = fleet
        self.otaa = otaa or {}  # DevEUI -> OTAA device (its AppKey)
        self.nonces = {}        # DevEUI -> DevNonces it has used
        self.joins = []         # JoinRequests first seen in the last datagram: (device, DevNonce, gw, rxpk)
        self.session_of = {}    # DevEUI -> DevAddr of the session its last join gave it
        self.next_addr = 0x26000000
        self.verify = verify  # False: parse the JSON and answer, as the bridge does, nothing more
        self.c = {k: 0 for k in self.COUNTERS}
        self.next = {}       # DevAddr -> next expected 32-bit FCnt (ChirpStack's f_cnt_up)
        self.last = {}       # DevAddr -> (fcnt32, set of gateways that sent it)
        self.errors = []
        self.new = []        # uplinks first seen in the last datagram: (device, DevAddr, FCnt, PHYPayload, gw, rxpk)
        self.peers = {}      # gateway EUI (hex) -> {"addr:port": datagrams}, PUSH_DATA and PULL_DATA
        self.pulls = {}      # gateway EUI (hex) -> PULL_DATA
        self.fcnt_down_start = 0  # a device's first FCntDown
        self.bad_mic_every = 0    # every N-th ACK downlink gets a wrong MIC (0: none)
        self.app_every = 0        # every N-th ACK downlink carries application data on FPort 1 (0: none)
        self.afcnt_down = {}      # DevAddr -> next AFCntDown of a 1.1 session (from 0)
        self.stats = {}      # gateway EUI (hex) -> stat messages
        self.stat_dl = {}    # gateway EUI (hex) -> downlinks its stats reported (dwnb)
        self.stat_rx = {}    # gateway EUI (hex) -> uplinks its stats reported (rxnb)
        self.stat_ackr = []  # every stat's ackr
        self.rx_by_gw = {}   # gateway EUI (hex) -> rxpk it sent
        self.pull_peer = {}  # gateway EUI (hex) -> where its last PULL_DATA came from: its downlinks go there
        self.fcnt_down = {}  # DevAddr -> next downlink FCnt
        self.pending = {}    # PULL_RESP token -> the gateway EUI it went to, until its TX_ACK
        self.token = 0
        self.asks = {}       # DevAddr -> the MAC requests (CIDs) of its last uplink
        self.heard = {}      # DevAddr -> gateways that sent its last uplink

    def error(self, kind, msg):
        self.c[kind] += 1
        if len(self.errors) < 10:
            self.errors.append(f"{kind}: {msg}")

    def datagram(self, data, peer=None):
        """Returns the PUSH_ACK or PULL_ACK to send, or None (as the bridge: no ACK unless the JSON parses).
        peer: the sender's (address, port), recorded per gateway EUI."""
        self.c["datagrams"] += 1
        self.new = []
        self.joins = []
        if len(data) < 4 or data[0] not in (1, 2):
            self.error("rejected", "not Semtech UDP v1/v2")
            return None
        if peer is not None and len(data) >= 12 and data[3] in (0, 2):
            at = self.peers.setdefault(data[4:12].hex(), {})
            key = f"{peer[0]}:{peer[1]}"
            at[key] = at.get(key, 0) + 1
        if data[3] == 2:
            if len(data) != 12:
                self.error("rejected", f"PULL_DATA of {len(data)} bytes")
                return None
            self.c["pull_data"] += 1
            eui = data[4:12].hex()
            self.pulls[eui] = self.pulls.get(eui, 0) + 1
            if peer is not None:
                self.pull_peer[eui] = peer
            return bytes([data[0], data[1], data[2], 4])
        if data[3] == 5:
            # TX_ACK: the token of a PULL_RESP we sent, from the gateway it went to
            want = self.pending.pop(data[1] | data[2] << 8, None)
            if len(data) >= 12 and want == data[4:12].hex():
                self.c["tx_acks"] += 1
            else:
                self.error("tx_ack_bad", f"TX_ACK token {data[1] | data[2] << 8} from {data[4:12].hex()}, "
                                         f"expected {want}")
            return None
        if data[3] != 0:
            self.c["not_push_data"] += 1
            return None
        if len(data) < 13:
            self.error("rejected", "PUSH_DATA shorter than 13 bytes")
            return None
        try:
            obj = json.loads(data[12:].decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            self.error("bad_json", str(e))
            return None
        gw = data[4:12].hex()
        self.c["push_data"] += 1
        if "stat" in obj:
            self.stat(obj["stat"], gw)
        if isinstance(obj.get("rxpk"), list):
            self.rx_by_gw[gw] = self.rx_by_gw.get(gw, 0) + len(obj["rxpk"])
        for rx in obj.get("rxpk", []) if self.verify else ():
            up = self.rxpk(rx, gw)
            if up:
                self.new.append(up + (gw, rx))
        return bytes([data[0], data[1], data[2], 1])

    def stat(self, st, gw):
        """A gateway's status, checked as chirpstack-gateway-bridge parses it (time: Go's layout
        "2006-01-02 15:04:05 MST"; the counters integers, ackr a number)."""
        try:
            t = time.strptime(st["time"], "%Y-%m-%d %H:%M:%S GMT")
            ok = abs(calendar.timegm(t) - time.time()) < 120
        except (KeyError, TypeError, ValueError):
            ok = False
        for k in ("rxnb", "rxok", "rxfw", "dwnb", "txnb"):
            v = st.get(k)
            ok = ok and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        ok = ok and isinstance(st.get("ackr"), (int, float)) and 0 <= st["ackr"] <= 100
        # a forwarder that drops nothing: every frame received had a right CRC and was forwarded
        ok = ok and st["rxnb"] == st["rxok"] == st["rxfw"]
        if not ok:
            return self.error("bad_stat", f"{st!r}")
        self.c["stats"] += 1
        self.stats[gw] = self.stats.get(gw, 0) + 1
        self.stat_dl[gw] = self.stat_dl.get(gw, 0) + st["dwnb"]
        self.stat_rx[gw] = self.stat_rx.get(gw, 0) + st["rxnb"]
        self.stat_ackr.append(st["ackr"])
        return None

    def rxpk(self, rx, gw):
        self.c["rxpk"] += 1
        checks = (("tmst", 0, 2**32 - 1), ("chan", 0, 255), ("rfch", 0, 255), ("stat", -128, 127),
                  ("rssi", -32768, 32767), ("size", 0, 65535))
        for k, lo, hi in checks:
            v = rx.get(k)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                return self.error("bad_field", f"{k}={v!r}")
        if rx.get("stat") != 1 or rx.get("modu") != "LORA" or rx.get("codr") not in CODR or \
                not DATR.match(str(rx.get("datr"))) or not isinstance(rx.get("freq"), float) or \
                not isinstance(rx.get("lsnr"), (int, float)):
            return self.error("bad_field", f"stat/modu/codr/datr/freq/lsnr in {rx}")
        try:
            phy = base64.b64decode(rx["data"], validate=True)
        except (binascii.Error, KeyError, TypeError) as e:
            return self.error("bad_field", f"data: {e}")
        if len(phy) == rx["size"] == 23 and phy[0] == 0x00:
            return self.join_request(phy, rx, gw)
        if len(phy) != rx["size"] or len(phy) < 13:
            return self.error("bad_field", f"size {rx['size']} for {len(phy)} bytes")
        addr = struct.unpack_from("<I", phy, 1)[0]
        dev = self.fleet.get(addr)
        if dev is None:
            return self.error("unknown_devaddr", f"{addr:08x}")
        if int(rx["freq"] * 1000000) != dev["freq_hz"] or rx["datr"] != dev["datr"] or \
                gw not in dev["gateways"]:
            return self.error("bad_field", f"{addr:08x}: freq/datr/gateway not the fleet's")
        mhdr, fctrl = phy[0], phy[5]
        fol = fctrl & 0x0f
        # ADR (bit 7) may be set; ACK, ADRACKReq and ClassB may not
        if mhdr != (0x80 if dev["confirmed"] else 0x40) or fctrl & 0x70 or len(phy) < 13 + fol:
            return self.error("bad_field", f"{addr:08x}: MHDR {mhdr:02x} FCtrl {fctrl:02x}")
        fcnt16 = struct.unpack_from("<H", phy, 6)[0]
        nxt = self.next.get(addr, dev["fcnt_start"])
        fcnt = full_fcnt(nxt, fcnt16)
        msg = phy[:-4]
        b0 = bytes([0x49, 0, 0, 0, 0, 0]) + phy[1:5] + struct.pack("<I", fcnt & 0xffffffff) + \
            bytes([0, len(msg)])
        if dev.get("v11"):
            tx_dr, tx_ch = tx_dr_ch(int(round(rx["freq"] * 1000000)), rx["datr"])
            mic = mic11(dev["nwk"], dev["s_nwk"], 0, tx_dr, tx_ch, phy, fcnt)
        else:
            mic = aes_cmac(dev["nwk"], b0 + msg)[:4]
        if mic != phy[-4:]:
            return self.error("bad_mic", f"{addr:08x} FCnt {fcnt}")
        fport, frm = phy[8 + fol], phy[9 + fol:-4]
        key = dev["app"] if fport else dev.get("nwk_enc", dev["nwk"])
        stream = b""
        for i in range((len(frm) + 15) // 16):
            a = bytes([1, 0, 0, 0, 0, 0]) + phy[1:5] + struct.pack("<I", fcnt & 0xffffffff) + bytes([0, i + 1])
            stream += aes_ecb(key, a)
        plain = bytes(x ^ y for x, y in zip(frm, stream))
        if fport != dev["fport"] or plain != dev["payload"]:
            return self.error("bad_payload", f"{addr:08x} FCnt {fcnt}")
        fopts = phy[8:8 + fol]
        if dev.get("v11") and fol:
            # 1.1 (§4.3.1.6, errata): FOpts under NwkSEncKey, A = 01 00 00 00 01 | Dir 0 | DevAddr | FCntUp | 00 01
            a = bytes([1, 0, 0, 0, 1, 0]) + phy[1:5] + struct.pack("<I", fcnt & 0xffffffff) + bytes([0, 1])
            fopts = bytes(x ^ y for x, y in zip(fopts, aes_ecb(dev["nwk_enc"], a)))
        asks, i = [], 0
        while i < fol:
            if fopts[i] not in MAC_UP_LEN or i + 1 + MAC_UP_LEN[fopts[i]] > fol:
                return self.error("bad_fopts", f"{addr:08x}: FOpts {fopts.hex()}")
            asks.append(fopts[i])
            i += 1 + MAC_UP_LEN[fopts[i]]
        last = self.last.get(addr)
        if last and last[0] == fcnt:
            # another gateway's copy of the same uplink
            if gw in last[1]:
                return self.error("same_gateway", f"{addr:08x} FCnt {fcnt} twice from {gw}")
            last[1].add(gw)
            self.c["copies"] += 1
            self.c["valid"] += 1
            return
        if fcnt < nxt or (last and fcnt <= last[0]):
            return self.error("bad_fcnt", f"{addr:08x}: FCnt {fcnt} after {last[0] if last else None}")
        self.last[addr] = (fcnt, {gw})
        self.asks[addr] = asks
        if asks:
            self.c["mac_uplinks"] += 1
            self.c["link_check_reqs"] += LINK_CHECK in asks
            self.c["device_time_reqs"] += DEVICE_TIME in asks
        self.next[addr] = fcnt + 1
        self.c["valid"] += 1
        self.c["uplinks"] += 1
        return (dev, addr, fcnt, phy)

    def join_request(self, phy, rx, gw):
        """A JoinRequest (LoRaWAN 1.0.3 §6.2.4) checked as a join server does: known DevEUI and JoinEUI,
        MIC with the AppKey, a DevNonce the device has not used; the copies from other gateways counted."""
        join_eui, dev_eui = phy[1:9][::-1].hex(), phy[9:17][::-1].hex()
        nonce = struct.unpack_from("<H", phy, 17)[0]
        dev = self.otaa.get(dev_eui)
        if dev is None or dev["join_eui"] != join_eui:
            return self.error("join_unknown_dev", f"DevEUI {dev_eui} JoinEUI {join_eui}")
        if aes_cmac(dev.get("nwk_key", dev["app_key"]), phy[:19])[:4] != phy[19:]:
            return self.error("join_bad_mic", f"DevEUI {dev_eui} DevNonce {nonce}")
        if gw not in dev["gateways"]:
            return self.error("bad_field", f"JoinRequest of {dev_eui} from gateway {gw}, not the fleet's")
        used = self.nonces.setdefault(dev_eui, {})
        if nonce in used:
            if gw in used[nonce]:
                return self.error("join_nonce_reused", f"DevEUI {dev_eui} DevNonce {nonce} again from {gw}")
            used[nonce].add(gw)
            self.c["join_copies"] += 1
            self.c["valid"] += 1
            return None
        used[nonce] = {gw}
        self.c["join_requests"] += 1
        self.c["valid"] += 1
        self.joins.append((dev, nonce, gw, rx))
        return None

    def join_accept(self, dev, nonce, gw, rx):
        """The PULL_RESP with the JoinAccept for a JoinRequest, through the gateway's PULL_DATA address, in
        RX1 (5 s after it) as ChirpStack sends it; the session (DevAddr, keys, FCnt 0) replaces any before.
        Every other device gets the EU868 CFList, so both lengths (17 and 33 bytes) are sent.
        A 1.1 device (NwkKey) gets, as from a 1.1 join server, OptNeg with a MIC by JSIntKey over
        JoinReqType | JoinEUI | DevNonce and four session keys (LoRaWAN 1.1 §6.2.3); every third one
        is answered as a 1.0 server would (no OptNeg, NwkKey's MIC, a 1.0 session from NwkKey)."""
        peer = self.pull_peer.get(gw)
        if peer is None:
            self.c["downlink_no_gateway"] += 1
            return None, None
        addr, self.next_addr = self.next_addr, self.next_addr + 1
        app_nonce, net_id = (addr * 2654435761) & 0xffffff, 0x000013
        root = dev.get("nwk_key", dev["app_key"])
        opt_neg = "nwk_key" in dev and addr % 3 != 0
        body = struct.pack("<I", app_nonce)[:3] + struct.pack("<I", net_id)[:3] + struct.pack("<I", addr) + \
            bytes([0x80 if opt_neg else 0x00, 0x01])
        if addr % 2:
            body += b"".join(struct.pack("<I", f // 100)[:3] for f in
                             (867100000, 867300000, 867500000, 867700000, 867900000)) + b"\x00"
        join_eui = bytes.fromhex(dev["join_eui"])[::-1]
        if opt_neg:
            js_int = aes_ecb(root, b"\x06" + bytes.fromhex(dev["eui"])[::-1] + bytes(7))
            mic = aes_cmac(js_int, b"\xff" + join_eui + struct.pack("<H", nonce) + b"\x20" + body)[:4]
        else:
            mic = aes_cmac(root, b"\x20" + body)[:4]
        phy = b"\x20" + aes_ecb_decrypt(root, body + mic)
        old = self.session_of.get(dev["eui"])
        if old is None:
            self.c["sessions"] += 1
        else:
            del self.fleet[old]
        self.session_of[dev["eui"]] = addr
        if opt_neg:
            base = struct.pack("<I", app_nonce)[:3] + join_eui + struct.pack("<H", nonce) + bytes(2)
            self.fleet[addr] = dict(dev, nwk=aes_ecb(root, b"\x01" + base), s_nwk=aes_ecb(root, b"\x03" + base),
                                    nwk_enc=aes_ecb(root, b"\x04" + base),
                                    app=aes_ecb(dev["app_key"], b"\x02" + base), fcnt_start=0, v11=True)
        else:
            base = struct.pack("<I", app_nonce)[:3] + struct.pack("<I", net_id)[:3] + struct.pack("<H", nonce) + \
                bytes(7)
            self.fleet[addr] = dict(dev, nwk=aes_ecb(root, b"\x01" + base),
                                    app=aes_ecb(root, b"\x02" + base), fcnt_start=0)
        self.next.pop(addr, None)
        self.last.pop(addr, None)
        txpk = {"imme": False, "tmst": (rx["tmst"] + 5000000) % 2**32, "freq": rx["freq"], "rfch": 0,
                "powe": 14, "modu": "LORA", "datr": rx["datr"], "codr": "4/5", "ipol": True, "size": len(phy),
                "data": base64.b64encode(phy).decode()}
        self.token = (self.token + 1) % 65536
        self.pending[self.token] = gw
        self.c["join_accepts_sent"] += 1
        return bytes([2, self.token & 0xff, self.token >> 8, 3]) + json.dumps({"txpk": txpk}).encode(), peer

    def ack_downlink(self, dev, addr, gw, rx, fcnt_up=0):
        """The PULL_RESP acknowledging a confirmed uplink heard by gateway gw, and where it goes (as
        ChirpStack: an unconfirmed data down with FCtrl.ACK, in RX1 of the uplink, through the gateway's
        PULL_DATA address); None, counted, when the gateway never sent PULL_DATA."""
        peer = self.pull_peer.get(gw)
        if peer is None:
            self.c["downlink_no_gateway"] += 1
            return None, None
        # every app_every-th: one byte of application data on FPort 1, under AppSKey; a 1.1 session
        # counts such downlinks apart, AFCntDown from 0 (LoRaWAN 1.1 §4.3.1.5)
        app = self.app_every and self.c["downlinks_sent"] % self.app_every == self.app_every - 1
        counters = self.afcnt_down if app and dev.get("v11") else self.fcnt_down
        fcnt = counters.get(addr, 0 if counters is self.afcnt_down else self.fcnt_down_start)
        counters[addr] = fcnt + 1
        msg = bytes([0x60]) + struct.pack("<I", addr) + bytes([0x20]) + struct.pack("<H", fcnt & 0xffff)
        if app:
            a = bytes([1, 0, 0, 0, 0, 1]) + struct.pack("<I", addr) + struct.pack("<I", fcnt) + bytes([0, 1])
            msg += bytes([1, 0x5a ^ aes_ecb(dev["app"], a)[0]])
            self.c["app_downlinks"] += 1
        # 1.1 (§4.4): SNwkSIntKey, and B0's bytes 1-2 the ConfFCnt of the uplink the ACK is for
        conf = struct.pack("<H", fcnt_up & 0xffff) if dev.get("v11") else b"\0\0"
        b0 = bytes([0x49]) + conf + bytes([0, 0, 1]) + struct.pack("<I", addr) + struct.pack("<I", fcnt) + \
            bytes([0, len(msg)])
        phy = msg + aes_cmac(dev["s_nwk"] if dev.get("v11") else dev["nwk"], b0 + msg)[:4]
        if self.bad_mic_every and self.c["downlinks_sent"] % self.bad_mic_every == self.bad_mic_every - 1:
            phy = phy[:-1] + bytes([phy[-1] ^ 1])
            self.c["downlinks_bad_mic"] += 1
        return self.rx1_pull_resp(phy, rx, gw), peer

    def rx1_pull_resp(self, phy, rx, gw):
        """A data downlink's PULL_RESP in RX1 of the uplink rxpk (1 s later), to gateway gw, its token
        remembered until the TX_ACK."""
        txpk = {"imme": False, "tmst": (rx["tmst"] + 1000000) % 2**32, "freq": rx["freq"], "rfch": 0, "powe": 14,
                "modu": "LORA", "datr": rx["datr"], "codr": "4/5", "ipol": True, "size": len(phy),
                "data": base64.b64encode(phy).decode()}
        self.token = (self.token + 1) % 65536
        self.pending[self.token] = gw
        self.c["downlinks_sent"] += 1
        return bytes([2, self.token & 0xff, self.token >> 8, 3]) + json.dumps({"txpk": txpk}).encode()

    def mac_downlink(self, dev, addr, gw, rx, t_rx, in_frm=False, other=False, unknown=False):
        """The PULL_RESP answering the MAC requests of a device's last uplink (heard first by gw, at t_rx),
        as a network server answers them after its deduplication: LinkCheckAns (margin from the SNR, GwCnt
        the gateways that sent the uplink), DeviceTimeAns (GPS time when the uplink arrived), with the ACK bit
        for a confirmed device. In FOpts (plaintext in 1.0.x; 1.1: under NwkSEncKey, NFCntDown's block), or
        with in_frm in an FRMPayload on FPort 0 encrypted with NwkSKey (1.1: NwkSEncKey); other puts a
        DevStatusReq before them (a device skips it by its length), unknown a CID no version has after them.
        A 1.1 session's MIC: SNwkSIntKey, with the ConfFCnt of the uplink answered when the ACK bit is set."""
        peer = self.pull_peer.get(gw)
        if peer is None:
            self.c["downlink_no_gateway"] += 1
            return None, None
        cmds = b"\x06" if other else b""
        for cid in self.asks.get(addr, ()):
            if cid == LINK_CHECK:
                cmds += bytes([LINK_CHECK, max(0, min(254, int(rx["lsnr"]) + 10)),
                               len(self.last[addr][1])])
            elif cid == DEVICE_TIME:
                g = t_rx - GPS_EPOCH_UNIX + GPS_LEAP
                cmds += bytes([DEVICE_TIME]) + struct.pack("<I", int(g) & 0xffffffff) + \
                    bytes([int((g % 1) * 256)])
        if unknown:
            cmds += b"\x7f"
        fcnt = self.fcnt_down.get(addr, self.fcnt_down_start)
        self.fcnt_down[addr] = fcnt + 1
        fctrl = 0x20 if dev["confirmed"] else 0
        v11 = dev.get("v11")
        enc = dev["nwk_enc"] if v11 else dev["nwk"]
        if in_frm:
            stream = b""
            for i in range((len(cmds) + 15) // 16):
                stream += aes_ecb(enc, bytes([1, 0, 0, 0, 0, 1]) + struct.pack("<I", addr) +
                                  struct.pack("<I", fcnt) + bytes([0, i + 1]))
            body = b"\x00" + bytes(x ^ y for x, y in zip(cmds, stream))
            self.c["mac_in_frm"] += 1
        else:
            fctrl |= len(cmds)
            body = cmds
            if v11 and cmds:
                a = bytes([1, 0, 0, 0, 1, 1]) + struct.pack("<I", addr) + struct.pack("<I", fcnt) + bytes([0, 1])
                body = bytes(x ^ y for x, y in zip(cmds, aes_ecb(enc, a)))
        msg = bytes([0x60]) + struct.pack("<I", addr) + bytes([fctrl]) + struct.pack("<H", fcnt & 0xffff) + body
        conf = struct.pack("<H", self.last[addr][0] & 0xffff) if v11 and fctrl & 0x20 else b"\0\0"
        b0 = bytes([0x49]) + conf + bytes([0, 0, 1]) + struct.pack("<I", addr) + struct.pack("<I", fcnt) + \
            bytes([0, len(msg)])
        phy = msg + aes_cmac(dev["s_nwk"] if v11 else dev["nwk"], b0 + msg)[:4]
        self.c["mac_downlinks"] += 1
        return self.rx1_pull_resp(phy, rx, gw), peer

    def report(self):
        return dict(self.c, devices_seen=len(self.last), errors=self.errors, gateway_peers=self.peers,
                    pull_data_per_gateway=self.pulls, stats_per_gateway=self.stats,
                    stat_downlinks_per_gateway=self.stat_dl, stat_uplinks_per_gateway=self.stat_rx,
                    stat_ackr=self.stat_ackr, rxpk_per_gateway=self.rx_by_gw)


def pcap_udp_payloads(path, port):
    """(capture time in us, UDP payload) to `port` in an Ethernet pcap (IPv4, no fragments)."""
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
        nano = magic in (0xa1b23c4d, 0x4d3cb2a1)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl = struct.unpack(end + "IIII", rec)[:3]
            ts_us = sec * 1000000 + (frac // 1000 if nano else frac)
            frame = f.read(incl)
            if len(frame) < 42 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
                continue
            ihl = (frame[14] & 15) * 4
            udp = 14 + ihl
            if struct.unpack_from(">H", frame, udp + 2)[0] != port:
                continue
            ulen = struct.unpack_from(">H", frame, udp + 4)[0]
            yield ts_us, frame[udp + 8:udp + ulen]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fleet", required=True)
    ap.add_argument("--pcap", required=True)
    ap.add_argument("--port", type=int, default=1700)
    a = ap.parse_args()
    v = Verifier(load_fleet(a.fleet))
    # tmst is the sender's microsecond clock (mod 2^31, plus 10^9): how far it strays from the
    # capture's clock over the run (a tmst that stood still would stray by the run's length)
    first = None
    lo = hi = 0
    for ts_us, payload in pcap_udp_payloads(a.pcap, a.port):
        v.datagram(payload)
        m = re.search(rb'"tmst":([0-9]+)', payload)
        if m:
            d = int(m.group(1)) - ts_us
            first = d if first is None else first
            # the two clocks' distance against the first datagram's, over tmst's wrap at 2^31
            rel = (d - first) % 2**31
            rel = rel - 2**31 if rel >= 2**30 else rel
            lo, hi = min(lo, rel), max(hi, rel)
    json.dump(dict(v.report(), tmst_spread_us=hi - lo if first is not None else None), sys.stdout)
    print()


if __name__ == "__main__":
    main()
