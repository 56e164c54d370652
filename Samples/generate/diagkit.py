"""Shared parts of the diagnosis Samples (diag*.py): a reader of the written btsnoop that finds the frames the truth
files cite (independent of bumble), reproducible pairing keys, the phone host's connection-parameter policy, and the
truth file's ``diagnosis`` block."""

from __future__ import annotations

import hashlib
import random
import struct

from bumble import crypto, l2cap
from bumble.gatt import Characteristic, CharacteristicValue

import common

# HCI error codes (Core Vol 1, Part F) and ATT / SMP error codes named in the truth files.
HCI_ERRORS = {0x00: "Success", 0x02: "Unknown Connection Identifier", 0x05: "Authentication Failure",
              0x06: "PIN or Key Missing", 0x08: "Connection Timeout", 0x13: "Remote User Terminated Connection",
              0x16: "Connection Terminated By Local Host", 0x22: "LMP/LL Response Timeout"}
ATT_ERRORS = {0x01: "Invalid Handle", 0x05: "Insufficient Authentication", 0x0A: "Attribute Not Found",
              0x0F: "Insufficient Encryption"}
SMP_ERRORS = {0x03: "Authentication Requirements", 0x04: "Confirm Value Failed"}
SEVERITY = {"C": "critical", "E": "error", "W": "warning", "I": "info"}


# ---------------------------------------------------------------------------
# The written capture, read back


class Record:
    """One btsnoop record: an HCI command, event or ACL packet (ACL payloads are read as L2CAP by ``Log``)."""

    __slots__ = ("frame", "ts_us", "sent", "kind", "code", "params")

    def __init__(self, frame, ts_us, sent, kind, code, params):
        self.frame, self.ts_us, self.sent, self.kind, self.code, self.params = frame, ts_us, sent, kind, code, params

    @property
    def subevent(self) -> int | None:
        return self.params[0] if self.kind == "event" and self.code in (0x3E, 0xFF) and self.params else None


class Log:
    """The records of a btsnoop file (datalink 1002) and its L2CAP PDUs (``common.l2cap_pdus``), with finders."""

    def __init__(self, data: bytes):
        self.records: list[Record] = []
        pos, frame = 16, 0
        while pos < len(data):
            _orig, incl, flags, _drops, ts = struct.unpack(">IIIIQ", data[pos:pos + 24])
            pkt = data[pos + 24:pos + 24 + incl]
            pos += 24 + incl
            frame += 1
            sent = (flags & 1) == 0
            if pkt[0] == 0x01:
                self.records.append(Record(frame, ts, sent, "command", pkt[1] | pkt[2] << 8, pkt[4:]))
            elif pkt[0] == 0x04:
                self.records.append(Record(frame, ts, sent, "event", pkt[1], pkt[3:]))
            else:
                self.records.append(Record(frame, ts, sent, "acl", None, pkt[5:]))
        self.l2cap = list(common.l2cap_pdus(data))  # (frame, sent, cid, payload)
        self.ts = {r.frame: r.ts_us for r in self.records}

    def commands(self, opcode: int) -> list[Record]:
        return [r for r in self.records if r.kind == "command" and r.code == opcode]

    def events(self, code: int, subevent: int | None = None) -> list[Record]:
        return [r for r in self.records if r.kind == "event" and r.code == code
                and (subevent is None or r.subevent == subevent)]

    def status_of(self, command: Record) -> Record:
        """The Command Status or Command Complete that answers ``command``."""
        for r in self.records:
            if r.frame > command.frame and r.kind == "event" and (
                    (r.code == 0x0F and r.params[2:4] == struct.pack("<H", command.code))
                    or (r.code == 0x0E and r.params[1:3] == struct.pack("<H", command.code))):
                return r
        raise LookupError(f"no answer to command 0x{command.code:04x} at frame {command.frame}")

    def att(self, opcode: int, sent: bool | None = None) -> list[tuple[int, bool, bytes]]:
        return [(f, s, p) for f, s, cid, p in self.l2cap if cid == 0x0004 and p[:1] == bytes([opcode])
                and (sent is None or s == sent)]

    def signalling(self, code: int) -> list[tuple[int, bool, bytes]]:
        return [(f, s, p) for f, s, cid, p in self.l2cap if cid == 0x0005 and p[:1] == bytes([code])]

    def smp(self, code: int | None = None) -> list[tuple[int, bool, bytes]]:
        return [(f, s, p) for f, s, cid, p in self.l2cap if cid == 0x0006 and (code is None or p[0] == code)]

    def seconds(self, first: int, last: int) -> float:
        return round((self.ts[last] - self.ts[first]) / 1e6, 6)


