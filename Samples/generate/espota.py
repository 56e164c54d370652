"""Scenario: Espressif BLE OTA (esp-iot-solution `ble_ota`, service 0x8018) of a 30,000-byte image.

Facts: espressif/esp-iot-solution examples/bluetooth/ble_ota/README.md and
components/bluetooth/ble_profiles/esp/ble_ota/src/ble_ota.c; EspressifApps/esp-ble-ota-android
BleOTAClient.kt (the client's packet building) and EspCRC16.java (CRC-16/XMODEM).

  phone  -> subscribes (indications) to RECV_FW 8020, PROGRESS_BAR 8021, COMMAND 8022, CUSTOMER 8023
  phone  -> COMMAND  01 00 len(u32 LE) zeros crc16          device -> COMMAND 03 00 01 00 00 00 ... crc16
  phone  -> RECV_FW  sector(u16 LE) seq data, write requests; a sector is 4096 image bytes in packets of
                     237 bytes (packet size 240 - 3); the last packet has seq FF and ends with the CRC-16 of
                     the sector's data (LE)
  device -> RECV_FW  sector(u16) status(u16) next-sector(u16) zeros crc16 after each sector
  phone  -> COMMAND  02 00 zeros crc16                      device -> COMMAND 03 00 02 00 00 00 ... crc16
The first sending of sector BAD_SECTOR has one byte flipped in the phone's buffer after the CRC was
computed: the device answers CRC error (0001) and the phone sends the sector again. After the Stop
ACK the device reboots into the new image (it ends the link).
"""

from __future__ import annotations

import asyncio
import struct

from bumble.gatt import Characteristic

import common
import otakit
import sim

SERVICE = "00008018-0000-1000-8000-00805F9B34FB"
RECV_FW = "00008020-0000-1000-8000-00805F9B34FB"
PROGRESS_BAR = "00008021-0000-1000-8000-00805F9B34FB"
COMMAND = "00008022-0000-1000-8000-00805F9B34FB"
CUSTOMER = "00008023-0000-1000-8000-00805F9B34FB"
DEVICE_ADDRESS = "7C:DF:A1:0E:35:D2"
IMAGE_SIZE = 30_000
IMAGE_SEED = 0xE5_B1E0
SECTOR = 4096
PACKET_SIZE = 240  # the client's packet size; image bytes per packet = PACKET_SIZE - 3
BAD_SECTOR = 3


def crc16(data: bytes) -> int:
    """CRC-16/XMODEM (poly 0x1021, init 0), the component's crc16_ccitt."""
    c = 0
    for b in data:
        c ^= b << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else c << 1
            c &= 0xFFFF
    return c


def control(words: tuple[int, ...]) -> bytes:
    """A 20-byte command or ACK: u16 LE words, zeros, CRC-16 of bytes 0-17 at 18-19."""
    body = b"".join(struct.pack("<H", w) for w in words).ljust(18, b"\x00")
    return body + struct.pack("<H", crc16(body))


