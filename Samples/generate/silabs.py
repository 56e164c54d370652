"""Scenario: a Silicon Labs OTA (Gecko bootloader over BLE): control F7BF3564 (00 start, 03 end),
image bytes written without response to 984227F3, 244 bytes each."""

from __future__ import annotations

import asyncio

from bumble.gatt import Characteristic

import common
import otakit

SERVICE = "1D14D6EE-FD63-4FA1-BFA4-8F47B42119F0"
CONTROL = "F7BF3564-FB6D-4E53-88A4-5E37E0326063"
DATA = "984227F3-34FC-4045-A5D0-2C581F81A153"
DEVICE_ADDRESS = "D2:51:4C:0A:77:3E"
IMAGE_SIZE = 16_000
IMAGE_SEED = 0x51AB_0001
CHUNK = 244


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    received = bytearray()
    control_log: list[str] = []

    def on_control(connection, value):
        control_log.append(bytes(value).hex())

    def on_data(connection, value):
        received.extend(bytes(value))

    ctl = otakit.char(CONTROL, Characteristic.Properties.WRITE, on_control)
    data = otakit.char(DATA, Characteristic.Properties.WRITE_WITHOUT_RESPONSE | Characteristic.Properties.WRITE, on_data)
    rig, conn, peer = await otakit.start(loop, out, "Gecko-OTA", DEVICE_ADDRESS, SERVICE, [ctl, data])
    cproxy = next(c for s in peer.services for c in s.characteristics if str(c.uuid).upper() == CONTROL)
    dproxy = next(c for s in peer.services for c in s.characteristics if str(c.uuid).upper() == DATA)
    await asyncio.sleep(0.2)
    await cproxy.write_value(b"\x00", with_response=True)
    packets = 0
    for off in range(0, len(image), CHUNK):
        await dproxy.write_value(image[off:off + CHUNK], with_response=False)
        packets += 1
        if packets % 4 == 0:
            await asyncio.sleep(0.015)
    await asyncio.sleep(0.05)
    await cproxy.write_value(b"\x03", with_response=True)
    await asyncio.sleep(0.2)
    assert bytes(received) == image
    await rig.disconnect()
    return {
        "description": "Silicon Labs OTA: start, 16,000-byte image in 244-byte writes without response, end",
        "service_uuid": SERVICE, "control_uuid": CONTROL, "data_uuid": DATA,
        "connection_handle": conn.handle, "control_value_handle": cproxy.handle, "data_value_handle": dproxy.handle,
        "att_mtu": otakit.MTU,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
                  "generator": f"xorshift32 seed 0x{IMAGE_SEED:08x}"},
        "packet_size": CHUNK, "packets": packets, "control_writes": control_log,
    }
