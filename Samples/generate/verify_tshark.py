#!/usr/bin/env python3
"""Cross-checks the samples against tshark (independent of bumble and of common.read_btsnoop).

Usage: python3 Samples/generate/verify_tshark.py   (needs tshark on PATH)
"""

import collections
import functools
import hashlib
import json
import os
import struct
import subprocess
import sys
import zlib

import verify_diagnosis
import verify_diff

SAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def att_rows(name):
    out = subprocess.run(
        ["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-Y", "btatt", "-T", "fields",
         "-e", "frame.number", "-e", "btatt.opcode", "-e", "btatt.handle", "-e", "btatt.value"],
        capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        f = (line.split("\t") + ["", "", "", ""])[:4]
        rows.append((int(f[0]), int(f[1], 16), f[2], bytes.fromhex(f[3].replace(":", ""))))
    return rows


def frame_count(name):
    out = subprocess.run(["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True, check=True).stdout
    return len(out.split())


def eatt_bearers(name):
    """ATT PDUs per bearer as tshark splits the capture, for the EATT sample.

    tshark 4.0.17 does not decode ATT on enhanced ATT bearers: it shows the L2CAP Credit Based
    Connection Request/Response (0x17/0x18) as "Unknown command", so the channels get no PSM and their
    K-frames stay "Connection oriented channel" payload (and "Decode As" ATT on the CID reads the SDU
    length of a first K-frame as the opcode). Here tshark's L2CAP payloads of the dynamic CIDs are
    joined into SDUs (Core Spec Vol 3, Part A, 3.4.3: the first K-frame starts with the SDU length),
    keyed by (direction, CID): the phone's PDUs carry the device's CID and the other way round.
    """
    out = subprocess.run(
        ["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-Y", "btl2cap.cid >= 0x40 && !btl2cap.cmd_code",
         "-T", "fields", "-e", "btl2cap.cid", "-e", "hci_h4.direction", "-e", "btl2cap.payload"],
        capture_output=True, text=True, check=True).stdout
    sdus, ops = {}, collections.defaultdict(collections.Counter)
    for line in out.splitlines():
        cid, direction, payload = line.split("\t")
        key = (int(direction, 16), int(cid, 16))
        b = bytes.fromhex(payload)
        if key not in sdus:
            sdus[key] = (struct.unpack("<H", b[:2])[0], bytearray(b[2:]))
        else:
            sdus[key][1].extend(b)
        want, got = sdus[key]
        if len(got) >= want:
            del sdus[key]
            ops[key[1]][got[0]] += 1
    return ops


def coc_sdus(name):
    """SDUs of LE credit-based channels as tshark reads them: tshark 4.0 decodes the LE Credit Based Connection
    Request/Response (0x14/0x15), knows the channel's PSM, takes the SDU length off the first K-frame and, in two
    passes (-2), lists on an SDU's last K-frame the frames it was reassembled from (btl2cap.le_sdu.fragment).
    Returns (frame of the last K-frame, sent, psm, sdu) rows."""
    out = subprocess.run(
        ["tshark", "-2", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-Y", "btl2cap.cid >= 0x40 && !btl2cap.cmd_code && btl2cap.psm",
         "-T", "fields", "-e", "frame.number", "-e", "hci_h4.direction", "-e", "btl2cap.psm",
         "-e", "btl2cap.le_sdu.fragment", "-e", "btl2cap.payload"],
        capture_output=True, text=True, check=True).stdout
    table = [line.split("\t") for line in out.splitlines()]
    payload = {int(f[0]): bytes.fromhex(f[4]) for f in table}
    fragments = {int(x) for f in table if f[3] for x in f[3].split(",")}
    rows = []
    for frame, direction, psm, parts, data in table:
        if parts:
            rows.append((int(frame), direction == "0x00", int(psm, 16), b"".join(payload[int(x)] for x in parts.split(","))))
        elif int(frame) not in fragments:
            rows.append((int(frame), direction == "0x00", int(psm, 16), payload[int(frame)]))
    return rows


def main():
    ok = True
    truth = json.load(open(os.path.join(SAMPLES, "coc-stream.truth.json")))
    rows = coc_sdus("coc-stream")
    want = [(truth["request_frame"], True, truth["psm"], truth["request_hex"])] + [
        (f, False, truth["psm"], h) for f, h in zip(truth["record_frames"], truth["records_hex"])]
    same = [(f, s, p, b.hex()) for f, s, p, b in rows] == want
    print(f"coc-stream: tshark {len(rows)} SDUs on PSM 0x{truth['psm']:04x} (frames, direction, bytes) -> {'match' if same else 'MISMATCH'}")
    ok &= same
    truth = json.load(open(os.path.join(SAMPLES, "eatt.truth.json")))
    rows = att_rows("eatt")
    fixed = collections.Counter(op for _, op, _, _ in rows)
    per_cid = eatt_bearers("eatt")
    for b in truth["bearers"]:
        want = {int(k.split()[0], 16): v["sent"] + v["rcvd"] for k, v in b["att_pdus_by_opcode"].items()}
        got = dict(fixed) if b["kind"] == "le-fixed" else dict(per_cid[b["phone_cid"]])
        same = got == want
        print(f"eatt {b['name']}: tshark ATT opcodes {dict(sorted(got.items()))} -> {'match' if same else 'MISMATCH'}")
        ok &= same
    # Every other Sample: tshark's frames and ATT opcodes against the truth file (eatt and coc-stream are checked above:
    # tshark decodes no ATT on enhanced bearers, and the CoC stream carries no ATT).
    names = sorted(f[:-len(".truth.json")] for f in os.listdir(SAMPLES) if f.endswith(".truth.json"))
    for name in [n for n in names if n not in ("eatt", "coc-stream")]:
        truth = json.load(open(os.path.join(SAMPLES, name + ".truth.json")))
        rows = att_rows(name)
        ops = collections.Counter(op for _, op, _, _ in rows)
        mine = {int(k.split()[0], 16): v["sent"] + v["rcvd"] for k, v in truth["capture"]["att_pdus_by_opcode"].items()}
        same = dict(ops) == mine and frame_count(name) == truth["capture"]["frames"]
        print(f"{name}: tshark {frame_count(name)} frames, ATT opcodes {dict(sorted(ops.items()))} -> {'match' if same else 'MISMATCH'}")
        ok &= same
        if name == "eom-transfer":
            h = truth["value_handle"]
            vals = [v for _, op, hh, v in rows if op == 0x1B]
            text, cur = [], b""
            for v in vals:  # a message ends with a notification whose whole value is EOM
                if v == b"EOM":
                    text.append(cur)
                    cur = b""
                else:
                    cur += v
            expect = [bytes.fromhex(m["hex"]) for m in truth["messages"]]
            good = text == expect and len(vals) == sum(m["notifications_with_eom"] for m in truth["messages"])
            print(f"  {len(vals)} notifications, messages reassembled by EOM: {'match' if good else 'MISMATCH'}")
            ok &= good
        if name == "bracelet":
            frames = [v for _, op, _, v in rows if op in (0x12, 0x1B) and v[:1] == b"\xa5"]
            bad = [i for i, f in enumerate(frames) if functools.reduce(lambda a, c: a ^ c, f[:-1], 0) != f[-1]]
            good = [f.hex() for f in frames] == [f["hex"] for f in truth["frames"]] and bad == [truth["bad_frame_index"]]
            print(f"  {len(frames)} protocol frames, bad checksum at index {bad}: {'match' if good else 'MISMATCH'}")
            ok &= good
        if name == "nordic-dfu":
            cp, pk = truth["control_point_value_handle"], truth["packet_value_handle"]
            image = bytearray()
            init = None
            checks = bad = 0
            for _, op, hh, v in rows:
                if op == 0x52 and int(hh, 16) == pk:
                    if init is None:
                        init = bytes(v)
                    else:
                        image += v
                if op == 0x1B and v[:3] == b"\x60\x03\x01" and init is not None and len(image) > 0:
                    off, crc = struct.unpack("<II", v[3:11])
                    checks += 1
                    bad += not (off == len(image) and crc == zlib.crc32(bytes(image)))
            good = (bad == 0 and init.hex() == truth["init_packet_hex"] and len(image) == truth["image"]["size"]
                    and f"{zlib.crc32(bytes(image)):08x}" == truth["image"]["crc32"])
            print(f"  image {len(image)} bytes crc32 {zlib.crc32(bytes(image)):08x}; {checks} CRC notifications checked, {bad} wrong: {'match' if good else 'MISMATCH'}")
            ok &= good
        if name == "headset-ota":
            pk = truth["ota_data_value_handle"]
            pkts = [v for _, op, hh, v in rows if op == 0x52 and int(hh, 16) == pk]
            idx = [struct.unpack(">H", p[1:3])[0] for p in pkts]
            data = {}
            for p in pkts:
                data[struct.unpack(">H", p[1:3])[0]] = p[3:]
            image = b"".join(data[i] for i in range(truth["total_packets"]))
            dup = [i for i, c in collections.Counter(idx).items() if c > 1]
            good = image.hex() == truth["image"]["hex"] and dup == truth["resent_indices"]
            print(f"  {len(pkts)} OTA packets, resent {dup}, image crc32 {zlib.crc32(image):08x}: {'match' if good else 'MISMATCH'}")
            ok &= good
        if name == "esp-ble-ota":
            good, text = check_esp_ble_ota(truth, rows)
            print(text)
            ok &= good
        if name == "cypress-bootloader":
            good, text = check_cypress_bootloader(truth, rows)
            print(text)
            ok &= good
        if name == "mcumgr-confirm":
            good, text = check_mcumgr_confirm(truth, rows, name)
            print(text)
            ok &= good
        if name == "telink-ota":
            good, text = check_telink_ota(truth, rows)
            print(text)
            ok &= good
        if name in verify_diagnosis.CHECKS:
            good, text = verify_diagnosis.check(name, truth)
            print(text)
            ok &= good
        if name in verify_diff.PAIRS:
            good, text = verify_diff.verify(name)
            print(text)
            ok &= good
    return 0 if ok else 1


def crc16_xmodem(data):
    c = 0
    for b in data:
        c ^= b << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
    return c


def check_cypress_bootloader(truth, rows):
    """Every bootloader packet framed 01 … 17 with a good summation checksum; the rows rebuilt from Send data +
    Program row write requests in row order; the Verify checksum answer."""
    h = truth["value_handle"]
    values = [(op, v) for _, op, hh, v in rows if hh and "," not in hh and int(hh, 16) == h and op in (0x12, 0x1B)]
    bad, flash, pending, answers = 0, {}, b"", []
    for op, v in values:
        size = struct.unpack("<H", v[2:4])[0]
        body = v[:4 + size]
        bad += not (v[0] == 1 and v[-1] == 0x17 and len(v) == 7 + size
                    and struct.unpack("<H", v[4 + size:6 + size])[0] == (-sum(body)) & 0xFFFF)
        data = v[4:4 + size]
        if op == 0x12 and v[1] == 0x37:
            pending += data
        elif op == 0x12 and v[1] == 0x39:
            flash[struct.unpack("<H", data[1:3])[0]] = pending + data[3:]
            pending = b""
        elif op == 0x1B:
            answers.append((v[1], data))
    image = b"".join(flash[r] for r in sorted(flash))
    good = (bad == 0 and hashlib.sha256(image).hexdigest() == truth["image"]["sha256"] and len(flash) == truth["rows"]
            and all(s == 0 for s, _ in answers) and answers[-1][1] == b"\x01")
    return good, (f"  {len(values)} bootloader packets, {bad} badly framed or summed, {len(flash)} rows, "
                  f"last answer {answers[-1][1].hex()}, image sha256 {hashlib.sha256(image).hexdigest()[:16]}…: "
                  f"{'match' if good else 'MISMATCH'}")


def check_mcumgr_confirm(truth, rows, name):
    """The two connections (LE Connection Complete / Disconnection Complete as tshark reads them, with
    address and reason), and the frames of the image test, reset and confirm requests (SMP headers of
    write commands: op 2, group 1 id 0 / group 0 id 5)."""
    out = subprocess.run(
        ["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-Y",
         "bthci_evt.code == 0x05 || bthci_evt.le_meta_subevent == 0x01 || bthci_evt.le_meta_subevent == 0x0a",
         "-T", "fields", "-e", "frame.number", "-e", "bthci_evt.code", "-e", "bthci_evt.reason", "-e", "bthci_evt.bd_addr"],
        capture_output=True, text=True, check=True).stdout
    conns = []
    for line in out.splitlines():
        frame, code, reason, addr = (line.split("\t") + ["", "", ""])[:4]
        if code == "0x3e":
            conns.append({"address": addr.upper(), "start_frame": int(frame)})
        else:
            conns[-1].update(end_frame=int(frame), end_reason_code=int(reason, 16))
    writes = [(f, v) for f, op, _, v in rows if op == 0x52 and v[:1] == b"\x02"]
    state = [f for f, v in writes if v[4:6] == b"\x00\x01" and v[7] == 0]
    reset = [f for f, v in writes if v[4:6] == b"\x00\x00" and v[7] == 5]
    good = (conns == truth["connections"] and state == [truth["test_frame"], truth["confirm_frame"]]
            and reset == [truth["reset_frame"]])
    return good, (f"  connections {[(c['start_frame'], c['end_frame'], hex(c['end_reason_code'])) for c in conns]}, "
                  f"image state writes at {state}, reset at {reset}: {'match' if good else 'MISMATCH'}")


def crc16_modbus(data):
    c = 0xFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
    return c


def check_telink_ota(truth, rows):
    """Rebuilds the image from tshark's write commands below 0xFF00 by index, checks every packet's
    CRC-16/MODBUS, CMD_OTA_END's last index and its complement, and the CMD_OTA_RESULT notification."""
    h = truth["value_handle"]
    values = [(op, v) for _, op, hh, v in rows if hh and "," not in hh and int(hh, 16) == h]
    packets = {struct.unpack("<H", v[:2])[0]: v for op, v in values if op == 0x52 and struct.unpack("<H", v[:2])[0] < 0xFF00}
    bad = [i for i, v in packets.items() if crc16_modbus(v[:-2]) != struct.unpack("<H", v[-2:])[0]]
    end = [v for op, v in values if op == 0x52 and v[:2] == b"\x02\xff"]
    last, check = struct.unpack("<HH", end[0][2:6])
    image = b"".join(packets[i][2:-2] for i in range(last + 1))[:truth["image"]["size"]]
    results = [v for op, v in values if op == 0x1B and v[:2] == b"\x06\xff"]
    good = (hashlib.sha256(image).hexdigest() == truth["image"]["sha256"] and not bad and len(packets) == truth["packets"]
            and last == truth["last_index"] and check == ~last & 0xFFFF and [r[2] for r in results] == [0])
    return good, (f"  {len(packets)} packets, CRC-16 wrong on {bad}, CMD_OTA_END last index {last} (check ok: {check == ~last & 0xFFFF}), "
                  f"results {[r.hex() for r in results]}, image sha256 {hashlib.sha256(image).hexdigest()[:16]}…: "
                  f"{'match' if good else 'MISMATCH'}")


def check_esp_ble_ota(truth, rows):
    """Rebuilds the image from tshark's write requests by sector (last sending wins), checks every
    sector's CRC-16 and every 20-byte command/ACK CRC, and finds the sectors the device refused."""
    fw, cmd = truth["recv_fw_value_handle"], truth["command_value_handle"]
    rows = [(f, op, int(hh, 16), v) for f, op, hh, v in rows if hh and "," not in hh]
    sectors, cur, bad_crc, refused, writes = {}, bytearray(), [], [], 0
    controls = [v for _, op, hh, v in rows if op in (0x12, 0x1D) and hh == cmd]
    controls += [v for _, op, hh, v in rows if op == 0x1D and hh == fw]
    control_ok = all(len(v) == 20 and crc16_xmodem(v[:18]) == struct.unpack("<H", v[18:])[0] for v in controls)
    for _, op, hh, v in rows:
        if hh != fw:
            continue
        if op == 0x12:
            writes += 1
            index, seq = struct.unpack("<HB", v[:3])
            if seq != 0xFF:
                cur += v[3:]
                continue
            data = bytes(cur + v[3:-2])
            cur = bytearray()
            if crc16_xmodem(data) != struct.unpack("<H", v[-2:])[0]:
                bad_crc.append(index)
            sectors[index] = data
        elif op == 0x1D and struct.unpack("<H", v[2:4])[0] != 0:
            refused.append(struct.unpack("<H", v[:2])[0])
    image = b"".join(sectors[i] for i in range(len(sectors)))
    good = (hashlib.sha256(image).hexdigest() == truth["image"]["sha256"] and writes == truth["packets"]
            and refused == truth["resend_requests"] and bad_crc == truth["resend_requests"] and control_ok)
    return good, (f"  {writes} firmware writes, {len(sectors)} sectors, CRC-16 wrong on {bad_crc}, refused {refused}, "
                  f"{len(controls)} commands/ACKs with good CRC-16: {control_ok}, image sha256 "
                  f"{hashlib.sha256(image).hexdigest()[:16]}…: {'match' if good else 'MISMATCH'}")


if __name__ == "__main__":
    sys.exit(main())
