"""Diagnosis Sample: the phone writes a cached handle after the peripheral's firmware changed its database.

Connection 1, firmware 1.4: a smart lamp with a legacy OTA service (6 attributes) before its lamp service. The phone
discovers everything, enables Service Changed indications (CCCD 02 00) and switches the lamp on with a Write Request
to the light-control value. Firmware 2.0 drops the legacy OTA service, so the lamp service moves 6 handles down and
the database now ends before the old light-control handle. Connection 2: the app, trusting its GATT cache (no
discovery), writes the old handle and gets Error Response 0x01 Invalid Handle; the lamp's firmware then indicates
Service Changed (0x2A05, affected range 0x0001-0xFFFF); the phone confirms, discovers again and writes the new handle,
which works. Rule GATT-06 (a stale cache, and the Service Changed that announces it).
"""

from __future__ import annotations

import asyncio
import struct

from bumble import gatt, hci
from bumble.device import Device, DeviceConfiguration, Peer
from bumble.gatt import Characteristic, Service
from bumble.host import Host

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "CF:62:0D:8B:37:E5"
OTA_SERVICE = "6A1D0001-0F3C-4B2E-8D7A-5C9E1B3F2A40"
OTA_CONTROL = "6A1D0002-0F3C-4B2E-8D7A-5C9E1B3F2A40"
OTA_DATA = "6A1D0003-0F3C-4B2E-8D7A-5C9E1B3F2A40"
LAMP_SERVICE = "4C6D0001-9A2B-4E7F-B1C3-8D5E6F7A0B12"
LIGHT = "4C6D0002-9A2B-4E7F-B1C3-8D5E6F7A0B12"
ON_80 = b"\x01\x50"  # on, brightness 80 %
ON_60 = b"\x01\x3c"


def lamp_service(written: list) -> Service:
    rw = Characteristic.READABLE | Characteristic.WRITEABLE
    light = diagkit.value_char(LIGHT, Characteristic.Properties.READ | Characteristic.Properties.WRITE,
                               write=lambda _c, v: written.append(bytes(v)), permissions=rw)
    return Service(LAMP_SERVICE, [light])


def firmware_2(rig, written: list) -> Device:
    """The lamp after its update: a new host and controller at the same address, without the legacy OTA service."""
    rig.link.remove_controller(rig.device_ctl)
    ctl = simfaults.FaultController("lamp-fw2", rig.link, DEVICE_ADDRESS, is_peripheral=True)
    device = Device(host=Host(ctl, sim.DelayedSink(ctl)),
                    config=DeviceConfiguration(name="Lumi", address=hci.Address(DEVICE_ADDRESS),
                                               advertising_interval_min=100, advertising_interval_max=100))
    device.add_service(lamp_service(written))
    return device


