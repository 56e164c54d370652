#!/usr/bin/env python3
"""Self-test of diagnosis_truth.py for the classes no real capture shows.

Writes two small captures into a temporary directory, byte by byte from the Core spec layouts
(btsnoop H4 1002: a 30 s create/cancel, Enhanced Connection Complete v2 0x29, Encryption Change v1
and v2, LTK negative reply, PHY and connection update failures, an L2CAP parameter update
rejected, SMP Pairing Failed, authenticated payload timeout, data buffer overflow, hardware
error, a command flushed unanswered by a Reset, a MIC-failure disconnect; Linux monitor 2001: two
adapters using the same handle; H4 again: an SMP pairing whose timer runs out, one that completes,
one cut by a disconnection; LT 256 air: an LL_REJECT_EXT_IND of the wrong length, LL_TERMINATE_IND
0x13 opening a connection event and answering one; H4: a direct connect timed out across an address
rotation), runs diagnosis_truth.py on them (tshark decodes
them) and compares every event with the values written here; then the cases of diagnosis_truth_security2_selftest.py,
diagnosis_truth_audio_selftest.py, diagnosis_truth_linklayer_selftest.py, diagnosis_truth_capture_selftest.py,
diagnosis_truth_gatt_selftest.py, diagnosis_truth_host_selftest.py, diagnosis_truth_throughput_selftest.py,
diagnosis_truth_attempts_selftest.py and diagnosis_truth_lmp_selftest.py.
Exit 0 when all match.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

BTSNOOP_EPOCH = 0x00DCDDB30F2F8000 + 1_700_000_000_000_000  # microseconds, 2023-11-14
HANDLE = 0x0040


def btsnoop(datalink, records):
    return b"btsnoop\0" + struct.pack(">II", 1, datalink) + b"".join(records)


def mismatches(script, name, data, expected):
    """Writes `data` as `name` in a temporary directory, runs the truth `script` (beside this file) on it and prints
    each event that differs from `expected`: the number of mismatches."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, name)
        with open(path, "wb") as handle:
            handle.write(data)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
        got = json.loads(subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout)["events"]
    failures = 0
    for index in range(max(len(got), len(expected))):
        have = got[index] if index < len(got) else None
        want = expected[index] if index < len(expected) else None
        if have != want:
            failures += 1
            print("%s event %d:\n  got  %s\n  want %s" % (name, index, have, want))
    return failures


def selftest_main(run):
    """A self-test script's exit: OK and 0 when `run()` found no mismatch."""
    failed = run()
    print("FAIL: %d" % failed if failed else "OK")
    sys.exit(1 if failed else 0)


def record(data, seconds, flags):
    return struct.pack(">IIIIq", len(data), len(data), flags, 0,
                       BTSNOOP_EPOCH + int(seconds * 1e6)) + data


class H4:
    def __init__(self):
        self.records = []

    def add(self, kind, data, seconds, sent):
        flags = (0 if sent else 1) | (2 if kind in (1, 4) else 0)
        self.records.append(record(bytes([kind]) + data, seconds, flags))

    def command(self, opcode, params, seconds):
        self.add(1, struct.pack("<HB", opcode, len(params)) + params, seconds, True)

    def event(self, code, params, seconds):
        self.add(4, bytes([code, len(params)]) + params, seconds, False)

    def status(self, opcode, status, seconds):
        self.event(0x0F, bytes([status, 1]) + struct.pack("<H", opcode), seconds)

    def complete(self, opcode, ret, seconds):
        self.event(0x0E, bytes([1]) + struct.pack("<H", opcode) + ret, seconds)

    def acl(self, cid, payload, seconds, sent):
        l2cap = struct.pack("<HH", len(payload), cid) + payload
        self.add(2, struct.pack("<HH", HANDLE | 0x2000, len(l2cap)) + l2cap, seconds, sent)


def enhanced_v2(status, peer):
    return (bytes([0x29, status]) + struct.pack("<H", HANDLE) + bytes([0, 1]) + peer[::-1]
            + bytes(12) + struct.pack("<HHH", 24, 0, 400) + bytes([0, 0xFF]) + b"\xff\xff")


