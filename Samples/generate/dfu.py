"""Scenario 3: Nordic Secure DFU (nRF5 SDK bootloader, BLE transport) of a 100,000-byte image.

The peripheral implements the DFU target side of the control point:
  01 create [type u8][size u32 LE]       -> 60 01 01
  02 set PRN [u16 LE]                    -> 60 02 01
  03 calculate checksum                  -> 60 03 01 [offset u32 LE][crc32 u32 LE]
  04 execute                             -> 60 04 01
  06 select [type u8]                    -> 60 06 01 [max size u32 LE][offset u32 LE][crc32 u32 LE]
Offset and CRC-32 are those of all data received for the object type (for data
objects: the whole image so far, across objects; the bootloader's
firmware_image_offset / firmware_image_crc). With PRN = n the target notifies
a checksum response (60 03 01 offset crc) after every n-th packet written to
the packet characteristic; the packet counter restarts at each Create.
"""

from __future__ import annotations

import asyncio
import struct

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import sim

SERVICE = "0000FE59-0000-1000-8000-00805F9B34FB"
CONTROL_POINT = "8EC90001-F315-4F60-9FB8-838830DAEA50"
PACKET = "8EC90002-F315-4F60-9FB8-838830DAEA50"
DEVICE_ADDRESS = "E8:1F:6B:4C:D0:5A"

IMAGE_SIZE = 100_000
IMAGE_SEED = 0x0DF0_1234
COMMAND_MAX = 512
DATA_MAX = 4096
PRN = 10
MTU = 247

OBJ_COMMAND, OBJ_DATA = 1, 2
SUCCESS = 0x01


def pb_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_field(num: int, wire: int, payload) -> bytes:
    key = pb_varint((num << 3) | wire)
    if wire == 0:
        return key + pb_varint(payload)
    return key + pb_varint(len(payload)) + payload


def init_packet(image: bytes) -> bytes:
    """A signed init command laid out like nrfutil's dfu-cc protobuf.

    Packet{signed_command{command{op_code=INIT, init{fw_version, hw_version,
    sd_req, type=APPLICATION, sd_size, bl_size, app_size, hash{SHA256, digest},
    is_debug}}, signature_type=ECDSA_P256_SHA256, signature}}. The digest is the
    image's SHA-256 (byte-reversed, as nrfutil stores it); the signature is 64
    deterministic pseudo-random bytes (the simulated bootloader does not check it).
    """
    digest = bytes.fromhex(common.sha256(image))[::-1]
    init = (
        pb_field(1, 0, 7)  # fw_version
        + pb_field(2, 0, 52)  # hw_version (nRF52)
        + pb_field(3, 2, pb_varint(0x0100))  # sd_req (packed)
        + pb_field(4, 0, 1)  # type = APPLICATION
        + pb_field(5, 0, 0)  # sd_size
        + pb_field(6, 0, 0)  # bl_size
        + pb_field(7, 0, len(image))  # app_size
        + pb_field(8, 2, pb_field(1, 0, 3) + pb_field(2, 2, digest))  # hash: SHA256
        + pb_field(9, 0, 0)  # is_debug = false
    )
    command = pb_field(1, 0, 1) + pb_field(2, 2, init)  # op_code INIT
    signature = common.xorshift_bytes(0x516E_A7E5, 64)
    signed = pb_field(1, 2, command) + pb_field(2, 0, 0) + pb_field(3, 2, signature)
    return pb_field(2, 2, signed)


