#!/usr/bin/env python3
"""Cross-checks the samples against tshark (independent of bumble and of common.read_btsnoop).

Usage: python3 Samples/generate/verify_tshark.py   (needs tshark on PATH)
"""

import collections
import functools
import json
import os
import struct
import subprocess
import sys
import zlib

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
    for name in ["eom-transfer", "bracelet", "nordic-dfu", "headset-ota"]:
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