def h4_capture():
    c, h = H4(), struct.pack("<H", HANDLE)
    c.command(0x2043, bytes(10), 0.0)                                     # 1
    c.status(0x2043, 0, 0.001)                                            # 2
    c.command(0x200E, b"", 30.0)                                          # 3
    c.complete(0x200E, b"\x00", 30.001)                                   # 4
    c.event(0x3E, enhanced_v2(0x02, bytes(6)), 30.002)                    # 5
    c.command(0x2043, bytes(10), 31.0)                                    # 6
    c.status(0x2043, 0, 31.001)                                           # 7
    c.event(0x3E, enhanced_v2(0x00, bytes.fromhex("aabbccddeeff")), 31.5)  # 8
    c.event(0x08, b"\x06" + h + b"\x00", 32.1)                            # 9
    c.event(0x59, b"\x05" + h + b"\x00\x00", 32.2)                        # 10
    c.event(0x59, b"\x00" + h + b"\x01\x10", 32.3)                        # 11
    c.command(0x201B, h, 32.4)                                            # 12
    c.complete(0x201B, b"\x00" + h, 32.401)                               # 13
    c.event(0x3E, b"\x0c\x1a" + h + b"\x01\x01", 33.0)                    # 14
    c.event(0x3E, b"\x03\x3b" + h + struct.pack("<HHH", 24, 0, 400), 33.1)  # 15
    c.acl(5, bytes([0x13, 0x07]) + struct.pack("<HH", 2, 1), 33.2, False)   # 16
    c.acl(6, bytes([0x05, 0x03]), 33.3, True)                             # 17
    c.acl(4, bytes([0x01, 0x0A, 0x03, 0x00, 0x05]), 33.35, False)         # 18
    c.event(0x57, h, 33.4)                                                # 19
    c.event(0x1A, b"\x01", 33.5)                                          # 20
    c.event(0x10, b"\x03", 33.6)                                          # 21
    c.command(0x200C, b"\x01\x00", 34.0)                                  # 22
    c.command(0x0406, h + b"\x13", 34.5)                                  # 23
    c.status(0x0406, 0, 34.501)                                           # 24
    c.event(0x05, b"\x00" + h + b"\x3d", 37.0)                            # 25
    c.command(0x0C03, b"", 38.0)                                          # 26
    c.complete(0x0C03, b"\x00", 38.1)                                     # 27
    return btsnoop(1002, c.records)


H4_EXPECTED = [
    {"class": "connection-failed", "frame": 5, "status": 2, "peer": None, "create_frame": 1,
     "cancel_frame": 3, "cancel_seconds": 30.0, "attempt_seconds": 30.002, "severity": "critical"},
    {"class": "encryption-error", "frame": 9, "handle": 64, "status": 6, "severity": "critical"},
    {"class": "encryption-error", "frame": 10, "handle": 64, "status": 5, "severity": "critical"},
    {"class": "encryption-started", "frame": 11, "handle": 64, "enabled": 1, "severity": "info"},
    {"class": "ltk-negative-reply", "frame": 12, "handle": 64, "severity": "error"},
    {"class": "phy-update-failed", "frame": 14, "status": 0x1A, "handle": 64, "severity": "error"},
    {"class": "conn-update-rejected", "frame": 15, "status": 0x3B, "handle": 64,
     "severity": "warning"},
    {"class": "conn-update-rejected", "frame": 16, "result": 1, "handle": 64,
     "direction": "received", "severity": "warning"},
    {"class": "pairing-failed", "frame": 17, "reason": 3, "direction": "sent", "handle": 64,
     "severity": "critical"},
    {"class": "att-error", "frame": 18, "request_opcode": 0x0A, "handle": 3, "error": 5,
     "discovery_end": False, "direction": "received", "connection_handle": 64,
     "severity": "error"},
    {"class": "authenticated-payload-timeout", "frame": 19, "handle": 64, "severity": "warning"},
    {"class": "data-buffer-overflow", "frame": 20, "link_type": 1, "severity": "error"},
    {"class": "hardware-error", "frame": 21, "code": 3, "severity": "critical"},
    {"class": "command-unanswered", "frame": 22, "opcode": 0x200C, "severity": "critical"},
    {"class": "disconnection", "frame": 25, "handle": 64, "status": 0, "reason": 0x3D,
     "local_command_frame": 23, "local_reason": 0x13, "connect_frame": 8,
     "seconds_since_connect": 5.5, "quality_report_frame": None, "severity": "critical"},
    {"class": "hci-reset", "frame": 26, "open_links": 0, "benign": "no open link", "severity": "info"},
]


