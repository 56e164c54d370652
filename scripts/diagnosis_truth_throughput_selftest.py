#!/usr/bin/env python3
"""Self-test of diagnosis_truth_throughput.py: one btsnoop H4 capture written from the HCI and ATT layouts (Vol 4,
Part E, 7.7.65.1, 7.7.5; Vol 3, Part F, 3.4.2, 3.4.5.3, 3.4.7.1), read back through tshark: a link at 30 ms with
ATT_MTU 247 carrying 120 notifications 10 ms apart (more PDUs than connection events: room unproven; TP-03's limits:
data length 27, 1M, 30 ms), 110 Write Commands of 100 bytes 200 ms apart (fewer PDUs than events: room; a write run
the peer's disconnection ends, the device back 9 s later: SC-01), and 99 notifications (a near miss: under 100); a
second link, at ATT_MTU 23, with the same run ended by this side's Disconnect and no link after (SC-01's near miss).
diagnosis_truth_selftest.py runs it too. Exit 0 when all match.
"""

import struct

from diagnosis_truth_selftest import H4, btsnoop, mismatches, selftest_main


def capture():
    c = H4()

    def acl(handle, payload, seconds, sent):
        l2cap = struct.pack("<HH", len(payload), 4) + payload
        c.add(2, struct.pack("<HH", handle | 0x2000, len(l2cap)) + l2cap, seconds, sent)

    def connected(handle, seconds):
        c.event(0x3E, bytes([0x01, 0x00]) + struct.pack("<H", handle) + bytes([0, 0]) + bytes.fromhex("112233445566")
                + struct.pack("<HHH", 24, 0, 400) + b"\x00", seconds)

    def writes(handle, start):
        for index in range(110):
            acl(handle, bytes([0x52]) + struct.pack("<H", 0x0020) + bytes(100), start + index * 0.2, True)

    connected(0x0040, 0.0)                                                                   # 1
    acl(0x0040, bytes([0x02]) + struct.pack("<H", 247), 0.5, True)                           # 2
    acl(0x0040, bytes([0x03]) + struct.pack("<H", 247), 0.51, False)                         # 3
    for index in range(120):                                                                 # 4-123
        acl(0x0040, bytes([0x1B]) + struct.pack("<H", 0x0011) + bytes(20), 1.0 + index * 0.01, False)
    writes(0x0040, 3.0)                                                                      # 124-233
    for index in range(99):                                                                  # 234-332
        acl(0x0040, bytes([0x1B]) + struct.pack("<H", 0x0030) + bytes(20), 30.0 + index * 0.01, False)
    c.event(0x05, bytes([0]) + struct.pack("<H", 0x0040) + b"\x13", 31.0)                    # 333 the peer ends it
    connected(0x0041, 40.0)                                                                  # 334 back
    writes(0x0041, 41.0)                                                                     # 335-444
    c.command(0x0406, struct.pack("<HB", 0x0041, 0x13), 63.0)                                # 445 this side ends it
    c.event(0x05, bytes([0]) + struct.pack("<H", 0x0041) + b"\x16", 63.01)                   # 446
    return btsnoop(1002, c.records)


FAST = {"att_mtu": 247, "data_length": 27, "interval_ms": 30.0, "phy": "1M"}
EXPECTED = [
    {"class": "stream-room-unproven", "frame": 4, "frames": [4]},
    {"class": "value-stream", "frame": 4, "frames": [4, 123], "handle": 0x0011, "opcode": 0x1B, "values": 120,
     "bytes": 2400, "seconds": 1.19, "idle_share": 0.0, "settings": FAST, "limits": ["data_length", "phy", "interval"],
     "room": False},
    {"class": "value-stream", "frame": 124, "frames": [124, 233], "handle": 0x0020, "opcode": 0x52, "values": 110,
     "bytes": 11000, "seconds": 21.8, "idle_share": 0.0, "settings": FAST, "limits": ["data_length", "phy", "interval"],
     "room": True},
    {"class": "write-run-ended", "frame": 233, "frames": [124, 233, 333], "writes": 110, "size": 100, "same_size": 110,
     "bytes": 11000, "end_frame": 333, "came_back_frame": 334},
    {"class": "value-stream", "frame": 335, "frames": [335, 444], "handle": 0x0020, "opcode": 0x52, "values": 110,
     "bytes": 11000, "seconds": 21.8, "idle_share": 0.0, "settings": dict(FAST, att_mtu=23),
     "limits": ["att_mtu", "data_length", "phy", "interval"], "room": True},
]


def run():
    """The number of mismatches (printed)."""
    failures = mismatches("diagnosis_truth_throughput.py", "synthetic-throughput.btsnoop", capture(), EXPECTED)
    print("synthetic-throughput.btsnoop: %d events checked" % len(EXPECTED))
    return failures


if __name__ == "__main__":
    selftest_main(run)