class DfuTarget:
    """The bootloader's side of Secure DFU (only what a normal update uses)."""

    def __init__(self, device, cp_char):
        self.device = device
        self.cp = cp_char
        self.prn = 0
        self.pkt_count = 0
        self.selected = OBJ_COMMAND
        # per object type: received bytes (cumulative), current object end
        self.data = {OBJ_COMMAND: bytearray(), OBJ_DATA: bytearray()}
        self.obj_end = {OBJ_COMMAND: 0, OBJ_DATA: 0}
        self.executed = {OBJ_COMMAND: 0, OBJ_DATA: 0}
        self.queue: asyncio.Queue = asyncio.Queue()  # notifications to send, in order
        self.log: list[dict] = []

    def _notify(self, value: bytes):
        self.queue.put_nowait(value)

    def on_control(self, connection, value: bytes):
        value = bytes(value)
        op = value[0]
        if op == 0x06:  # select
            t = value[1]
            self.selected = t
            d = self.data[t]
            mx = COMMAND_MAX if t == OBJ_COMMAND else DATA_MAX
            self._notify(bytes([0x60, op, SUCCESS]) + struct.pack("<III", mx, len(d), common.crc32(bytes(d))))
        elif op == 0x01:  # create
            t, size = value[1], struct.unpack("<I", value[2:6])[0]
            self.selected = t
            if t == OBJ_COMMAND:
                self.data[t] = bytearray()
            else:
                # drop a partly received, never executed data object
                del self.data[t][self.executed[t] :]
            self.obj_end[t] = len(self.data[t]) + size
            self.pkt_count = 0
            self._notify(bytes([0x60, op, SUCCESS]))
        elif op == 0x02:  # set PRN
            self.prn = struct.unpack("<H", value[1:3])[0]
            self._notify(bytes([0x60, op, SUCCESS]))
        elif op == 0x03:  # calculate checksum
            d = self.data[self.selected]
            self._notify(bytes([0x60, op, SUCCESS]) + struct.pack("<II", len(d), common.crc32(bytes(d))))
        elif op == 0x04:  # execute
            t = self.selected
            assert len(self.data[t]) == self.obj_end[t], "execute of an incomplete object"
            self.executed[t] = len(self.data[t])
            self._notify(bytes([0x60, op, SUCCESS]))
        else:
            self._notify(bytes([0x60, op, 0x02]))  # op code not supported

    def on_packet(self, connection, value: bytes):
        t = self.selected
        self.data[t].extend(value)
        self.pkt_count += 1
        if self.prn and self.pkt_count % self.prn == 0:
            d = self.data[t]
            self._notify(bytes([0x60, 0x03, SUCCESS]) + struct.pack("<II", len(d), common.crc32(bytes(d))))

    async def pump(self):
        while True:
            v = await self.queue.get()
            if v is None:
                return
            await self.device.notify_subscribers(self.cp, v)


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    init = init_packet(image)

    rig = sim.Rig(loop, out, "DfuTarg", DEVICE_ADDRESS, interval_ms=15.0, per_event=4)
    rig.device.gatt_server.max_mtu = MTU
    target: DfuTarget | None = None
    cp = Characteristic(
        CONTROL_POINT,
        Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY,
        Characteristic.WRITEABLE,
        CharacteristicValue(write=lambda c, v: target.on_control(c, v)),
    )
    pkt = Characteristic(
        PACKET,
        Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
        Characteristic.WRITEABLE,
        CharacteristicValue(write=lambda c, v: target.on_packet(c, v)),
    )
    rig.device.add_service(Service(SERVICE, [cp, pkt]))
    target = DfuTarget(rig.device, cp)

    conn = await rig.connect()
    pump = asyncio.get_running_loop().create_task(target.pump())
    mtu = await Peer(conn).request_mtu(MTU)
    assert mtu == MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    cp_proxy = sim.find_char(peer, CONTROL_POINT)
    pkt_proxy = sim.find_char(peer, PACKET)
    responses: asyncio.Queue = asyncio.Queue()
    all_responses: list[bytes] = []

    def on_ntf(v):
        all_responses.append(bytes(v))
        responses.put_nowait(bytes(v))

    await peer.subscribe(cp_proxy, on_ntf)
    await asyncio.sleep(0.1)

    steps: list[dict] = []  # control point requests and their responses

    async def control(req: bytes, what: str) -> bytes:
        await cp_proxy.write_value(req, with_response=True)
        rsp = await responses.get()
        assert rsp[0] == 0x60 and rsp[1] == req[0] and rsp[2] == SUCCESS, (req.hex(), rsp.hex())
        steps.append({"request": what, "request_hex": req.hex(), "response_hex": rsp.hex()})
        return rsp

    chunk = MTU - 3
    packets_sent = 0
    prn_receipts: list[dict] = []

    async def write_object(data: bytes, base_offset: int, crc_so_far: bytes, use_prn: bool):
        nonlocal packets_sent
        n = 0
        for i in range(0, len(data), chunk):
            await pkt_proxy.write_value(data[i : i + chunk], with_response=False)
            packets_sent += 1
            n += 1
            if use_prn and n % PRN == 0:
                r = await responses.get()
                off, crc = struct.unpack("<II", r[3:11])
                exp = base_offset + min(i + chunk, len(data))
                assert r[:3] == b"\x60\x03\x01" and off == exp and crc == common.crc32(crc_so_far + data[: i + chunk]), r.hex()
                prn_receipts.append({"hex": r.hex(), "offset": off, "crc32": f"{crc:08x}"})
            elif n % 4 == 0:
                await asyncio.sleep(0.015)  # the app waits for "ready to send" once per connection event
        return n

    # Init packet (command object).
    await control(bytes([0x06, OBJ_COMMAND]), "select command object")
    await control(bytes([0x01, OBJ_COMMAND]) + struct.pack("<I", len(init)), "create command object")
    await control(bytes([0x02]) + struct.pack("<H", 0), "set PRN 0 (init packet)")
    await write_object(init, 0, b"", use_prn=False)
    rsp = await control(bytes([0x03]), "calculate checksum (init packet)")
    assert struct.unpack("<II", rsp[3:11]) == (len(init), common.crc32(init))
    await control(bytes([0x04]), "execute command object")

    # Firmware (data objects).
    await control(bytes([0x02]) + struct.pack("<H", PRN), f"set PRN {PRN}")
    rsp = await control(bytes([0x06, OBJ_DATA]), "select data object")
    assert struct.unpack("<I", rsp[3:7])[0] == DATA_MAX
    objects = []
    for obj_index, start in enumerate(range(0, len(image), DATA_MAX)):
        data = image[start : start + DATA_MAX]
        await control(bytes([0x01, OBJ_DATA]) + struct.pack("<I", len(data)), f"create data object {obj_index}")
        n = await write_object(data, start, image[:start], use_prn=True)
        rsp = await control(bytes([0x03]), f"calculate checksum (object {obj_index})")
        off, crc = struct.unpack("<II", rsp[3:11])
        assert off == start + len(data) and crc == common.crc32(image[: start + len(data)])
        await control(bytes([0x04]), f"execute data object {obj_index}")
        objects.append({"index": obj_index, "offset": start, "size": len(data), "packets": n,
                        "crc32_after": f"{crc:08x}"})
    assert bytes(target.data[OBJ_DATA]) == image
    await asyncio.sleep(0.05)
    target.queue.put_nowait(None)
    await pump
    await rig.disconnect()

    return {
        "description": "Nordic Secure DFU (BLE) of a 100,000-byte application image: init packet, then 4096-byte data objects with PRN",
        "service_uuid": SERVICE,
        "control_point_uuid": CONTROL_POINT,
        "packet_uuid": PACKET,
        "connection_handle": conn.handle,
        "control_point_value_handle": cp_proxy.handle,
        "control_point_cccd_handle": sim.cccd_handle(cp_proxy),
        "packet_value_handle": pkt_proxy.handle,
        "att_mtu": MTU,
        "data_length_octets": 251,
        "packet_payload_size": chunk,
        "image": {
            "size": len(image),
            "sha256": common.sha256(image),
            "crc32": f"{common.crc32(image):08x}",
            "generator": f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits",
            "first_32_bytes_hex": image[:32].hex(),
        },
        "init_packet_hex": init.hex(),
        "init_packet_size": len(init),
        "init_packet_crc32": f"{common.crc32(init):08x}",
        "command_object_max_size": COMMAND_MAX,
        "data_object_max_size": DATA_MAX,
        "prn": PRN,
        "prn_counter": "restarts at each Create",
        "data_object_count": len(objects),
        "data_packet_count": sum(o["packets"] for o in objects),
        "init_packet_packet_count": -(-len(init) // chunk),
        "packet_count_total": packets_sent,
        "prn_receipt_count": len(prn_receipts),
        "objects": objects,
        "control_steps": steps,
        "prn_receipts": prn_receipts,
        "control_point_notification_count": len(all_responses),
    }


def locate(truth, att, loc):
    cp = truth["control_point_value_handle"]
    for s in truth["control_steps"]:
        s["request_frame"] = loc.find(True, 0x12, cp, bytes.fromhex(s["request_hex"]))
        s["response_frame"] = loc.find(False, 0x1B, cp, bytes.fromhex(s["response_hex"]))
    loc2 = type(loc)(att)
    for r in truth["prn_receipts"]:
        r["frame"] = loc2.find(False, 0x1B, cp, bytes.fromhex(r["hex"]))
