"""Scenario: a Nordic legacy DFU (nRF5 SDK ≤ 11): control point 1531 (write + notify), packet 1532
(write without response): start (01 04 + sizes), init packet (02 00 / 02 01), PRN 10 (08 0a 00),
receive (03) with receipts (11 + bytes received), validate (04), activate and reset (05)."""

from __future__ import annotations

import asyncio
import struct

from bumble.gatt import Characteristic

import common
import otakit

SERVICE = "00001530-1212-EFDE-1523-785FEABCD123"
CONTROL = "00001531-1212-EFDE-1523-785FEABCD123"
PACKET = "00001532-1212-EFDE-1523-785FEABCD123"
DEVICE_ADDRESS = "F1:0D:FE:23:45:67"
IMAGE_SIZE = 24_000
IMAGE_SEED = 0x1E6A_0001
CHUNK = 244
PRN = 10
INIT = bytes.fromhex("ffff ffff ffff ffff 0100 feff 5a3c")  # device type/revision, app version, SD list, CRC-16


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    state = {"mode": None, "image": bytearray(), "init": bytearray(), "since_receipt": 0}
    notes: asyncio.Queue = asyncio.Queue()

    def notify(v: bytes):
        notes.put_nowait(v)

    def on_control(connection, value):
        v = bytes(value)
        op = v[0]
        if op == 0x01:
            state["mode"] = "sizes"
        elif op == 0x02 and v[1] == 0x00:
            state["mode"] = "init"
        elif op == 0x02 and v[1] == 0x01:
            notify(b"\x10\x02\x01")
        elif op == 0x08:
            state["prn"] = v[1] | v[2] << 8
        elif op == 0x03:
            state["mode"] = "image"
        elif op == 0x04:
            notify(b"\x10\x04\x01" if bytes(state["image"]) == image else b"\x10\x04\x05")
        elif op == 0x05:
            state["mode"] = "done"

    def on_packet(connection, value):
        v = bytes(value)
        if state["mode"] == "sizes":
            assert struct.unpack("<III", v)[2] == len(image)
            state["mode"] = None
            notify(b"\x10\x01\x01")
        elif state["mode"] == "init":
            state["init"].extend(v)
        elif state["mode"] == "image":
            state["image"].extend(v)
            state["since_receipt"] += 1
            if len(state["image"]) == len(image):
                notify(b"\x10\x03\x01")
            elif state["since_receipt"] == state.get("prn", 0):
                state["since_receipt"] = 0
                notify(b"\x11" + struct.pack("<I", len(state["image"])))

    ctl = otakit.char(CONTROL, Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY, on_control)
    pkt = otakit.char(PACKET, Characteristic.Properties.WRITE_WITHOUT_RESPONSE, on_packet)
    rig, conn, peer = await otakit.start(loop, out, "DfuTarg", DEVICE_ADDRESS, SERVICE, [ctl, pkt])
    cproxy = next(c for s in peer.services for c in s.characteristics if str(c.uuid).upper() == CONTROL)
    pproxy = next(c for s in peer.services for c in s.characteristics if str(c.uuid).upper() == PACKET)
    got: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(cproxy, lambda v: got.put_nowait(bytes(v)))

    async def pump():
        while (v := await notes.get()) is not None:
            await rig.device.notify_subscribers(ctl, v)

    task = asyncio.get_running_loop().create_task(pump())
    await asyncio.sleep(0.2)
    await cproxy.write_value(b"\x01\x04", with_response=True)
    await pproxy.write_value(struct.pack("<III", 0, 0, len(image)), with_response=False)
    assert await got.get() == b"\x10\x01\x01"
    await cproxy.write_value(b"\x02\x00", with_response=True)
    await pproxy.write_value(INIT, with_response=False)
    await cproxy.write_value(b"\x02\x01", with_response=True)
    assert await got.get() == b"\x10\x02\x01"
    await cproxy.write_value(bytes([0x08, PRN, 0]), with_response=True)
    await cproxy.write_value(b"\x03", with_response=True)
    receipts = 0
    packets = 0
    for off in range(0, len(image), CHUNK):
        await pproxy.write_value(image[off:off + CHUNK], with_response=False)
        packets += 1
        if packets % PRN == 0 and off + CHUNK < len(image):
            r = await got.get()
            assert r[0] == 0x11
            receipts += 1
        elif packets % 4 == 0:
            await asyncio.sleep(0.015)
    assert await got.get() == b"\x10\x03\x01"
    await cproxy.write_value(b"\x04", with_response=True)
    assert await got.get() == b"\x10\x04\x01"
    await cproxy.write_value(b"\x05", with_response=True)
    await asyncio.sleep(0.2)
    notes.put_nowait(None)
    await task
    await rig.disconnect()
    return {
        "description": "Nordic legacy DFU: start with sizes, init packet, PRN 10, 24,000-byte image, validate, activate",
        "service_uuid": SERVICE, "control_uuid": CONTROL, "packet_uuid": PACKET, "connection_handle": conn.handle,
        "control_value_handle": cproxy.handle, "packet_value_handle": pproxy.handle, "att_mtu": otakit.MTU,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
                  "generator": f"xorshift32 seed 0x{IMAGE_SEED:08x}"},
        "init_packet_hex": INIT.hex(), "prn": PRN, "packet_size": CHUNK, "image_packets": packets, "receipts": receipts,
    }