def rotation_capture():
    """Android's direct connect across an address rotation (the Echo Auto log, 12271-12300): device A added, the
    attempt cancelled at 9.1 s to set a new random address and re-created, cancelled again 30 s after the add and A
    removed (its time-out: critical though the last create ran 20.87 s); then B, added 23 s before, removed after a
    2.08 s attempt (an edit: host cancel)."""
    c, a, b = H4(), bytes.fromhex("04da284dcd62")[::-1], bytes.fromhex("112233445566")[::-1]
    for opcode, params, at, answer in ((0x2011, b"\x00" + a, 0.0, "c"), (0x2043, bytes(10), 0.01, "s"),
                                       (0x200E, b"", 9.1, "c"), (None, None, 9.105, None),
                                       (0x2005, bytes(6), 9.12, "c"), (0x2011, b"\x00" + b, 9.125, "c"),
                                       (0x2043, bytes(10), 9.13, "s"), (0x200E, b"", 30.0, "c"),
                                       (None, None, 30.005, None), (0x2012, b"\x00" + a, 30.01, "c"),
                                       (0x2043, bytes(10), 30.02, "s"), (0x200E, b"", 32.1, "c"),
                                       (None, None, 32.106, None), (0x2012, b"\x00" + b, 32.11, "c")):
            if opcode is None:
                c.event(0x3E, enhanced_v2(0x02, bytes(6)), at)
                continue
            c.command(opcode, params, at)
            c.status(opcode, 0, at + 0.001) if answer == "s" else c.complete(opcode, b"\x00", at + 0.001)
    return btsnoop(1002, c.records)


def failed(frame, create, cancel, seconds, attempt, severity, **more):
    event = {"class": "connection-failed", "frame": frame, "status": 2, "peer": None, "create_frame": create,
             "cancel_frame": cancel, "cancel_seconds": seconds, "attempt_seconds": attempt, "severity": severity}
    event.update(more)
    return event


ROTATION_EXPECTED = [
    dict(failed(7, 3, 5, 9.09, 9.095, "info"), benign="host cancel"),
    failed(16, 12, 14, 20.87, 20.875, "critical", removed=["04:da:28:4d:cd:62"], removed_added_seconds=30.0),
    dict(failed(23, 19, 21, 2.08, 2.086, "info", removed=["11:22:33:44:55:66"], removed_added_seconds=22.975),
         benign="host cancel"),
]


def monitor_capture():
    """Two controllers (adapter 0 and 1) each with a link on handle 0x0040."""
    def add(adapter, opcode, data, seconds):
        records.append(record(data, seconds, adapter << 16 | opcode))
    records = []
    complete = (bytes([0x3E, 19, 0x01, 0x00]) + struct.pack("<H", HANDLE) + bytes([0, 0])
                + bytes.fromhex("112233445566") + struct.pack("<HHH", 24, 0, 400) + b"\x00")
    add(0, 3, complete, 0.0)
    add(1, 3, complete, 0.001)
    add(0, 2, struct.pack("<HBHB", 0x0406, 3, HANDLE, 0x13), 2.0)
    add(0, 3, bytes([0x0F, 4, 0, 1]) + struct.pack("<H", 0x0406), 2.001)
    add(0, 3, bytes([0x05, 4, 0]) + struct.pack("<H", HANDLE) + b"\x16", 3.0)
    add(1, 3, bytes([0x05, 4, 0]) + struct.pack("<H", HANDLE) + b"\x08", 3.5)
    add(1, 3, complete, 4.0)                                              # 7 adapter 1 again
    add(1, 2, struct.pack("<HBHB", 0x0406, 3, HANDLE, 0x13), 5.0)        # 8 its own Disconnect
    add(1, 3, bytes([0x0F, 4, 0, 1]) + struct.pack("<H", 0x0406), 5.001)  # 9
    add(1, 3, bytes([0x05, 4, 0]) + struct.pack("<H", HANDLE) + b"\x22", 45.0)  # 10 never acknowledged
    add(0, 3, complete, 46.0)                                             # 11
    add(0, 3, bytes([0x05, 4, 0]) + struct.pack("<H", HANDLE) + b"\x22", 50.0)  # 12 0x22, no Disconnect
    return btsnoop(2001, records)


