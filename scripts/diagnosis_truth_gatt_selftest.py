#!/usr/bin/env python3
"""Self-test of diagnosis_truth_gatt.py: one btsnoop H4 capture written from the ATT layouts (Core Vol 3, Part F,
3.4): a discovery (characteristic declarations, descriptors), a subscription nothing notified for 30 s beside one
notified and one refused; and ATT_MTU 23 filled by 20 notifications, beside the same after an MTU exchange; read back
through tshark. diagnosis_truth_selftest.py runs it too. Exit 0 when all match.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

from diagnosis_truth_selftest import H4, btsnoop


def capture():
    c = H4()
    c.acl(4, bytes([0x08]) + struct.pack("<HHH", 1, 0xFFFF, 0x2803), 0.0, True)                      # 1
    c.acl(4, bytes([0x09, 7]) + struct.pack("<HBHH", 0x0010, 0x10, 0x0011, 0x2A37)
          + struct.pack("<HBHH", 0x0013, 0x10, 0x0014, 0x2A38), 0.01, False)                         # 2
    c.acl(4, bytes([0x04]) + struct.pack("<HH", 0x0012, 0x0015), 0.1, True)                         # 3
    c.acl(4, bytes([0x05, 1]) + struct.pack("<HHHH", 0x0012, 0x2902, 0x0015, 0x2902), 0.11, False)  # 4
    c.acl(4, bytes([0x12]) + struct.pack("<HH", 0x0012, 1), 1.0, True)    # 5 subscribed, never notified
    c.acl(4, bytes([0x13]), 1.01, False)                                  # 6
    c.acl(4, bytes([0x12]) + struct.pack("<HH", 0x0015, 1), 2.0, True)    # 7 subscribed
    c.acl(4, bytes([0x13]), 2.01, False)                                  # 8
    c.acl(4, bytes([0x1B]) + struct.pack("<H", 0x0014) + b"\x42", 5.0, False)  # 9 notified: a near miss
    c.acl(4, bytes([0x12]) + struct.pack("<HH", 0x0015, 1), 6.0, True)    # 10 again, refused: a near miss
    c.acl(4, bytes([0x01, 0x12]) + struct.pack("<H", 0x0015) + b"\x03", 6.01, False)  # 11
    c.acl(4, bytes([0x0A]) + struct.pack("<H", 0x0011), 40.0, True)       # 12 the link is still up 39 s on
    return btsnoop(1002, c.records)


def mtu_capture(exchange):
    """An LE link from its LE Connection Complete, 20 notifications of 20 value octets (ATT PDU 23: ATT_MTU 23 full);
    with `exchange`, an Exchange MTU Request and Response first (a near miss)."""
    c = H4()
    c.event(0x3E, bytes([0x01, 0x00]) + struct.pack("<H", 0x0040) + bytes([0, 0]) + bytes.fromhex("112233445566")
            + struct.pack("<HHH", 24, 0, 400) + b"\x00", 0.0)
    if exchange:
        c.acl(4, bytes([0x02]) + struct.pack("<H", 247), 0.1, True)
        c.acl(4, bytes([0x03]) + struct.pack("<H", 247), 0.2, False)
    for index in range(20):
        c.acl(4, bytes([0x1B]) + struct.pack("<H", 0x0011) + bytes(20), 1.0 + index * 0.05, False)
    return btsnoop(1002, c.records)


MTU_EXPECTED = [{"class": "mtu-23-full", "frame": 2, "frames": list(range(2, 22)), "full": 20, "values": 20}]

EXPECTED = [
    {"class": "subscribed-silent", "frame": 5, "frames": [5], "cccd": 0x12, "value_handle": 0x11,
     "value_handle_source": "discovered", "link_seconds": 39.0},
]


def run():
    """The number of mismatches (printed)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis_truth_gatt.py")
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "synthetic-gatt.btsnoop")
        with open(path, "wb") as handle:
            handle.write(capture())
        events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
        if events["events"] != EXPECTED:
            failures += 1
            print("synthetic-gatt.btsnoop:\n  got  %s\n  want %s" % (events["events"], EXPECTED))
        print("synthetic-gatt.btsnoop: %d events checked" % len(EXPECTED))
        for exchange, want in ((False, MTU_EXPECTED), (True, [])):
            with open(path, "wb") as handle:
                handle.write(mtu_capture(exchange))
            events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
            if events["events"] != want:
                failures += 1
                print("synthetic MTU capture (exchange %s):\n  got  %s\n  want %s" % (exchange, events["events"], want))
    return failures


if __name__ == "__main__":
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)
