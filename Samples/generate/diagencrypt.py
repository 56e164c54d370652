"""Diagnosis Sample: reads refused for security, pairing, and what pairing does and does not fix.

A glucose meter's service has two characteristics: a record count readable on an encrypted link
(READ_REQUIRES_ENCRYPTION) and a calibration value readable only on an authenticated (MITM) link
(READ_REQUIRES_AUTHENTICATION). The phone reads both: 0x0F Insufficient Encryption and 0x05 Insufficient
Authentication (bumble's GATT server checks). The app pairs (Just Works: the meter has no display or keyboard, LE
Secure Connections, bonding), encryption starts, and it reads both again: the record count now succeeds (the benign
resolution of SEC-05); the calibration is refused with 0x05 again, since Just Works gives an unauthenticated key.

bumble 0.0.236 marks every paired link authenticated (Device.on_pairing sets ``connection.authenticated = True``
whatever the method); the meter's host here sets it from the key (``keys.ltk.authenticated``, False for Just Works),
as Core Vol 3, Part H, 2.3.1 defines it, so that its GATT server refuses the MITM-protected read.
"""

from __future__ import annotations

import asyncio

from bumble.core import ProtocolError
from bumble.gatt import Characteristic, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "F1:39:6D:A8:24:5E"
SERVICE = "9C3E0001-2B7D-4C1A-8E55-6A0F1D2C3B4E"
RECORD_COUNT = "9C3E0002-2B7D-4C1A-8E55-6A0F1D2C3B4E"
CALIBRATION = "9C3E0003-2B7D-4C1A-8E55-6A0F1D2C3B4E"
PAIRING_SEED = 0x6C0F
COUNT = b"\x2a\x00"  # 42 records
CALIBRATION_VALUE = b"\x64\x00\x05\x01"


async def read(proxy) -> tuple[bytes | None, int | None]:
    try:
        return bytes(await proxy.read_value()), None
    except ProtocolError as error:
        return None, error.error_code


async def run(loop, out):
    rig = simfaults.rig(loop, out, "GlucoMeter", DEVICE_ADDRESS, interval_ms=30.0)
    count = Characteristic(RECORD_COUNT, Characteristic.Properties.READ,
                           Characteristic.READABLE | Characteristic.READ_REQUIRES_ENCRYPTION, COUNT)
    calibration = Characteristic(CALIBRATION, Characteristic.Properties.READ,
                                 Characteristic.READABLE | Characteristic.READ_REQUIRES_AUTHENTICATION,
                                 CALIBRATION_VALUE)
    rig.device.add_service(Service(SERVICE, [count, calibration]))

    def on_device_connection(connection):
        # The key decides whether the link is authenticated (see the module docstring).
        connection.on("pairing", lambda keys: setattr(connection, "authenticated", bool(keys.ltk.authenticated)))

    rig.device.on("connection", on_device_connection)
    restore = diagkit.reproducible_pairing(PAIRING_SEED, rig.phone, rig.device)
    try:
        conn = await rig.connect()
        peer = await sim.discover_all(conn)
        count_proxy, calibration_proxy = sim.find_char(peer, RECORD_COUNT), sim.find_char(peer, CALIBRATION)
        before = [await read(count_proxy), await read(calibration_proxy)]
        await asyncio.sleep(0.3)  # the app reacts to the errors: it asks for pairing
        await conn.pair()
        await asyncio.sleep(0.2)
        after = [await read(count_proxy), await read(calibration_proxy)]
        await rig.disconnect()
    finally:
        restore()
    assert before == [(None, 0x0F), (None, 0x05)] and after == [(COUNT, None), (None, 0x05)], (before, after)
    return {
        "description": "Reads refused with 0x0F Insufficient Encryption and 0x05 Insufficient Authentication; after "
                       "Just Works pairing the encrypted read succeeds and the MITM-protected read fails again (0x05)",
        "service_uuid": SERVICE,
        "record_count": {"uuid": RECORD_COUNT, "value_handle": count_proxy.handle, "needs": "encryption",
                         "value_hex": COUNT.hex()},
        "calibration": {"uuid": CALIBRATION, "value_handle": calibration_proxy.handle,
                        "needs": "authentication (MITM)"},
        "pairing": {"method": "LE Secure Connections, Just Works, bonding (unauthenticated key)",
                    "seed": f"0x{PAIRING_SEED:04x}"},
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    count_h, calibration_h = truth["record_count"]["value_handle"], truth["calibration"]["value_handle"]
    reads = [(f, int.from_bytes(p[1:3], "little")) for f, _s, p in log.att(0x0A, sent=True)]
    errors = {f: diagkit.att_error(p) for f, _s, p in log.att(0x01, sent=False) if p[1] == 0x0A}
    responses = [f for f, _s, _p in log.att(0x0B, sent=False)]
    answers = sorted(list(errors) + responses)

    def answer(request_frame):
        return next(f for f in answers if f > request_frame)

    rows = [{"request_frame": f, "handle": h, "answer_frame": answer(f),
             "error": errors.get(answer(f)), "ok": answer(f) in responses} for f, h in reads]
    assert [(r["handle"], (r["error"] or {}).get("error_code")) for r in rows] == [
        (count_h, 0x0F), (calibration_h, 0x05), (count_h, None), (calibration_h, 0x05)], rows
    change = log.events(0x08)
    assert len(change) == 1 and change[0].params[0] == 0
    request = log.smp(0x01)[0][0]
    truth["reads"] = rows
    truth["pairing"].update({"pairing_request_frame": request, "enable_encryption_frame": log.commands(0x2019)[0].frame,
                             "encryption_change_frame": change[0].frame, "encryption_change_status": change[0].params[0]})
    first_enc, first_auth, second_enc, second_auth = rows
    truth["diagnosis"] = {
        "rules": ["SEC-05"],
        "findings": [diagkit.finding(
            "SEC-05", "E", second_auth["answer_frame"],
            [first_auth["request_frame"], first_auth["answer_frame"], request, change[0].frame,
             second_auth["request_frame"]],
            f"0x{calibration_h:04X} needs an authenticated (MITM) link: refused with 0x05 (#{first_auth['answer_frame']}), "
            f"Just Works pairing (#{request}, encrypted #{change[0].frame}) did not satisfy it, and the read is refused "
            f"again with 0x05 (#{second_auth['answer_frame']})")],
        "not_flagged": [
            diagkit.quiet(f"0x{count_h:04X} refused with 0x0F before pairing, read after encryption: resolved",
                          [first_enc["request_frame"], first_enc["answer_frame"], change[0].frame,
                           second_enc["request_frame"], second_enc["answer_frame"]], ["SEC-05"], at_most="info"),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
            diagkit.quiet("the app's own disconnect at the end", [log.commands(0x0406)[0].frame,
                                                                  diagkit.connection_spans(log)[0]["end"]["frame"]],
                          ["DC-02", "DC-03"]),
        ],
    }