MONITOR_EXPECTED = [
    {"class": "disconnection", "frame": 5, "handle": 64, "status": 0, "reason": 0x16,
     "local_command_frame": 3, "local_reason": 0x13, "connect_frame": 1,
     "seconds_since_connect": 3.0, "quality_report_frame": None, "adapter": 0,
     "severity": "info"},
    {"class": "disconnection", "frame": 6, "handle": 64, "status": 0, "reason": 0x08,
     "local_command_frame": None, "local_reason": None, "connect_frame": 2,
     "seconds_since_connect": 3.499, "quality_report_frame": None, "adapter": 1,
     "severity": "critical"},
    {"class": "disconnection", "frame": 10, "handle": 64, "status": 0, "reason": 0x22,
     "local_command_frame": 8, "local_reason": 0x13, "connect_frame": 7, "seconds_since_connect": 41.0,
     "quality_report_frame": None, "adapter": 1, "benign": "termination unacknowledged", "severity": "info"},
    {"class": "disconnection", "frame": 12, "handle": 64, "status": 0, "reason": 0x22,
     "local_command_frame": None, "local_reason": None, "connect_frame": 11, "seconds_since_connect": 4.0,
     "quality_report_frame": None, "adapter": 0, "severity": "critical"},
]


def smp(opcode, data=b""):
    return bytes([opcode]) + data


def pairing(opcode, initiator_keys, responder_keys):
    """Pairing Request/Response (Vol 3, Part H, 3.5.1-2): IO capability, OOB, AuthReq (bonding,
    no Secure Connections), max key size 16, key distribution fields."""
    return smp(opcode, bytes([0x03, 0x00, 0x01, 16, initiator_keys, responder_keys]))


def smp_capture():
    """Core Vol 3, Part H, 3.4: the SMP timer restarts with each SMP command a side sends."""
    c, h = H4(), struct.pack("<H", HANDLE)
    complete = (bytes([0x01, 0x00]) + h + bytes([0, 0]) + bytes.fromhex("112233445566")
                + struct.pack("<HHH", 24, 0, 400) + b"\x00")
    c.event(0x3E, complete, 0.0)                                          # 1
    c.acl(6, pairing(0x01, 0x01, 0x01), 1.0, True)                        # 2
    c.acl(6, pairing(0x02, 0x01, 0x01), 1.1, False)                       # 3
    c.acl(6, smp(0x03, bytes(16)), 1.2, True)                             # 4 last sent
    c.acl(6, smp(0x03, bytes(16)), 1.3, False)                            # 5
    c.acl(6, pairing(0x01, 0x00, 0x01), 40.0, True)                       # 6 after 30 s
    c.acl(6, pairing(0x02, 0x00, 0x01), 40.1, False)                      # 7 keys: EncKey
    c.event(0x08, b"\x00" + h + b"\x01", 41.0)                            # 8
    c.acl(6, smp(0x06, bytes(16)), 41.1, False)                           # 9 Encryption Info
    c.acl(6, smp(0x07, bytes(10)), 41.2, False)                           # 10 complete
    c.acl(6, pairing(0x01, 0x00, 0x01), 80.0, True)                       # 11
    c.acl(6, pairing(0x02, 0x00, 0x01), 80.1, False)                      # 12
    c.event(0x05, b"\x00" + h + b"\x13", 85.0)                            # 13
    c.event(0x3E, complete, 86.0)                                         # 14
    c.acl(6, pairing(0x01, 0x00, 0x01), 87.0, True)                       # 15
    c.acl(6, pairing(0x02, 0x00, 0x01), 86.5, False)                      # 16 clock steps back
    return btsnoop(1002, c.records)


