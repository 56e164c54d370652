"""Scenario: a vendor OTA shaped like most real ones, over two characteristics.

Control characteristic 7E5A0002 (write with response + notify):
  phone  -> 01 size(u32 LE) crc32(u32 LE)   start
  device -> 81                              ready
  device -> E1 index(u16 LE)                resend packet `index`
  phone  -> 02                              end
  device -> 82 status(u8)                   result, 00 = success
Data characteristic 7E5A0003 (write without response):
  phone  -> index(u16 LE) payload           image[index*240 : index*240+240]

The device pretends packet LOST_PACKET arrived corrupted, drops it and asks for it again; the
phone resends it after the packet it is sending. The device checks size and CRC-32 of the image it
reassembled before answering 82 00.
"""

from __future__ import annotations

import asyncio
import struct

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import sim

SERVICE = "7E5A0001-6F1C-4B8A-9D2E-3C4B5A6F7081"
CONTROL = "7E5A0002-6F1C-4B8A-9D2E-3C4B5A6F7081"
DATA = "7E5A0003-6F1C-4B8A-9D2E-3C4B5A6F7081"
DEVICE_ADDRESS = "E3:7A:19:5C:42:0D"

MTU = 247
PAYLOAD = 240
IMAGE_SIZE = 30_000
IMAGE_SEED = 0x7E5A_0003
LOST_PACKET = 50


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    total = -(-len(image) // PAYLOAD)
    rig = sim.Rig(loop, out, "Vendor-OTA", DEVICE_ADDRESS, interval_ms=15.0)
    rig.device.gatt_server.max_mtu = MTU
    outq: asyncio.Queue = asyncio.Queue()
    state = {"size": None, "crc": None, "packets": {}, "asked": False}
    notifications: list[str] = []
    resend_requests: list[int] = []

    def device_send(value: bytes):
        notifications.append(value.hex())
        outq.put_nowait(value)

    def on_control(connection, value):
        v = bytes(value)
        if v[0] == 0x01:
            state["size"], state["crc"] = struct.unpack("<II", v[1:9])
            device_send(b"\x81")
        elif v[0] == 0x02:
            data = b"".join(state["packets"][i] for i in sorted(state["packets"]))
            ok = len(data) == state["size"] and common.crc32(data) == state["crc"]
            device_send(b"\x82\x00" if ok else b"\x82\x01")

    def on_data(connection, value):
        v = bytes(value)
        idx = struct.unpack("<H", v[:2])[0]
        if idx == LOST_PACKET and not state["asked"]:
            state["asked"] = True  # pretend it arrived corrupted: drop it, ask again
            resend_requests.append(idx)
            device_send(b"\xE1" + struct.pack("<H", idx))
            return
        state["packets"][idx] = v[2:]

    control = Characteristic(CONTROL, Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY,
                             Characteristic.WRITEABLE | Characteristic.READABLE, CharacteristicValue(write=on_control))
    data_char = Characteristic(DATA, Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
                               Characteristic.WRITEABLE, CharacteristicValue(write=on_data))
    rig.device.add_service(Service(SERVICE, [control, data_char]))

    async def pump():
        while (v := await outq.get()) is not None:
            await rig.device.notify_subscribers(control, v)

    conn = await rig.connect()
    pump_task = asyncio.get_running_loop().create_task(pump())
    assert await Peer(conn).request_mtu(MTU) == MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    cproxy = sim.find_char(peer, CONTROL)
    dproxy = sim.find_char(peer, DATA)
    received: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(cproxy, lambda v: received.put_nowait(bytes(v)))
    await asyncio.sleep(0.3)

    crc = common.crc32(image)
    start = b"\x01" + struct.pack("<II", len(image), crc)
    await cproxy.write_value(start, with_response=True)
    assert await received.get() == b"\x81"
    sent_order: list[int] = []
    resent: list[int] = []

    async def send_packet(i: int):
        sent_order.append(i)
        await dproxy.write_value(struct.pack("<H", i) + image[i * PAYLOAD:(i + 1) * PAYLOAD], with_response=False)
        if len(sent_order) % 4 == 0:
            await asyncio.sleep(0.015)  # one connection event's worth

    async def serve_resends():
        while not received.empty():
            r = received.get_nowait()
            assert r[0] == 0xE1, r.hex()
            j = struct.unpack("<H", r[1:3])[0]
            resent.append(j)
            await send_packet(j)

    for i in range(total):
        await serve_resends()
        await send_packet(i)
    while not resent:  # the request may still be on its way
        await asyncio.sleep(0.015)
        await serve_resends()
    await asyncio.sleep(0.05)
    await cproxy.write_value(b"\x02", with_response=True)
    result = await received.get()
    assert result == b"\x82\x00", result.hex()
    await asyncio.sleep(0.2)
    outq.put_nowait(None)
    await pump_task
    await rig.disconnect()
    return {
        "description": "Vendor OTA over two characteristics: control (01 size crc, 81 ready, E1 resend, 02 end, "
                       "82 status) and data (index u16 LE + payload, write without response), one resend",
        "service_uuid": SERVICE, "control_uuid": CONTROL, "data_uuid": DATA,
        "connection_handle": conn.handle, "control_value_handle": cproxy.handle, "data_value_handle": dproxy.handle,
        "att_mtu": MTU, "data_length_octets": 251,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{crc:08x}",
                  "generator": f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits"},
        "packet_payload_size": PAYLOAD,
        "total_packets": total,
        "data_packets_sent": len(sent_order),
        "data_packet_send_order": sent_order,
        "resend_requests": resend_requests,
        "resent_indices": resent,
        "start_hex": start.hex(),
        "notifications": notifications,
        "result_hex": result.hex(),
        "result": "success",
    }


def locate(truth, att, loc):
    """Frames of the protocol steps, and the image rate between the first and the last data packet."""
    ctl, data = truth["control_value_handle"], truth["data_value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x52 and p.handle == data]
    assert len(writes) == truth["data_packets_sent"]
    truth["start_frame"] = loc.find(True, 0x12, ctl, bytes.fromhex(truth["start_hex"]))
    truth["first_data_frame"], truth["last_data_frame"] = writes[0].frame, writes[-1].frame
    first, last = writes[0].ts_us, writes[-1].ts_us
    truth["transfer_us"] = last - first
    truth["throughput_bps"] = truth["image"]["size"] * 8 * 1_000_000 / (last - first)
    idx = truth["resend_requests"][0]
    truth["resend_request_frame"] = loc.find(False, 0x1B, ctl, b"\xE1" + struct.pack("<H", idx))
    copies = [p.frame for p in writes if struct.unpack("<H", p.value[:2])[0] == idx]
    assert len(copies) == 2
    truth["resent_packet_frame"] = copies[1]
    truth["end_frame"] = loc.find(True, 0x12, ctl, b"\x02")
    truth["result_frame"] = loc.find(False, 0x1B, ctl, bytes.fromhex(truth["result_hex"]))
