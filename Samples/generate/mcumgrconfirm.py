"""Scenario: an MCUmgr image update told across a reboot: upload, test, reset, reconnect, confirm.

Connection 1 (the application, "Zephyr-SMP"): the phone uploads an 8,000-byte image (the requests of
mcumgr.py), marks it for test (image state write, group 1 id 0: {hash, confirm: false}, answered with
the image list), and resets the device (group 0 id 5, answered {}); the device reboots and the link
drops (Connection Timeout, as when a peer vanishes). Connection 2, 0.6 s later, the same address: the
phone reads the image state (slot 0 now the new image, active, not confirmed) and confirms it
({hash, confirm: true}); the device answers with slot 0 confirmed; the phone disconnects.
The hash stands for MCUboot's image hash: here the SHA-256 of the image bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import struct

from bumble import hci
from bumble.device import Peer
from bumble.gatt import Characteristic, Service

import common
import mcumgr
import otakit
import sim

SERVICE = mcumgr.SERVICE
SMP = mcumgr.SMP
DEVICE_ADDRESS = "E6:3A:19:C4:52:10"
IMAGE_SIZE = 8_000
IMAGE_SEED = 0x3C0D_0002
OLD_HASH = hashlib.sha256(b"running image").digest()


class SmpDevice:
    """The device's SMP server: upload (1/1), image state (1/0) and reset (0/5)."""

    def __init__(self, loop, device, char, images: list[dict]):
        self.images = images
        self.stored = bytearray()
        self.reset = loop.create_future()
        self.char = char
        self.pump = otakit.Pump(loop, device)

    def on_write(self, connection, value):
        v = bytes(value)
        op, _, length, group, seq, cmd = struct.unpack(">BBHHBB", v[:8])
        body = v[8:]
        assert length == len(body)
        if (group, cmd) == (1, 1):
            off, data = mcumgr.upload_fields(body)
            assert off == len(self.stored)
            self.stored.extend(data)
            reply = {"rc": 0, "off": len(self.stored)}
        elif (group, cmd) == (1, 0):
            if op == 2:
                new = body.index(b"\x64hash") + 5
                digest = body[new + 2:new + 2 + 32]
                for img in self.images:
                    if img["hash"] == digest:
                        img.update({"confirmed": True, "pending": False} if b"\xf5" == body[-1:] else {"pending": True})
            reply = {"images": self.images}
        elif (group, cmd) == (0, 5):
            reply = {}
            asyncio.get_running_loop().call_later(0.1, self.reset.set_result, True)
        else:
            raise AssertionError((group, cmd))
        self.pump.send(self.char, mcumgr.smp_frame(op + 1, group, seq, cmd, otakit.cbor(reply)))


