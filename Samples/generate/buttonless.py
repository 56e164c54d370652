"""Scenario: Nordic buttonless DFU across a reconnect.

Connection 1, the application: service 0xFE59 with the Buttonless DFU characteristic 8EC90003
(write + indicate). The phone subscribes to indications and writes 01 (Enter bootloader); the
device indicates 20 01 01 (success) and disconnects (Remote User Terminated Connection), then
resets into its bootloader, which advertises at the application's address + 1.
Connection 2, the bootloader: the phone connects to address + 1 and runs Secure DFU (the bootloader
model of dfu.py) of a 20,000-byte image.
"""

from __future__ import annotations

import asyncio
import struct

from bumble import hci
from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import dfu
import otakit
import sim

SERVICE = dfu.SERVICE
BUTTONLESS = "8EC90003-F315-4F60-9FB8-838830DAEA50"
DEVICE_ADDRESS = "C4:7D:2A:10:5E:80"  # the application
BOOTLOADER_ADDRESS = "C4:7D:2A:10:5E:81"  # the bootloader: the application's address + 1
IMAGE_SIZE = 20_000
IMAGE_SEED = 0xB7_7041
MTU = 247
PRN = 10


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    init = dfu.init_packet(image)
    rig = sim.Rig(loop, out, "Thermo-App", DEVICE_ADDRESS, interval_ms=15.0)
    rig.device.gatt_server.max_mtu = MTU
    indications: list[str] = []

    def on_buttonless(connection, value):
        v = bytes(value)
        assert v == b"\x01", v.hex()
        loop.create_task(enter_bootloader())

    buttonless = Characteristic(BUTTONLESS, Characteristic.Properties.WRITE | Characteristic.Properties.INDICATE,
                                Characteristic.WRITEABLE | Characteristic.READABLE, CharacteristicValue(write=on_buttonless))
    rig.device.add_service(Service(SERVICE, [buttonless]))
    app_gone = loop.create_future()

    async def enter_bootloader():
        indications.append("200101")
        await rig.device.indicate_subscribers(buttonless, b"\x20\x01\x01")
        await asyncio.sleep(0.05)
        await rig.device_conn.disconnect(reason=hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR)
        app_gone.set_result(True)

    conn1 = await rig.connect()
    assert await Peer(conn1).request_mtu(MTU) == MTU
    peer1 = await sim.discover_all(conn1)
    bproxy = sim.find_char(peer1, BUTTONLESS)
    got: asyncio.Queue = asyncio.Queue()
    await peer1.subscribe(bproxy, lambda v: got.put_nowait(bytes(v)), prefer_notify=False)
    await asyncio.sleep(0.2)
    await bproxy.write_value(b"\x01", with_response=True)
    assert await got.get() == b"\x20\x01\x01"
    await app_gone
    await asyncio.sleep(0.3)

    # The device resets into its bootloader: a new controller and host at address + 1.
    boot = otakit.new_device(rig, "boot-ctl", BOOTLOADER_ADDRESS, "DfuTarg", MTU)
    target: dfu.DfuTarget | None = None
    cp = Characteristic(dfu.CONTROL_POINT, Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY,
                        Characteristic.WRITEABLE, CharacteristicValue(write=lambda c, v: target.on_control(c, v)))
    pkt = Characteristic(dfu.PACKET, Characteristic.Properties.WRITE_WITHOUT_RESPONSE, Characteristic.WRITEABLE,
                         CharacteristicValue(write=lambda c, v: target.on_packet(c, v)))
    boot.add_service(Service(SERVICE, [cp, pkt]))
    target = dfu.DfuTarget(boot, cp)
    conn2 = await otakit.reconnect(loop, rig, boot)  # the bootloader starts; the app scans for address + 1
    pump = loop.create_task(target.pump())
    assert await Peer(conn2).request_mtu(MTU) == MTU
    await conn2.set_data_length(251, 2120)
    peer2 = await sim.discover_all(conn2)
    cp_proxy = sim.find_char(peer2, dfu.CONTROL_POINT)
    pkt_proxy = sim.find_char(peer2, dfu.PACKET)
    responses: asyncio.Queue = asyncio.Queue()
    await peer2.subscribe(cp_proxy, lambda v: responses.put_nowait(bytes(v)))
    await asyncio.sleep(0.1)

    async def control(req: bytes) -> bytes:
        await cp_proxy.write_value(req, with_response=True)
        rsp = await responses.get()
        assert rsp[:3] == bytes([0x60, req[0], 0x01]), (req.hex(), rsp.hex())
        return rsp

    chunk = MTU - 3
    packets = 0
    receipts = 0

    async def write_object(data: bytes, use_prn: bool):
        nonlocal packets, receipts
        for n, i in enumerate(range(0, len(data), chunk), start=1):
            await pkt_proxy.write_value(data[i:i + chunk], with_response=False)
            packets += 1
            if use_prn and n % PRN == 0:
                r = await responses.get()
                assert r[:3] == b"\x60\x03\x01", r.hex()
                receipts += 1
            elif n % 4 == 0:
                await asyncio.sleep(0.015)

    await control(bytes([0x06, 1]))
    await control(bytes([0x01, 1]) + struct.pack("<I", len(init)))
    await control(bytes([0x02]) + struct.pack("<H", 0))
    await write_object(init, use_prn=False)
    await control(b"\x03")
    await control(b"\x04")
    await control(bytes([0x02]) + struct.pack("<H", PRN))
    await control(bytes([0x06, 2]))
    objects = 0
    for start in range(0, len(image), dfu.DATA_MAX):
        data = image[start:start + dfu.DATA_MAX]
        await control(bytes([0x01, 2]) + struct.pack("<I", len(data)))
        await write_object(data, use_prn=True)
        rsp = await control(b"\x03")
        assert struct.unpack("<II", rsp[3:11]) == (start + len(data), common.crc32(image[:start + len(data)]))
        await control(b"\x04")
        objects += 1
    assert bytes(target.data[2]) == image
    await asyncio.sleep(0.05)
    target.queue.put_nowait(None)
    await pump
    # The bootloader activates the image and resets: it ends the link.
    await asyncio.sleep(0.1)
    boot_conn = next(iter(boot.connections.values()))
    await boot_conn.disconnect(reason=hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR)
    await asyncio.sleep(0.1)
    return {
        "description": "Nordic buttonless DFU: the app enters the bootloader over 8EC90003, the device reconnects "
                       "at address + 1 and runs Secure DFU of a 20,000-byte image",
        "service_uuid": SERVICE, "buttonless_uuid": BUTTONLESS,
        "bootloader_address": BOOTLOADER_ADDRESS,
        "app_connection_handle": conn1.handle, "bootloader_connection_handle": conn2.handle,
        "buttonless_value_handle": bproxy.handle, "control_point_value_handle": cp_proxy.handle,
        "packet_value_handle": pkt_proxy.handle,
        "att_mtu": MTU,
        "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
                  "generator": f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits"},
        "init_packet_size": len(init),
        "packet_payload_size": chunk,
        "packet_count_total": packets,
        "prn": PRN,
        "prn_receipt_count": receipts,
        "data_object_count": objects,
        "buttonless_indications": indications,
        "connection_end_reasons": ["Remote User Terminated Connection", "Remote User Terminated Connection"],
        "result": "success",
    }


