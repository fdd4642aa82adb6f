#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Provision an xdpreplay fleet (devices.csv, gateways.csv) in ChirpStack v4 through its REST API
(chirpstack-rest-api, which fronts the gRPC API), so that the server under test knows every device
and gateway that xdpreplay lorawan send will use.

For each gateway:  POST /api/gateways             {"gateway": {gatewayId, name, tenantId, statsInterval}}
For each device:   POST /api/devices              {"device": {devEui, name, applicationId, deviceProfileId,
                                                               skipFcntCheck}}
                   POST /api/devices/{devEui}/activate
                        {"deviceActivation": {devAddr, appSKey, nwkSEncKey, sNwkSIntKey, fNwkSIntKey,
                                              fCntUp, nFCntDown, aFCntDown}}
LoRaWAN 1.0.x ABP: the three network session keys are all the NwkSKey (api/proto/api/device.proto:
"For LoRaWAN 1.0.x devices, set this to the NwkSKey"); fCntUp is the fleet's fcnt_start. The device
profile must be LoRaWAN 1.0.x, ABP (supports_otaa false), in the fleet's region.
LoRaWAN 1.1 ABP (mac_version 1.1.0: lorawan fleet --mac-version 1.1.0): fNwkSIntKey is the CSV's
nwk_s_key, sNwkSIntKey and nwkSEncKey its s_nwk_s_int_key and nwk_s_enc_key; the profile must be
LoRaWAN 1.1.0, and its region's channels in the order xdpreplay numbers them (the MIC's B1 carries
the channel index).
OTAA devices (an app_key in the CSV: lorawan fleet --otaa) get their JoinEUI and
                   POST /api/devices/{devEui}/keys  {"deviceKeys": {nwkKey, appKey}}
instead of an activation: for LoRaWAN 1.0.x the AppKey goes in nwkKey (device.proto: "For LoRaWAN
1.0.x, use this field for the LoRaWAN 1.0.x 'AppKey'"), for 1.1 (an nwk_key in the CSV: --otaa
--mac-version 1.1.0) nwkKey and appKey are the CSV's; their profile must support OTAA (and be 1.1.0
for 1.1 devices). Alternatively set
[gateway] allow_unknown_gateways=true in chirpstack.toml and skip the gateways (--no-gateways).

    chirpstack-provision.py --url http://HOST:8090 --token API_TOKEN --tenant-id T \\
        --application-id A --device-profile-id P --fleet DIR [--no-gateways] [--dry-run]

--dry-run prints the requests as JSON lines instead of sending them. Written from ChirpStack v4's
API definitions; it has not been run against a ChirpStack server here (none can be built on the
test machines).
"""
import argparse
import csv
import json
import sys
import urllib.error
import urllib.request


def requests(a):
    with open(f"{a.fleet}/gateways.csv") as f:
        for i, g in enumerate(csv.DictReader(f)):
            if not a.no_gateways:
                yield "POST", "/api/gateways", {"gateway": {
                    "gatewayId": g["gateway_eui"], "name": g.get("name") or f"xdpreplay-gw-{i}",
                    "tenantId": a.tenant_id, "statsInterval": 30}}
    with open(f"{a.fleet}/devices.csv") as f:
        for d in csv.DictReader(f):
            dev = {"devEui": d["dev_eui"], "name": f"xdpreplay-{d['dev_eui']}", "applicationId": a.application_id,
                   "deviceProfileId": a.device_profile_id, "skipFcntCheck": a.skip_fcnt_check}
            if d.get("app_key"):
                # OTAA: the server derives the session at the join; a fleet already joined elsewhere
                # (xdpreplay lorawan send --joined) has sessions this server never made
                yield "POST", "/api/devices", {"device": dict(dev, joinEui=d["join_eui"])}
                if d.get("nwk_key"):
                    # LoRaWAN 1.1 (lorawan fleet --otaa --mac-version 1.1.0): both root keys
                    keys = {"nwkKey": d["nwk_key"], "appKey": d["app_key"]}
                else:
                    keys = {"nwkKey": d["app_key"], "appKey": "00000000000000000000000000000000"}
                yield "POST", f"/api/devices/{d['dev_eui']}/keys", {"deviceKeys": keys}
                continue
            yield "POST", "/api/devices", {"device": dev}
            v11 = (d.get("mac_version") or "1.0.3").startswith("1.1")
            yield "POST", f"/api/devices/{d['dev_eui']}/activate", {"deviceActivation": {
                "devAddr": d["dev_addr"], "appSKey": d["app_s_key"],
                "nwkSEncKey": d["nwk_s_enc_key"] if v11 else d["nwk_s_key"],
                "sNwkSIntKey": d["s_nwk_s_int_key"] if v11 else d["nwk_s_key"], "fNwkSIntKey": d["nwk_s_key"],
                "fCntUp": int(d["fcnt_start"]), "nFCntDown": 0, "aFCntDown": 0}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--token")
    ap.add_argument("--tenant-id", default="")
    ap.add_argument("--application-id", default="")
    ap.add_argument("--device-profile-id", default="")
    ap.add_argument("--fleet", required=True)
    ap.add_argument("--no-gateways", action="store_true")
    ap.add_argument("--skip-fcnt-check", action="store_true")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    if not a.dry_run and not (a.url and a.token and a.application_id and a.device_profile_id):
        ap.error("--url, --token, --application-id and --device-profile-id are needed (or --dry-run)")
    n = 0
    for method, path, body in requests(a):
        if a.dry_run:
            print(json.dumps({"method": method, "path": path, "body": body}))
            n += 1
            continue
        req = urllib.request.Request(a.url.rstrip("/") + path, data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json",
                                              "Grpc-Metadata-Authorization": "Bearer " + a.token})
        try:
            urllib.request.urlopen(req, timeout=30).read()
            n += 1
        except urllib.error.HTTPError as e:
            sys.exit(f"chirpstack-provision: {method} {path}: HTTP {e.code}: {e.read()[:200]!r}")
    print(f"chirpstack-provision: {n} requests {'printed' if a.dry_run else 'sent'}", file=sys.stderr)


if __name__ == "__main__":
    main()
