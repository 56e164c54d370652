#!/usr/bin/env python3
"""Self-test of diagnosis_truth_lmp.py: a btsnoop H4 capture whose controller traces LMP as H4 packet type 0x07 (the
BLUFFS captures' form), written from the LMP layouts (Core Spec Vol 2, Part C, 5: opcode << 1 | TID; 16
LMP_encryption_key_size_req, 3 LMP_accepted, 17 LMP_start_encryption_req), read back through tshark: a 16-byte key,
then a 7-byte one (SEC-08, SEC-09), an EN_RAND of zeros and one repeated (SEC-21); near misses: a first random EN_RAND,
a record that is no trace (`f0 01`), a key size the same side both proposes and "accepts". diagnosis_truth_selftest.py
runs it too. Exit 0 when all match.
"""

from diagnosis_truth_selftest import H4, btsnoop, mismatches, selftest_main

PEER = bytes.fromhex("13f76795")


def sent(pdu):
    return bytes([0x00]) + bytes(4) + PEER + bytes([len(pdu) << 3 | 0x03]) + pdu


def received(pdu):
    return bytes([0x01, 0, 0, 0, 0x8F]) + PEER + bytes([0, 0, 0, 0x8F]) + pdu + bytes(8)


def lmp_capture():
    c = H4()
    random = bytes([0x5A] * 16)
    records = [
        sent(bytes([0x20, 16])),                 # 1 key size 16 proposed
        received(bytes([0x06, 16])),             # 2 accepted
        sent(bytes([0x22]) + random),            # 3 EN_RAND random: a near miss
        sent(bytes([0x20, 7])),                  # 4 key size 7 proposed
        received(bytes([0x06, 16])),             # 5 accepted: SEC-08 and SEC-09
        sent(bytes([0x22]) + bytes(16)),         # 6 EN_RAND zeros: SEC-21
        sent(bytes([0x22]) + random),            # 7 EN_RAND of 3 again: SEC-21
        bytes([0xF0, 0x01]),                     # 8 no trace record
        received(bytes([0x20, 5])),              # 9 the peer proposes 5
        received(bytes([0x06, 16])),             # 10 "accepted" by the peer itself: a near miss
    ]
    for i, data in enumerate(records):
        c.add(0x07, data, 0.1 * i, True)
    return btsnoop(1002, c.records)


EXPECTED = [
    {"class": "lmp-key-size", "frame": 5, "frames": [4, 5], "peer": "13f76795", "size": 7},
    {"class": "lmp-key-size-down", "earlier_frame": 2, "earlier_size": 16, "frame": 5, "frames": [4, 5],
     "peer": "13f76795", "size": 7},
    {"class": "lmp-en-rand-fixed", "frame": 6, "frames": [6], "peer": "13f76795", "zeros": True},
    {"class": "lmp-en-rand-fixed", "frame": 7, "frames": [3, 7], "peer": "13f76795", "zeros": False},
]


def run():
    """The number of mismatches (printed)."""
    failures = mismatches("diagnosis_truth_lmp.py", "synthetic-lmp.btsnoop", lmp_capture(), EXPECTED)
    print("synthetic-lmp.btsnoop: %d events checked" % len(EXPECTED))
    return failures


if __name__ == "__main__":
    selftest_main(run)
