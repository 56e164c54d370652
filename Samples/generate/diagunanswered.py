"""Diagnosis Sample: a Write Request the peer never answers, then the link is lost by supervision timeout (0x08).

A smart lock connects (30 ms, 5 s supervision timeout); the app discovers it, reads the lock state, then writes
"unlock" to the lock's command characteristic with a Write Request. The lock's link layer acknowledges the packet
(Number Of Completed Packets), but its firmware hangs in the write handler while driving the motor (a bumble write
callback that never returns), so no Write Response and no Error Response ever leaves it. 1.2 s later the motor's
current browns the lock out: its radio goes silent (simfaults.FaultLink.lose_radio), and 5 s after the last
connection event it was heard the phone's controller reports Disconnection Complete 0x08 Connection Timeout, 6.2 s
after the request — well inside the 30 s ATT transaction timeout (Core Vol 3, Part F, 3.3.3), so the request was
still waiting when the link went. The peer stopped responding before the link was lost: the loss finding cites the
unanswered request first. Rule DC-01.
"""

from __future__ import annotations

import asyncio

from bumble.gatt import Characteristic, CharacteristicValue, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "C8:1E:77:52:D4:06"
SERVICE = "5A1C0001-7E3B-4F29-8D61-2C9B0E4A7F35"
STATE = "5A1C0002-7E3B-4F29-8D61-2C9B0E4A7F35"
COMMAND = "5A1C0003-7E3B-4F29-8D61-2C9B0E4A7F35"
LOCKED = b"\x01"
UNLOCK = b"\x02\x5A\x3C"  # command 02 (unlock) + a 16-bit session token
SILENT_AFTER_S = 1.2


async def run(loop, out):
    rig = simfaults.rig(loop, out, "DoorLock", DEVICE_ADDRESS, interval_ms=30.0)
    hung = loop.create_future()  # the firmware's write handler waits on the motor, which never reports
    written: list[bytes] = []

    async def on_command(_connection, value):
        written.append(bytes(value))
        await hung

    state = Characteristic(STATE, Characteristic.Properties.READ, Characteristic.READABLE, LOCKED)
    command = Characteristic(COMMAND, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
                             CharacteristicValue(write=on_command))
    rig.device.add_service(Service(SERVICE, [state, command]))
    conn = await rig.connect()
    lost = loop.create_future()
    conn.on("disconnection", lost.set_result)
    peer = await sim.discover_all(conn)
    assert bytes(await sim.find_char(peer, STATE).read_value()) == LOCKED
    await asyncio.sleep(0.4)
    write = loop.create_task(sim.find_char(peer, COMMAND).write_value(UNLOCK, with_response=True))
    asked = loop.time()
    await asyncio.sleep(SILENT_AFTER_S)
    last_heard = rig.link.lose_radio()
    reason = await lost
    lost_after = loop.time() - asked
    try:
        await write
        raise AssertionError("the write should fail with the link")
    except (Exception, asyncio.CancelledError) as error:  # noqa: BLE001 - bumble ends the transaction with the link
        write_error = type(error).__name__
    await asyncio.sleep(0.2)
    hung.cancel()
    assert reason == 0x08 and written == [UNLOCK] and lost_after < 30.0, (reason, written, lost_after)
    return {
        "description": "A Write Request (unlock) the smart lock never answers; its radio goes silent 1.2 s later and "
                       "the 5 s supervision timeout expires (Disconnection Complete 0x08) with the request still "
                       "outstanding",
        "service_uuid": SERVICE, "state_value_handle": sim.find_char(peer, STATE).handle,
        "command_uuid": COMMAND, "command_value_handle": sim.find_char(peer, COMMAND).handle,
        "command_value": UNLOCK.hex(), "supervision_timeout_s": rig.link.timeout_s,
        "radio_lost_at_s": round(rig.link.radio_lost_at, 6), "last_connection_event_heard_s": round(last_heard, 6),
        "the_write_ended_with": write_error,
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    h = truth["command_value_handle"]
    writes = [f for f, _s, p in log.att(0x12, sent=True) if int.from_bytes(p[1:3], "little") == h]
    assert len(writes) == 1
    request = writes[0]
    answers = [f for f, sent, cid, p in log.l2cap if f > request and not sent and cid == 0x0004]
    assert not answers, answers  # no Write Response, no Error Response
    span = diagkit.connection_spans(log)[0]
    end = span["end"]
    assert end["reason_code"] == 0x08
    nocp = [r.frame for r in log.events(0x13) if request < r.frame < end["frame"]]
    rx = [r.frame for r in log.records if r.kind == "acl" and not r.sent and r.frame < end["frame"]]
    state_read = next(f for f, _s, p in log.att(0x0A, sent=True)
                      if int.from_bytes(p[1:3], "little") == truth["state_value_handle"])
    truth["connection"] = span
    truth["unanswered_request"] = {"frame": request, "opcode": 0x12, "handle": h,
                                   "acknowledged_by_the_link_frame": nocp[0] if nocp else None}
    truth["loss"] = {"last_rx_frame": rx[-1], "disconnection": end,
                     "seconds_after_request": log.seconds(request, end["frame"]),
                     "silence_s": log.seconds(rx[-1], end["frame"])}
    truth["diagnosis"] = {
        "rules": ["DC-01"],
        "findings": [
            diagkit.finding("DC-01", "C", end["frame"], [request],
                            f"Link lost: supervision timeout (0x08) at #{end['frame']}; the lock never answered the "
                            f"Write Request for 0x{h:04X} at #{request} ({truth['loss']['seconds_after_request']:.1f} s "
                            f"before): the peer stopped responding before the link was lost (the cause cited first)"),
        ],
        "deciding_frame_note": "DC-01's deciding frame is the Disconnection Complete; it cites the unanswered request "
                               "and names it first among the causes (the request was outstanding 6.2 s, under the 30 s "
                               "ATT timeout: the loss, not an ATT timeout, ended it)",
        "causal_chain": [request, end["frame"]],
        "not_flagged": [
            diagkit.quiet("the answered read of the lock state", [state_read], ["GATT-01", "GATT-02"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
