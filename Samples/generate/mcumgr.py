"""Scenario: an MCUmgr (Zephyr SMP) image upload: group 1 id 1 write requests with CBOR
{off, data (+ len, sha on the first)}, each answered by a notification {rc, off}."""

from __future__ import annotations

import asyncio
import hashlib
import struct

from bumble.gatt import Characteristic

import common
import otakit

SERVICE = "8D53DC1D-1DB7-4CD3-868B-8A527460AA84"
SMP = "DA2E7828-FBCE-4E01-AE9E-261174997C48"
DEVICE_ADDRESS = "E6:3A:19:C4:52:08"
IMAGE_SIZE = 12_000
IMAGE_SEED = 0x3C0D_0001
DATA = 160  # image bytes per request: the first one (with len and sha) still fits in MTU - 3


def smp_frame(op: int, group: int, seq: int, cmd: int, body: bytes) -> bytes:
    return struct.pack(">BBHHBB", op, 0, len(body), group, seq, cmd) + body


def upload_fields(body: bytes) -> tuple[int, bytes]:
    """The device's reading of an upload request body: off and data, found by their CBOR keys
    (this peripheral only needs these two)."""
    i = body.index(b"\x63off") + 4
    off = int.from_bytes(body[i + 1:i + 1 + {0x19: 2, 0x1A: 4, 0x18: 1}.get(body[i], 0)], "big") if body[i] >= 24 else body[i]
    j = body.index(b"\x64data") + 5
    n = int.from_bytes(body[j + 1:j + 2], "big") if body[j] == 0x58 else body[j] & 0x1F
    data = body[j + 2:j + 2 + n] if body[j] == 0x58 else body[j + 1:j + 1 + n]
    return off, data


async def upload(proxy, got, image: bytes) -> int:
    """The phone's image upload: one write-without-response request per DATA bytes, each answered
    (a notification on `got`) before the next. Returns the number of requests."""
    requests = 0
    for seq, off in enumerate(range(0, len(image), DATA)):
        body = {"image": 0, "off": off, "data": image[off:off + DATA]}
        if off == 0:
            body = {"image": 0, "len": len(image), "off": 0, "data": image[:DATA],
                    "sha": hashlib.sha256(image).digest()[:32]}
        frame = smp_frame(2, 1, seq & 0xFF, 1, otakit.cbor(body))
        assert len(frame) <= otakit.MTU - 3
        await proxy.write_value(frame, with_response=False)
        requests += 1
        reply = await got.get()
        assert reply[0] == 3
    return requests


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    stored = bytearray()
    responses: asyncio.Queue = asyncio.Queue()
    smp_char = None

    def on_write(connection, value):
        v = bytes(value)
        op, _, length, group, seq, cmd = struct.unpack(">BBHHBB", v[:8])
        assert op == 2 and group == 1 and cmd == 1 and length == len(v) - 8
        off, data = upload_fields(v[8:])
        assert off == len(stored)
        stored.extend(data)
        responses.put_nowait(smp_frame(3, 1, seq, 1, otakit.cbor({"rc": 0, "off": len(stored)})))

    smp_char = otakit.char(SMP, Characteristic.Properties.WRITE_WITHOUT_RESPONSE | Characteristic.Properties.NOTIFY, on_write)
    rig, conn, peer = await otakit.start(loop, out, "Zephyr-SMP", DEVICE_ADDRESS, SERVICE, [smp_char])
    proxy = next(c for s in peer.services for c in s.characteristics if str(c.uuid).upper() == SMP)
    got: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(proxy, lambda v: got.put_nowait(bytes(v)))

    async def pump():
        while (v := await responses.get()) is not None:
            await rig.device.notify_subscribers(smp_char, v)

    task = asyncio.get_running_loop().create_task(pump())
    await asyncio.sleep(0.2)
    requests = await upload(proxy, got, image)
    await asyncio.sleep(0.2)
    responses.put_nowait(None)
    await task
    assert bytes(stored) == image
    await rig.disconnect()
    return {
        "description": "MCUmgr SMP image upload of 12,000 bytes, 160 data bytes per request, each acknowledged",
        "service_uuid": SERVICE, "characteristic_uuid": SMP, "connection_handle": conn.handle,
        "value_handle": proxy.handle, "att_mtu": otakit.MTU,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
                  "generator": f"xorshift32 seed 0x{IMAGE_SEED:08x}"},
        "data_per_request": DATA, "requests": requests,
    }
