"""Diagnosis Sample: notifications never enabled, and a CCCD written with a Write Command.

A pulse oximeter has Battery Level (0x2A19, read + notify) and a live SpO2 characteristic (read + notify), each with
its Client Characteristic Configuration descriptor (0x2902). The phone discovers everything, reads both values, and:
- never writes the battery level's CCCD, then waits 10 s for battery notifications that never come (GATT-03);
- writes the SpO2 CCCD `01 00` with a Write Command (0x52) instead of a Write Request (GATT-03, info). bumble's GATT
  server accepts the write without response, so SpO2 notifications do arrive here; a server that ignores a Write
  Command on a CCCD would send nothing.
The oximeter's firmware notifies its subscribers once a second. The app then disconnects.
"""

from __future__ import annotations

import asyncio
import struct

from bumble.gatt import Characteristic, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "C3:8A:17:E4:06:B9"
BATTERY_SERVICE = "0000180F-0000-1000-8000-00805F9B34FB"
BATTERY_LEVEL = "00002A19-0000-1000-8000-00805F9B34FB"
OXIMETER_SERVICE = "0B5A0001-3E9C-4D27-A1F0-6C2E8B7D9A10"
SPO2 = "0B5A0002-3E9C-4D27-A1F0-6C2E8B7D9A10"
WAIT_S = 10.0


async def run(loop, out):
    rig = simfaults.rig(loop, out, "PulseOx", DEVICE_ADDRESS, interval_ms=30.0)
    props = Characteristic.Properties.READ | Characteristic.Properties.NOTIFY
    battery = Characteristic(BATTERY_LEVEL, props, Characteristic.READABLE | Characteristic.WRITEABLE, bytes([87]))
    spo2 = Characteristic(SPO2, props, Characteristic.READABLE | Characteristic.WRITEABLE, bytes([97, 72]))
    rig.device.add_service(Service(BATTERY_SERVICE, [battery]))
    rig.device.add_service(Service(OXIMETER_SERVICE, [spo2]))
    running = True

    async def firmware():
        second = 0
        while running:
            await asyncio.sleep(1.0)
            second += 1
            spo2.value = bytes([96 + second % 3, 70 + second % 5])  # SpO2 %, pulse
            battery.value = bytes([87 - second // 8])
            for char in (battery, spo2):
                await rig.device.notify_subscribers(char)  # to the clients that enabled notifications

    conn = await rig.connect()
    task = loop.create_task(firmware())
    peer = await sim.discover_all(conn)
    battery_proxy, spo2_proxy = sim.find_char(peer, BATTERY_LEVEL), sim.find_char(peer, SPO2)
    level = bytes(await battery_proxy.read_value())
    await spo2_proxy.read_value()
    received = {"battery": [], "spo2": []}
    # The app listens for both (bumble's client delivers notifications by value handle) ...
    peer.gatt_client.notification_subscribers.setdefault(battery_proxy.handle, set()).add(received["battery"].append)
    peer.gatt_client.notification_subscribers.setdefault(spo2_proxy.handle, set()).add(received["spo2"].append)
    # ... but enables only SpO2, and with a Write Command.
    spo2_cccd = sim.cccd_handle(spo2_proxy)
    await peer.write_value(spo2_cccd, struct.pack("<H", 1), with_response=False)
    await asyncio.sleep(WAIT_S)
    running = False
    await rig.disconnect()
    await task
    assert not received["battery"] and received["spo2"], received
    return {
        "description": "Battery Level (notify) is read but its CCCD never written: no notifications in 10 s; the "
                       "SpO2 CCCD is written with a Write Command (0x52) instead of a Write Request",
        "battery": {"uuid": BATTERY_LEVEL, "value_handle": battery_proxy.handle,
                    "cccd_handle": sim.cccd_handle(battery_proxy), "value_read_hex": level.hex(),
                    "cccd_written": False, "notifications_received": 0},
        "spo2": {"uuid": SPO2, "value_handle": spo2_proxy.handle, "cccd_handle": spo2_cccd,
                 "cccd_written_with": "Write Command (0x52)", "cccd_value_hex": "0100",
                 "notifications_received": len(received["spo2"])},
        "seconds_waited": WAIT_S,
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    b, s = truth["battery"], truth["spo2"]
    handle = lambda p: struct.unpack("<H", p[1:3])[0]  # noqa: E731 - the attribute handle of a PDU
    reads = {handle(p): f for f, _s, p in log.att(0x0A, sent=True)}
    commands = [(f, p) for f, _s, p in log.att(0x52, sent=True)]
    assert [(handle(p), p[3:].hex()) for _f, p in commands] == [(s["cccd_handle"], "0100")], commands
    assert not [f for f, _s, p in log.att(0x12, sent=True) if handle(p) in (b["cccd_handle"], s["cccd_handle"])]
    notifications = [(f, handle(p)) for f, _s, p in log.att(0x1B, sent=False)]
    assert not [f for f, h in notifications if h == b["value_handle"]]
    spo2 = [f for f, h in notifications if h == s["value_handle"]]
    assert len(spo2) == s["notifications_received"]
    found = [f for f, _s, p in log.att(0x05, sent=False)
             if any(struct.unpack("<HH", p[2 + i:6 + i]) == (b["cccd_handle"], 0x2902) for i in range(0, len(p) - 5, 4))]
    end = diagkit.connection_spans(log)[0]["end"]
    b.update({"read_frame": reads[b["value_handle"]], "cccd_discovered_frame": found[0]})
    s.update({"read_frame": reads[s["value_handle"]], "cccd_write_command_frame": commands[0][0],
              "notification_frames": spo2})
    truth["end"] = end
    truth["diagnosis"] = {
        "rules": ["GATT-03"],
        "findings": [
            # Info, not an error: one read of a notifying characteristic without subscribing is also what an app does
            # that wants the value once (a battery level); the capture alone cannot tell it expected notifications.
            diagkit.finding("GATT-03", "I", b["read_frame"], [found[0], end["frame"]],
                            f"Battery Level 0x{b['value_handle']:04X} has Notify and a CCCD (0x{b['cccd_handle']:04X}, "
                            f"#{found[0]}); the app reads it (#{b['read_frame']}) but never writes the CCCD: no "
                            f"notification until the link ends (#{end['frame']})"),
            # Info, not an error: bumble's server honoured the Write Command (SpO2 notifications follow), so nothing was
            # lost here; the risk (a server that ignores it) is told, not a failure.
            diagkit.finding("GATT-03", "I", s["cccd_write_command_frame"], [s["read_frame"], spo2[0]],
                            f"The SpO2 CCCD 0x{s['cccd_handle']:04X} is written with a Write Command (0x52, "
                            f"#{s['cccd_write_command_frame']}) instead of a Write Request; this server honours it "
                            f"(notifications from #{spo2[0]}), some servers ignore it"),
        ],
        "deciding_frame_note": "for a CCCD never written, the frame is the read of the value (the app uses it); the "
                               "absence is decided by the end of the link, which the finding cites too",
        "not_flagged": [
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
            diagkit.quiet("SpO2 notifications do arrive after the Write Command", spo2[:1], ["GATT-05"]),
        ],
    }
