#!/usr/bin/env python3
"""Self-test of diagnosis_truth_linklayer.py: its readings on typed values (the connection parameter ranges of Core
Vol 6, Part B, 2.3.3.1; the acknowledgment scheme of 4.5.9; LP-03's alternation within 60 s), each with a near
miss, and an LT 256 air capture written from the PDU layouts (a CONNECT_IND with hop 0 beside one in range; data PDUs
the format gives no direction, one an LL_UNKNOWN_RSP) read back through tshark. diagnosis_truth_selftest.py runs it
too. Exit 0 when all match.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

from diagnosis_truth_linklayer import Settings, new_pdu, out_of_range

ADVERTISING, LINK = 0x8E89BED6, 0x50654A21

# (size, offset, interval, latency, timeout, hop) -> the names out of range.
RANGES = [
    ((2, 0, 24, 0, 400, 5), []),
    ((2, 0, 24, 0, 400, 0), ["hop"]),
    ((2, 0, 24, 0, 400, 17), ["hop"]),
    ((2, 0, 5, 0, 400, 5), ["interval"]),
    ((2, 0, 24, 1, 10, 5), ["timeout"]),            # 100 ms <= (1 + 1) x 30 ms x 2
    ((2, 0, 24, 1, 13, 5), []),                     # 130 ms > 120 ms
    ((9, 0, 24, 0, 400, 5), ["window_size"]),
    ((2, 25, 24, 0, 400, 5), ["window_offset"]),
    ((2, 0, 24, 500, 400, 5), ["latency", "timeout"]),
]
# (sender's previous PDU, receiver's last PDU, SN, opcode) -> new data to the receiver; a PDU is (frame, SN, NESN, op).
ACKS = [
    ((None, None, 0, 0x0C), True),
    (((10, 0, 0, 0x0C), None, 0, 0x0C), False),     # the same PDU again
    (((10, 0, 0, 0x0C), None, 1, 0x0C), True),
    (((10, 0, 0, 0x0C), (11, 1, 1, None), 0, 0x0C), False),  # the receiver asked for SN 1
    (((10, 0, 0, 0x0C), (11, 1, 1, None), 1, 0x0C), True),
    (((10, 0, 0, 0x0C), (9, 1, 0, None), 0, 0x0C), False),   # the receiver spoke before: the sender's own rule
]


A, B = (24, 0, 400), (6, 0, 500)
# LP-03: (seconds, parameters) of one link's settings -> frames of the ping-pong events (frame = index + 1).
PING_PONGS = [
    ([(0, A), (10, B), (20, A), (30, B)], [4]),
    ([(0, A), (10, B), (20, A), (90, B)], []),        # the three updates span 80 s: a near miss
    ([(0, A), (10, B), (20, B), (30, A)], []),        # no alternation
]


def ping_pongs(settings):
    events = []
    tracker = Settings(events)
    for index, (seconds, values) in enumerate(settings):
        tracker.note("link", index + 1, float(seconds), values, new=index == 0)
    return [e["frame"] for e in events]


def crc24(init, data):
    """The LE link-layer CRC (Vol 6, Part B, 3.1.1: x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1, bits LSB first),
    sent least significant octet first: tshark checks it on advertising PDUs and on a link it saw connect."""
    state = int("{:024b}".format(init)[::-1], 2)
    for octet in data:
        for _ in range(8):
            bit = (state ^ octet) & 1
            octet, state = octet >> 1, state >> 1
            if bit:
                state = (state | 1 << 23) ^ 0x5A6000
    return state.to_bytes(3, "little")


def air_capture():
    def packet(aa, header, payload):
        pdu = bytes([header, len(payload)]) + payload
        channel, init = (0, 0x555555) if aa == ADVERTISING else (10, 0)  # CRCInit 0 in the CONNECT_IND below
        header = bytes([channel, 0, 0, 0]) + struct.pack("<IH", aa, 0x0011) + struct.pack("<I", aa)
        return header + pdu + crc24(init, pdu)

    def connect(hop):
        data = (struct.pack("<I", LINK) + bytes(3) + bytes([2]) + struct.pack("<HHHH", 0, 24, 0, 400)
                + b"\xff\xff\xff\xff\x1f" + bytes([hop]))
        return packet(ADVERTISING, 0x05, bytes.fromhex("112233445566") + bytes.fromhex("aabbccddeeff") + data)
    packets = [connect(0), packet(LINK, 0x03, bytes([0x0C, 0x0B, 0x59, 0x00, 0x01, 0x00])),  # 1, 2
               packet(LINK, 0x03, bytes([0x07, 0xFF])),                                         # 3 LL_UNKNOWN_RSP
               connect(9)]                                                                      # 4: a near miss
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 256)
    for index, data in enumerate(packets):
        out += struct.pack("<IIII", 1_700_000_000, index * 1000, len(data), len(data)) + data
    return out


AIR_EXPECTED = [
    {"class": "air-direction-unknown", "frame": 0, "frames": [0]},
    {"class": "ll-parameter-out-of-range", "frame": 1, "frames": [1], "pdu": "connect request", "parameters": ["hop"]},
    {"class": "ll-unknown-rsp", "frame": 3, "frames": [3], "unknown_type": 0xFF, "access_address": LINK},
]


def run():
    """The number of mismatches (printed)."""
    failures = 0
    for args, want in RANGES:
        if out_of_range(*args) != want:
            failures += 1
            print("out_of_range%s: got %s, want %s" % (args, out_of_range(*args), want))
    for settings, want in PING_PONGS:
        if ping_pongs(settings) != want:
            failures += 1
            print("ping_pongs(%s): got %s, want %s" % (settings, ping_pongs(settings), want))
    for args, want in ACKS:
        if new_pdu(*args) != want:
            failures += 1
            print("new_pdu%s: got %s, want %s" % (args, new_pdu(*args), want))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis_truth_linklayer.py")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "synthetic-linklayer.pcap")
        with open(path, "wb") as handle:
            handle.write(air_capture())
        events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
        if events["events"] != AIR_EXPECTED:
            failures += 1
            print("synthetic-linklayer.pcap:\n  got  %s\n  want %s" % (events["events"], AIR_EXPECTED))
    cases = len(RANGES) + len(ACKS) + len(PING_PONGS)
    print("linklayer: %d typed cases and synthetic-linklayer.pcap checked" % cases)
    return failures


if __name__ == "__main__":
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)
