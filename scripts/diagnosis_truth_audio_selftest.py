#!/usr/bin/env python3
"""Self-test of diagnosis_truth_audio.py: one btsnoop H4 capture written byte by byte from the spec layouts (HFP AT
text on an RFCOMM channel SDP never named, ATT discovery and the ASE Control Point of ASCS, HCI ISO data of Core Vol 4,
Part E, 5.4.5), each class beside a near miss, read back through tshark; and a PacketLogger file of ISO records, which
tshark leaves undecoded. The A2DP gap (BR-07) needs a whole AVDTP
configuration for tshark to decode media as RTP and is checked on the real capture docs/diagnosis.md names instead.
diagnosis_truth_selftest.py runs it too. Exit 0 when every event matches.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

from diagnosis_truth_selftest import H4, btsnoop

ACL, ISO = 0x0040, 0x0060


class Capture(H4):
    def l2cap(self, cid, payload, t, sent):
        data = struct.pack("<HH", len(payload), cid) + payload
        self.add(2, struct.pack("<HH", ACL | 0x2000, len(data)) + data, t, sent)

    def rfcomm(self, control, text, t, sent):
        """A frame on DLCI 2 (Vol TS 07.10: address EA=1, C/R, DLCI; length EA=1; FCS)."""
        payload = text.encode()
        frame = bytes([(2 << 2) | (2 if sent else 0) | 1, control, len(payload) << 1 | 1]) + payload + b"\x00"
        self.l2cap(0x0041 if sent else 0x0040, frame, t, sent)

    def att(self, payload, t, sent):
        self.l2cap(4, payload, t, sent)

    def iso(self, seq, status, t, pb=2):
        load = struct.pack("<HH", seq, 4 | status << 14) + b"\x01\x02\x03\x04"
        self.add(5, struct.pack("<HH", ISO | pb << 12, len(load)) + load, t, False)


def capture():
    c = Capture()
    c.l2cap(1, bytes([0x02, 1]) + struct.pack("<HHH", 4, 0x0003, 0x0040), 0.0, True)               # 1 RFCOMM
    c.l2cap(1, bytes([0x03, 1]) + struct.pack("<HHHHH", 8, 0x0041, 0x0040, 0, 0), 0.01, False)     # 2
    c.rfcomm(0xEF, "AT+BRSF=191\r", 1.0, True)                           # 3
    c.rfcomm(0xEF, "\r\n+BRSF: 871\r\n", 1.01, False)                    # 4
    c.rfcomm(0xEF, "\r\nOK\r\n", 1.02, False)                            # 5 answered OK: a near miss
    c.rfcomm(0xEF, "AT+BAC=1,2\r", 1.1, True)                            # 6 offers mSBC
    c.rfcomm(0xEF, "\r\nOK\r\n", 1.11, False)                            # 7
    c.rfcomm(0xEF, "AT+CIND=?\r", 1.2, True)                             # 8
    c.rfcomm(0xEF, "\r\nERROR\r\n", 1.21, False)                         # 9 an SLC step refused
    c.rfcomm(0xEF, "\r\n+BCS: 1\r\n", 2.0, False)                        # 10 CVSD after mSBC offered
    c.rfcomm(0xEF, "\r\n+BCS: 2\r\n", 2.1, False)                        # 11 mSBC: a near miss
    c.rfcomm(0x53, "", 3.0, True)                                        # 12 DISC before the SLC was up
    c.att(bytes([0x08]) + struct.pack("<HHH", 1, 0xFFFF, 0x2803), 4.0, True)                         # 13
    c.att(bytes([0x09, 7]) + struct.pack("<HBHH", 0x001D, 0x1C, 0x001E, 0x2BC6), 4.01, False)         # 14
    c.att(bytes([0x12]) + struct.pack("<H", 0x001E) + bytes([0x02, 1, 1, 0x10]), 4.1, True)          # 15 Config QoS
    c.att(bytes([0x13]), 4.11, False)                                    # 16
    c.att(bytes([0x1B]) + struct.pack("<H", 0x001E) + bytes([0x02, 1, 1, 0x09, 0x02]), 4.12, False)  # 17 refused
    c.att(bytes([0x1B]) + struct.pack("<H", 0x001E) + bytes([0x02, 1, 1, 0x00, 0x00]), 4.2, False)  # 18 a near miss
    c.iso(10, 0, 5.00)                                                   # 19
    c.iso(11, 0, 5.01)                                                   # 20
    c.iso(13, 0, 5.03)                                                   # 21 12 skipped
    c.iso(14, 2, 5.04)                                                   # 22 lost data
    c.iso(12, 0, 5.05)                                                   # 23 a step back: no loss
    c.iso(15, 0, 5.06)                                                   # 24
    c.iso(16, 0, 5.07, pb=0)                                             # 25 a first fragment
    c.add(5, struct.pack("<HH", ISO | 3 << 12, 4) + b"\x05\x06\x07\x08", 5.071, False)  # 26 its last fragment
    c.iso(17, 0, 5.08)                                                   # 27 no loss: 16 was the fragmented SDU
    c.l2cap(1, bytes([0x02, 9]) + struct.pack("<HHH", 4, 0x0019, 0x0042), 6.0, True)               # 28 AVDTP
    c.l2cap(1, bytes([0x03, 9]) + struct.pack("<HHHHH", 8, 0, 0x0042, 1, 2), 6.01, False)         # 29 pending
    c.l2cap(1, bytes([0x03, 9]) + struct.pack("<HHHHH", 8, 0, 0x0042, 3, 0), 6.02, False)         # 30 security block
    return btsnoop(1002, c.records)


def packetlogger():
    """PacketLogger records (length, seconds, microseconds, little-endian as Apple writes them; type, data): three HCI
    Resets and their Command Completes (tshark knows the format by its first records being of types it knows), then
    HCI ISO data received (type 0x13, which tshark 4.0.17 leaves undecoded), Time_Stamp flag set: sequence 10, 12."""
    out, seconds = b"", 1_700_000_123  # a low octet of 0 would read as a CommView header's version
    for known in [bytes([0x00]) + struct.pack("<HB", 0x0C03, 0),
                  bytes([0x01, 0x0E, 4, 1]) + struct.pack("<HB", 0x0C03, 0)] * 3:
        out += struct.pack("<III", len(known) + 8, seconds, 0) + known
    for index, seq in enumerate((10, 12)):
        load = struct.pack("<IHH", 1000 * index, seq, 4) + b"\x01\x02\x03\x04"
        data = bytes([0x13]) + struct.pack("<HH", ISO | 2 << 12 | 1 << 14, len(load)) + load
        out += struct.pack("<III", len(data) + 8, seconds, (index + 1) * 10_000) + data
    return out


PACKETLOGGER_EXPECTED = [
    {"class": "iso-sdu-lost", "frame": 8, "frames": [8], "handle": ISO, "direction": "received", "lost": 1,
     "status": 0, "prev_frame": 7},
]

EXPECTED = [
    {"class": "hfp-slc-failed", "frame": 9, "frames": [8, 9], "step": "CIND"},
    {"class": "hfp-narrowband", "frame": 10, "frames": [6, 10], "how": "+BCS CVSD"},
    {"class": "hfp-slc-failed", "frame": 12, "frames": [3, 12], "step": "closed"},
    {"class": "ase-operation-refused", "frame": 17, "frames": [15, 17], "opcode": 2, "codes": [9]},
    {"class": "iso-sdu-lost", "frame": 21, "frames": [21], "handle": ISO, "direction": "received", "lost": 1,
     "status": 0, "prev_frame": 20},
    {"class": "iso-sdu-lost", "frame": 22, "frames": [22], "handle": ISO, "direction": "received", "lost": 1,
     "status": 2, "prev_frame": 21},
    {"class": "l2cap-channel-refused", "frame": 30, "frames": [28, 30], "psm": 0x0019, "result": 3},
]


def run():
    """The number of mismatches (printed)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis_truth_audio.py")
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "synthetic-audio.btsnoop")
        with open(path, "wb") as handle:
            handle.write(capture())
        out = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
        events = json.loads(out.stdout)["events"]
        for index in range(max(len(events), len(EXPECTED))):
            got = events[index] if index < len(events) else None
            want = EXPECTED[index] if index < len(EXPECTED) else None
            if got != want:
                failures += 1
                print("synthetic-audio.btsnoop event %d:\n  got  %s\n  want %s" % (index, got, want))
        print("synthetic-audio.btsnoop: %d events checked" % len(EXPECTED))
        path = os.path.join(directory, "synthetic-iso.pklg")
        with open(path, "wb") as handle:
            handle.write(packetlogger())
        out = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
        if json.loads(out.stdout)["events"] != PACKETLOGGER_EXPECTED:
            failures += 1
            print("synthetic-iso.pklg:\n  got  %s\n  want %s" % (out.stdout, PACKETLOGGER_EXPECTED))
    return failures


if __name__ == "__main__":
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)
