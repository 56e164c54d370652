"""Diagnosis Sample: the phone rejects the peripheral's connection-parameter request, then accepts a sane one.

A soil sensor, connected at 30 ms, wants to save power: it sends an L2CAP Connection Parameter Update Request for
interval 400-500 ms, latency 4, supervision timeout 4 s. That breaks the spec's rule (the timeout must exceed
(1 + latency) x interval max x 2 = 5 s; Core Vol 6, Part B, 4.5.2) and Apple's rules (interval max x (latency + 1) =
2.5 s > 2 s; interval min not a multiple of 15 ms); the phone's host rejects it as AOSP's l2cble does: Connection
Parameter Update Response, result 0x0001 (diagkit.android_parameter_policy). One second later the sensor asks for
30-45 ms, latency 4, 4 s, which both rule sets allow: accepted, the phone sends LE Connection Update, and LE
Connection Update Complete follows at the instant (simfaults.py). The app reads the moisture value and disconnects.
Rule LP-01 (the rejection); the accepted update must not be flagged.
"""

from __future__ import annotations

import asyncio

from bumble.device import ConnectionParameterUpdateError
from bumble.gatt import Characteristic, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "DB:04:6F:91:C2:38"
SERVICE = "7D2F0001-4B6E-4A1C-9E3D-2F8B7C6A5E14"
MOISTURE = "7D2F0002-4B6E-4A1C-9E3D-2F8B7C6A5E14"
TOO_SLOW = {"connection_interval_min": 400.0, "connection_interval_max": 500.0, "max_latency": 4,
            "supervision_timeout": 4000.0}
SANE = {"connection_interval_min": 30.0, "connection_interval_max": 45.0, "max_latency": 4,
        "supervision_timeout": 4000.0}


async def request(rig, params) -> int:
    try:
        await rig.device.update_connection_parameters(rig.device_conn, use_l2cap=True, **params)
        return 0
    except ConnectionParameterUpdateError as error:
        return error.error_code


async def run(loop, out):
    rig = simfaults.rig(loop, out, "SoilSense", DEVICE_ADDRESS, interval_ms=30.0)
    moisture = Characteristic(MOISTURE, Characteristic.Properties.READ, Characteristic.READABLE, b"\x2f")
    rig.device.add_service(Service(SERVICE, [moisture]))
    decisions = diagkit.android_parameter_policy(rig.phone)
    conn = await rig.connect()
    peer = await sim.discover_all(conn)
    results = [await request(rig, TOO_SLOW)]
    await asyncio.sleep(1.0)
    results.append(await request(rig, SANE))
    await asyncio.sleep(0.6)  # the update takes effect at its instant
    assert bytes(await sim.find_char(peer, MOISTURE).read_value()) == b"\x2f"
    await rig.disconnect()
    assert results == [1, 0] and [d["accepted"] for d in decisions] == [False, True], (results, decisions)
    return {
        "description": "An L2CAP Connection Parameter Update Request (400-500 ms, latency 4, 4 s) that breaks the "
                       "spec's timeout rule and Apple's rules is rejected (result 0x0001); a sane one (30-45 ms, "
                       "latency 4, 4 s) is accepted and applied",
        "service_uuid": SERVICE, "phone_policy": "AOSP l2cble_process_sig_cmd: spec ranges and timeout > "
                                                 "(1 + latency) x interval max x 2",
        "requests": [
            {**d, "apple_rule_violations": diagkit.apple_rule_violations(
                d["interval_min"], d["interval_max"], d["latency"], d["timeout"]),
             "spec_timeout_rule_violated": diagkit.spec_timeout_violated(d["interval_max"], d["latency"], d["timeout"])}
            for d in decisions],
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    reqs = log.signalling(0x12)
    rsps = log.signalling(0x13)
    assert len(reqs) == 2 and len(rsps) == 2 and all(not s for _f, s, _p in reqs) and all(s for _f, s, _p in rsps)
    for row, (f, _s, p), (rf, _rs, rp) in zip(truth["requests"], reqs, rsps):
        # LE signalling: code, identifier, length; then interval min/max, latency, timeout (Core Vol 3, Part A, 4.20)
        fields = [int.from_bytes(p[4 + 2 * i:6 + 2 * i], "little") for i in range(4)]
        assert fields == [row["interval_min"], row["interval_max"], row["latency"], row["timeout"]]
        row.update({"request_frame": f, "identifier": p[1], "response_frame": rf, "response_identifier": rp[1],
                    "result": int.from_bytes(rp[4:6], "little")})
    update = log.commands(0x2013)
    assert len(update) == 1
    status = log.status_of(update[0])
    complete = log.events(0x3E, 0x03)
    assert len(complete) == 1 and complete[0].params[1] == 0
    c = complete[0].params
    interval, latency, timeout = (int.from_bytes(c[4 + 2 * i:6 + 2 * i], "little") for i in range(3))
    truth["connection_update"] = {"command_frame": update[0].frame, "command_status_frame": status.frame,
                                  "complete_frame": complete[0].frame, "interval_ms": interval * 1.25,
                                  "latency": latency, "supervision_timeout_ms": timeout * 10,
                                  "seconds_from_command_to_complete": log.seconds(update[0].frame, complete[0].frame)}
    rejected, accepted = truth["requests"]
    truth["end"] = diagkit.connection_spans(log)[0]["end"]
    truth["diagnosis"] = {
        "rules": ["LP-01"],
        "findings": [diagkit.finding(
            "LP-01", "W", rejected["response_frame"], [rejected["request_frame"]],
            f"The phone rejected the sensor's parameter request (#{rejected['request_frame']}: 400-500 ms, latency 4, "
            f"timeout 4 s) with result 0x0001 (#{rejected['response_frame']}): the timeout must exceed 5 s, and "
            f"interval max x (latency + 1) = 2.5 s breaks Apple's 2 s rule")],
        "not_flagged": [
            diagkit.quiet("the second request (30-45 ms, latency 4, 4 s), accepted and applied",
                          [accepted["request_frame"], accepted["response_frame"], update[0].frame, complete[0].frame],
                          ["LP-01", "LP-03", "LP-02"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
