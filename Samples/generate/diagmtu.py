"""Diagnosis Sample: a bulk transfer at ATT_MTU 23, values cut at 20 bytes.

A data logger sends its 6,000-byte history as 300 notifications of exactly 20 bytes (ATT_MTU - 3). The app never
exchanges the MTU (no Exchange MTU Request), the data length stays at 27 octets (no LE Data Length Change), the PHY at
1M and the connection interval at 30 ms: at most 4 notifications per connection event (sim.PacedLink), about
21 kbit/s. The app subscribes properly (CCCD Write Request), writes the download command, receives everything and
disconnects. Rules GATT-07 and TP-03.
"""

from __future__ import annotations

import asyncio

from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "F6:2B:8E:4C:19:D7"
SERVICE = "2E8A0001-7C4D-4F1B-A6E2-9D3C5B8F0E27"
CONTROL = "2E8A0002-7C4D-4F1B-A6E2-9D3C5B8F0E27"
HISTORY = "2E8A0003-7C4D-4F1B-A6E2-9D3C5B8F0E27"
SIZE = 6_000
SEED = 0x10C0_6E23
CHUNK = 20  # ATT_MTU 23 - 3
DOWNLOAD = b"\x01"


async def run(loop, out):
    rig = simfaults.rig(loop, out, "DataLogger", DEVICE_ADDRESS, interval_ms=30.0)
    history = common.xorshift_bytes(SEED, SIZE)
    start = loop.create_future()
    control = Characteristic(CONTROL, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
                             CharacteristicValue(write=lambda _c, v: start.set_result(bytes(v))))
    data = Characteristic(HISTORY, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
    rig.device.add_service(Service(SERVICE, [control, data]))

    async def logger():
        assert await start == DOWNLOAD
        for i in range(0, SIZE, CHUNK):
            await rig.device.notify_subscribers(data, history[i:i + CHUNK])

    conn = await rig.connect()
    task = loop.create_task(logger())
    peer = await sim.discover_all(conn)
    received: list[bytes] = []
    await peer.subscribe(sim.find_char(peer, HISTORY), lambda v: received.append(bytes(v)))
    await sim.find_char(peer, CONTROL).write_value(DOWNLOAD, with_response=True)
    while sum(map(len, received)) < SIZE:
        await asyncio.sleep(0.1)
    await task
    await rig.disconnect()
    assert b"".join(received) == history and {len(v) for v in received} == {CHUNK}
    return {
        "description": "A 6,000-byte history sent as 300 notifications of exactly 20 bytes at ATT_MTU 23 (no MTU "
                       "exchange), data length 27, 1M PHY, 30 ms interval",
        "service_uuid": SERVICE, "control_value_handle": sim.find_char(peer, CONTROL).handle,
        "history_value_handle": sim.find_char(peer, HISTORY).handle,
        "att_mtu": 23, "value_size": CHUNK, "notifications": len(received),
        "history": {"size": SIZE, "sha256": common.sha256(history),
                    "generator": f"xorshift32(13,17,5) seed 0x{SEED:08x}; one step per byte, low 8 bits"},
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    h = truth["history_value_handle"]
    notes = [(f, p) for f, _s, p in log.att(0x1B, sent=False) if int.from_bytes(p[1:3], "little") == h]
    assert len(notes) == truth["notifications"] and {len(p) - 3 for _f, p in notes} == {20}
    assert not log.att(0x02) and not log.att(0x03) and not log.events(0x3E, 0x07) and not log.events(0x3E, 0x0C)
    first, last = notes[0][0], notes[-1][0]
    seconds = log.seconds(first, last)
    connection = diagkit.connection_spans(log)[0]
    download = next(f for f, _s, p in log.att(0x12, sent=True)
                    if int.from_bytes(p[1:3], "little") == truth["control_value_handle"])
    truth["transfer"] = {"download_request_frame": download, "first_notification_frame": first,
                         "last_notification_frame": last, "seconds": seconds,
                         "kbit_per_s": round((len(notes) - 1) * 20 * 8 / seconds / 1000, 3),
                         "exchange_mtu_pdus": 0, "le_data_length_change_events": 0, "phy_update_events": 0,
                         "connection_interval_ms": connection["interval_ms"]}
    truth["end"] = connection["end"]
    truth["diagnosis"] = {
        "rules": ["GATT-07", "TP-03"],
        "findings": [
            diagkit.finding("GATT-07", "W", first, [last],
                            f"ATT_MTU stayed at 23 (no Exchange MTU): the 300 notifications of 0x{h:04X} are cut at "
                            f"20 bytes (#{first}-#{last})"),
            diagkit.finding("TP-03", "W", first, [connection["frame"], last],
                            f"The 6,000-byte transfer ran at {truth['transfer']['kbit_per_s']:.1f} kbit/s: 20-byte "
                            f"payloads, data length 27, 1M PHY, 30 ms interval (#{connection['frame']})"),
        ],
        "deciding_frame_note": "both cite the first 20-byte notification of the stream",
        "not_flagged": [
            diagkit.quiet("the CCCD is written with a Write Request, notifications follow",
                          [f for f, _s, p in log.att(0x12, sent=True) if p[3:] == b"\x01\x00"] + [first],
                          ["GATT-03", "GATT-05"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