def sector_packets(index: int, sector: bytes) -> list[bytes]:
    """The client's packets for one sector: seq 0, 1, ... and FF on the last, which carries the CRC."""
    step = PACKET_SIZE - 3
    chunks = [sector[i:i + step] for i in range(0, len(sector), step)]
    out = [struct.pack("<HB", index, seq) + c for seq, c in enumerate(chunks[:-1])]
    out.append(struct.pack("<HB", index, 0xFF) + chunks[-1] + struct.pack("<H", crc16(sector)))
    return out


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    sectors = [image[i:i + SECTOR] for i in range(0, len(image), SECTOR)]
    state = {"started": False, "sector": 0, "buf": bytearray(), "image": bytearray(), "length": None}

    def on_command(connection, value):
        v = bytes(value)
        assert len(v) == 20 and crc16(v[:18]) == struct.unpack("<H", v[18:])[0]
        cmd = struct.unpack("<H", v[:2])[0]
        if cmd == 1:
            state["started"] = True
            state["length"] = struct.unpack("<I", v[2:6])[0]
        pump.send(cmd_char, control((3, cmd, 0)))

    def on_firmware(connection, value):
        v = bytes(value)
        index, seq = struct.unpack("<HB", v[:3])
        assert state["started"] and index == state["sector"]
        if seq != 0xFF:
            state["buf"] += v[3:]
            return
        data, crc = bytes(state["buf"] + v[3:-2]), struct.unpack("<H", v[-2:])[0]
        state["buf"] = bytearray()
        if crc16(data) != crc:
            pump.send(fw_char, control((index, 1, index)))  # CRC error: the same sector again
            return
        state["image"] += data
        state["sector"] += 1
        pump.send(fw_char, control((index, 0, state["sector"])))

    p = Characteristic.Properties
    fw_char = otakit.char(RECV_FW, p.WRITE | p.INDICATE, on_firmware)
    bar_char = otakit.char(PROGRESS_BAR, p.READ | p.INDICATE)
    cmd_char = otakit.char(COMMAND, p.WRITE | p.INDICATE, on_command)
    cus_char = otakit.char(CUSTOMER, p.WRITE | p.INDICATE, lambda c, v: None)
    rig, conn, peer = await otakit.start(loop, out, "ESP-C919", DEVICE_ADDRESS, SERVICE,
                                         [fw_char, bar_char, cmd_char, cus_char])
    pump = otakit.Pump(loop, rig.device, indicate=True)
    fw, bar, cmd, cus = (sim.find_char(peer, u) for u in (RECV_FW, PROGRESS_BAR, COMMAND, CUSTOMER))
    got = await otakit.subscribe_all(peer, [fw, bar, cmd, cus])

    await cmd.write_value(control((1, IMAGE_SIZE & 0xFFFF, IMAGE_SIZE >> 16)), with_response=True)
    assert await got.get() == (cmd.handle, control((3, 1, 0)))
    packets = 0
    requests: list[int] = []
    index = 0
    damaged = False
    while index < len(sectors):
        pkts = sector_packets(index, sectors[index])
        if index == BAD_SECTOR and not damaged:
            damaged = True
            pkts[5] = pkts[5][:40] + bytes([pkts[5][40] ^ 0x10]) + pkts[5][41:]
        for pkt in pkts:
            await fw.write_value(pkt, with_response=True)
            packets += 1
        handle, ack = await got.get()
        assert handle == fw.handle
        sector, status = struct.unpack("<HH", ack[:4])
        assert sector == index
        if status != 0:
            requests.append(sector)
            continue
        index += 1
    await cmd.write_value(control((2,)), with_response=True)
    assert await got.get() == (cmd.handle, control((3, 2, 0)))
    await pump.close()
    assert bytes(state["image"]) == image and state["length"] == IMAGE_SIZE
    await rig.device_conn.disconnect()  # the device reboots into the new image
    await asyncio.sleep(0.1)
    return {
        "description": "Espressif BLE OTA: Start OTA, 30,000 bytes in 4096-byte sectors of 237-byte write requests, "
                       f"sector {BAD_SECTOR} answered CRC error (one byte flipped) and sent again, Stop OTA accepted, reboot",
        "service_uuid": SERVICE, "connection_handle": conn.handle,
        "recv_fw_value_handle": fw.handle, "command_value_handle": cmd.handle, "att_mtu": otakit.MTU,
        "image": otakit.image_record(image, f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits"),
        "sector_size": SECTOR, "packet_size": PACKET_SIZE, "sectors": len(sectors), "packets": packets,
        "resend_requests": requests, "resent_sectors": requests, "device_values": pump.sent, "result": "success",
    }


def locate(truth, att, loc):
    fw, cmd = truth["recv_fw_value_handle"], truth["command_value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x12 and p.handle == fw]
    assert len(writes) == truth["packets"]
    truth["first_data_frame"], truth["last_data_frame"] = writes[0].frame, writes[-1].frame
    truth["throughput_bps"] = otakit.rate_bps(truth["image"]["size"], writes)
    n = truth["resend_requests"][0]
    truth["resend_request_frame"] = loc.find(False, 0x1D, fw, control((n, 1, n)))
    firsts = [p.frame for p in writes if p.value[:3] == struct.pack("<HB", n, 0)]
    truth["resent_frame"] = firsts[1]
    truth["stop_ack_frame"] = loc.find(False, 0x1D, cmd, control((3, 2, 0)))
