"""Diagnosis Sample: pairing fails with SMP Pairing Failed 0x04 Confirm Value Failed (a mistyped passkey).

A blood-pressure monitor with a display and no keyboard (IO capability DisplayOnly) asks for MITM protection; the
phone (KeyboardDisplay) pairs with LE Secure Connections, so the method is passkey entry: the monitor shows 284913, the
user types 284912. bumble's SMP on the phone sends its first Pairing Confirm and Random for the typed passkey; the
monitor's bumble SMP checks the phone's confirm value against its own passkey, finds it wrong in the first of the 20
rounds (the two passkeys differ in bit 0) and sends Pairing Failed 0x04. The app gives up and disconnects.
Rule SEC-03.
"""

from __future__ import annotations

import asyncio

from bumble.core import ProtocolError
from bumble.gatt import Characteristic, Service
from bumble.pairing import PairingConfig, PairingDelegate

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "E2:7C:55:18:0B:93"
SERVICE = "00001810-0000-1000-8000-00805F9B34FB"  # Blood Pressure
FEATURE = "00002A49-0000-1000-8000-00805F9B34FB"  # Blood Pressure Feature
PASSKEY_SHOWN = 284913
PASSKEY_TYPED = 284912
PAIRING_SEED = 0x5EC3


class MonitorDisplay(PairingDelegate):
    """The monitor: shows a passkey, has no input."""

    def __init__(self):
        super().__init__(io_capability=PairingDelegate.IoCapability.DISPLAY_OUTPUT_ONLY)

    async def generate_passkey(self) -> int:
        return PASSKEY_SHOWN

    async def display_number(self, number: int, digits: int) -> None:
        return None


class PhoneUser(PairingDelegate):
    """The phone: a keyboard and a display; its user reads the monitor's passkey and types it (wrongly)."""

    def __init__(self):
        super().__init__(io_capability=PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT)

    async def get_number(self) -> int:
        await asyncio.sleep(6.0)  # reading six digits off the monitor and typing them
        return PASSKEY_TYPED


async def run(loop, out):
    rig = simfaults.rig(loop, out, "BP-Monitor", DEVICE_ADDRESS, interval_ms=30.0)
    feature = Characteristic(FEATURE, Characteristic.Properties.READ, Characteristic.READABLE, b"\x01\x00")
    rig.device.add_service(Service(SERVICE, [feature]))
    rig.device.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True,
                                                                  delegate=MonitorDisplay())
    rig.phone.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True,
                                                                 delegate=PhoneUser())
    restore = diagkit.reproducible_pairing(PAIRING_SEED, rig.phone, rig.device)
    failures: list[int] = []
    try:
        conn = await rig.connect()
        conn.on("pairing_failure", failures.append)
        await sim.discover_all(conn)
        try:
            await conn.pair()
            raise AssertionError("pairing should fail: wrong passkey")
        except ProtocolError:
            pass
        await asyncio.sleep(1.0)  # the app shows "pairing failed" and closes the connection
        await rig.disconnect()
    finally:
        restore()
    assert failures == [0x04], failures
    return {
        "description": "Passkey-entry pairing (LE Secure Connections) with a blood-pressure monitor fails: the user "
                       "typed 284912 for 284913 and the monitor sends SMP Pairing Failed 0x04 Confirm Value Failed",
        "service_uuid": SERVICE,
        "pairing": {"method": "LE Secure Connections, passkey entry (the monitor displays, the phone inputs)",
                    "passkey_displayed": f"{PASSKEY_SHOWN:06d}", "passkey_typed": f"{PASSKEY_TYPED:06d}",
                    "seed": f"0x{PAIRING_SEED:04x}", "failure_reported_to_the_phone_app": failures[0]},
    }


def smp_fields(payload: bytes) -> dict:
    """Pairing Request / Response (Core Vol 3, Part H, 3.5.1-2): IO capability, OOB, AuthReq, key size."""
    return {"io_capability": payload[1], "oob_data_flag": payload[2], "auth_req": payload[3],
            "max_encryption_key_size": payload[4]}


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    (request, _s, req), = log.smp(0x01)
    (response, _s2, rsp), = log.smp(0x02)
    failed = log.smp(0x05)
    assert len(failed) == 1 and not failed[0][1], failed
    failed_frame, _sent, payload = failed[0]
    confirms = [f for f, _s, _p in log.smp(0x03)]
    randoms = [f for f, _s, _p in log.smp(0x04)]
    keys = [f for f, _s, _p in log.smp(0x0C)]
    disconnect = log.commands(0x0406)[0]
    end = diagkit.connection_spans(log)[0]["end"]
    truth["pairing"].update({
        "pairing_request_frame": request, "pairing_request": smp_fields(req),
        "pairing_response_frame": response, "pairing_response": smp_fields(rsp),
        "public_key_frames": keys, "pairing_confirm_frames": confirms, "pairing_random_frames": randoms,
        "pairing_failed": {"frame": failed_frame, "sender": "device (received by the phone)", "reason_code": payload[1],
                           "reason": diagkit.SMP_ERRORS[payload[1]]},
        "encryption_change_events": len(log.events(0x08)), "seconds_from_request_to_failure":
            log.seconds(request, failed_frame)})
    truth["end"] = end
    truth["diagnosis"] = {
        "rules": ["SEC-03"],
        "findings": [diagkit.finding(
            "SEC-03", "C", failed_frame, [request, response] + confirms + randoms,
            f"Pairing failed: the monitor sent Pairing Failed 0x04 Confirm Value Failed (#{failed_frame}) after the "
            f"phone's Pairing Random (#{randoms[0]}): the passkey typed on the phone was not the one displayed")],
        "not_flagged": [
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
        "context": [{"what": "the app closes the link after the failure (Disconnect, Disconnection Complete 0x16)",
                     "frames": [disconnect.frame, end["frame"]], "rules": ["DC-03"]}],
    }
