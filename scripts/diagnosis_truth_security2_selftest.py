#!/usr/bin/env python3
"""Self-test of diagnosis_truth_security2.py: one btsnoop H4 capture written byte by byte from the Core spec layouts
(Vol 4, Part E, 7.1 and 7.7; Vol 3, Part H, 3.5), each class with a near miss that must stay quiet, read back through
tshark. diagnosis_truth_selftest.py runs it too (DiagnosisTruthTests). Exit 0 when every event matches.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

from diagnosis_truth_selftest import H4, btsnoop

PEER = {n: bytes([0xC0 | n, 0x11, 0x22, 0x33, 0x44, n]) for n in range(1, 9)}  # wire order (little-endian)
K1, K2, K3, K4, K5, K6 = (bytes([n]) * 16 for n in (0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6))
# The debug public key of Vol 3, Part H, 2.3.5.6.1, X and Y least significant octet first (on P-256: a near miss).
DEBUG_KEY = bytes.fromhex("e69d350e480103ccdbfdf4ac1191f4efb9a5f9e9a7832c5e2cbe97f2d203b020"
                          "8bd28915d08e1c742430ed8fc24563765c15525abf9a32636deb2a65499c80dc")


def name(n):
    return ":".join("%02x" % b for b in PEER[n][::-1])


class Capture(H4):
    def le_connected(self, handle, n, t):
        self.event(0x3E, bytes([0x01, 0x00]) + struct.pack("<H", handle) + bytes([0, 1]) + PEER[n]
                   + struct.pack("<HHH", 24, 0, 400) + b"\x00", t)

    def disconnected(self, handle, t):
        self.event(0x05, b"\x00" + struct.pack("<H", handle) + b"\x13", t)

    def l2cap(self, handle, cid, payload, t, sent):
        data = struct.pack("<HH", len(payload), cid) + payload
        self.add(2, struct.pack("<HH", handle | 0x2000, len(data)) + data, t, sent)

    def pairing(self, handle, opcode, io, authreq, size, t, oob=0):
        self.l2cap(handle, 6, bytes([opcode, io, oob, authreq, size, 1, 1]), t, opcode == 0x01)

    def start(self, handle, rand, ediv, key, t):
        self.command(0x2019, struct.pack("<HQH", handle, rand, ediv) + key, t)

    def change_v2(self, handle, size, t):
        self.event(0x59, b"\x00" + struct.pack("<H", handle) + bytes([1, size]), t)


def capture():
    c = Capture()
    c.le_connected(0x40, 1, 0.0)                                          # 1
    c.pairing(0x40, 0x01, 0x04, 0x05, 16, 1.0)                            # 2 KeyboardDisplay, bonding, MITM
    c.pairing(0x40, 0x02, 0x03, 0x01, 7, 1.1)                             # 3 NoInputNoOutput: legacy Just Works, 7
    c.start(0x40, 0x1122, 0, K1, 2.0)                                     # 4 the STK with a Rand
    c.change_v2(0x40, 7, 2.1)                                             # 5
    c.disconnected(0x40, 3.0)                                             # 6
    c.le_connected(0x41, 2, 4.0)                                          # 7
    c.pairing(0x41, 0x01, 0x01, 0x0D, 16, 4.1)                            # 8 SC, DisplayYesNo both: NC
    c.pairing(0x41, 0x02, 0x01, 0x0D, 16, 4.2)                            # 9
    c.start(0x41, 0, 0, K1, 5.0)                                          # 10 zeros; K1 again, another peer
    c.change_v2(0x41, 0, 5.1)                                             # 11 no key size reported
    c.disconnected(0x41, 6.0)                                             # 12
    c.le_connected(0x42, 1, 7.0)                                          # 13 peer 1 again, bonded
    c.l2cap(0x42, 4, bytes([0x0A, 0x03, 0x00]), 7.1, True)               # 14 ATT Read Request, no encryption
    c.disconnected(0x42, 8.0)                                             # 15
    c.le_connected(0x43, 2, 9.0)                                          # 16 peer 2 again, bonded
    c.l2cap(0x43, 4, bytes([0x0A, 0x03, 0x00]), 9.1, True)               # 17
    c.start(0x43, 0, 0, K2, 9.2)                                          # 18 encrypted: a near miss
    c.change_v2(0x43, 16, 9.3)                                            # 19
    c.disconnected(0x43, 10.0)                                            # 20
    c.le_connected(0x44, 2, 11.0)                                         # 21
    c.start(0x44, 0, 0, K2, 11.1)                                         # 22
    c.change_v2(0x44, 12, 11.2)                                           # 23 12 after 16: down
    c.disconnected(0x44, 12.0)                                            # 24
    c.le_connected(0x45, 3, 13.0)                                         # 25
    c.pairing(0x45, 0x01, 0x03, 0x01, 16, 13.1)                           # 26 legacy Just Works, no MITM
    c.pairing(0x45, 0x02, 0x03, 0x01, 16, 13.2)                           # 27
    c.l2cap(0x45, 6, b"\x0c" + DEBUG_KEY, 13.3, True)                     # 28 a public key in a legacy pairing
    c.pairing(0x45, 0x01, 0x03, 0x09, 16, 14.0)                           # 29 SC Just Works, no MITM
    c.pairing(0x45, 0x02, 0x03, 0x09, 16, 14.1)                           # 30
    c.l2cap(0x45, 6, b"\x0c" + bytes([1]) + bytes(31) + bytes([1]) + bytes(31), 14.2, True)  # 31 (1, 1): off P-256
    c.l2cap(0x45, 6, b"\x0c" + DEBUG_KEY, 14.3, False)                    # 32 on P-256: a near miss
    c.event(0x16, PEER[4], 15.0)                                          # 33 PIN Code Request
    c.event(0x31, PEER[5], 16.0)                                          # 34 IO Capability Request
    c.command(0x042B, PEER[5] + bytes([0x01, 0x00, 0x03]), 16.1)         # 35 DisplayYesNo, MITM
    c.event(0x32, PEER[5] + bytes([0x03, 0x00, 0x02]), 16.2)             # 36 NoInputNoOutput
    c.event(0x33, PEER[5] + struct.pack("<I", 0), 16.3)                   # 37
    c.event(0x36, b"\x00" + PEER[5], 16.4)                                # 38
    c.event(0x18, PEER[5] + K3 + b"\x04", 16.5)                           # 39 unauthenticated P-192
    c.event(0x31, PEER[6], 17.0)                                          # 40 near miss: Numeric Comparison
    c.command(0x042B, PEER[6] + bytes([0x01, 0x00, 0x03]), 17.1)         # 41
    c.event(0x32, PEER[6] + bytes([0x01, 0x00, 0x03]), 17.2)             # 42
    c.event(0x33, PEER[6] + struct.pack("<I", 0), 17.3)                   # 43
    c.event(0x36, b"\x00" + PEER[6], 17.4)                                # 44
    c.event(0x18, PEER[6] + K4 + b"\x05", 17.5)                           # 45 authenticated P-192
    c.le_connected(0x46, 3, 18.0)                                         # 46
    c.pairing(0x46, 0x01, 0x02, 0x05, 16, 18.1)                           # 47 KeyboardOnly, MITM
    c.pairing(0x46, 0x02, 0x00, 0x01, 16, 18.2)                           # 48 DisplayOnly: legacy Passkey Entry
    c.le_connected(0x47, 2, 19.0)                                         # 49 peer 2 again
    c.change_v2(0x47, 0, 19.1)                                            # 50 0 after 16: no size, no fall
    c.l2cap(0x46, 4, bytes([0x0A, 0x03, 0x00]), 20.0, True)              # 51 ATT, unencrypted, no bond: quiet
    c.pairing(0x46, 0x01, 0x03, 0x01, 16, 20.1, oob=1)                    # 52 legacy OOB: the TK is not in the
    c.pairing(0x46, 0x02, 0x03, 0x01, 16, 20.2, oob=1)                    # 53 capture, a near miss
    c.l2cap(0x46, 6, b"\x08" + bytes(16), 20.3, False)                   # 54 Identity Information, IRK zero
    c.l2cap(0x46, 6, b"\x08" + K3, 20.4, True)                           # 55 a real IRK: a near miss
    c.event(0x31, PEER[7], 21.0)                                          # 56 Numeric Comparison, MITM
    c.command(0x042B, PEER[7] + bytes([0x01, 0x00, 0x03]), 21.1)         # 57
    c.event(0x32, PEER[7] + bytes([0x01, 0x00, 0x03]), 21.2)             # 58
    c.event(0x33, PEER[7] + struct.pack("<I", 81602), 21.3)               # 59 User Confirmation Request
    c.command(0x042C, PEER[7], 21.305)                                    # 60 confirmed 5 ms later: the host
    c.event(0x36, b"\x00" + PEER[7], 21.4)                                # 61
    c.event(0x18, PEER[7] + K5 + b"\x05", 21.5)                           # 62 authenticated P-192
    c.event(0x31, PEER[8], 22.0)                                          # 63 near miss: a user's 2.5 s
    c.command(0x042B, PEER[8] + bytes([0x01, 0x00, 0x03]), 22.1)         # 64
    c.event(0x32, PEER[8] + bytes([0x01, 0x00, 0x03]), 22.2)             # 65
    c.event(0x33, PEER[8] + struct.pack("<I", 974086), 22.3)              # 66
    c.command(0x042C, PEER[8], 24.8)                                      # 67
    c.event(0x36, b"\x00" + PEER[8], 24.9)                                # 68
    c.event(0x18, PEER[8] + K6 + b"\x05", 25.0)                           # 69
    return btsnoop(1002, c.records)


EXPECTED = [
    {"class": "legacy-pairing", "frame": 2, "frames": [2, 3], "method": "Just Works", "link": "0/64"},
    {"class": "key-size-short", "frame": 3, "frames": [2, 3], "size": 7, "source": "smp", "link": "0/64"},
    {"class": "mitm-not-achieved", "frame": 3, "frames": [2, 3], "method": "Just Works", "pairing": "legacy",
     "link": "0/64"},
    {"class": "ediv-rand-nonzero", "frame": 4, "frames": [2, 4], "key": "stk", "ediv": 0, "rand": 0x1122,
     "link": "0/64"},
    {"class": "key-size-short", "frame": 5, "frames": [5], "size": 7, "source": "hci", "link": "0/64"},
    {"class": "same-key-peers", "frame": 10, "frames": [4, 10], "what": "LTK", "peers": [name(1), name(2)]},
    {"class": "key-size-short", "frame": 11, "frames": [11], "size": 0, "source": "hci", "link": "0/65",
     "benign": "no key size reported"},
    {"class": "bonded-link-unencrypted", "frame": 13, "frames": [13], "peer": name(1), "link": "0/66",
     "bond_frame": 2, "att_pdus": 1},
    {"class": "key-size-down", "frame": 23, "frames": [23], "size": 12, "earlier_size": 16, "earlier_frame": 19,
     "peer": name(2)},
    {"class": "key-size-short", "frame": 23, "frames": [23], "size": 12, "source": "hci", "link": "0/68"},
    {"class": "legacy-pairing", "frame": 26, "frames": [26, 27], "method": "Just Works", "link": "0/69"},
    {"class": "public-key-invalid", "frame": 28, "frames": [28], "why": "legacy pairing", "pairing_frame": 26,
     "link": "0/69"},
    {"class": "public-key-invalid", "frame": 31, "frames": [31], "why": "not on P-256", "link": "0/69"},
    {"class": "legacy-pairing", "frame": 33, "frames": [33], "method": "PIN", "peer": name(4)},
    {"class": "mitm-not-achieved", "frame": 34, "frames": [34, 35, 36, 37, 38, 39], "method": "Just Works",
     "pairing": "ssp", "key_type": 4, "peer": name(5)},
    {"class": "legacy-pairing", "frame": 47, "frames": [47, 48], "method": "Passkey Entry", "link": "0/70"},
    {"class": "key-size-short", "frame": 50, "frames": [50], "size": 0, "source": "hci", "link": "0/71",
     "benign": "no key size reported"},
    {"class": "irk-zero", "frame": 54, "frames": [54], "link": "0/70"},
    {"class": "host-answered-user-step", "frame": 60, "frames": [59, 60, 62], "method": "Numeric Comparison",
     "microseconds": 5000, "key_type": 5, "peer": name(7)},
]


def run():
    """The number of mismatches (printed)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis_truth_security2.py")
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "synthetic-security.btsnoop")
        with open(path, "wb") as handle:
            handle.write(capture())
        out = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
        events = json.loads(out.stdout)["events"]
        for index in range(max(len(events), len(EXPECTED))):
            got = events[index] if index < len(events) else None
            want = EXPECTED[index] if index < len(EXPECTED) else None
            if got != want:
                failures += 1
                print("synthetic-security.btsnoop event %d:\n  got  %s\n  want %s" % (index, got, want))
        print("synthetic-security.btsnoop: %d events checked" % len(EXPECTED))
    return failures


if __name__ == "__main__":
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)
