#!/usr/bin/env python3
"""Builds a large synthetic air capture (pcap, LT 272 nRF Sniffer) for the link-layer benchmark.

It takes a real nRF Sniffer capture (classic pcap, e.g. ../shared/captures/nrfsniffer-lt272_*.pcap),
keeps it whole once (advertising, CONNECT_IND, the connection), then repeats the records of the
connection's data channel, with timestamps moved on, until N records are written. The result has
the mix of a real sniffer session (empty PDUs, LL control, ATT) at any size; nothing of it is
committed.

Usage: make_air_capture.py SOURCE.pcap N OUT.pcap
"""
import struct
import subprocess
import sys

src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(src, "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic == 0xA1B2C3D4, "classic little-endian µs pcap expected"
header, records, off = data[:24], [], 24
while off + 16 <= len(data):
    sec, usec, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    records.append((sec * 1_000_000 + usec, data[off + 16:off + 16 + incl], orig))
    off += 16 + incl
# Data-channel records (access address other than the advertising one), as tshark sees them.
frames = subprocess.run(["tshark", "-n", "-r", src, "-Y", "btle.access_address != 0x8e89bed6", "-T", "fields",
                         "-e", "frame.number"], capture_output=True, text=True, check=True).stdout.split()
data_records = [records[int(f) - 1] for f in frames]
with open(out, "wb") as f:
    f.write(header)
    written, t, last = 0, records[0][0], records[0][0]
    def put(ts, payload, orig):
        f.write(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(payload), orig))
        f.write(payload)
    for ts, payload, orig in records:
        if written >= n:
            break
        put(ts, payload, orig)
        written += 1
        last = ts
    span = data_records[-1][0] - data_records[0][0] + 1250
    shift = last - data_records[0][0] + 1250
    while written < n:
        for ts, payload, orig in data_records:
            if written >= n:
                break
            put(ts + shift, payload, orig)
            written += 1
        shift += span
print(f"{written} records written to {out}")