def status_field(r: Record) -> int:
    """The status of a Command Status (first parameter) or Command Complete (first return parameter)."""
    return r.params[0] if r.code == 0x0F else r.params[3]


def att_error(payload: bytes) -> dict:
    """An ATT Error Response (Core Vol 3, Part F, 3.4.1.1): request opcode, handle, code."""
    return {"request_opcode": payload[1], "handle": struct.unpack("<H", payload[2:4])[0], "error_code": payload[4],
            "error": ATT_ERRORS.get(payload[4], f"0x{payload[4]:02x}")}


def disconnection(r: Record) -> dict:
    status, handle, reason = r.params[0], struct.unpack("<H", r.params[1:3])[0], r.params[3]
    return {"frame": r.frame, "event": "Disconnection Complete", "status": status, "connection_handle": handle,
            "reason_code": reason, "reason": HCI_ERRORS.get(reason, f"0x{reason:02x}")}


def le_connection_complete(r: Record) -> dict:
    p = r.params
    address = ":".join(f"{b:02X}" for b in reversed(p[6:12]))
    interval, latency, timeout = struct.unpack("<HHH", p[12:18])
    return {"frame": r.frame, "event": "LE Connection Complete", "status": p[1],
            "status_name": HCI_ERRORS.get(p[1], f"0x{p[1]:02x}"), "connection_handle": struct.unpack("<H", p[2:4])[0],
            "peer_address": address, "interval_ms": interval * 1.25, "latency": latency, "supervision_timeout_ms": timeout * 10}


def connection_spans(log: Log) -> list[dict]:
    """Every LE Connection Complete (failed ones included) and the Disconnection Complete that ended each link."""
    spans = []
    for r in log.events(0x3E, 0x01):
        span = le_connection_complete(r)
        if span["status"] == 0:
            end = next((d for d in log.events(0x05) if d.frame > r.frame
                        and struct.unpack("<H", d.params[1:3])[0] == span["connection_handle"]), None)
            span["end"] = disconnection(end) if end else None
        spans.append(span)
    return spans


# ---------------------------------------------------------------------------
# The truth file's diagnosis block


def finding(rule: str, severity: str, frame: int, frames: list[int], what: str) -> dict:
    """One finding a diagnosis should make: the rule (../shared/diagnosis-rules.md), its severity, the deciding frame
    and every frame it cites."""
    return {"rule": rule, "severity": SEVERITY[severity], "frame": frame, "frames": sorted(set(frames) | {frame}),
            "what": what}


def quiet(what: str, frames: list[int], rules: list[str], at_most: str | None = None) -> dict:
    """Something the capture shows that a diagnosis must not flag under these rules: no finding of theirs cites these
    frames, or none above severity ``at_most`` when it is given (e.g. "info": it may be mentioned, not as a problem)."""
    out = {"what": what, "frames": sorted(set(frames)), "rules": rules}
    if at_most:
        out["at_most"] = at_most
    return out


def discovery_end_errors(log: Log) -> list[int]:
    """Frames of the 0x0A Attribute Not Found answers that end a discovery (Read By Group Type, Read By Type, Find
    Information): the benign ones."""
    return [f for f, s, p in log.att(0x01, sent=False) if p[1] in (0x04, 0x08, 0x10) and p[4] == 0x0A]


# ---------------------------------------------------------------------------
# Making the scenarios


def reproducible_pairing(seed: int, *devices):
    """bumble draws pairing randoms and its P-256 key from the OS; fix both so the file regenerates byte for byte.
    Returns a function that puts ``crypto.r`` back."""
    rng = random.Random(seed)
    saved = crypto.r
    crypto.r = lambda: rng.randbytes(16)
    for i, device in enumerate(devices):
        d = hashlib.sha256(b"blescope diagnosis sample %d %d" % (seed, i)).digest()
        device.smp_manager._ecc_key = crypto.EccKey.from_private_key_bytes(d)

    def restore():
        crypto.r = saved

    return restore