async def smp_session(peer):
    proxy = sim.find_char(peer, SMP)
    got: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(proxy, lambda v: got.put_nowait(bytes(v)))
    await asyncio.sleep(0.2)

    async def request(op, group, seq, cmd, body) -> bytes:
        await proxy.write_value(mcumgr.smp_frame(op, group, seq, cmd, otakit.cbor(body)), with_response=False)
        reply = await got.get()
        assert reply[0] == op + 1 and reply[6] == seq, reply.hex()
        return reply
    return proxy, got, request


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    digest = hashlib.sha256(image).digest()
    p = Characteristic.Properties
    images = [{"slot": 0, "version": "1.0.0", "hash": OLD_HASH, "active": True, "confirmed": True},
              {"slot": 1, "version": "1.1.0", "hash": digest, "pending": False}]
    holder: dict = {}
    smp_char = otakit.char(SMP, p.WRITE_WITHOUT_RESPONSE | p.NOTIFY, lambda c, v: holder["app"].on_write(c, v))
    rig, conn1, peer1 = await otakit.start(loop, out, "Zephyr-SMP", DEVICE_ADDRESS, SERVICE, [smp_char])
    app = holder["app"] = SmpDevice(loop, rig.device, smp_char, images)
    proxy, got, request = await smp_session(peer1)
    requests = await mcumgr.upload(proxy, got, image)
    assert bytes(app.stored) == image
    seq = requests & 0xFF
    await request(2, 1, seq, 0, {"hash": digest, "confirm": False})
    await request(2, 0, (seq + 1) & 0xFF, 5, {})
    await app.reset
    await app.pump.close()
    # The device reboots: the link drops without a word from it.
    await rig.device_conn.disconnect(reason=hci.HCI_CONNECTION_TIMEOUT_ERROR)
    await asyncio.sleep(0.2)

    # The new image runs in slot 0, under test: not confirmed yet.
    booted = [{"slot": 0, "version": "1.1.0", "hash": digest, "active": True, "confirmed": False},
              {"slot": 1, "version": "1.0.0", "hash": OLD_HASH, "confirmed": True}]
    device = otakit.new_device(rig, "app-ctl-2", DEVICE_ADDRESS, "Zephyr-SMP")
    smp2 = otakit.char(SMP, p.WRITE_WITHOUT_RESPONSE | p.NOTIFY, lambda c, v: holder["new"].on_write(c, v))
    device.add_service(Service(SERVICE, [smp2]))
    new = holder["new"] = SmpDevice(loop, device, smp2, booted)
    conn2 = await otakit.reconnect(loop, rig, device)
    assert await Peer(conn2).request_mtu(otakit.MTU) == otakit.MTU
    await conn2.set_data_length(251, 2120)
    peer2 = await sim.discover_all(conn2)
    _, _, request2 = await smp_session(peer2)
    await request2(0, 1, 0, 0, {})
    confirm_reply = await request2(2, 1, 1, 0, {"hash": digest, "confirm": True})
    assert booted[0]["confirmed"] is True
    await new.pump.close()
    await asyncio.sleep(0.2)
    await conn2.disconnect()
    await asyncio.sleep(0.1)
    return {
        "description": "MCUmgr update across a reboot: upload of 8,000 bytes, image test, reset, link lost; reconnect "
                       "to the same address, image state read, confirm",
        "service_uuid": SERVICE, "characteristic_uuid": SMP,
        "app_connection_handle": conn1.handle, "confirm_connection_handle": conn2.handle,
        "value_handle": proxy.handle, "att_mtu": otakit.MTU,
        "image": otakit.image_record(image, f"xorshift32 seed 0x{IMAGE_SEED:08x}"),
        "data_per_request": mcumgr.DATA, "requests": requests,
        "confirm_response_hex": confirm_reply.hex(),
        "result": "success",
    }


def locate(truth, att, loc):
    h = truth["value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x52 and p.value[0] == 2 and p.value[4:6] == b"\x00\x01" and p.value[7] == 1]
    assert len(writes) == truth["requests"]
    truth["first_data_frame"], truth["last_data_frame"] = writes[0].frame, writes[-1].frame
    truth["throughput_bps"] = otakit.rate_bps(truth["image"]["size"], writes)
    truth["upload_start_frame"] = writes[0].frame
    smp = [p for p in att if p.opcode in (0x52, 0x1B)]
    # group 1 id 0 writes: the test (first) and the confirm (second); group 0 id 5: the reset.
    state = [p.frame for p in smp if p.sent and p.value[0] == 2 and p.value[4:6] == b"\x00\x01" and p.value[7] == 0]
    truth["test_frame"], truth["confirm_frame"] = state
    truth["reset_frame"] = next(p.frame for p in smp if p.sent and p.value[0] == 2 and p.value[4:6] == b"\x00\x00" and p.value[7] == 5)
    truth["confirm_response_frame"] = loc.find(False, 0x1B, None, bytes.fromhex(truth["confirm_response_hex"]))
    assert all(p.handle == h for p in smp if p.sent)


def locate_capture(truth, data: bytes):
    conns = otakit.connections_from_btsnoop(data)
    assert [c["address"] for c in conns] == [DEVICE_ADDRESS, DEVICE_ADDRESS], conns
    truth["connections"] = [{k: v for k, v in c.items() if not k.endswith("_us")} for c in conns]
    truth["reconnect_gap_us"] = conns[1]["start_us"] - conns[0]["end_us"]
