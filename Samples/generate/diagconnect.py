"""Diagnosis Sample: a connection attempt that times out (Android's "GATT 133"), then one that works.

The app connects to a thermometer that is switched off: LE Create Connection gets Command Status 0x00, then nothing
for 30 s (Android's DIRECT_CONNECT_TIMEOUT; here bumble's own connect timeout), the host sends LE Create Connection
Cancel and the controller reports LE Connection Complete with status 0x02 Unknown Connection Identifier (simfaults.py).
The thermometer is switched on, advertises, and the app's second attempt connects at once: discovery, a read of the
temperature, and the app disconnects. Rule CE-01 of ../shared/diagnosis-rules.md; the second connection is healthy.
"""

from __future__ import annotations

import asyncio
import struct

from bumble import core, hci
from bumble.device import ConnectionParametersPreferences
from bumble.gatt import Characteristic, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "C8:1E:42:7A:90:3D"
SERVICE = "0000181A-0000-1000-8000-00805F9B34FB"  # Environmental Sensing
TEMPERATURE = "00002A6E-0000-1000-8000-00805F9B34FB"  # Temperature, sint16 in 0.01 degC
CONNECT_TIMEOUT_S = 30.0
CELSIUS = 21.37


async def connect(rig, loop):
    prefs = ConnectionParametersPreferences(connection_interval_min=30.0, connection_interval_max=30.0,
                                            max_latency=0, supervision_timeout=5000)
    return await rig.phone.connect(rig.device.random_address, connection_parameters_preferences={hci.Phy.LE_1M: prefs},
                                   timeout=CONNECT_TIMEOUT_S)


async def run(loop, out):
    rig = simfaults.rig(loop, out, "Thermo-Sense", DEVICE_ADDRESS, interval_ms=30.0)
    value = struct.pack("<h", round(CELSIUS * 100))
    temperature = Characteristic(TEMPERATURE, Characteristic.Properties.READ, Characteristic.READABLE, value)
    rig.device.add_service(Service(SERVICE, [temperature]))
    await rig.phone.power_on()
    await rig.device.power_on()
    await asyncio.sleep(0.35)  # the user opens the app; the thermometer is still switched off

    started = loop.time()
    try:
        await connect(rig, loop)
        raise AssertionError("the first attempt should time out")
    except core.TimeoutError:
        gave_up_after = loop.time() - started

    await asyncio.sleep(2.0)  # the user switches the thermometer on
    connected = loop.create_future()
    rig.device.once("connection", connected.set_result)
    await rig.device.start_advertising(auto_restart=False)
    await asyncio.sleep(0.6)  # and taps "connect" again
    rig.phone_conn = await connect(rig, loop)
    rig.device_conn = await connected
    rig.link.anchor = loop.time()
    peer = await sim.discover_all(rig.phone_conn)
    proxy = sim.find_char(peer, TEMPERATURE)
    read = await proxy.read_value()
    assert bytes(read) == value
    await rig.disconnect()
    return {
        "description": "An LE connection attempt to a switched-off thermometer times out after 30 s and is cancelled "
                       "(LE Connection Complete 0x02, Android's GATT 133); the second attempt connects, reads the "
                       "temperature, and the app disconnects",
        "service_uuid": SERVICE, "temperature_uuid": TEMPERATURE, "temperature_value_handle": proxy.handle,
        "temperature_hex": value.hex(), "temperature_celsius": CELSIUS,
        "host_connect_timeout_s": CONNECT_TIMEOUT_S, "host_gave_up_after_s": round(gave_up_after, 6),
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    creates = log.commands(0x200D)
    assert len(creates) == 2, creates
    first, second = creates
    first_status, second_status = log.status_of(first), log.status_of(second)
    cancel = log.commands(0x200E)
    assert len(cancel) == 1
    cancel, cancel_complete = cancel[0], log.status_of(cancel[0])
    completes = [diagkit.le_connection_complete(r) for r in log.events(0x3E, 0x01)]
    failed, good = completes
    assert failed["status"] == 0x02 and good["status"] == 0x00 and first.frame < cancel.frame < failed["frame"]
    target = ":".join(f"{b:02X}" for b in reversed(first.params[6:12]))
    spans = diagkit.connection_spans(log)
    end = spans[1]["end"]
    discovery = diagkit.discovery_end_errors(log)
    read = log.att(0x0A, sent=True)[0][0]
    truth["attempts"] = [
        {"create_frame": first.frame, "target_address": target,
         "command_status_frame": first_status.frame, "command_status": diagkit.status_field(first_status),
         "cancel_frame": cancel.frame, "cancel_complete_frame": cancel_complete.frame,
         "cancel_status": diagkit.status_field(cancel_complete), "waited_s": log.seconds(first.frame, cancel.frame),
         "connection_complete": failed},
        {"create_frame": second.frame, "target_address": ":".join(f"{b:02X}" for b in reversed(second.params[6:12])),
         "command_status_frame": second_status.frame, "command_status": diagkit.status_field(second_status),
         "connection_complete": good, "end": end},
    ]
    truth["temperature_read_frame"] = read
    truth["diagnosis"] = {
        "rules": ["CE-01"],
        "findings": [diagkit.finding(
            "CE-01", "C", failed["frame"], [first.frame, first_status.frame, cancel.frame, cancel_complete.frame],
            f"LE Create Connection to {target} (#{first.frame}) got Command Status 0x00 and no connection for "
            f"{log.seconds(first.frame, cancel.frame):.1f} s; the host cancelled (#{cancel.frame}) and the controller "
            f"reported LE Connection Complete 0x02 Unknown Connection Identifier (#{failed['frame']}): GATT 133")],
        "not_flagged": [
            diagkit.quiet("the second attempt connects (LE Connection Complete 0x00) and works",
                          [second.frame, second_status.frame, good["frame"], read], ["CE-01", "CE-02", "CE-03", "CE-04"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", discovery, ["GATT-08"]),
            diagkit.quiet("the app's own disconnect at the end (Disconnect, then Disconnection Complete 0x16)",
                          [log.commands(0x0406)[0].frame, end["frame"]], ["DC-02", "DC-03"]),
        ],
    }