SMP_EXPECTED = [
    {"class": "smp-timeout", "frame": 2, "silent_side": "sent", "last_frame": 4,
     "silent_seconds": 38.8, "next_frame": 6, "handle": 64, "severity": "error"},
    {"class": "encryption-started", "frame": 8, "handle": 64, "enabled": 1, "severity": "info"},
    {"class": "pairing-unfinished", "frame": 11, "end": "ended", "end_frame": 13, "handle": 64,
     "severity": "info"},
    {"class": "disconnection", "frame": 13, "handle": 64, "status": 0, "reason": 0x13,
     "local_command_frame": None, "local_reason": None, "connect_frame": 1,
     "seconds_since_connect": 85.0, "quality_report_frame": None, "severity": "error"},
    {"class": "pairing-unfinished", "frame": 15, "end": "clock-backwards", "end_frame": 16,
     "handle": 64, "severity": "info"},
    {"class": "timestamp-step-back", "frame": 16, "step_seconds": 0.5, "severity": "warning"},
]

AA1, AA2, AA3, AA4 = 0x5065A8B1, 0x7A419C22, 0x6B3D5E91, 0x4C8E2A17


LENGTHS = struct.pack("<HHHH", 251, 2120, 251, 2120)  # LL_LENGTH_REQ/RSP CtrData (Vol 6, Part B, 2.4.2.21)


def air_capture():
    """pcap LT 256 (no direction in the format; CRC not checked): data-channel PDUs."""
    def pdu(aa, llid, payload):
        header = bytes([10, 0, 0, 0]) + struct.pack("<IH", aa, 0x0011)  # dewhitened, ref AA valid
        return header + struct.pack("<I", aa) + bytes([llid, len(payload)]) + payload + bytes(3)
    packets = [
        (0.0, pdu(AA1, 1, b"")),                                          # 1 opens an event
        (0.0004, pdu(AA1, 3, bytes([0x11, 0x00, 0x06]) + bytes(19))),     # 2 CtrData 21, not 2
        (0.050, pdu(AA1, 3, bytes([0x11, 0x03, 0x06]))),                  # 3 rejects LL_ENC_REQ
        (0.0504, pdu(AA1, 1, b"")),                                       # 4
        (0.100, pdu(AA1, 3, bytes([0x02, 0x13]))),                        # 5 opens: the central's
        (0.200, pdu(AA2, 1, b"")),                                        # 6
        (0.2004, pdu(AA2, 3, bytes([0x02, 0x13]))),                       # 7 answers: sender unknown
        (0.300, pdu(AA3, 1, b"")),                                        # 8
        (0.3004, pdu(AA3, 3, bytes([0x14]) + LENGTHS)),                   # 9 LL_LENGTH_REQ (answering)
        (0.350, pdu(AA3, 3, bytes([0x11, 0x14, 0x2A]))),                  # 10 rejected: collision
        (0.400, pdu(AA3, 3, bytes([0x14]) + LENGTHS)),                    # 11 LL_LENGTH_REQ again
        (0.4004, pdu(AA3, 3, bytes([0x15]) + LENGTHS)),                   # 12 LL_LENGTH_RSP: redone
        (0.500, pdu(AA4, 1, b"")),                                        # 13
        (0.550, pdu(AA4, 3, bytes([0x11, 0x16, 0x23]))),                  # 14 LL_PHY_REQ collision, never redone
    ]
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 256)
    for seconds, data in packets:
        out += struct.pack("<IIII", 1_700_000_000, round(seconds * 1e6), len(data), len(data)) + data
    return out


AIR_EXPECTED = [
    {"class": "ll-control-malformed", "frame": 2, "opcode": 0x11, "length": 22,
     "expected_length": 3, "direction": None, "access_address": AA1, "severity": "info"},
    {"class": "ll-reject", "frame": 3, "reason": 6, "rejected_opcode": 3, "direction": "c2p",
     "redone_frame": None, "access_address": AA1, "severity": "critical"},
    {"class": "disconnection", "frame": 5, "handle": None, "status": 0, "reason": 0x13,
     "local_command_frame": 5, "local_reason": 0x13, "connect_frame": None,
     "seconds_since_connect": None, "quality_report_frame": None, "direction": "c2p",
     "access_address": AA1, "severity": "info"},
    {"class": "disconnection", "frame": 7, "handle": None, "status": 0, "reason": 0x13,
     "local_command_frame": None, "local_reason": None, "connect_frame": None,
     "seconds_since_connect": None, "quality_report_frame": None, "direction": None,
     "access_address": AA2, "severity": "error"},
    {"class": "ll-reject", "frame": 10, "reason": 0x2A, "rejected_opcode": 0x14, "direction": "c2p",
     "redone_frame": 12, "access_address": AA3, "benign": "procedure redone", "severity": "info"},
    {"class": "ll-reject", "frame": 14, "reason": 0x23, "rejected_opcode": 0x16, "direction": "c2p",
     "redone_frame": None, "access_address": AA4, "severity": "error"},
]

