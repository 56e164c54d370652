"""Helpers shared by the scenarios: deterministic bytes, CRC, and an independent
btsnoop reader that computes the counts stored in the truth files."""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections import Counter, defaultdict


def xorshift_bytes(seed: int, n: int) -> bytes:
    """Deterministic pseudo-random bytes, easy to reproduce in any language.

    xorshift32 (13, 17, 5) starting from ``seed``; for every byte the state is
    stepped once and its low 8 bits are emitted.
    """
    x = seed & 0xFFFFFFFF
    out = bytearray(n)
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    return bytes(out)


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3, as zlib), the one Nordic DFU and the headset OTA use."""
    return zlib.crc32(data) & 0xFFFFFFFF


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


ATT_NAMES = {
    0x01: "error_rsp",
    0x02: "exchange_mtu_req",
    0x03: "exchange_mtu_rsp",
    0x04: "find_information_req",
    0x05: "find_information_rsp",
    0x08: "read_by_type_req",
    0x09: "read_by_type_rsp",
    0x0A: "read_req",
    0x0B: "read_rsp",
    0x10: "read_by_group_type_req",
    0x11: "read_by_group_type_rsp",
    0x12: "write_req",
    0x13: "write_rsp",
    0x1B: "handle_value_ntf",
    0x1D: "handle_value_ind",
    0x1E: "handle_value_cfm",
    0x52: "write_cmd",
}


class AttPdu:
    __slots__ = ("frame", "sent", "opcode", "pdu", "ts_us")

    def __init__(self, frame, sent, opcode, pdu, ts_us):
        self.frame = frame  # 1-based frame number of the last ACL fragment
        self.sent = sent  # True: host -> controller (phone -> peer)
        self.opcode = opcode
        self.pdu = pdu  # the whole ATT PDU
        self.ts_us = ts_us

    @property
    def handle(self) -> int | None:
        if self.opcode in (0x12, 0x52, 0x1B, 0x1D, 0x0A) and len(self.pdu) >= 3:
            return self.pdu[1] | (self.pdu[2] << 8)
        return None

    @property
    def value(self) -> bytes:
        return self.pdu[3:]


def l2cap_pdus(data: bytes):
    """The L2CAP PDUs of a btsnoop file (datalink 1002), independently of bumble: ACL fragments joined per handle and
    direction. Yields (frame, sent, cid, payload) for each whole PDU, frame being the btsnoop record of its last fragment."""
    pos, frame = 16, 0
    partial: dict[tuple[int, bool], bytearray] = {}
    while pos < len(data):
        _orig, incl, flags, _drops, _ts = struct.unpack(">IIIIQ", data[pos : pos + 24])
        pkt = data[pos + 24 : pos + 24 + incl]
        pos += 24 + incl
        frame += 1
        if pkt[0] != 0x02:
            continue
        sent = (flags & 1) == 0
        hf, length = struct.unpack("<HH", pkt[1:5])
        key = (hf & 0x0FFF, sent)
        if (hf >> 12) & 0x3 in (0, 2):
            partial[key] = bytearray(pkt[5 : 5 + length])
        else:
            partial.setdefault(key, bytearray()).extend(pkt[5 : 5 + length])
        buf = partial[key]
        if len(buf) < 4 or len(buf) < struct.unpack("<H", buf[:2])[0] + 4:
            continue
        del partial[key]
        l2len, cid = struct.unpack("<HH", buf[:4])
        yield frame, sent, cid, bytes(buf[4 : 4 + l2len])


def read_btsnoop(data: bytes):
    """Parse a btsnoop file (datalink 1002) written by the generator.

    Written independently of bumble: reassembles ACL fragments per handle and
    direction into L2CAP PDUs and returns (stats dict, list of AttPdu).
    """
    assert data[:8] == b"btsnoop\0", "not a btsnoop file"
    version, datalink = struct.unpack(">II", data[8:16])
    assert version == 1 and datalink == 1002
    pos = 16
    frame = 0
    kinds = Counter()
    event_codes = Counter()
    command_opcodes = Counter()
    acl_fragments = Counter()
    partial: dict[tuple[int, bool], bytearray] = {}
    expected: dict[tuple[int, bool], int] = {}
    att: list[AttPdu] = []
    l2cap_cids = Counter()
    handles = set()
    first_ts = last_ts = None
    while pos < len(data):
        orig, incl, flags, _drops, ts = struct.unpack(">IIIIQ", data[pos : pos + 24])
        pkt = data[pos + 24 : pos + 24 + incl]
        pos += 24 + incl
        frame += 1
        first_ts = ts if first_ts is None else first_ts
        last_ts = ts
        sent = (flags & 1) == 0
        ptype = pkt[0]
        if ptype == 0x01:
            kinds["hci_command"] += 1
            command_opcodes[f"0x{pkt[1] | (pkt[2] << 8):04x}"] += 1
        elif ptype == 0x04:
            kinds["hci_event"] += 1
            code = pkt[1]
            key = f"0x{code:02x}" if code != 0x3E else f"0x3e/0x{pkt[3]:02x}"
            event_codes[key] += 1
        elif ptype == 0x02:
            kinds["acl"] += 1
            hf, length = struct.unpack("<HH", pkt[1:5])
            handle, pb = hf & 0x0FFF, (hf >> 12) & 0x3
            handles.add(handle)
            payload = pkt[5 : 5 + length]
            key = (handle, sent)
            if pb in (0x00, 0x02):
                acl_fragments["start"] += 1
                partial[key] = bytearray(payload)
                expected[key] = struct.unpack("<H", payload[:2])[0] + 4
            else:
                acl_fragments["continuation"] += 1
                partial.setdefault(key, bytearray()).extend(payload)
            buf = partial.get(key)
            if buf is not None and len(buf) >= expected.get(key, 1 << 30):
                l2len, cid = struct.unpack("<HH", buf[:4])
                l2cap_cids[f"0x{cid:04x}"] += 1
                if cid == 0x0004 and l2len > 0:
                    att.append(AttPdu(frame, sent, buf[4], bytes(buf[4 : 4 + l2len]), ts))
                del partial[key]
        else:
            kinds[f"h4_type_{ptype}"] += 1
    att_counts: dict[str, dict[str, int]] = defaultdict(lambda: {"sent": 0, "rcvd": 0})
    for p in att:
        name = f"0x{p.opcode:02x} {ATT_NAMES.get(p.opcode, 'unknown')}"
        att_counts[name]["sent" if p.sent else "rcvd"] += 1
    stats = {
        "frames": frame,
        "hci_commands": kinds["hci_command"],
        "hci_events": kinds["hci_event"],
        "acl_packets": kinds["acl"],
        "acl_start_fragments": acl_fragments["start"],
        "acl_continuation_fragments": acl_fragments["continuation"],
        "l2cap_pdus_by_cid": dict(sorted(l2cap_cids.items())),
        "att_pdus": len(att),
        "att_pdus_by_opcode": dict(sorted(att_counts.items())),
        "hci_events_by_code": dict(sorted(event_codes.items())),
        "hci_commands_by_opcode": dict(sorted(command_opcodes.items())),
        "acl_connection_handles": sorted(handles),
        "duration_us": (last_ts - first_ts) if first_ts is not None else 0,
        "first_timestamp_btsnoop_us": first_ts,
    }
    return stats, att


class Locator:
    """Finds, in order, the frames in which given ATT PDUs appear."""

    def __init__(self, att: list[AttPdu]):
        self.att = att
        self.pos: dict[tuple[bool, int], int] = {}  # independent cursor per direction and opcode

    def find(self, sent: bool, opcode: int, handle: int | None = None, value: bytes | None = None) -> int:
        for i in range(self.pos.get((sent, opcode), 0), len(self.att)):
            p = self.att[i]
            if p.sent == sent and p.opcode == opcode and (handle is None or p.handle == handle) and (
                value is None or p.value == value
            ):
                self.pos[(sent, opcode)] = i + 1
                return p.frame
        raise LookupError(f"ATT PDU not found: sent={sent} op=0x{opcode:02x} handle={handle} value={value!r}")
