"""Scenario: TI OAD (enhanced, BLE5-Stack) of a 24,044-byte image with one block asked for again.

Service F000FFC0-0451-4000-B000-000000000000 (TI base UUID): Image Identify FFC1 (write + notify),
Image Block FFC2 (write without response + notify), External Control FFC5 (write + notify).
  phone  -> FFC1 identify payload (imgID "OAD IMG ", bimVer, metaVer, imgCpStat, crcStat, imgType,
                                   imgNo, len u32 LE, softVer[4]) from the image header
  target -> FFC1 00 (accepted)
  phone  -> FFC5 01 (get block size)         target -> 01 size(u16 LE) = 244
  phone  -> FFC5 03 (start OAD)              target -> 12 00 block(u32 LE) = 0
  phone  -> FFC2 block(u32 LE) + 240 bytes   target -> 12 status next-block ...
The target pretends the first write of block LOST_BLOCK failed in flash (status 02) and asks for it
again; after the last block it notifies 12 0E (download complete); phone -> 04 (enable image),
target -> 04 00 and resets (ends the link).
"""

from __future__ import annotations

import asyncio
import struct

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import sim

SERVICE = "F000FFC0-0451-4000-B000-000000000000"
IDENTIFY = "F000FFC1-0451-4000-B000-000000000000"
BLOCK = "F000FFC2-0451-4000-B000-000000000000"
CONTROL = "F000FFC5-0451-4000-B000-000000000000"
DEVICE_ADDRESS = "D9:3C:5B:71:08:E4"
MTU = 247
BLOCK_SIZE = 244  # including the 4-byte block number
BODY_SIZE = 24_000
IMAGE_SEED = 0x71_0AD0
LOST_BLOCK = 20


def image_with_header(body: bytes) -> bytes:
    """A 44-byte OAD image header (imgID, crc32, bimVer, metaVer, techType, imgCpStat, crcStat, imgType,
    imgNo, imgVld, len, prgEntry, softVer, imgEndAddr, hdrLen, rfu) followed by the body."""
    total = 44 + len(body)
    head = (b"OAD IMG " + struct.pack("<I", common.crc32(body)) + bytes([3, 1]) + struct.pack("<H", 0xFFFE)
            + bytes([0xFF, 0xFF, 1, 0]) + struct.pack("<III", 0xFFFFFFFF, total, 0) + b"0001"
            + struct.pack("<IHH", total - 1, 44, 0xFFFF))
    assert len(head) == 44
    return head + body


def identify_payload(image: bytes) -> bytes:
    # imgID[8], bimVer, metaVer, imgCpStat, crcStat, imgType, imgNo, len, softVer[4]
    return image[0:8] + image[12:14] + image[16:20] + image[24:28] + image[32:36]


