"""Scenario: Dialog / Renesas SUOTA (service 0xFEF5) of a 30,000-byte image.

  phone  -> MEM_DEV 00 00 00 13 (u32 LE 0x13000000: SPI flash image)   device -> SERV_STATUS 10 (image started)
  phone  -> GPIO_MAP (u32 LE), PATCH_LEN 960 (u16 LE)
  phone  -> PATCH_DATA: each block of 960 bytes in 4 writes without response of 240 bytes
  device -> SERV_STATUS 02 after each block; the last block is shorter (PATCH_LEN written again)
  phone  -> MEM_DEV 00 00 00 FE (end of transfer)                     device -> 02 (image accepted)
  phone  -> MEM_DEV 00 00 00 FD (reboot)                              the device resets
"""

from __future__ import annotations

import asyncio
import struct

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import sim

SERVICE = "0000FEF5-0000-1000-8000-00805F9B34FB"
MEM_DEV = "8082CAA8-41A6-4021-91C6-56F9B954CC34"
GPIO_MAP = "724249F0-5EC3-4B5F-8804-42345AF08651"
MEM_INFO = "6C53DB25-47A1-45FE-A022-7C92FB334FD4"
PATCH_LEN = "9D84B9A3-000C-49D8-9183-855B673FDA31"
PATCH_DATA = "457871E8-D516-4CA1-9116-57D0B17B9CB2"
SERV_STATUS = "5F78DF94-798C-46F5-990A-B3EB6A065C88"
DEVICE_ADDRESS = "F1:22:9B:64:3A:C7"
MTU = 247
IMAGE_SIZE = 30_000
IMAGE_SEED = 0xDA_1060
BLOCK = 960
CHUNK = 240


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    rig = sim.Rig(loop, out, "DA14585-SUOTA", DEVICE_ADDRESS, interval_ms=15.0)
    rig.device.gatt_server.max_mtu = MTU
    outq: asyncio.Queue = asyncio.Queue()
    st = {"len": 0, "block": bytearray(), "image": bytearray(), "started": False}
    statuses: list[str] = []

    def notify(v: bytes):
        statuses.append(v.hex())
        outq.put_nowait(v)

    def on_mem_dev(connection, value):
        cmd = struct.unpack("<I", bytes(value))[0] >> 24
        if cmd == 0x13:
            st["started"] = True
            notify(b"\x10")
        elif cmd == 0xFE:
            notify(b"\x02" if bytes(st["image"]) == image else b"\x04")

    def on_patch_len(connection, value):
        st["len"] = struct.unpack("<H", bytes(value))[0]

    def on_patch_data(connection, value):
        st["block"].extend(bytes(value))
        if len(st["block"]) == st["len"]:
            st["image"].extend(st["block"])
            st["block"] = bytearray()
            notify(b"\x02")

    p, w = Characteristic.Properties, Characteristic.WRITEABLE | Characteristic.READABLE
    chars = {
        MEM_DEV: Characteristic(MEM_DEV, p.READ | p.WRITE, w, CharacteristicValue(write=on_mem_dev)),
        GPIO_MAP: Characteristic(GPIO_MAP, p.READ | p.WRITE, w, CharacteristicValue(write=lambda c, v: None)),
        MEM_INFO: Characteristic(MEM_INFO, p.READ, Characteristic.READABLE, b"\x00\x00\x00\x00"),
        PATCH_LEN: Characteristic(PATCH_LEN, p.READ | p.WRITE, w, CharacteristicValue(write=on_patch_len)),
        PATCH_DATA: Characteristic(PATCH_DATA, p.READ | p.WRITE | p.WRITE_WITHOUT_RESPONSE, w,
                                   CharacteristicValue(write=on_patch_data)),
        SERV_STATUS: Characteristic(SERV_STATUS, p.READ | p.NOTIFY, Characteristic.READABLE, b"\x00"),
    }
    rig.device.add_service(Service(SERVICE, list(chars.values())))

    async def pump():
        while (v := await outq.get()) is not None:
            await rig.device.notify_subscribers(chars[SERV_STATUS], v)

    conn = await rig.connect()
    pump_task = loop.create_task(pump())
    assert await Peer(conn).request_mtu(MTU) == MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    px = {u: sim.find_char(peer, u) for u in chars}
    got: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(px[SERV_STATUS], lambda v: got.put_nowait(bytes(v)))
    await asyncio.sleep(0.2)

    await px[MEM_DEV].write_value(struct.pack("<I", 0x13000000), with_response=True)
    assert await got.get() == b"\x10"
    await px[GPIO_MAP].write_value(struct.pack("<I", 0x05060300), with_response=True)
    packets = 0
    length = None
    for start in range(0, len(image), BLOCK):
        block = image[start:start + BLOCK]
        if len(block) != length:
            length = len(block)
            await px[PATCH_LEN].write_value(struct.pack("<H", length), with_response=True)
        for i in range(0, len(block), CHUNK):
            await px[PATCH_DATA].write_value(block[i:i + CHUNK], with_response=False)
            packets += 1
        assert await got.get() == b"\x02"
    await px[MEM_DEV].write_value(struct.pack("<I", 0xFE000000), with_response=True)
    assert await got.get() == b"\x02"
    await px[MEM_DEV].write_value(struct.pack("<I", 0xFD000000), with_response=False)
    outq.put_nowait(None)
    await pump_task
    await asyncio.sleep(0.1)
    await rig.device_conn.disconnect()  # the device reboots into the new image
    await asyncio.sleep(0.1)
    return {
        "description": "Dialog/Renesas SUOTA: SPI flash image of 30,000 bytes in 960-byte blocks of 240-byte writes, "
                       "end of transfer accepted, reboot",
        "service_uuid": SERVICE, "connection_handle": conn.handle,
        "patch_data_value_handle": px[PATCH_DATA].handle, "status_value_handle": px[SERV_STATUS].handle,
        "mem_dev_value_handle": px[MEM_DEV].handle, "att_mtu": MTU,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
                  "generator": f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits"},
        "block_size": BLOCK, "chunk_size": CHUNK, "packets": packets, "blocks": -(-len(image) // BLOCK),
        "statuses": statuses, "result": "success",
    }


def locate(truth, att, loc):
    pd = truth["patch_data_value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x52 and p.handle == pd]
    assert len(writes) == truth["packets"]
    truth["first_data_frame"], truth["last_data_frame"] = writes[0].frame, writes[-1].frame
    truth["throughput_bps"] = truth["image"]["size"] * 8 * 1_000_000 / (writes[-1].ts_us - writes[0].ts_us)
    truth["end_accepted_frame"] = [p.frame for p in att if not p.sent and p.opcode == 0x1B
                                   and p.handle == truth["status_value_handle"]][-1]
