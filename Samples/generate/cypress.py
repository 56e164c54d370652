"""Scenario: Cypress/Infineon PSoC bootloader over the Bootloader Service: an 8,192-byte image in
64 flash rows of 128 bytes.

Facts: the Cypress Bootloader component v1.30 (Bootloader_PVT.h: packet 01 cmd size data checksum 17,
commands, status codes), the Cypress bootloader host library (cybtldr_command.c: the summation checksum,
Program Row = array, row u16 LE, data), CySmart (Constants.h: service 00060000-F8CE-11E4-ABF4-0002A5D5C51B,
characteristic 00060001-…, write + notify).

  phone  -> 38 Enter bootloader               device -> 00 + silicon id u32, revision, bootloader version (3)
  phone  -> 32 Get flash size (array 0)       device -> 00 + first row u16, last row u16
  phone  -> per row: 37 Send data (first 64 bytes)      device -> 00
            39 Program row (array 0, row u16, last 64)  device -> 00
  phone  -> 31 Verify checksum                device -> 00 + 01 (application valid)
  phone  -> 3B Exit bootloader (no answer)    the device resets into the application
"""

from __future__ import annotations

import asyncio
import struct

from bumble.gatt import Characteristic

import common
import otakit
import sim

SERVICE = "00060000-F8CE-11E4-ABF4-0002A5D5C51B"
BOOTLOADER = "00060001-F8CE-11E4-ABF4-0002A5D5C51B"
DEVICE_ADDRESS = "00:A0:50:3C:81:4E"
ROW = 128
ROWS = 64
FIRST_ROW = 0x40  # rows below hold the bootloader
IMAGE_SEED = 0xC7_B007
SILICON_ID = 0x0E2A1069


def packet(code: int, data: bytes) -> bytes:
    """SOP, command or status, size u16 LE, data, 2's complement of the 16-bit sum, EOP."""
    body = bytes([0x01, code]) + struct.pack("<H", len(data)) + data
    return body + struct.pack("<H", (-sum(body)) & 0xFFFF) + b"\x17"


def unpack(v: bytes) -> tuple[int, bytes]:
    size = struct.unpack("<H", v[2:4])[0]
    assert v[0] == 0x01 and v[-1] == 0x17 and len(v) == 7 + size
    assert struct.unpack("<H", v[4 + size:6 + size])[0] == (-sum(v[:4 + size])) & 0xFFFF
    return v[1], v[4:4 + size]


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, ROW * ROWS)
    flash: dict[int, bytes] = {}
    state = {"pending": b"", "entered": False}

    def on_write(connection, value):
        cmd, data = unpack(bytes(value))
        if cmd == 0x38:
            state["entered"] = True
            reply = struct.pack("<IB", SILICON_ID, 0) + bytes([0x1E, 0x01, 0x01])
        elif cmd == 0x32:
            reply = struct.pack("<HH", FIRST_ROW, FIRST_ROW + ROWS - 1)
        elif cmd == 0x37:
            state["pending"] += data
            reply = b""
        elif cmd == 0x39:
            row = struct.unpack("<H", data[1:3])[0]
            flash[row] = state["pending"] + data[3:]
            state["pending"] = b""
            reply = b""
        elif cmd == 0x31:
            reply = bytes([1 if b"".join(flash[r] for r in sorted(flash)) == image else 0])
        elif cmd == 0x3B:
            loop.call_later(0.05, exited.set_result, True)
            return
        else:
            raise AssertionError(hex(cmd))
        pump.send(bl_char, packet(0x00, reply))

    p = Characteristic.Properties
    bl_char = otakit.char(BOOTLOADER, p.WRITE | p.NOTIFY, on_write)
    rig, conn, peer = await otakit.start(loop, out, "PSoC4-BLE-Boot", DEVICE_ADDRESS, SERVICE, [bl_char])
    pump = otakit.Pump(loop, rig.device)
    exited = loop.create_future()
    proxy = sim.find_char(peer, BOOTLOADER)
    got = await otakit.subscribe_all(peer, [proxy])

    async def command(code: int, data: bytes = b"") -> bytes:
        await proxy.write_value(packet(code, data), with_response=True)
        handle, reply = await got.get()
        status, rdata = unpack(reply)
        assert status == 0, hex(status)
        return rdata

    await command(0x38)
    first, last = struct.unpack("<HH", await command(0x32, b"\x00"))
    writes = 0
    for i, row in enumerate(range(first, last + 1)):
        data = image[i * ROW:(i + 1) * ROW]
        await command(0x37, data[:ROW // 2])
        await command(0x39, b"\x00" + struct.pack("<H", row) + data[ROW // 2:])
        writes += 2
    assert await command(0x31) == b"\x01"
    await proxy.write_value(packet(0x3B, b"\x00"), with_response=True)
    await exited
    await pump.close()
    await rig.device_conn.disconnect()  # the device resets into the application
    await asyncio.sleep(0.1)
    return {
        "description": "Cypress/Infineon PSoC bootloader: enter, flash size, 64 rows of 128 bytes as Send data + Program "
                       "row write requests each answered, verify checksum valid, exit",
        "service_uuid": SERVICE, "characteristic_uuid": BOOTLOADER, "connection_handle": conn.handle,
        "value_handle": proxy.handle, "att_mtu": otakit.MTU,
        "image": otakit.image_record(image, f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits"),
        "row_size": ROW, "rows": ROWS, "first_row": first, "last_row": last, "packets": writes,
        "checksum": "sum", "resent_rows": [], "result": "success",
    }


def locate(truth, att, loc):
    h = truth["value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x12 and p.handle == h and p.value[1] in (0x37, 0x39)]
    assert len(writes) == truth["packets"]
    truth["first_data_frame"], truth["last_data_frame"] = writes[0].frame, writes[-1].frame
    truth["throughput_bps"] = otakit.rate_bps(truth["image"]["size"], writes)
    truth["enter_frame"] = next(p.frame for p in att if p.sent and p.opcode == 0x12 and p.handle == h and p.value[1] == 0x38)
    truth["verify_response_frame"] = loc.find(False, 0x1B, h, packet(0x00, b"\x01"))
    truth["exit_frame"] = loc.find(True, 0x12, h, packet(0x3B, b"\x00"))