async def run(loop, out):
    image = image_with_header(common.xorshift_bytes(IMAGE_SEED, BODY_SIZE))
    per_block = BLOCK_SIZE - 4
    total_blocks = -(-len(image) // per_block)
    rig = sim.Rig(loop, out, "SimpleLink-OAD", DEVICE_ADDRESS, interval_ms=15.0)
    rig.device.gatt_server.max_mtu = MTU
    outq: asyncio.Queue = asyncio.Queue()
    state = {"blocks": {}, "failed": False, "len": None}
    notes: list[str] = []

    def send(char, value: bytes):
        notes.append(value.hex())
        outq.put_nowait((char, value))

    def on_identify(connection, value):
        v = bytes(value)
        assert v[:8] == b"OAD IMG "
        state["len"] = struct.unpack("<I", v[14:18])[0]
        send(identify_char, b"\x00")

    def on_control(connection, value):
        v = bytes(value)
        if v[0] == 0x01:
            send(control_char, b"\x01" + struct.pack("<H", BLOCK_SIZE))
        elif v[0] == 0x03:
            send(control_char, b"\x12\x00" + struct.pack("<I", 0))
        elif v[0] == 0x04:
            data = b"".join(state["blocks"][i] for i in range(total_blocks))
            send(control_char, b"\x04\x00" if data == image[:state["len"]] else b"\x04\x01")

    def on_block(connection, value):
        v = bytes(value)
        n = struct.unpack("<I", v[:4])[0]
        if n == LOST_BLOCK and not state["failed"]:
            state["failed"] = True  # a flash write failure: ask for the same block again
            send(control_char, b"\x12\x02" + struct.pack("<I", n))
            return
        state["blocks"][n] = v[4:]
        if n + 1 < total_blocks:
            send(control_char, b"\x12\x00" + struct.pack("<I", n + 1))
        else:
            send(control_char, b"\x12\x0e" + struct.pack("<I", n + 1))

    props = Characteristic.Properties
    identify_char = Characteristic(IDENTIFY, props.WRITE | props.WRITE_WITHOUT_RESPONSE | props.NOTIFY,
                                   Characteristic.WRITEABLE, CharacteristicValue(write=on_identify))
    block_char = Characteristic(BLOCK, props.WRITE_WITHOUT_RESPONSE | props.NOTIFY, Characteristic.WRITEABLE,
                                CharacteristicValue(write=on_block))
    control_char = Characteristic(CONTROL, props.WRITE | props.WRITE_WITHOUT_RESPONSE | props.NOTIFY,
                                  Characteristic.WRITEABLE, CharacteristicValue(write=on_control))
    rig.device.add_service(Service(SERVICE, [identify_char, block_char, control_char]))

    async def pump():
        while (item := await outq.get()) is not None:
            await rig.device.notify_subscribers(item[0], item[1])

    conn = await rig.connect()
    pump_task = loop.create_task(pump())
    assert await Peer(conn).request_mtu(MTU) == MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    iproxy, bproxy, cproxy = (sim.find_char(peer, u) for u in (IDENTIFY, BLOCK, CONTROL))
    got: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(iproxy, lambda v: got.put_nowait(bytes(v)))
    await peer.subscribe(cproxy, lambda v: got.put_nowait(bytes(v)))
    await asyncio.sleep(0.2)

    await iproxy.write_value(identify_payload(image), with_response=True)
    assert await got.get() == b"\x00"
    await cproxy.write_value(b"\x01", with_response=True)
    assert await got.get() == b"\x01" + struct.pack("<H", BLOCK_SIZE)
    await cproxy.write_value(b"\x03", with_response=True)
    sent: list[int] = []
    requests: list[int] = []
    while True:
        r = await got.get()
        assert r[0] == 0x12, r.hex()
        n = struct.unpack("<I", r[2:6])[0]
        if r[1] == 0x0E:
            break
        if n in sent:
            requests.append(n)
        sent.append(n)
        await bproxy.write_value(struct.pack("<I", n) + image[n * per_block:(n + 1) * per_block], with_response=False)
    await cproxy.write_value(b"\x04", with_response=True)
    assert await got.get() == b"\x04\x00"
    outq.put_nowait(None)
    await pump_task
    await asyncio.sleep(0.1)
    await rig.device_conn.disconnect()  # the target resets into the new image
    await asyncio.sleep(0.1)
    return {
        "description": "TI OAD (enhanced): identify, block size 244, start, 101 blocks requested one by one, block 20 "
                       "asked for again after a flash error, download complete, enable image",
        "service_uuid": SERVICE, "identify_uuid": IDENTIFY, "block_uuid": BLOCK, "control_uuid": CONTROL,
        "connection_handle": conn.handle, "identify_value_handle": iproxy.handle, "block_value_handle": bproxy.handle,
        "control_value_handle": cproxy.handle, "att_mtu": MTU,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
                  "generator": f"44-byte OAD header + xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}, {BODY_SIZE} bytes"},
        "block_size": BLOCK_SIZE, "block_payload": per_block, "total_blocks": total_blocks,
        "blocks_sent": len(sent), "block_send_order": sent, "resend_requests": requests, "resent_indices": requests,
        "notifications": notes,
        "result": "success",
    }


def locate(truth, att, loc):
    ctl, blk = truth["control_value_handle"], truth["block_value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x52 and p.handle == blk]
    assert len(writes) == truth["blocks_sent"]
    truth["first_block_frame"], truth["last_block_frame"] = writes[0].frame, writes[-1].frame
    truth["throughput_bps"] = truth["image"]["size"] * 8 * 1_000_000 / (writes[-1].ts_us - writes[0].ts_us)
    n = truth["resend_requests"][0]
    truth["resend_request_frame"] = loc.find(False, 0x1B, ctl, b"\x12\x02" + struct.pack("<I", n))
    copies = [p.frame for p in writes if struct.unpack("<I", p.value[:4])[0] == n]
    truth["resent_block_frame"] = copies[1]
    truth["enable_response_frame"] = loc.find(False, 0x1B, ctl, b"\x04\x00")
