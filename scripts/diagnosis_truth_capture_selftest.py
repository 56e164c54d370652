#!/usr/bin/env python3
"""Self-test of diagnosis_truth_capture.py: one btsnoop H4 capture written from the Core spec layouts (Vol 4, Part E,
7.1 and 7.7; Vol 3, Part F, 3.4), what stays pending at its end beside what was answered, and an ACL record the
capturer cut (btsnoop included length under the original); ACL records cut before the log was written (their header's
length over what they hold) beside whole ones; read back through tshark. diagnosis_truth_selftest.py runs
it too. Exit 0 when every event matches.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

from diagnosis_truth_linklayer_selftest import crc24
from diagnosis_truth_selftest import BTSNOOP_EPOCH, H4, btsnoop

PEER = bytes.fromhex("001bdc4f62a8")[::-1]


def capture():
    c = H4()
    c.command(0x2043, bytes(10), 0.0)                                     # 1 LE Extended Create Connection
    c.status(0x2043, 0, 0.001)                                            # 2 pending to the end
    c.command(0x0405, PEER + struct.pack("<HBBHB", 0xCC18, 1, 0, 0, 1), 1.0)  # 3 Create Connection
    c.status(0x0405, 0, 1.001)                                            # 4
    c.event(0x03, b"\x00" + struct.pack("<H", 0x0041) + PEER + b"\x01\x00", 1.5)  # 5 answers 3, not 1
    c.command(0x0C14, b"", 2.0)                                           # 6 Read Local Name, never answered
    c.command(0x0C35, b"\x00", 2.1)                                       # 7 never answered by design
    c.acl(4, bytes([0x0A, 0x03, 0x00]), 3.0, True)                        # 8 Read Request
    c.acl(4, bytes([0x0B, 0x01]), 3.1, False)                             # 9 answered
    c.acl(4, bytes([0x12, 0x03, 0x00, 0x01]), 4.0, True)                  # 10 Write Request, pending to the end
    data = bytes([2]) + struct.pack("<HHHH", 0x0040 | 0x2000, 24, 20, 4) + bytes([0x1B, 0x05, 0x00]) + bytes(17)
    c.records.append(struct.pack(">IIIIq", len(data), 16, 1, 0, BTSNOOP_EPOCH + 5_000_000) + data[:16])  # 11 cut
    c.command(0x0406, struct.pack("<HB", 0x0041, 0x13), 6.0)              # 12 Disconnect
    c.status(0x0406, 0, 6.001)                                            # 13 no Disconnection Complete after
    return btsnoop(1002, c.records)


EXPECTED = [
    {"class": "pending-at-end", "frame": 1, "frames": [1, 2], "what": "connection", "opcode": 0x2043},
    {"class": "pending-at-end", "frame": 6, "frames": [6], "what": "command", "opcode": 0x0C14},
    {"class": "pending-at-end", "frame": 10, "frames": [10], "what": "att", "opcode": 0x12},
    {"class": "acl-records-cut", "frame": 11, "frames": [11], "count": 1},
    {"class": "pending-at-end", "frame": 12, "frames": [12, 13], "what": "command", "opcode": 0x0406,
     "handle": 0x0041},
]

def cut_in_log_capture():
    """Three whole ACL records, then two whose ACL header says 24 bytes while the record holds 7, written as whole (the
    btsnoop included length equals the original): payloads cut before the log was written."""
    c = H4()
    for index in range(3):                                                 # 1-3 whole: a near miss
        c.acl(4, bytes([0x52, 0x03, 0x00, 0x01]), index * 0.1, True)
    for index in range(2):                                                 # 4-5 cut
        data = bytes([2]) + struct.pack("<HH", 0x0040 | 0x2000, 24) + struct.pack("<HH", 20, 4) + bytes([0x1B, 0x05, 0x00])
        c.records.append(struct.pack(">IIIIq", len(data), len(data), 1, 0, BTSNOOP_EPOCH + 1_000_000 + index) + data)
    return btsnoop(1002, c.records)


CUT_IN_LOG_EXPECTED = [{"class": "acl-records-cut", "frame": 4, "frames": [4], "count": 2}]



AA = 0x50654A21


def air_capture():
    """LT 256 (Vol 6, Part B, 2.1 and 2.4): a link the capture never saw connect; LL_ENC_RSP, then an encrypted
    LL_START_ENC_RSP (1 + 4 MIC octets) not flagged decrypted, and one flagged decrypted (a near miss); an ADV_IND
    with a bad CRC beside a good one."""
    def packet(aa, header, payload, flags=0x0011, crc=None):
        pdu = bytes([header, len(payload)]) + payload
        return (bytes([0 if aa == 0x8E89BED6 else 10, 0, 0, 0]) + struct.pack("<IH", aa, flags) + struct.pack("<I", aa)
                + pdu + (crc if crc is not None else bytes(3)))
    advert = bytes.fromhex("aabbccddeeff") + bytes([2, 1, 6])
    packets = [packet(AA, 0x01, b""),                                     # 1 no CONNECT_IND before
               packet(AA, 0x03, bytes([0x04]) + bytes(12)),               # 2 LL_ENC_RSP
               packet(AA, 0x03, bytes([0x53, 1, 2, 3, 4])),               # 3 encrypted, left so
               packet(AA, 0x03, bytes([0x06, 1, 2, 3, 4]), 0x0019),       # 4 flagged decrypted: a near miss
               packet(0x8E89BED6, 0x00, advert),                          # 5 CRC 0: bad
               packet(0x8E89BED6, 0x00, advert, crc=crc24(0x555555, bytes([0x00, len(advert)]) + advert))]  # 6 good
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 256)
    for index, data in enumerate(packets):
        out += struct.pack("<IIII", 1_700_000_000, index * 1000, len(data), len(data)) + data
    return out


AIR_EXPECTED = [
    {"class": "air-joined-late", "frame": 1, "frames": [1], "access_address": AA},
    {"class": "air-encrypted-undecrypted", "frame": 3, "frames": [3], "access_address": AA},
    {"class": "advertising-crc-bad", "frame": 5, "frames": [5], "bad": 1, "advertising": 2},
]


def run():
    """The number of mismatches (printed)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis_truth_capture.py")
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "synthetic-capture.btsnoop")
        with open(path, "wb") as handle:
            handle.write(capture())
        events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
        for index in range(max(len(events["events"]), len(EXPECTED))):
            got = events["events"][index] if index < len(events["events"]) else None
            want = EXPECTED[index] if index < len(EXPECTED) else None
            if got != want:
                failures += 1
                print("synthetic-capture.btsnoop event %d:\n  got  %s\n  want %s" % (index, got, want))
        print("synthetic-capture.btsnoop: %d events checked" % len(EXPECTED))
        with open(path, "wb") as handle:
            handle.write(cut_in_log_capture())
        events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
        if events["events"] != CUT_IN_LOG_EXPECTED:
            failures += 1
            print("synthetic cut-in-log capture:\n  got  %s\n  want %s" % (events["events"], CUT_IN_LOG_EXPECTED))
        path = os.path.join(directory, "synthetic-air.pcap")
        with open(path, "wb") as handle:
            handle.write(air_capture())
        events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
        if events["events"] != AIR_EXPECTED:
            failures += 1
            print("synthetic-air.pcap:\n  got  %s\n  want %s" % (events["events"], AIR_EXPECTED))
    return failures


if __name__ == "__main__":
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)