PEER_A, PEER_B, PEER_C = (bytes.fromhex(a) for a in ("001bdc4f62a8", "60a4b7112233", "4c0220531c24"))


def bredr_capture():
    """BR/EDR (Core v5.4 Vol 4, Part E, 7.1 and 7.7 layouts): two page timeouts of one device, a Secure Simple
    Pairing that fails after the Link Key Request Negative Reply (Simple Pairing Complete and Authentication Complete
    0x05), a stored key the peer refuses (Authentication Complete 0x06), a connection failing 0x10, capability probing
    (vendor 0x12, unknown command 0x01) beside a real refusal (0x12 on Set Event Mask), a 3 ms step back in time, and
    a Reset with the link still up; then a link ended 0x06 after this side had no key (Negative Reply, no
    Authentication Complete: link-key-missing at the Disconnection Complete), and one ended 0x06 just after its
    Authentication Complete 0x06 (one failure, one event)."""
    c, h, a, b = H4(), struct.pack("<H", 0x0002), PEER_A[::-1], PEER_B[::-1]
    create = lambda peer: peer + struct.pack("<HBBHB", 0xCC18, 1, 0, 0, 1)      # noqa: E731

    def complete(status, peer, handle=b"\x00\x00"):
        return bytes([status]) + handle + peer + b"\x01\x00"
    c.command(0x0405, create(a), 0.0)                                     # 1
    c.status(0x0405, 0, 0.001)                                            # 2
    c.event(0x03, complete(0x04, a), 5.12)                                # 3 page timeout
    c.command(0x0405, create(a), 10.0)                                    # 4
    c.status(0x0405, 0, 10.001)                                           # 5
    c.event(0x03, complete(0x04, a), 15.12)                               # 6 page timeout
    c.command(0x0405, create(b), 20.0)                                    # 7
    c.status(0x0405, 0, 20.001)                                           # 8
    c.event(0x03, complete(0x00, b, h), 20.3)                             # 9
    c.command(0x0411, h, 20.4)                                            # 10 Authentication Requested
    c.status(0x0411, 0, 20.401)                                           # 11
    c.event(0x17, b, 20.402)                                              # 12 Link Key Request
    c.command(0x040C, b, 20.403)                                          # 13 Negative Reply
    c.complete(0x040C, b"\x00" + b, 20.404)                               # 14
    c.event(0x31, b, 20.405)                                              # 15 IO Capability Request
    c.command(0x042B, b + b"\x01\x00\x03", 20.406)                        # 16
    c.complete(0x042B, b"\x00" + b, 20.407)                               # 17
    c.event(0x32, b + b"\x01\x00\x03", 20.45)                             # 18 IO Capability Response
    c.event(0x33, b + struct.pack("<I", 284913), 20.46)                   # 19 User Confirmation Request
    c.event(0x36, b"\x05" + b, 21.3)                                      # 20 Simple Pairing Complete 0x05
    c.event(0x06, b"\x05" + h, 21.301)                                    # 21 Authentication Complete 0x05
    c.command(0x0411, h, 30.0)                                            # 22
    c.status(0x0411, 0, 30.001)                                           # 23
    c.event(0x17, b, 30.002)                                              # 24
    c.command(0x040B, b + bytes(range(16)), 30.003)                       # 25 Link Key Request Reply
    c.complete(0x040B, b"\x00" + b, 30.004)                               # 26
    c.event(0x06, b"\x06" + h, 30.1)                                      # 27 0x06 PIN or Key Missing
    c.command(0x0405, create(PEER_C[::-1]), 31.0)                         # 28
    c.status(0x0405, 0, 31.001)                                           # 29
    c.event(0x03, complete(0x10, PEER_C[::-1]), 36.0)                     # 30 Connection Accept Timeout
    c.command(0xFC17, b"\x01", 37.0)                                      # 31 vendor
    c.complete(0xFC17, b"\x12", 37.001)                                   # 32 refused: probing
    c.command(0x2074, b"", 37.1)                                          # 33
    c.complete(0x2074, b"\x01", 37.101)                                   # 34 unknown command: probing
    c.command(0x0C01, bytes(8), 37.2)                                     # 35 Set Event Mask
    c.complete(0x0C01, b"\x12", 37.201)                                   # 36 refused: an error
    c.command(0x0C14, b"", 37.3)                                          # 37 Read Local Name
    c.complete(0x0C14, b"\x00" + bytes(248), 37.297)                      # 38 stamped 3 ms earlier
    c.command(0x0C03, b"", 40.0)                                          # 39 Reset, link 0x0002 up
    c.complete(0x0C03, b"\x00", 40.1)                                     # 40
    h3, h4 = struct.pack("<H", 0x0003), struct.pack("<H", 0x0004)
    c.event(0x03, complete(0x00, b, h3), 50.0)                            # 41
    c.event(0x17, b, 50.1)                                                # 42 Link Key Request
    c.command(0x040C, b, 50.101)                                          # 43 Negative Reply
    c.complete(0x040C, b"\x00" + b, 50.102)                               # 44
    c.event(0x05, b"\x00" + h3 + b"\x06", 50.3)                            # 45 ended 0x06: the key missing
    c.event(0x03, complete(0x00, b, h4), 60.0)                            # 46
    c.event(0x17, b, 60.1)                                                # 47
    c.command(0x040B, b + bytes(range(16)), 60.101)                       # 48 Reply
    c.complete(0x040B, b"\x00" + b, 60.102)                               # 49
    c.event(0x06, b"\x06" + h4, 60.2)                                      # 50 Authentication Complete 0x06
    c.event(0x05, b"\x00" + h4 + b"\x06", 60.25)                           # 51 ended 0x06: the same failure
    h5 = struct.pack("<H", 0x0005)
    c.event(0x03, complete(0x00, b, h5), 70.0)                            # 52
    c.command(0x0406, h5 + b"\x13", 71.0)                                  # 53 Disconnect
    c.status(0x0406, 0x12, 71.001)                                        # 54 refused
    c.event(0x05, b"\x00" + h5 + b"\x13", 71.1)                            # 55 the peer's end, not this side's
    return btsnoop(1002, c.records)