def android_parameter_policy(device) -> list[dict]:
    """The phone's host answers an L2CAP Connection Parameter Update Request as AOSP's l2cble_process_sig_cmd does:
    rejected (result 0x0001) when a value is out of the spec's range or the supervision timeout is not longer than
    (1 + latency) x interval max x 2 (Core Vol 6, Part B, 4.5.2); otherwise bumble's own handling (accept, then LE
    Connection Update). Returns the list of decisions, filled as requests arrive."""
    manager = device.l2cap_channel_manager
    accept = manager.on_l2cap_connection_parameter_update_request
    decisions: list[dict] = []

    def on_request(connection, cid, request):
        ok = (6 <= request.interval_min <= request.interval_max <= 3200 and request.latency <= 499
              and 10 <= request.timeout <= 3200
              and request.timeout * 10 > (1 + request.latency) * request.interval_max * 1.25 * 2)
        decisions.append({"interval_min": request.interval_min, "interval_max": request.interval_max,
                          "latency": request.latency, "timeout": request.timeout, "accepted": ok})
        if ok:
            return accept(connection, cid, request)
        manager.send_control_frame(connection, cid, l2cap.L2CAP_Connection_Parameter_Update_Response(
            identifier=request.identifier, result=l2cap.L2CAP_CONNECTION_PARAMETERS_REJECTED_RESULT))
        return None

    manager.on_l2cap_connection_parameter_update_request = on_request
    return decisions


def apple_rule_violations(interval_min: int, interval_max: int, latency: int, timeout: int) -> list[str]:
    """Apple's accessory rules for a parameter request (units of the request: 1.25 ms, 10 ms), as
    ../shared/diagnosis-rules.md (LP-01) lists them."""
    imin, imax, t = interval_min * 1.25, interval_max * 1.25, timeout * 10
    out = []
    if imin < 15 or imin % 15:
        out.append(f"interval min {imin:g} ms is not a multiple of 15 ms of at least 15 ms")
    if not 2000 <= t <= 6000:
        out.append(f"supervision timeout {t:g} ms is outside 2-6 s")
    if latency > 30:
        out.append(f"latency {latency} is above 30")
    if imax * (latency + 1) > 2000:
        out.append(f"interval max x (latency + 1) = {imax * (latency + 1):g} ms is above 2 s")
    if imax * (latency + 1) * 3 >= t:
        out.append(f"interval max x (latency + 1) x 3 = {imax * (latency + 1) * 3:g} ms is not below the timeout")
    return out


def spec_timeout_violated(interval_max: int, latency: int, timeout: int) -> bool:
    return not timeout * 10 > (1 + latency) * interval_max * 1.25 * 2


def value_char(uuid: str, props, read=None, write=None, permissions=None) -> Characteristic:
    perms = permissions if permissions is not None else Characteristic.READABLE | Characteristic.WRITEABLE
    return Characteristic(uuid, props, perms, CharacteristicValue(read=read, write=write) if (read or write) else b"")


class HostTap:
    """The HCI packets of a host that is not recorded (the peripheral's), kept in memory with their virtual time:
    what the truth files say happened on the other side of the link."""

    def __init__(self, loop):
        self.loop = loop
        self.packets: list[tuple[float, bytes]] = []

    def snoop(self, packet: bytes, _direction) -> None:
        self.packets.append((self.loop.time(), bytes(packet)))

    def find(self, h4_type: int, code: int, subevent: int | None = None) -> list[float]:
        """Virtual times of the commands (h4 1, opcode) or events (h4 4, event code [, LE subevent]) seen."""
        out = []
        for t, p in self.packets:
            if p[0] == h4_type == 0x01 and (p[1] | p[2] << 8) == code:
                out.append(round(t, 6))
            elif p[0] == h4_type == 0x04 and p[1] == code and (subevent is None or p[3] == subevent):
                out.append(round(t, 6))
        return out
