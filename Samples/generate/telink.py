"""Scenario: Telink BLE SDK OTA (legacy protocol) of a 9,600-byte image.

Facts: telink-semi/telink_b85m_ble_single_connection_sdk b85_ble_sdk/stack/ble/service/ota/ota.h
(commands, ota_end_t, ota_result_t, ota_pdu16_t) and uuid.h (TELINK_OTA_UUID_SERVICE,
TELINK_SPP_DATA_OTA); Telink's Android OtaPacketParser.java (CRC-16 poly 0xA001 reflected, init
0xFFFF over index + data; 0xFF padding of the last packet).

Service 00010203-0405-0607-0809-0A0B0C0D1912, one characteristic …2B12 (read, write without
response, notify):
  phone  -> 00 FF (CMD_OTA_VERSION), 01 FF (CMD_OTA_START)
  phone  -> index(u16 LE) + 16 image bytes + CRC-16(u16 LE), write commands, index 0 … 599
  phone  -> 02 FF last-index(u16 LE) ~last-index(u16 LE) (CMD_OTA_END)
  device -> 06 FF 00 (CMD_OTA_RESULT, OTA_SUCCESS) once it has checked every packet, then reboots
"""

from __future__ import annotations

import asyncio
import struct

from bumble.gatt import Characteristic

import common
import otakit
import sim

SERVICE = "00010203-0405-0607-0809-0A0B0C0D1912"
OTA = "00010203-0405-0607-0809-0A0B0C0D2B12"
DEVICE_ADDRESS = "A4:C1:38:5B:2E:17"
IMAGE_SIZE = 9_600
IMAGE_SEED = 0x7E_1111
PDU = 16


def crc16(data: bytes) -> int:
    """CRC-16/MODBUS: poly 0xA001 reflected, init 0xFFFF (Telink's crc16)."""
    c = 0xFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
    return c


def packet(index: int, data: bytes) -> bytes:
    body = struct.pack("<H", index) + data.ljust(PDU, b"\xff")
    return body + struct.pack("<H", crc16(body))


async def run(loop, out):
    image = common.xorshift_bytes(IMAGE_SEED, IMAGE_SIZE)
    total = -(-len(image) // PDU)
    state = {"started": False, "packets": {}, "bad": 0}

    def on_write(connection, value):
        v = bytes(value)
        first = struct.unpack("<H", v[:2])[0]
        if first == 0xFF01:
            state["started"] = True
        elif first == 0xFF02:
            last, check = struct.unpack("<HH", v[2:6])
            ok = (check == (~last & 0xFFFF) and sorted(state["packets"]) == list(range(last + 1))
                  and b"".join(state["packets"][i] for i in range(last + 1))[:len(image)] == image)
            pump.send(ota_char, b"\x06\xff" + bytes([0 if ok else 5]))
        elif first < 0xFF00 and state["started"]:
            if crc16(v[:-2]) != struct.unpack("<H", v[-2:])[0]:
                state["bad"] += 1
            state["packets"][first] = v[2:-2]

    p = Characteristic.Properties
    ota_char = otakit.char(OTA, p.READ | p.WRITE_WITHOUT_RESPONSE | p.NOTIFY, on_write)
    rig, conn, peer = await otakit.start(loop, out, "TLSR8258-OTA", DEVICE_ADDRESS, SERVICE, [ota_char])
    pump = otakit.Pump(loop, rig.device)
    proxy = sim.find_char(peer, OTA)
    got = await otakit.subscribe_all(peer, [proxy])

    await proxy.write_value(struct.pack("<H", 0xFF00), with_response=False)
    await proxy.write_value(struct.pack("<H", 0xFF01), with_response=False)
    for i in range(total):
        await proxy.write_value(packet(i, image[i * PDU:(i + 1) * PDU]), with_response=False)
    last = total - 1
    await proxy.write_value(b"\x02\xff" + struct.pack("<HH", last, ~last & 0xFFFF), with_response=False)
    assert await got.get() == (proxy.handle, b"\x06\xff\x00")
    await pump.close()
    assert state["bad"] == 0
    await asyncio.sleep(0.1)
    await rig.device_conn.disconnect()  # the device reboots into the new image
    await asyncio.sleep(0.1)
    return {
        "description": "Telink OTA (legacy): CMD_OTA_VERSION, CMD_OTA_START, 600 packets of index + 16 bytes + CRC-16 "
                       "as write commands, CMD_OTA_END with the last index, CMD_OTA_RESULT OTA_SUCCESS, reboot",
        "service_uuid": SERVICE, "characteristic_uuid": OTA, "connection_handle": conn.handle,
        "value_handle": proxy.handle, "att_mtu": otakit.MTU,
        "image": otakit.image_record(image, f"xorshift32(13,17,5) seed 0x{IMAGE_SEED:08x}; one step per byte, low 8 bits"),
        "pdu_length": PDU, "packets": total, "last_index": last, "resent_indices": [], "result": "success",
        "device_values": pump.sent,
    }


def locate(truth, att, loc):
    h = truth["value_handle"]
    writes = [p for p in att if p.sent and p.opcode == 0x52 and p.handle == h and struct.unpack("<H", p.value[:2])[0] < 0xFF00]
    assert len(writes) == truth["packets"]
    truth["first_data_frame"], truth["last_data_frame"] = writes[0].frame, writes[-1].frame
    truth["throughput_bps"] = otakit.rate_bps(truth["image"]["size"], writes)
    truth["end_frame"] = loc.find(True, 0x52, h, b"\x02\xff" + struct.pack("<HH", truth["last_index"], ~truth["last_index"] & 0xFFFF))
    truth["result_frame"] = loc.find(False, 0x1B, h, b"\x06\xff\x00")