BREDR_EXPECTED = [
    {"class": "page-timeout", "frame": 3, "peer": "00:1b:dc:4f:62:a8", "count": 2, "last_frame": 6,
     "frames": [3, 6], "create_frame": 1, "severity": "warning"},
    {"class": "bredr-auth-failed", "frame": 20, "source": "simple-pairing-complete", "status": 5,
     "peer": "60:a4:b7:11:22:33", "handle": 2, "pairing": "ssp", "link_key_request_frame": 12,
     "link_key_answer": "negative-reply", "link_key_answer_frame": 13, "pin_code_request_frame": None,
     "io_capability_request_frame": 15, "io_capability_response_frame": 18,
     "user_confirmation_request_frame": 19, "user_passkey_request_frame": None,
     "authentication_complete_frame": 21, "severity": "error"},
    {"class": "link-key-missing", "frame": 27, "source": "authentication-complete", "status": 6,
     "peer": "60:a4:b7:11:22:33", "handle": 2, "link_key_request_frame": 24, "link_key_answer": "reply",
     "link_key_answer_frame": 25, "severity": "error"},
    {"class": "bredr-connection-failed", "frame": 30, "status": 0x10, "peer": "4c:02:20:53:1c:24",
     "link_type": "ACL", "create_frame": 28, "severity": "warning"},
    {"class": "command-error", "frame": 32, "opcode": 0xFC17, "status": 0x12, "command_frame": 31,
     "benign": "capability probing", "severity": "info"},
    {"class": "command-error", "frame": 34, "opcode": 0x2074, "status": 0x01, "command_frame": 33,
     "benign": "capability probing", "severity": "info"},
    {"class": "command-error", "frame": 36, "opcode": 0x0C01, "status": 0x12, "command_frame": 35,
     "severity": "error"},
    {"class": "timestamp-step-back", "frame": 38, "step_seconds": 0.003, "benign": "clock jitter",
     "severity": "info"},
    {"class": "hci-reset", "frame": 39, "open_links": 1, "severity": "error"},
    {"class": "disconnection", "frame": 45, "handle": 3, "status": 0, "reason": 6, "local_command_frame": None,
     "local_reason": None, "connect_frame": 41, "seconds_since_connect": 0.3, "quality_report_frame": None,
     "severity": "info"},
    {"class": "link-key-missing", "frame": 45, "source": "disconnection-complete", "status": 6,
     "peer": "60:a4:b7:11:22:33", "handle": 3, "link_key_request_frame": 42, "link_key_answer": "negative-reply",
     "link_key_answer_frame": 43, "severity": "error"},
    {"class": "link-key-missing", "frame": 50, "source": "authentication-complete", "status": 6,
     "peer": "60:a4:b7:11:22:33", "handle": 4, "link_key_request_frame": 47, "link_key_answer": "reply",
     "link_key_answer_frame": 48, "severity": "error"},
    # 51, the link ending 0x06 50 ms after the Authentication Complete 0x06 (50): the same failure, no second event.
    {"class": "disconnection", "frame": 51, "handle": 4, "status": 0, "reason": 6, "local_command_frame": None,
     "local_reason": None, "connect_frame": 46, "seconds_since_connect": 0.25, "quality_report_frame": None,
     "severity": "info"},
    {"class": "command-error", "frame": 54, "opcode": 0x0406, "status": 0x12, "command_frame": 53,
     "severity": "error"},
    # 55: this side's Disconnect was refused (54), so the 0x13 is the peer's: no local command.
    {"class": "disconnection", "frame": 55, "handle": 5, "status": 0, "reason": 0x13, "local_command_frame": None,
     "local_reason": None, "connect_frame": 52, "seconds_since_connect": 1.1, "quality_report_frame": None,
     "severity": "error"},
]


