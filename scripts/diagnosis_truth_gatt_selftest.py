#!/usr/bin/env python3
"""Self-test of diagnosis_truth_gatt.py: one btsnoop H4 capture written from the ATT layouts (Core Vol 3, Part F,
3.4): a discovery (characteristic declarations, descriptors), a subscription nothing notified for 30 s beside one
notified and one refused; ATT_MTU 23 filled by 20 notifications, beside the same after an MTU exchange; and
notifying characteristics read or written around and never subscribed, or subscribed to a mode they do not declare,
beside near misses (unsubscribed_capture); long values read in pieces at ATT_MTU 23, again and again or once, on a
link whose handle a later link reuses (pieces_capture); read back through tshark. diagnosis_truth_selftest.py runs it too. Exit 0 when all match.
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


def pieces_capture(reads, every, end):
    """An LE link whose client reads a 110-octet value of 0x0025 `reads` times, `every` s apart from 1 s on, in 4 Read
    Blobs each (offsets 22-88, Vol 3, Part F, 3.4.4.5) answered 30 ms later, closed at `end` s; then a new link on the
    same handle that exchanges MTU (its state must not replace the first link's)."""
    c, connection = H4(), bytes([0x01, 0x00]) + struct.pack("<H", 0x0040) + bytes([0, 0]) + bytes.fromhex(
        "112233445566") + struct.pack("<HHH", 24, 0, 400) + b"\x00"
    c.event(0x3E, connection, 0.0)
    for read in range(reads):
        for piece, offset in enumerate((22, 44, 66, 88)):
            at = 1.0 + read * every + piece * 0.06
            c.acl(4, bytes([0x0C]) + struct.pack("<HH", 0x0025, offset), at, True)
            c.acl(4, bytes([0x0D]) + bytes(22), at + 0.03, False)
    c.event(0x05, b"\x00" + struct.pack("<H", 0x0040) + b"\x13", end)
    c.event(0x3E, connection, end + 1)
    c.acl(4, bytes([0x02]) + struct.pack("<H", 247), end + 1.1, True)
    return btsnoop(1002, c.records)


def pieces(reads, round_trips, link, **benign):
    """The pieces event; and, from 20 responses on, mtu-23-full too (each Read Blob Response fills ATT_MTU 23)."""
    frames = [2 + 2 * i for i in range(4 * reads)]
    full = [{"class": "mtu-23-full", "frame": 3, "frames": [f + 1 for f in frames], "full": 4 * reads,
             "values": 4 * reads}] if 4 * reads >= 20 else []
    return [dict({"class": "mtu-23-pieces", "frame": 2, "frames": frames, "requests": 4 * reads, "runs": reads,
                  "repeated": reads, "round_trip_seconds": round_trips, "link_seconds": link}, **benign)] + full


def unsubscribed_capture():
    """A discovery of three services and their characteristics (Read By Group Type, Read By Type of 0x2803, Find
    Information: Vol 3, Part F, 3.4.4.10, 3.4.4.2, 3.4.3.2), then: a notifying characteristic read and never subscribed
    (GATT-03), one whose CCCD is set to indications while it only notifies (GATT-03), a service written to whose
    notifying characteristic nothing subscribed or notified (GATT-03); near misses: one subscribed as it declares, a
    read-only one read, a service written to whose characteristic notified unsubscribed."""
    c = H4()
    c.acl(4, bytes([0x10]) + struct.pack("<HHH", 1, 0xFFFF, 0x2800), 0.0, True)                  # 1
    c.acl(4, bytes([0x11, 6]) + struct.pack("<HHH", 0x0001, 0x000C, 0x180F)
          + struct.pack("<HHH", 0x000D, 0x0012, 0xFFF0) + struct.pack("<HHH", 0x0013, 0x0018, 0xFFE0), 0.01, False)
    c.acl(4, bytes([0x08]) + struct.pack("<HHH", 1, 0xFFFF, 0x2803), 0.1, True)                  # 3
    declarations = [(0x0002, 0x12, 0x2A19), (0x0005, 0x12, 0x2A1A), (0x0008, 0x22, 0x2A1B), (0x000B, 0x02, 0xFFE3),
                    (0x000E, 0x10, 0xFFF1), (0x0011, 0x08, 0xFFF2), (0x0014, 0x10, 0xFFE1), (0x0017, 0x08, 0xFFE2)]
    c.acl(4, bytes([0x09, 7]) + b"".join(struct.pack("<HBHH", d, p, d + 1, u) for d, p, u in declarations), 0.11, False)
    c.acl(4, bytes([0x04]) + struct.pack("<HH", 0x0004, 0x0016), 0.2, True)                      # 5
    c.acl(4, bytes([0x05, 1]) + b"".join(struct.pack("<HH", h, 0x2902) for h in (0x0004, 0x0007, 0x000A, 0x0010, 0x0016)),
          0.21, False)                                                                              # 6
    for frame_time, handle in ((1.0, 0x0003), (2.0, 0x0006)):
        c.acl(4, bytes([0x0A]) + struct.pack("<H", handle), frame_time, True)   # 7 read, never subscribed; 9
        c.acl(4, bytes([0x0B, 0x64]), frame_time + 0.01, False)               # 8, 10
    c.acl(4, bytes([0x12]) + struct.pack("<HH", 0x0007, 2), 3.0, True)  # 11 indications on a notify-only one
    c.acl(4, bytes([0x13]), 3.01, False)                                 # 12
    c.acl(4, bytes([0x0A]) + struct.pack("<H", 0x0009), 4.0, True)      # 13 read, then subscribed: a near miss
    c.acl(4, bytes([0x0B, 0x01]), 4.01, False)                           # 14
    c.acl(4, bytes([0x12]) + struct.pack("<HH", 0x000A, 2), 4.1, True)  # 15 indications, as declared
    c.acl(4, bytes([0x13]), 4.11, False)                                 # 16
    c.acl(4, bytes([0x0A]) + struct.pack("<H", 0x000C), 5.0, True)      # 17 read-only: a near miss
    c.acl(4, bytes([0x0B, 0x02]), 5.01, False)                           # 18
    c.acl(4, bytes([0x52]) + struct.pack("<H", 0x0012) + b"\x01", 6.0, True)  # 19 to service 0xFFF0: 0x000F silent
    c.acl(4, bytes([0x52]) + struct.pack("<H", 0x0018) + b"\x01", 7.0, True)  # 20 to service 0xFFE0
    c.acl(4, bytes([0x1B]) + struct.pack("<H", 0x0015) + b"\x07", 7.1, False)  # 21 its 0x0015 notified: a near miss
    return btsnoop(1002, c.records)


UNSUBSCRIBED_EXPECTED = [
    # No connection in the capture: the 58-octet Read By Type Response passes 23 on a link whose MTU is not known.
    {"class": "mtu-unknown", "frame": 4, "frames": [4]},
    {"class": "notify-unsubscribed", "frame": 7, "frames": [7], "reads": 1, "value_handle": 0x0003,
     "wrote_service": False},
    {"class": "cccd-value-unsupported", "frame": 11, "frames": [11], "cccd": 0x0007, "value_handle": 0x0006, "value": 2},
    {"class": "notify-unsubscribed", "frame": 19, "frames": [19], "reads": 0, "value_handle": 0x000F,
     "wrote_service": True},
]


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
        cases = ((mtu_capture(False), MTU_EXPECTED), (mtu_capture(True), []),
                 (unsubscribed_capture(), UNSUBSCRIBED_EXPECTED),
                 # Re-read every 2 s: 1.2 s of 21 s, warned; once at connect, and every minute (0.2 %): benign.
                 (pieces_capture(10, 2, 21), pieces(10, 1.2, 21.0)),
                 (pieces_capture(1, 2, 45.5), pieces(1, 0.12, 45.5, benign="value moved once")),
                 (pieces_capture(10, 60, 600), pieces(10, 1.2, 600.0, benign="pieces cheap")))
        for data, want in cases:
            with open(path, "wb") as handle:
                handle.write(data)
            events = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)
            if events["events"] != want:
                failures += 1
                print("synthetic capture:\n  got  %s\n  want %s" % (events["events"], want))
        print("synthetic MTU and GATT-03 captures: %d events checked" % sum(len(want) for _data, want in cases))
    return failures


if __name__ == "__main__":
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)
