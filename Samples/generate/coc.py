"""Scenario: a record stream over an LE credit-based channel (LE CoC, L2CAP PSM 0x0080).

The device listens on SPSM 0x0080 (Core Spec Vol 3, Part A, 4.22) and publishes the PSM in a GATT
characteristic, as Object Transfer and vendor log services do; the phone discovers, reads it, opens the channel
(L2CAP LE Credit Based Connection Request: MTU 512, MPS 60, 3 initial credits), asks for the records
(`C0 01 count(u16 LE) xor`) and the device sends them (`C0 02 index(u16 LE) 60 data bytes xor`), each
65-byte SDU in two K-frames of at most 60 bytes; the phone's credits make the device wait for more.
`Samples/codecs/coc/coc-records.yaml` decodes both messages by the channel's PSM.

The truth's SDU frames come from ``read_sdus``: the written btsnoop read without bumble (ACL
reassembly, the LE Credit Based Connection Request/Response on CID 0x0005, K-frame SDU reassembly).
"""

from __future__ import annotations

import asyncio
import struct
from collections import defaultdict

from bumble import l2cap
from bumble.gatt import Characteristic, Service

import common
import sim

DEVICE_ADDRESS = "C6:0C:00:80:11:22"
PSM = 0x0080
RECORDS = 12
RECORD_SEED = 0xC0C0_0080
SERVICE = "C0C00001-5E2A-4B1D-9F3C-00000000C0C0"
PSM_CHAR = "C0C00002-5E2A-4B1D-9F3C-00000000C0C0"  # read: the channel's PSM, u16 LE
DATA = 60


def frame(body: bytes) -> bytes:
    x = 0
    for b in body:
        x ^= b
    return body + bytes([x])


def record(i: int) -> bytes:
    return frame(bytes([0xC0, 0x02]) + struct.pack("<H", i) + common.xorshift_bytes(RECORD_SEED + i, DATA))


async def run(loop, out):
    rig = sim.Rig(loop, out, "CoC-Logger", DEVICE_ADDRESS, interval_ms=15.0)
    requests: asyncio.Queue = asyncio.Queue()

    def on_channel(channel: l2cap.LeCreditBasedChannel):
        channel.sink = lambda sdu: requests.put_nowait((channel, bytes(sdu)))

    rig.device.create_l2cap_server(l2cap.LeCreditBasedChannelSpec(psm=PSM, mtu=512, mps=100, max_credits=4),
                                   handler=on_channel)
    rig.device.add_service(Service(SERVICE, [Characteristic(PSM_CHAR, Characteristic.Properties.READ, Characteristic.READABLE,
                                                            struct.pack("<H", PSM))]))
    conn = await rig.connect()
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    psm = struct.unpack("<H", bytes(await sim.find_char(peer, PSM_CHAR).read_value()))[0]
    assert psm == PSM
    received: list[bytes] = []
    done = asyncio.Event()
    channel = await conn.create_l2cap_channel(l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=512, mps=DATA, max_credits=3))

    def on_sdu(sdu: bytes):
        received.append(bytes(sdu))
        if len(received) == RECORDS:
            done.set()

    channel.sink = on_sdu
    request = frame(bytes([0xC0, 0x01]) + struct.pack("<H", RECORDS))
    channel.write(request)
    device_channel, got = await requests.get()
    assert got == request
    for i in range(RECORDS):
        device_channel.write(record(i))
        await device_channel.drain()
    await done.wait()
    assert received == [record(i) for i in range(RECORDS)]
    await asyncio.sleep(0.1)
    await rig.disconnect()
    return {
        "description": "a record stream over an LE credit-based channel to PSM 0x0080: one count request from the phone, "
                       f"{RECORDS} 65-byte records from the device, each SDU in two K-frames (the phone's MPS is {DATA})",
        "connection_handle": conn.handle, "psm": PSM,
        "phone_cid": channel.source_cid, "device_cid": channel.destination_cid,
        "request_hex": request.hex(), "records_hex": [record(i).hex() for i in range(RECORDS)],
        "record_generator": f"xorshift32 seed 0x{RECORD_SEED:08x} + index, {DATA} bytes",
        "codec_spec": "Samples/codecs/coc/coc-records.yaml",
    }


def read_sdus(data: bytes) -> dict:
    """SDUs of the credit-based channels in a btsnoop (datalink 1002), without bumble: (frame, sent, sdu) per CID pair."""
    cids: set[tuple[bool, int]] = set()  # (sent, cid) of K-frames of channels the signalling opened
    pending: dict[int, int] = {}  # identifier -> the phone's source CID
    sdu: dict[tuple[bool, int], tuple[int, bytearray]] = {}
    out: dict[str, list] = defaultdict(list)
    kframes = 0
    for frame_no, sent, cid, body in common.l2cap_pdus(data):
        if cid == 0x0005:
            code, ident = body[0], body[1]
            if code == 0x14 and sent and struct.unpack("<H", body[4:6])[0] == PSM:
                pending[ident] = struct.unpack("<H", body[6:8])[0]
            elif code == 0x15 and not sent and ident in pending and struct.unpack("<H", body[12:14])[0] == 0:
                cids.add((False, pending.pop(ident)))
                cids.add((True, struct.unpack("<H", body[4:6])[0]))
        elif (sent, cid) in cids:
            kframes += 1
            k = (sent, cid)
            if k not in sdu:
                sdu[k] = (struct.unpack("<H", body[:2])[0], bytearray(body[2:]))
            else:
                sdu[k][1].extend(body)
            want, got = sdu[k]
            if len(got) >= want:
                del sdu[k]
                out["sent" if sent else "rcvd"].append((frame_no, bytes(got)))
    return {"k_frames": kframes, **out}


def locate_capture(truth: dict, data: bytes) -> None:
    r = read_sdus(data)
    truth["request_frame"] = [f for f, s in r["sent"] if s.hex() == truth["request_hex"]][0]
    truth["record_frames"] = [f for f, s in r["rcvd"]]
    assert [s.hex() for _f, s in r["rcvd"]] == truth["records_hex"]
    truth["k_frames"] = r["k_frames"]
