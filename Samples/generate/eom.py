"""Scenario 1: Apple's "BTLE Transfer" sample (end-of-message framed text)."""

from __future__ import annotations

import asyncio

from bumble.gatt import Characteristic, Service

import sim

SERVICE = "E20A39F4-73F5-4BC4-A12F-17D1AD07A961"
CHARACTERISTIC = "08590F7E-DB05-467E-8757-72F6FAEB13D4"
DEVICE_ADDRESS = "C4:7A:2B:3D:9E:01"
EOM = b"EOM"

MESSAGE_1 = (
    "Hello from the peripheral! This is the BTLE Transfer sample. The text you are "
    "reading travels as a sequence of GATT notifications, twenty bytes at a time, "
    "because the ATT MTU is still the default of 23 bytes. When every chunk has been "
    "sent, the peripheral sends the three letters E, O and M on their own."
)

MESSAGE_2 = (
    "Second message. Bluetooth Low Energy splits data into small pieces at several "
    "layers. The application decides how much it writes into one notification; the "
    "attribute protocol limits that to the MTU minus three bytes of header; L2CAP "
    "adds a four byte header carrying the length and the channel identifier; the "
    "host controller interface splits the L2CAP frame into ACL fragments no larger "
    "than the controller's buffers; and the link layer finally sends payloads of at "
    "most twenty-seven bytes unless both sides agreed on a longer data length. A "
    "capture taken at the HCI shows every one of these layers except the radio. "
    "Counting notifications, measuring the time between connection events, and "
    "checking that the reassembled text matches what the sender meant are exactly "
    "the chores a protocol analyzer should do for you. This message is long enough "
    "to need fifty-odd notifications, which the phone receives in bursts of four "
    "per connection event, every fifteen milliseconds, until the final EOM marker."
)

MESSAGE_3 = (
    "Third message, after the central asked for an ATT MTU of 185 bytes. Each "
    "notification now carries up to 182 bytes of text, so this message needs only a "
    "handful of them. The data length was not extended, so every notification is "
    "still split by the link layer into 27-byte pieces, and the controller hands "
    "them to the host as one ACL start fragment followed by continuation fragments. "
    "An analyzer has to put them back together before it can decode the attribute "
    "protocol. The end of the message is marked, as before, by a notification whose "
    "value is exactly the three ASCII letters EOM."
)


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


async def run(loop, out):
    rig = sim.Rig(loop, out, "BTLE Transfer", DEVICE_ADDRESS)
    char = Characteristic(CHARACTERISTIC, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
    rig.device.add_service(Service(SERVICE, [char]))
    rig.device.gatt_server.max_mtu = 185

    conn = await rig.connect()
    peer = await sim.discover_all(conn)
    proxy = sim.find_char(peer, CHARACTERISTIC)
    received: list[bytes] = []
    await peer.subscribe(proxy, received.append)
    await asyncio.sleep(0.1)

    messages = []

    async def send(text: str, chunk: int, mtu: int):
        data = text.encode("ascii")
        parts = chunks(data, chunk)
        for p in parts:
            await rig.device.notify_subscribers(char, p)
        await rig.device.notify_subscribers(char, EOM)
        messages.append(
            {"text": text, "hex": data.hex(), "length": len(data), "att_mtu": mtu,
             "chunk_size": chunk, "chunk_count": len(parts), "notifications_with_eom": len(parts) + 1,
             "chunks_hex": [p.hex() for p in parts]}
        )
        # wait until the phone has everything
        while sum(len(r) for r in received) < sum(m["length"] + 3 for m in messages):
            await asyncio.sleep(0.015)

    await send(MESSAGE_1, 20, 23)
    await asyncio.sleep(0.5)
    await send(MESSAGE_2, 20, 23)
    await asyncio.sleep(0.4)
    mtu = await peer.request_mtu(185)
    assert mtu == 185, mtu
    await asyncio.sleep(0.1)
    await send(MESSAGE_3, mtu - 3, mtu)
    await rig.disconnect()

    assert b"".join(received) == b"".join(m["text"].encode() + EOM for m in messages)
    return {
        "description": "Apple BTLE Transfer sample: text messages as notifications, each ended by a notification 'EOM'",
        "service_uuid": SERVICE,
        "characteristic_uuid": CHARACTERISTIC,
        "connection_handle": conn.handle,
        "value_handle": proxy.handle,
        "cccd_handle": sim.cccd_handle(proxy),
        "cccd_value_hex": "0100",
        "final_att_mtu": mtu,
        "eom_hex": EOM.hex(),
        "note": "messages 2 and 3 contain the letters EOM inside their text; only a notification whose whole value is EOM ends a message",
        "messages": messages,
    }


def locate(truth, att, loc):
    h = truth["value_handle"]
    truth["cccd_write_frame"] = loc.find(True, 0x12, truth["cccd_handle"], bytes.fromhex("0100"))
    truth["mtu_request_frame"] = loc.find(True, 0x02)
    for m in truth["messages"]:
        frames = [loc.find(False, 0x1B, h, bytes.fromhex(c)) for c in m["chunks_hex"]]
        m["chunk_frames"] = frames
        m["eom_frame"] = loc.find(False, 0x1B, h, EOM)
