"""Scenario 2: the fitness bracelet of Samples/PROTOCOLS.md.

The phone asks, day by day, how many activity records exist (count request on
0xFFE1, Write Request); the bracelet answers on 0xFFE2 with the count and then
sends every record as a notification. One record carries a wrong checksum.
"""

from __future__ import annotations

import asyncio
import random

from bumble.gatt import Characteristic, CharacteristicValue, Service

import sim

SERVICE = "0000FFE0-0000-1000-8000-00805F9B34FB"
WRITE_CHAR = "0000FFE1-0000-1000-8000-00805F9B34FB"
NOTIFY_CHAR = "0000FFE2-0000-1000-8000-00805F9B34FB"
DEVICE_ADDRESS = "D3:41:8E:07:5B:22"

DAYS = [(3, 12), (3, 13), (3, 14)]  # month, day
BAD = (1, 4)  # (day index, record index) of the record with the wrong checksum


def xor(data: bytes) -> int:
    x = 0
    for b in data:
        x ^= b
    return x


def frame(cmd: int, body: bytes) -> bytes:
    head = bytes([0xA5, len(body) + 4, cmd]) + body
    return head + bytes([xor(head)])


def count_request(month: int, day: int) -> bytes:
    return frame(0x03, bytes([month, day]))


def count_response(n: int) -> bytes:
    return frame(0x83, bytes([n & 0xFF, n >> 8]))


def activity_record(index: int, hour: int, steps: int, hr: int, kcal: int) -> bytes:
    return frame(0x84, bytes([index & 0xFF, index >> 8, hour, steps & 0xFF, steps >> 8, hr, kcal]))


def make_day(rng: random.Random, n: int) -> list[dict]:
    """n hourly records from 08:00 on, with plausible steps / heart rate / kcal."""
    out = []
    for i in range(n):
        hour = 8 + i
        steps = rng.randint(150, 2400) if hour not in (12, 13) else rng.randint(2400, 5200)
        hr = rng.randint(62, 96) + (steps // 250)
        kcal = min(255, steps // 22 + rng.randint(3, 9))
        out.append({"index": i, "hour": hour, "steps": steps, "heart_rate": hr, "kcal": kcal})
    return out


async def run(loop, out):
    rng = random.Random(0xB2AC)
    counts = [7, 11, 5]
    days = [make_day(rng, n) for n in counts]

    rig = sim.Rig(loop, out, "FitBand", DEVICE_ADDRESS, interval_ms=30.0)
    frames: list[dict] = []  # every protocol frame, in send order
    pending: asyncio.Queue = asyncio.Queue()

    def on_write(connection, value):
        pending.put_nowait(bytes(value))

    notify = Characteristic(NOTIFY_CHAR, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
    write = Characteristic(
        WRITE_CHAR,
        Characteristic.Properties.WRITE,
        Characteristic.WRITEABLE,
        CharacteristicValue(write=on_write),
    )
    rig.device.add_service(Service(SERVICE, [write, notify]))

    async def bracelet_task():
        while True:
            req = await pending.get()
            if req is None:
                return
            assert req[0] == 0xA5 and req[2] == 0x03 and xor(req[:-1]) == req[-1], req.hex()
            month, day = req[3], req[4]
            di = DAYS.index((month, day))
            await asyncio.sleep(0.02)  # the bracelet looks the day up
            resp = count_response(len(days[di]))
            frames.append({"direction": "bracelet->phone", "att": "notification", "kind": "count_response",
                           "hex": resp.hex(), "checksum_ok": True, "day": f"{month:02d}-{day:02d}",
                           "count": len(days[di])})
            await rig.device.notify_subscribers(notify, resp)
            for rec in days[di]:
                f = activity_record(rec["index"], rec["hour"], rec["steps"], rec["heart_rate"], rec["kcal"])
                ok = True
                if (di, rec["index"]) == BAD:
                    f = f[:-1] + bytes([f[-1] ^ 0x5A])  # corrupt the checksum byte
                    ok = False
                frames.append({"direction": "bracelet->phone", "att": "notification", "kind": "activity_record",
                               "hex": f.hex(), "checksum_ok": ok, "day": f"{month:02d}-{day:02d}", **rec})
                await rig.device.notify_subscribers(notify, f)

    conn = await rig.connect()
    task = asyncio.get_running_loop().create_task(bracelet_task())
    peer = await sim.discover_all(conn)
    wproxy = sim.find_char(peer, WRITE_CHAR)
    nproxy = sim.find_char(peer, NOTIFY_CHAR)
    received: list[bytes] = []
    await peer.subscribe(nproxy, received.append)
    await asyncio.sleep(0.25)

    for (month, day), recs in zip(DAYS, days):
        req = count_request(month, day)
        frames.append({"direction": "phone->bracelet", "att": "write_request", "kind": "count_request",
                       "hex": req.hex(), "checksum_ok": True, "day": f"{month:02d}-{day:02d}",
                       "month": month, "day_of_month": day})
        before = len(received)
        await wproxy.write_value(req, with_response=True)
        while len(received) < before + 1 + len(recs):
            await asyncio.sleep(0.03)
        await asyncio.sleep(0.4)  # the app stores the day, then asks for the next one
    pending.put_nowait(None)
    await task
    await rig.disconnect()

    bracelet_frames = [bytes.fromhex(f["hex"]) for f in frames if f["direction"] == "bracelet->phone"]
    assert received == bracelet_frames
    bad = [i for i, f in enumerate(frames) if not f["checksum_ok"]]
    assert len(bad) == 1
    return {
        "description": "Fitness bracelet: per-day count requests, count responses and activity records; one record has a bad XOR checksum",
        "service_uuid": SERVICE,
        "write_characteristic_uuid": WRITE_CHAR,
        "notify_characteristic_uuid": NOTIFY_CHAR,
        "connection_handle": conn.handle,
        "write_value_handle": wproxy.handle,
        "notify_value_handle": nproxy.handle,
        "notify_cccd_handle": sim.cccd_handle(nproxy),
        "att_mtu": 23,
        "days": [{"month": m, "day": d, "record_count": len(r)} for (m, d), r in zip(DAYS, days)],
        "frame_count": len(frames),
        "bad_frame_index": bad[0],
        "bad_frame_hex": frames[bad[0]]["hex"],
        "bad_frame_correct_checksum": f"{xor(bytes.fromhex(frames[bad[0]]['hex'])[:-1]):02x}",
        "frames": frames,
    }


def locate(truth, att, loc):
    for f in truth["frames"]:
        v = bytes.fromhex(f["hex"])
        if f["direction"] == "phone->bracelet":
            f["frame"] = loc.find(True, 0x12, truth["write_value_handle"], v)
        else:
            f["frame"] = loc.find(False, 0x1B, truth["notify_value_handle"], v)
    truth["bad_frame_number"] = truth["frames"][truth["bad_frame_index"]]["frame"]
