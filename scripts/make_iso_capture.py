#!/usr/bin/env python3
"""Deterministic generator of a large LE Audio HCI capture: N HCI ISO data packets (the issue-28 benchmark).

Written like ../shared/tools/make_big_capture.py (btsnoop v1, datalink 1002 = H4; optionally the same packets as
pcap with linktype 201): a phone's HCI log of a call on two earbuds. Setup: HCI Reset, LE Read Buffer Size v2, two LE
connections (handles 0x0040, 0x0041), LE Set CIG Parameters (CIG 1, CIS 0 and 1, 10 ms, 40-octet SDUs both ways) and
its Command Complete (CIS handles 0x0060, 0x0061), LE Create CIS, two LE CIS Established, LE Setup ISO Data Path both
ways on each CIS. Then the streams: each 10 ms ISO interval the host sends one SDU per CIS (PB 10, no time stamp) and
the controller hands up one per CIS (PB 10, time stamp, sequence number, status), until N ISO packets are written.
Number Of Completed Packets every four ISO events. The received streams carry a loss pattern drawn from --seed: ~0.5 %
of SDUs never delivered (in bursts of 1-20), ~0.2 % flagged lost, ~0.1 % possibly invalid, ~0.05 % in two fragments.
Teardown: Disconnect on both CISes, LE Remove CIG.

The output depends only on (--packets, --seed). The truth (counts per stream direction) is printed as JSON with
--truth, so a test or a person can check an analysis of the file.

Usage:
  make_iso_capture.py -n 1000000 --seed 1 -o bench-out/iso1m.btsnoop [--pcap bench-out/iso1m.pcap] [--truth t.json]
"""

import argparse
import json
import random
import struct
import sys

BTSNOOP_EPOCH_US = 0x00DCDDB30F2F8000
START_UNIX_US = 1_741_944_600_000_000  # 2025-03-14 09:30:00 UTC (fixed)
F_DATA_TX, F_DATA_RX, F_CMD, F_EVT = 0, 1, 2, 3
REC_BTSNOOP = struct.Struct(">IIIIq")
REC_PCAP = struct.Struct("<IIII")
INTERVAL_US = 10_000
SDU = 40
CIS = (0x0060, 0x0061)
ACL = (0x0040, 0x0041)


