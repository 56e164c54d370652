#!/usr/bin/env python3
"""Worst-case btsnoop for memory tests: every ACL record on a new connection handle (cycling through
the 4,095 valid 12-bit handles), every fragment an L2CAP start announcing a 65,535-byte PDU that never
completes, interleaved with HCI commands that are never answered.
With --fill: every handle's start is followed by 1,000-byte continuations, round robin, so that the
4,095 partial PDUs grow towards 64 KiB each (about 270 MB if nothing were dropped).
Usage: make_worst_capture.py [--fill] N OUT.btsnoop"""
import struct
import sys

fill = sys.argv[1] == "--fill"
if fill:
    sys.argv.pop(1)
n, out = int(sys.argv[1]), sys.argv[2]
EPOCH = 0x00DCDDB30F2F8000
t0 = 1_700_000_000_000_000
with open(out, "wb") as f:
    f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    for i in range(n):
        if i % 16 == 15:
            pkt = bytes([0x01]) + struct.pack("<HB", 0x2000 | (i & 0x3FF), 0)  # a command never answered
            flags = 2
        elif fill and i >= 4095:
            handle = 1 + (i % 4095)
            l2 = bytes([0xA5]) * 1000
            pkt = bytes([0x02]) + struct.pack("<HH", handle | 0x1000, len(l2)) + l2  # PB=01: continuation
            flags = 1
        else:
            handle = 1 + (i % 4095)
            l2 = struct.pack("<HH", 0xFFFF, 0x0004) + bytes([0x1B, 0x2A, 0x00]) + bytes(16)
            pkt = bytes([0x02]) + struct.pack("<HH", handle | 0x2000, len(l2)) + l2  # PB=10: start
            flags = 1 if fill else i & 1  # --fill: all received, so the continuations find their start
        f.write(struct.pack(">IIIIq", len(pkt), len(pkt), flags, 0, t0 + i * 100 + EPOCH))
        f.write(pkt)
print(f"{n} records written to {out}")