def locate(truth, att, loc):
    """Frames of the Enter bootloader write and its indication, the first and last data packet, and the rate."""
    b, pk = truth["buttonless_value_handle"], truth["packet_value_handle"]
    truth["enter_bootloader_frame"] = loc.find(True, 0x12, b, b"\x01")
    truth["enter_bootloader_response_frame"] = loc.find(False, 0x1D, b, b"\x20\x01\x01")
    writes = [p for p in att if p.sent and p.opcode == 0x52 and p.handle == pk]
    assert len(writes) == truth["packet_count_total"]
    # Image packets: after the init packet's packets.
    n_init = -(-truth["init_packet_size"] // truth["packet_payload_size"])
    data = writes[n_init:]
    truth["first_data_frame"], truth["last_data_frame"] = data[0].frame, data[-1].frame
    truth["throughput_bps"] = truth["image"]["size"] * 8 * 1_000_000 / (data[-1].ts_us - data[0].ts_us)


def locate_capture(truth, data: bytes):
    """Connection starts and ends straight from the btsnoop records (HCI events), for the update story."""
    conns = otakit.connections_from_btsnoop(data)
    assert [c["address"] for c in conns] == [DEVICE_ADDRESS, BOOTLOADER_ADDRESS], conns
    truth["connections"] = [{k: v for k, v in c.items() if not k.endswith("_us")} for c in conns]
    truth["reconnect_gap_us"] = conns[1]["start_us"] - conns[0]["end_us"]