class Writer:
    def __init__(self, btsnoop, pcap):
        self.out, self.pcap = btsnoop, pcap
        self.out.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        if pcap:
            pcap.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201))
        self.records = 0

    def write(self, flags, t_us, packet):
        self.records += 1
        self.out.write(REC_BTSNOOP.pack(len(packet), len(packet), flags, 0, START_UNIX_US + t_us + BTSNOOP_EPOCH_US) + packet)
        if self.pcap:
            unix = START_UNIX_US + t_us
            body = struct.pack(">I", flags & 1) + packet
            self.pcap.write(REC_PCAP.pack(unix // 1_000_000, unix % 1_000_000, len(body), len(body)) + body)


def command(opcode, params=b""):
    return bytes([1]) + struct.pack("<HB", opcode, len(params)) + params


def event(code, params):
    return bytes([4, code, len(params)]) + params


def complete(opcode, ret):
    return event(0x0E, bytes([1]) + struct.pack("<H", opcode) + ret)


def status(opcode, s=0):
    return event(0x0F, bytes([s, 1]) + struct.pack("<H", opcode))


def le_meta(sub, params):
    return event(0x3E, bytes([sub]) + params)


def u24(v):
    return struct.pack("<I", v)[:3]


def iso(handle, pb, data, ts=None, seq=None, sdu_len=None, st=0):
    head = b""
    if ts is not None:
        head += struct.pack("<I", ts & 0xFFFFFFFF)
    if seq is not None:
        head += struct.pack("<HH", seq & 0xFFFF, (sdu_len & 0x0FFF) | st << 14)
    body = head + data
    return bytes([5]) + struct.pack("<HH", handle | pb << 12 | (ts is not None) << 14, len(body)) + body


def setup(w):
    t = 0
    script = [
        (F_CMD, command(0x0C03)), (F_EVT, complete(0x0C03, b"\x00")),
        (F_CMD, command(0x2060)), (F_EVT, complete(0x2060, b"\x00" + struct.pack("<HB", 251, 8) + struct.pack("<HB", 251, 16))),
    ]
    for i, acl in enumerate(ACL):
        peer = bytes([0x51 + i, 0x33, 0x10, 0x7E, 0x2A, 0xD8])
        script.append((F_EVT, le_meta(0x01, bytes([0]) + struct.pack("<H", acl) + bytes([0, 1]) + peer
                                      + struct.pack("<HHH", 24, 0, 500) + bytes([0]))))
    cis = b"".join(bytes([i]) + struct.pack("<HHBBBB", SDU, SDU, 2, 2, 2, 2) for i in range(2))
    script += [
        (F_CMD, command(0x2062, bytes([1]) + u24(INTERVAL_US) + u24(INTERVAL_US) + bytes([0, 0, 0])
                        + struct.pack("<HH", 20, 20) + bytes([2]) + cis)),
        (F_EVT, complete(0x2062, bytes([0, 1, 2]) + struct.pack("<HH", *CIS))),
        (F_CMD, command(0x2064, bytes([2]) + struct.pack("<HHHH", CIS[0], ACL[0], CIS[1], ACL[1]))),
        (F_EVT, status(0x2064)),
    ]
    for c in CIS:
        script.append((F_EVT, le_meta(0x19, bytes([0]) + struct.pack("<H", c) + u24(2832) + u24(1416) + u24(12832) * 2
                                      + bytes([2, 2, 2, 1, 1, 2, 2]) + struct.pack("<HHH", SDU, SDU, 8))))
    for c in CIS:
        for d in (0, 1):
            script += [(F_CMD, command(0x206E, struct.pack("<HBB", c, d, 0) + bytes([3, 0, 0, 0, 0]) + u24(0) + b"\x00")),
                       (F_EVT, complete(0x206E, b"\x00" + struct.pack("<H", c)))]
    for flags, p in script:
        w.write(flags, t, p)
        t += 200
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--packets", type=int, default=1_000_000, help="HCI ISO data packets to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--pcap")
    ap.add_argument("--truth", help="write the counts per stream direction here (JSON)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = open(args.out, "wb", buffering=1 << 20)
    pcap = open(args.pcap, "wb", buffering=1 << 20) if args.pcap else None
    w = Writer(out, pcap)
    t0 = setup(w) + 5000
    truth = {f"0x{c:04x} {d}": {"packets": 0, "sdus": 0, "missing": 0, "lost_flag": 0, "possibly_invalid": 0,
                                 "fragmented": 0, "sdu_bytes": 0} for c in CIS for d in ("tx", "rx")}
    skip = {c: 0 for c in CIS}
    last_rx = {c: -1 for c in CIS}  # the last SDU handed up: gaps are counted once a later one shows them
    payload = bytes(rng.getrandbits(8) for _ in range(SDU))
    written, k, pending = 0, 0, 0
    while written < args.packets:
        t = t0 + k * INTERVAL_US
        # Records in time order: the host's SDUs early in the interval, the controller's after the CIG sync delay.
        for i, c in enumerate(CIS):
            if written >= args.packets:
                break
            w.write(F_DATA_TX, t + 100 + 50 * i, iso(c, 0b10, payload, seq=k, sdu_len=SDU))
            tr = truth[f"0x{c:04x} tx"]
            tr["packets"] += 1; tr["sdus"] += 1; tr["sdu_bytes"] += SDU
            written += 1
            pending += 1
        for i, c in enumerate(CIS):
            if written >= args.packets:
                break
            tr = truth[f"0x{c:04x} rx"]
            if skip[c] == 0 and k > 0 and rng.random() < 0.0005:
                skip[c] = rng.randint(1, 20)
            if skip[c] > 0:
                skip[c] -= 1
                continue
            if last_rx[c] >= 0:
                tr["missing"] += k - last_rx[c] - 1
            last_rx[c] = k
            at = t + 3200 + 100 * i
            ts = 0x1000_0000 + t + 2832
            r = rng.random()
            if r < 0.002:
                w.write(F_DATA_RX, at, iso(c, 0b10, b"", ts=ts, seq=k, sdu_len=0, st=2))
                tr["lost_flag"] += 1; written += 1; tr["packets"] += 1; tr["sdus"] += 1
            elif r < 0.0025 and args.packets - written >= 2:  # (the last packet never starts a fragmented SDU)
                w.write(F_DATA_RX, at, iso(c, 0b00, payload[:20], ts=ts, seq=k, sdu_len=SDU))
                w.write(F_DATA_RX, at + 40, iso(c, 0b11, payload[20:]))
                tr["fragmented"] += 1; written += 2; tr["packets"] += 2; tr["sdus"] += 1; tr["sdu_bytes"] += SDU
            else:
                st = 1 if r < 0.0035 else 0
                w.write(F_DATA_RX, at, iso(c, 0b10, payload, ts=ts, seq=k, sdu_len=SDU, st=st))
                tr["possibly_invalid"] += st; written += 1; tr["packets"] += 1; tr["sdus"] += 1; tr["sdu_bytes"] += SDU
        if pending >= 8:
            w.write(F_EVT, t + 4000, event(0x13, bytes([2]) + struct.pack("<HHHH", CIS[0], 4, CIS[1], 4)))
            pending -= 8
        k += 1
    t = t0 + k * INTERVAL_US + 20_000
    for c in CIS:
        w.write(F_CMD, t, command(0x0406, struct.pack("<HB", c, 0x13)))
        w.write(F_EVT, t + 300, status(0x0406))
        w.write(F_EVT, t + 30_000, event(0x05, bytes([0]) + struct.pack("<H", c) + bytes([0x16])))
        t += 40_000
    w.write(F_CMD, t, command(0x2065, b"\x01"))
    w.write(F_EVT, t + 300, complete(0x2065, b"\x00\x01"))
    out.close()
    if pcap:
        pcap.close()
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump({"iso_packets": written, "records": w.records, "streams": truth}, f, indent=1)
    print(f"{args.out}: {w.records} records, {written} ISO packets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
