#!/usr/bin/env python3
"""Self-test of diagnosis_truth_host.py: btsnoop captures written from the HCI layouts (Vol 4, Part E, 5.4.2, 7.7.5,
7.7.65.1; Linux monitor records for two controllers), read back through tshark: ACL on a handle after its
Disconnection Complete and after an HCI Reset (HH-06), beside a handle reopened by a Connection Complete before its
data (a near miss); two controllers (HH-07), beside one controller and the monitor's "no controller" index (a near
miss). diagnosis_truth_selftest.py runs it too. Exit 0 when all match.
"""

import struct

from diagnosis_truth_selftest import H4, btsnoop, mismatches, monitor_capture, record, selftest_main


def complete(handle):
    return (bytes([0x01, 0x00]) + struct.pack("<H", handle) + bytes([0, 0]) + bytes.fromhex("112233445566")
            + struct.pack("<HHH", 24, 0, 400) + b"\x00")


def handles_capture():
    c = H4()

    def acl(handle, seconds):
        l2cap = struct.pack("<HH", 3, 4) + bytes([0x0A, 0x03, 0x00])
        c.add(2, struct.pack("<HH", handle | 0x2000, len(l2cap)) + l2cap, seconds, True)

    c.event(0x3E, complete(0x0040), 0.0)                                # 1
    acl(0x0040, 0.1)                                                    # 2
    c.event(0x05, bytes([0]) + struct.pack("<H", 0x0040) + b"\x13", 1.0)  # 3 ended
    acl(0x0040, 1.5)                                                    # 4 on the closed handle: HH-06
    acl(0x0040, 1.6)                                                    # 5 counted once
    c.event(0x3E, complete(0x0041), 2.0)                                # 6
    c.event(0x05, bytes([0]) + struct.pack("<H", 0x0041) + b"\x08", 3.0)  # 7 ended
    c.event(0x3E, complete(0x0041), 4.0)                                # 8 reopened
    acl(0x0041, 4.1)                                                    # 9 a near miss
    c.command(0x0C03, b"", 5.0)                                         # 10 HCI Reset ends both
    acl(0x0040, 5.5)                                                    # 11 HH-06
    return btsnoop(1002, c.records)


HANDLES_EXPECTED = [
    {"class": "acl-on-closed-handle", "frame": 4, "frames": [4], "handle": 0x0040, "closed_frame": 3},
    {"class": "acl-on-closed-handle", "frame": 11, "frames": [11], "handle": 0x0040, "closed_frame": 10},
]

TWO_EXPECTED = [{"class": "controllers-several", "frame": 2, "frames": [1, 2], "controllers": 2,
                 "keys": ["adapter 0", "adapter 1"]}]


def one_controller_capture():
    """Adapter 0 and the monitor's system notes (index 0xFFFF): one controller."""
    note = record(b"bluetoothd 5.66\0", 0.0, 0xFFFF << 16 | 12)
    event = record(bytes([0x3E, 19]) + complete(0x0040), 0.5, 0 << 16 | 3)
    return btsnoop(2001, [note, event])


def run():
    """The number of mismatches (printed)."""
    cases = ((handles_capture(), HANDLES_EXPECTED), (monitor_capture(), TWO_EXPECTED), (one_controller_capture(), []))
    failures = sum(mismatches("diagnosis_truth_host.py", "synthetic-host.btsnoop", data, want) for data, want in cases)
    print("synthetic-host.btsnoop: %d events checked" % sum(len(want) for _data, want in cases))
    return failures


if __name__ == "__main__":
    selftest_main(run)