def main():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis_truth.py")
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        for name, data, expected in (("synthetic-h4.btsnoop", h4_capture(), H4_EXPECTED),
                                     ("synthetic-monitor.btsnoop", monitor_capture(),
                                      MONITOR_EXPECTED),
                                     ("synthetic-smp.btsnoop", smp_capture(), SMP_EXPECTED),
                                     ("synthetic-air.pcap", air_capture(), AIR_EXPECTED),
                                     ("synthetic-bredr.btsnoop", bredr_capture(), BREDR_EXPECTED),
                                     ("synthetic-rotation.btsnoop", rotation_capture(), ROTATION_EXPECTED)):
            path = os.path.join(directory, name)
            with open(path, "wb") as handle:
                handle.write(data)
            out = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
            events = json.loads(out.stdout)["events"]
            for index in range(max(len(events), len(expected))):
                got = events[index] if index < len(events) else None
                want = expected[index] if index < len(expected) else None
                if got != want:
                    failures += 1
                    print("%s event %d:\n  got  %s\n  want %s" % (name, index, got, want))
            print("%s: %d events checked" % (name, len(expected)))
    from diagnosis_truth_audio_selftest import run as audio  # the audio classes' own capture
    from diagnosis_truth_capture_selftest import run as capture  # what a capture leaves open or cut
    from diagnosis_truth_gatt_selftest import run as gatt  # subscriptions nothing answered
    from diagnosis_truth_host_selftest import run as host  # handles used after their link ended, controllers
    from diagnosis_truth_throughput_selftest import run as throughput  # streams, their links, write runs
    from diagnosis_truth_attempts_selftest import run as attempts  # a fuzzer's connection attempts
    from diagnosis_truth_linklayer_selftest import run as linklayer  # the link-layer classes'
    from diagnosis_truth_security2_selftest import run as security2  # the security classes' own capture
    from diagnosis_truth_lmp_selftest import run as lmp  # a controller's LMP trace
    failures += security2() + audio() + linklayer() + capture() + gatt() + host() + throughput() + attempts() + lmp()
    print("FAIL: %d" % failures if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
