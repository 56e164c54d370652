#!/usr/bin/env python3
"""Self-test of diagnosis_truth_attempts.py: one pcap LT 256 capture written from the link-layer layouts (Vol 6, Part B,
2.3.3.1 CONNECT_IND, 2.4 data PDUs; Vol 3, Part H, 3.5.1 Pairing Request, 3.6.2 Encryption Information), read back
through tshark: 9 attempts by one central, 2 s apart, each a Pairing Request and nothing after (SC-02), then 9 attempts
by another central to the same device, each paired with keys and terminated (a near miss). diagnosis_truth_selftest.py
runs it too. Exit 0 when all match.
"""

import struct

from diagnosis_truth_selftest import mismatches, selftest_main

ADVERTISING_AA = 0x8E89BED6
CENTRAL_A, CENTRAL_B, DEVICE = "c0:00:00:00:00:0a", "c0:00:00:00:00:0b", "d0:00:00:00:00:01"


def pdu(aa, first, payload):
    header = bytes([10, 0, 0, 0]) + struct.pack("<IH", aa, 0x0C11)  # dewhitened, reference AA valid, CRC checked and valid
    return header + struct.pack("<I", aa) + bytes([first, len(payload)]) + payload + bytes(3)


def address(text):
    return bytes.fromhex(text.replace(":", ""))[::-1]


def connect_ind(central, aa):
    ll_data = struct.pack("<I", aa) + bytes(3) + bytes([2]) + struct.pack("<HHHH", 0, 24, 0, 400) + b"\xff" * 4 \
        + b"\x1f" + bytes([5])
    return pdu(ADVERTISING_AA, 0x05 | 0x40 | 0x80, address(central) + address(DEVICE) + ll_data)


def smp(aa, payload):
    return pdu(aa, 2, struct.pack("<HH", len(payload), 0x0006) + payload)


def capture():
    packets, time = [], 0.0
    for index in range(9):                              # frames 1-18: CONNECT_IND, Pairing Request
        aa = 0x50000000 + index
        packets += [(time, connect_ind(CENTRAL_A, aa)), (time + 0.05, smp(aa, bytes([0x01, 3, 0, 1, 16, 0, 0])))]
        time += 2.0
    time = 100.0
    for index in range(9):                              # frames 19-54: paired, keys given, terminated
        aa = 0x60000000 + index
        packets += [(time, connect_ind(CENTRAL_B, aa)), (time + 0.05, smp(aa, bytes([0x01, 3, 0, 1, 16, 1, 1]))),
                    (time + 0.1, smp(aa, bytes([0x06]) + bytes(16))), (time + 0.2, pdu(aa, 3, bytes([0x02, 0x13])))]
        time += 2.0
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 256)
    for seconds, data in packets:
        whole = 1_700_000_000 + int(seconds)
        out += struct.pack("<IIII", whole, round((seconds - int(seconds)) * 1e6), len(data), len(data)) + data
    return out


EXPECTED = [{"class": "attempt-run", "frame": 17, "frames": [1, 17, 18], "initiator": CENTRAL_A, "advertiser": DEVICE,
             "attempts": 9, "abnormal": 9, "pairings_started": 9, "pairings_failed": 0, "pairings_unfinished": 9,
             "encryption_refused": 0, "malformed": 0, "abandoned": 8}]


def run():
    """The number of mismatches (printed)."""
    failures = mismatches("diagnosis_truth_attempts.py", "synthetic-attempts.pcap", capture(), EXPECTED)
    print("synthetic-attempts.pcap: %d events checked" % len(EXPECTED))
    return failures


if __name__ == "__main__":
    selftest_main(run)
