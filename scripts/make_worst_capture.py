#!/usr/bin/env python3
"""Worst-case btsnoop for memory tests: every ACL record on a new connection handle (cycling through
the 4,095 valid 12-bit handles), every fragment an L2CAP start announcing a 65,535-byte PDU that never
completes, interleaved with HCI commands that are never answered.
Usage: make_worst_capture.py N OUT.btsnoop"""
import struct
import sys

n, out = int(sys.argv[1]), sys.argv[2]
EPOCH = 0x00DCDDB30F2F8000
t0 = 1_700_000_000_000_000
with open(out, "wb") as f:
    f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    for i in range(n):
        if i % 16 == 15:
            pkt = bytes([0x01]) + struct.pack("<HB", 0x2000 | (i & 0x3FF), 0)  # a command never answered
            flags = 2
        else:
            handle = 1 + (i % 4095)
            l2 = struct.pack("<HH", 0xFFFF, 0x0004) + bytes([0x1B, 0x2A, 0x00]) + bytes(16)
            pkt = bytes([0x02]) + struct.pack("<HH", handle | 0x2000, len(l2)) + l2  # PB=10: start
            flags = i & 1
        f.write(struct.pack(">IIIIq", len(pkt), len(pkt), flags, 0, t0 + i * 100 + EPOCH))
        f.write(pkt)
print(f"{n} records written to {out}")
