"""Scenario 4: the headset of Samples/PROTOCOLS.md: events, then a vendor OTA update.

Events (notifications on 5A4E0003): proximity near, jack in, volume 7, touchpad
swipe forward, back button short press; the phone queries the version (83) and
the MAC address (84). Then the OTA: 80 start (size u32 BE, packets u16 BE) ->
headset 10 01 -> 81 idx payload (write without response on 5A4E0004) -> the
headset asks once for packet 37 again (11 00 25), the phone resends it ->
82 crc32 BE -> headset 12 00.
"""

from __future__ import annotations

import asyncio
import struct

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import sim

SERVICE = "5A4E0001-8C3B-4F2E-9A1D-0C7F2B6E4D10"
CONTROL = "5A4E0002-8C3B-4F2E-9A1D-0C7F2B6E4D10"
EVENTS = "5A4E0003-8C3B-4F2E-9A1D-0C7F2B6E4D10"
OTA_DATA = "5A4E0004-8C3B-4F2E-9A1D-0C7F2B6E4D10"
DEVICE_ADDRESS = "C9:2E:55:A0:17:6B"

MTU = 247
PAYLOAD = 240  # image bytes per OTA data packet (the protocol allows up to MTU - 6 = 241)
IMAGE_SIZE = 20_000
IMAGE_SEED = 0x4E5A_0002
VERSION = b"HS-2.4.1"
MAC = bytes.fromhex("C92E55A0176B")  # the headset's address, most significant byte first
LOST_PACKET = 37


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    total = -(-len(image) // PAYLOAD)

    rig = sim.Rig(loop, out, "HS-Pro", DEVICE_ADDRESS, interval_ms=15.0)
    rig.device.gatt_server.max_mtu = MTU
    messages: list[dict] = []  # every protocol message in order
    outq: asyncio.Queue = asyncio.Queue()
    ota = {"size": None, "total": None, "packets": {}, "asked": False, "seen": []}

    def headset_send(value: bytes, what: str):
        messages.append({"direction": "headset->phone", "characteristic": "events", "att": "notification",
                         "what": what, "hex": value.hex()})
        outq.put_nowait(value)

    def on_control(connection, value):
        v = bytes(value)
        op = v[0]
        if op == 0x83:
            headset_send(bytes([0x20, len(VERSION)]) + VERSION, "version string")
        elif op == 0x84:
            headset_send(bytes([0x21]) + MAC, "MAC address")
        elif op == 0x80:
            ota["size"], ota["total"] = struct.unpack(">IH", v[1:7])
            headset_send(b"\x10\x01", "entered OTA mode")
        elif op == 0x82:
            crc = struct.unpack(">I", v[1:5])[0]
            data = b"".join(ota["packets"][i] for i in range(ota["total"]))
            ok = len(data) == ota["size"] and common.crc32(data) == crc
            headset_send(b"\x12\x00" if ok else b"\x12\x01", "OTA result: success" if ok else "OTA result: CRC failure")

    def on_ota(connection, value):
        v = bytes(value)
        assert v[0] == 0x81
        idx = struct.unpack(">H", v[1:3])[0]
        ota["seen"].append(idx)
        if idx == LOST_PACKET and not ota["asked"]:
            ota["asked"] = True  # pretend it arrived corrupted: drop it and ask again
            headset_send(bytes([0x11]) + struct.pack(">H", idx), f"resend request for packet {idx}")
            return
        ota["packets"][idx] = v[3:]

    events = Characteristic(EVENTS, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
    control = Characteristic(CONTROL, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
                             CharacteristicValue(write=on_control))
    data_char = Characteristic(OTA_DATA, Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
                               Characteristic.WRITEABLE, CharacteristicValue(write=on_ota))
    rig.device.add_service(Service(SERVICE, [control, events, data_char]))

    async def pump():
        while (v := await outq.get()) is not None:
            await rig.device.notify_subscribers(events, v)

    conn = await rig.connect()
    pump_task = asyncio.get_running_loop().create_task(pump())
    mtu = await Peer(conn).request_mtu(MTU)
    assert mtu == MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    cproxy = sim.find_char(peer, CONTROL)
    eproxy = sim.find_char(peer, EVENTS)
    dproxy = sim.find_char(peer, OTA_DATA)
    received: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(eproxy, lambda v: received.put_nowait(bytes(v)))
    await asyncio.sleep(0.3)

    async def phone_write(proxy, value: bytes, what: str, with_response: bool, name: str):
        m = {"direction": "phone->headset", "characteristic": name,
             "att": "write_request" if with_response else "write_command", "what": what}
        if value[0] == 0x81:  # data packets: 81 idx(u16 BE) image[idx*PAYLOAD : (idx+1)*PAYLOAD]
            m["index"] = struct.unpack(">H", value[1:3])[0]
            m["length"] = len(value)
            m["sha256"] = common.sha256(value)
        else:
            m["hex"] = value.hex()
        messages.append(m)
        m["_value"] = value
        await proxy.write_value(value, with_response=with_response)

    # The user puts the headset on, plugs a cable, turns the volume, swipes, presses back.
    for value, what, pause in [
        (b"\x01\x00", "proximity: near", 0.45),
        (b"\x02\x01", "audio jack: plugged in", 0.6),
        (b"\x03\x07", "volume: 7", 0.35),
        (b"\x04\x01", "touchpad: swipe forward", 0.5),
        (b"\x05\x01", "back button: short press", 0.4),
    ]:
        headset_send(value, what)
        assert await received.get() == value
        await asyncio.sleep(pause)
    await phone_write(cproxy, b"\x83", "query version", True, "control")
    assert (await received.get())[2:] == VERSION
    await asyncio.sleep(0.1)
    await phone_write(cproxy, b"\x84", "query MAC address", True, "control")
    assert (await received.get())[1:] == MAC
    await asyncio.sleep(0.5)

    # OTA
    await phone_write(cproxy, b"\x80" + struct.pack(">IH", len(image), total), "start OTA", True, "control")
    assert await received.get() == b"\x10\x01"
    resent: list[int] = []
    sent_order: list[int] = []
    n = 0

    async def send_packet(i: int, what: str):
        nonlocal n
        payload = image[i * PAYLOAD : (i + 1) * PAYLOAD]
        sent_order.append(i)
        await phone_write(dproxy, b"\x81" + struct.pack(">H", i) + payload, what, False, "ota_data")
        n += 1
        if n % 4 == 0:
            await asyncio.sleep(0.015)  # one connection event's worth

    def take_resend_requests():
        out = []
        while not received.empty():
            r = received.get_nowait()
            assert r[0] == 0x11, r.hex()
            out.append(struct.unpack(">H", r[1:3])[0])
        return out

    for i in range(total):
        for j in take_resend_requests():
            resent.append(j)
            await send_packet(j, f"OTA data packet {j} (resent)")
        await send_packet(i, f"OTA data packet {i}")
    while len(resent) < 1:  # a resend request may still be on its way
        await asyncio.sleep(0.015)
        for j in take_resend_requests():
            resent.append(j)
            await send_packet(j, f"OTA data packet {j} (resent)")
    await asyncio.sleep(0.05)
    crc = common.crc32(image)
    await phone_write(cproxy, b"\x82" + struct.pack(">I", crc), "end OTA", True, "control")
    result = await received.get()
    assert result == b"\x12\x00", result.hex()
    await asyncio.sleep(0.2)
    outq.put_nowait(None)
    await pump_task
    await rig.disconnect()

    return {
        "description": "Headset: button/sensor events, version and MAC queries, then a vendor OTA update with one resend",
        "service_uuid": SERVICE,
        "control_uuid": CONTROL,
        "events_uuid": EVENTS,
        "ota_data_uuid": OTA_DATA,
        "connection_handle": conn.handle,
        "control_value_handle": cproxy.handle,
        "events_value_handle": eproxy.handle,
        "events_cccd_handle": sim.cccd_handle(eproxy),
        "ota_data_value_handle": dproxy.handle,
        "att_mtu": MTU,
        "data_length_octets": 251,
        "version": VERSION.decode(),
        "mac": ":".join(f"{b:02X}" for b in MAC),
        "image": {
            "size": len(image),
            "sha256": common.sha256(image),
            "crc32": f"{crc:08x}",
            "generator": f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits",
            "hex": image.hex(),
        },
        "packet_payload_size": PAYLOAD,
        "total_packets": total,
        "data_packets_sent": len(sent_order),
        "resent_indices": resent,
        "data_packet_send_order": sent_order,
        "result_hex": result.hex(),
        "result": "success",
        "data_packet_layout": "81, index u16 BE, image[index*240 : index*240+240] (the last packet is shorter)",
        "messages": messages,
    }


def locate(truth, att, loc):
    handles = {"control": truth["control_value_handle"], "ota_data": truth["ota_data_value_handle"],
               "events": truth["events_value_handle"]}
    for m in truth["messages"]:
        v = m.pop("_value", None) or bytes.fromhex(m["hex"])
        if m["direction"] == "phone->headset":
            op = 0x12 if m["att"] == "write_request" else 0x52
            m["frame"] = loc.find(True, op, handles[m["characteristic"]], v)
        else:
            m["frame"] = loc.find(False, 0x1B, handles["events"], v)
