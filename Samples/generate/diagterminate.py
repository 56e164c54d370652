"""Diagnosis Sample: the phone closes the link and the peer never acknowledges the termination (0x22 after 40 s).

A fitness tracker connects; the app discovers it and reads its battery level, then closes the link: HCI Disconnect
(0x13 Remote User Terminated Connection, the reason Android's stack gives). The tracker's link layer keeps the
connection up but never acknowledges the LL_TERMINATE_IND (its firmware is stuck with its receive buffer full), so
the phone's controller keeps sending it until its LL response timer runs out (40 s, Core Vol 6, Part B, 5.2) and then
reports Disconnection Complete 0x22 LMP/LL Response Timeout (simfaults.FaultLink.terminate_never_acknowledged). The
cause is in the log: this side's own Disconnect, 40 s before. Rule DC-04 (information: the link was being closed).
"""

from __future__ import annotations

import asyncio

from bumble import hci
from bumble.gatt import Characteristic, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "D2:6F:41:8B:3A:95"
BATTERY_SERVICE = "180F"
BATTERY_LEVEL = "2A19"
BATTERY_PERCENT = 64


async def run(loop, out):
    rig = simfaults.rig(loop, out, "TrackFit", DEVICE_ADDRESS, interval_ms=30.0)
    battery = Characteristic(BATTERY_LEVEL, Characteristic.Properties.READ, Characteristic.READABLE,
                             bytes([BATTERY_PERCENT]))
    rig.device.add_service(Service(BATTERY_SERVICE, [battery]))
    conn = await rig.connect()
    peer = await sim.discover_all(conn)
    level = bytes(await sim.find_char(peer, BATTERY_LEVEL).read_value())
    assert level == bytes([BATTERY_PERCENT])
    await asyncio.sleep(0.5)
    rig.link.terminate_never_acknowledged = True
    ended = loop.create_future()
    conn.on("disconnection", ended.set_result)
    asked = loop.time()
    await conn.disconnect(reason=hci.HCI_ErrorCode.REMOTE_USER_TERMINATED_CONNECTION_ERROR)
    reason = await ended
    waited = loop.time() - asked
    assert reason == hci.HCI_ErrorCode.LMP_OR_LL_RESPONSE_TIMEOUT_ERROR, reason
    assert rig.device_conn.handle in rig.device.connections  # the tracker still holds the link
    await asyncio.sleep(0.2)
    return {
        "description": "The app closes the link (Disconnect 0x13); the tracker never acknowledges LL_TERMINATE_IND, "
                       "so the phone's controller ends the link when its 40 s LL response timer runs out "
                       "(Disconnection Complete 0x22)",
        "battery_level_handle": sim.find_char(peer, BATTERY_LEVEL).handle, "battery_level": BATTERY_PERCENT,
        "ll_response_timeout_s": simfaults.LL_RESPONSE_TIMEOUT_S, "controller_gave_up_after_s": round(waited, 6),
        "peer_still_connected_at_the_end": True,
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    disconnect = log.commands(0x0406)
    assert len(disconnect) == 1
    disconnect = disconnect[0]
    status = log.status_of(disconnect)
    span = diagkit.connection_spans(log)[0]
    end = span["end"]
    assert end["reason_code"] == 0x22 and diagkit.status_field(status) == 0
    later_rx = [r.frame for r in log.records if r.kind == "acl" and not r.sent and r.frame > disconnect.frame]
    assert not later_rx, later_rx  # nothing from the tracker's host after the Disconnect
    waited = log.seconds(disconnect.frame, end["frame"])
    assert 40.0 <= waited < 40.1, waited
    read = log.att(0x0A, sent=True)[-1][0]
    truth["connection"] = span
    truth["termination"] = {"disconnect_frame": disconnect.frame, "disconnect_reason": disconnect.params[2],
                            "command_status_frame": status.frame, "end": end, "seconds_after_disconnect": waited}
    truth["diagnosis"] = {
        "rules": ["DC-04"],
        "findings": [
            diagkit.finding("DC-04", "I", end["frame"], [disconnect.frame],
                            f"This side asked to disconnect at #{disconnect.frame} (HCI Disconnect, 0x13); the tracker "
                            f"never acknowledged the LL_TERMINATE_IND, so {waited:.1f} s later the controller ended the "
                            f"link with 0x22 LL Response Timeout (#{end['frame']}): the link was being closed anyway"),
        ],
        "deciding_frame_note": "the cause is the frame of this side's Disconnect, not an unknown procedure",
        "not_flagged": [
            diagkit.quiet("the 0x22 of the termination this side asked for: not a lost link", [end["frame"]],
                          ["DC-04", "DC-01", "DC-02"], at_most="info"),
            diagkit.quiet("the answered battery read", [read], ["GATT-01", "GATT-02"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