async def run(loop, out):
    rig = simfaults.rig(loop, out, "Lumi", DEVICE_ADDRESS, interval_ms=30.0)
    written: list[bytes] = []
    rw = Characteristic.READABLE | Characteristic.WRITEABLE
    ota = Service(OTA_SERVICE, [
        Characteristic(OTA_CONTROL, Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY, rw, b""),
        Characteristic(OTA_DATA, Characteristic.Properties.WRITE_WITHOUT_RESPONSE, rw, b"")])
    rig.device.add_service(ota)
    rig.device.add_service(lamp_service(written))
    conn1 = await rig.connect()
    peer1 = await sim.discover_all(conn1)
    changed = peer1.get_characteristics_by_uuid(gatt.GATT_SERVICE_CHANGED_CHARACTERISTIC)[0]
    await peer1.subscribe(changed, lambda _v: None, prefer_notify=False)
    cached = sim.find_char(peer1, LIGHT).handle
    await peer1.write_value(cached, ON_80, with_response=True)
    await rig.disconnect()

    await asyncio.sleep(1.0)  # the lamp installs firmware 2.0 and restarts
    lamp = firmware_2(rig, written)
    await lamp.power_on()
    connected = loop.create_future()
    lamp.once("connection", connected.set_result)
    await lamp.start_advertising(auto_restart=False)
    await asyncio.sleep(0.8)
    conn2 = await rig.phone.connect(lamp.random_address, connection_parameters_preferences={
        hci.Phy.LE_1M: sim.ConnectionParametersPreferences(connection_interval_min=30.0, connection_interval_max=30.0,
                                                           max_latency=0, supervision_timeout=5000)})
    rig.link.anchor = loop.time()
    lamp_conn = await connected
    indications: asyncio.Queue = asyncio.Queue()
    peer2 = Peer(conn2)
    peer2.gatt_client.indication_subscribers.setdefault(changed.handle, set()).add(indications.put_nowait)

    async def announce():  # firmware 2.0 tells the client its database changed
        await asyncio.sleep(0.15)
        await lamp.indicate_subscriber(lamp_conn, lamp.gatt_service.service_changed_characteristic,
                                       struct.pack("<HH", 0x0001, 0xFFFF), force=True)

    announcing = loop.create_task(announce())
    try:
        await peer2.write_value(cached, ON_80, with_response=True)
        raise AssertionError("the cached handle should be invalid")
    except Exception as error:  # noqa: BLE001 - bumble's ProtocolError for the Error Response
        stale_error = getattr(error, "error_code", None)
    affected = await indications.get()
    await announcing
    await sim.discover_all(conn2)
    fresh = sim.find_char(peer2, LIGHT).handle
    await peer2.write_value(fresh, ON_60, with_response=True)
    await asyncio.sleep(0.2)
    await conn2.disconnect()
    await asyncio.sleep(0.1)
    assert stale_error == 0x01 and written == [ON_80, ON_60] and fresh < cached, (stale_error, written)
    return {
        "description": "After a firmware update that removed a service, the app writes a cached handle: Error 0x01 "
                       "Invalid Handle; the lamp indicates Service Changed, the phone rediscovers and writes the new "
                       "handle",
        "lamp_service_uuid": LAMP_SERVICE, "light_uuid": LIGHT,
        "light_value_handle_firmware_1": cached, "light_value_handle_firmware_2": fresh,
        "removed_service_uuid": OTA_SERVICE,
        "service_changed_value_handle": changed.handle,
        "service_changed_range": list(struct.unpack("<HH", bytes(affected))),
        "writes_received_by_the_lamp_hex": [w.hex() for w in written],
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    old, new = truth["light_value_handle_firmware_1"], truth["light_value_handle_firmware_2"]
    spans = diagkit.connection_spans(log)
    second = spans[1]["frame"]
    writes = [(f, int.from_bytes(p[1:3], "little"), p[3:].hex()) for f, _s, p in log.att(0x12, sent=True)]
    stale = [f for f, h, _v in writes if h == old and f > second]
    error = [(f, diagkit.att_error(p)) for f, _s, p in log.att(0x01, sent=False) if f > second and p[1] == 0x12]
    indication = [f for f, _s, p in log.att(0x1D, sent=False)
                  if int.from_bytes(p[1:3], "little") == truth["service_changed_value_handle"]]
    confirm = [f for f, _s, _p in log.att(0x1E, sent=True)]
    fixed = [f for f, h, _v in writes if h == new and f > second]
    discovery2 = [f for f, _s, _p in log.att(0x10, sent=True) if f > second]
    assert len(stale) == 1 and len(error) == 1 and error[0][1]["error_code"] == 0x01 and len(indication) == 1
    assert not [f for f in discovery2 if f < stale[0]]  # no discovery before the stale write
    sc_cccd = [f for f, h, v in writes if v == "0200"]
    truth["connections"] = spans
    truth["service_changed_subscription_frame"] = sc_cccd[0]
    truth["stale_write"] = {"frame": stale[0], "handle": old, "error_frame": error[0][0], **error[0][1]}
    truth["service_changed_indication_frame"] = indication[0]
    truth["service_changed_confirmation_frame"] = confirm[0]
    truth["rediscovery_first_frame"] = discovery2[0]
    truth["fresh_write_frame"] = fixed[0]
    first_write = next(f for f, h, _v in writes if h == old)
    truth["diagnosis"] = {
        "rules": ["GATT-06"],
        "findings": [diagkit.finding(
            "GATT-06", "E", error[0][0], [first_write, second, stale[0], indication[0]],
            f"The phone used a stale GATT cache: no discovery in the connection from #{second}, a Write Request to "
            f"0x{old:04X} (#{stale[0]}, the handle of connection 1, #{first_write}) got 0x01 Invalid Handle "
            f"(#{error[0][0]}); the lamp then indicated Service Changed (#{indication[0]})")],
        "not_flagged": [
            diagkit.quiet("connection 1's writes to 0x%04X and the rediscovered 0x%04X succeed" % (old, new),
                          [first_write, fixed[0]], ["GATT-06", "GATT-08"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
