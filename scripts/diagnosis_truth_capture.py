#!/usr/bin/env python3
"""What a capture leaves open, cut or unreadable, read by tshark alone: the truth for CQ-02, CQ-03 and CQ-05 (issue
48, point 4).

Usage: scripts/diagnosis_truth_capture.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields. Python 3 standard library only.

  pending-at-end       (CQ-03) at the capture's last record, something still waits for its outcome:
                       - "connection": the last LE (Extended) Create Connection (0x200D, 0x2043) or Create Connection
                         (0x0405) of an adapter, its Command Status a success, with no connection complete (LE Meta
                         0x01/0x0A/0x29, event 0x03), no Create Connection Cancel and no Reset after it: frames = the
                         command and its status;
                       - "command": an HCI command with no Command Status / Command Complete for its opcode after it,
                         or with a successful Command Status and, for Disconnect (0x0406) and LE Read Remote Features
                         (0x2016), no Disconnection Complete / LE Read Remote Features Complete for its handle;
                       - "att": an ATT request (Core Vol 3, Part F, 3.4: opcodes 0x02 ... 0x20 that expect a response)
                         with no response or Error Response on its link after it, while the link never ended (no
                         Disconnection Complete or LL_TERMINATE_IND) before the end; on air, a PDU repeating its
                         sender's previous SN, length and opcode is that PDU resent, not a new request.
                       A Reset (0x0C03) answers every command before it. Not counted: 0x0C35 (never answered) and
                       OGFs the spec does not define (PacketLogger's host-internal records).
  air-encrypted-unread an air capture's L2CAP starts tshark cannot read (LLID 0b10 with no L2CAP decoded: encrypted
                       with a key tshark lacks, or a fragment whose start was missed): frames = each of them. What
                       they carry is not in this truth: a finding at one of them cannot be judged.
  air-joined-late      (CQ-05) an access address carrying data PDUs with no CONNECT_IND / AUX_CONNECT_REQ for it
                       before: frame = its first PDU.
  air-encrypted-undecrypted  (CQ-05) the non-empty PDUs after LL_ENC_RSP (then LL_START_ENC_REQ, the last PDU in
                       the clear, Vol 6, Part B, 5.1.3.1) on a link that the capture left
                       encrypted (nRF Sniffer: MIC not OK; LT 256: not flagged decrypted; PPI, which has no flag: not
                       read as L2CAP by tshark): frame = the first, frames = all.
  advertising-crc-bad  (CQ-05) a fifth or more of the advertising-channel packets failing their CRC (nRF Sniffer's
                       CRC flag, tshark's check): frame = the first, bad, advertising.
  acl-records-cut      (CQ-02) ACL records whose captured length is shorter than their length (frame.cap_len <
                       frame.len), or that hold fewer bytes than their ACL header's Data Total Length says (Vol 4,
                       Part E, 5.4.2) though the file calls them whole (a capturer that cut payloads before writing:
                       the record's bytes after the ACL header, less the format's own header, which is what most whole
                       records leave after their length): frame = the first, count.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import TSHARK, events_main, field_number as num  # noqa: E402

FIELDS = [
    "frame.number", "frame.len", "frame.cap_len", "hci_mon.adapter_id", "bthci_cmd.opcode", "bthci_evt.code",
    "bthci_evt.opcode", "bthci_evt.status", "bthci_evt.le_meta_subevent", "bthci_evt.connection_handle",
    "bthci_cmd.connection_handle", "bthci_acl.chandle", "btatt.opcode", "btle.access_address", "btle.control_opcode",
    "nordic_ble.crcok", "btle.crc.incorrect", "frame.p2p_dir", "hci_h4.direction", "packetlogger.type",
    "nordic_ble.direction", "hci_mon.opcode", "btle.data_header.llid", "btl2cap.cid",
    "btle.data_header.sequence_number", "btle.data_header.length", "btle.advertising_header.pdu_type",
    "btle.link_layer_data.access_address", "btle_rf.flags.decrypted", "btle_rf.flags.mic_valid", "nordic_ble.encrypted",
    "nordic_ble.micok", "bthci_acl.length", "frame.time_epoch",
]
# ATT requests and what answers them (Vol 3, Part F, 3.4): an Error Response (0x01) answers any.
ATT_ANSWERS = {0x02: 0x03, 0x04: 0x05, 0x06: 0x07, 0x08: 0x09, 0x0A: 0x0B, 0x0C: 0x0D, 0x0E: 0x0F, 0x10: 0x11,
               0x12: 0x13, 0x16: 0x17, 0x18: 0x19, 0x20: 0x21}
CREATES = (0x200D, 0x2043, 0x0405)
CANCELS = {0x200E: (0x200D, 0x2043), 0x0408: (0x0405,)}
COMPLETIONS = {0x0406: "disconnected", 0x2016: "features"}
DEFINED_OGFS = (0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x3F)  # Vol 4, Part E, 7.1-7.8 and vendor


def direction(row):
    """'sent' / 'received' (HCI) or the nRF Sniffer's side (air); None when the format says none."""
    for field, sent in (("frame.p2p_dir", "0"), ("hci_h4.direction", "0x00")):
        if row[field] is not None:
            return "sent" if row[field].split(",")[0] == sent else "received"
    kind = num(row["packetlogger.type"]) if row["packetlogger.type"] else num(row["hci_mon.opcode"])
    if kind in (0x02, 0x04):
        return "sent"
    if kind in (0x03, 0x05):
        return "received"
    return row["nordic_ble.direction"]


class Air:
    """CQ-05's facts on an air capture: links seen only by their data PDUs, encrypted PDUs left encrypted, advertising
    PDUs failing their CRC."""
    ADVERTISING = 0x8E89BED6

    def __init__(self):
        self.connected, self.joined, self.starting, self.undecrypted = set(), {}, set(), {}
        self.advertising, self.bad = 0, []

    def note(self, r, frame):
        aa = num(r["btle.access_address"])
        bad = r["nordic_ble.crcok"] == "0" or r["btle.crc.incorrect"] is not None
        if aa == self.ADVERTISING:
            self.advertising += 1
            if bad:
                self.bad.append(frame)
            elif num(r["btle.advertising_header.pdu_type"]) == 0x05 and r["btle.link_layer_data.access_address"]:
                new = num(r["btle.link_layer_data.access_address"])
                self.connected.add(new)
                self.starting.discard(new)
            return
        if bad:
            return
        if aa not in self.connected and aa not in self.joined:
            self.joined[aa] = frame
        if num(r["btle.control_opcode"]) in (0x04, 0x05):  # LL_ENC_RSP, then LL_START_ENC_REQ, the last in clear
            self.starting.add(aa)
            return
        # After LL_START_ENC_REQ every non-empty PDU is encrypted (Vol 6, Part E, 1): left so unless the sniffer
        # says it decrypted it (nRF: MIC OK; LT 256: the decrypted flag).
        if r["nordic_ble.encrypted"] is not None:
            left_encrypted = r["nordic_ble.micok"] != "1"
        elif r["btle_rf.flags.decrypted"] is not None:
            left_encrypted = r["btle_rf.flags.decrypted"] != "1"
        else:  # no flag (PPI): a PDU tshark reads as L2CAP was written decrypted (crackle does)
            left_encrypted = r["btl2cap.cid"] is None
        if aa in self.starting and r["btle.data_header.length"] not in (None, "0") and left_encrypted:
            self.undecrypted.setdefault(aa, []).append(frame)

    def events(self):
        out = [{"class": "air-joined-late", "frame": f, "frames": [f], "access_address": aa}
               for aa, f in self.joined.items()]
        out += [{"class": "air-encrypted-undecrypted", "frame": f[0], "frames": f, "access_address": aa}
                for aa, f in self.undecrypted.items()]
        if self.bad and len(self.bad) * 5 >= self.advertising:
            out.append({"class": "advertising-crc-bad", "frame": self.bad[0], "frames": [self.bad[0]],
                        "bad": len(self.bad), "advertising": self.advertising})
        return out


def cut_in_log(sizes):
    """The ACL records holding fewer bytes than their Data Total Length: `sizes` is (frame, captured length - 4 - Data
    Total Length) per record; the format's header is the most common non-negative difference (whole records)."""
    whole = [d for _f, d in sizes if d >= 0]
    if not whole:
        return []
    header = max(set(whole), key=whole.count)
    return [f for f, d in sizes if d < header]


def analyse(path):
    args = TSHARK + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    commands = {}     # (adapter, opcode) -> [frame, status_frame, handle]
    waiting = {}      # (adapter, kind, handle) -> (opcode, frame, status frame) awaiting a completion event
    creates = {}      # (adapter, BR/EDR) -> (opcode, frame, status frame)
    att = {}          # link -> (frame, opcode) of the request awaiting its answer
    last_command = None  # (adapter, opcode, time, frame) of the last command record
    cut, events, unread, last_pdu, air, acl_sizes = [], [], [], {}, Air(), []
    for line in out.splitlines():
        cells = line.split("\t")
        r = {f: (cells[i] if i < len(cells) and cells[i] else None) for i, f in enumerate(FIELDS)}
        frame, ad = int(r["frame.number"]), num(r["hci_mon.adapter_id"]) or 0
        if r["bthci_acl.chandle"] and num(r["frame.cap_len"]) < num(r["frame.len"]):
            cut.append(frame)
        if r["bthci_acl.chandle"] and r["bthci_acl.length"]:
            acl_sizes.append((frame, num(r["frame.cap_len"]) - 4 - num(r["bthci_acl.length"])))
        if r["btle.access_address"]:
            air.note(r, frame)
        if r["btle.access_address"] and (r["nordic_ble.crcok"] == "0" or r["btle.crc.incorrect"]):
            continue
        link = ("aa", num(r["btle.access_address"])) if r["btle.access_address"] else (ad, num(r["bthci_acl.chandle"]))
        if r["btle.access_address"] and num(r["btle.data_header.llid"]) == 2 and r["btl2cap.cid"] is None:
            unread.append(frame)  # an L2CAP start tshark could not read: encrypted (no key), or its start missed
        op, side = num(r["btatt.opcode"]), direction(r)
        if r["btle.access_address"] and side is not None and r["btle.data_header.sequence_number"] is not None:
            # A PDU repeating the SN and content of its sender's previous one is that PDU resent (Vol 6, Part B,
            # 4.5.9), not a second request.
            shape = (r["btle.data_header.sequence_number"], r["btle.data_header.length"], op)
            resent = last_pdu.get(link + (side,)) == shape and r["btle.data_header.length"] != "0"
            last_pdu[link + (side,)] = shape
            if resent:
                continue
        if op in ATT_ANSWERS:
            att[link + (side,)] = (frame, op)
        elif op is not None:
            asked = next((k for k in att if k[:2] == link and (side is None or k[2] != side)), None)
            if asked and (op == 0x01 or ATT_ANSWERS.get(att[asked][1]) == op):
                att.pop(asked)
        if num(r["btle.control_opcode"]) == 0x02:
            att = {k: v for k, v in att.items() if k[:2] != link}
        command = num(r["bthci_cmd.opcode"])
        if command is not None and not r["bthci_evt.code"]:
            if command == 0x0C03:
                commands = {k: v for k, v in commands.items() if k[0] != ad}
                waiting = {k: v for k, v in waiting.items() if k[0] != ad}
                creates = {k: v for k, v in creates.items() if k[0] != ad}
                att = {k: v for k, v in att.items() if k[0] != ad}
            # The same command again at the same instant, right after it, is the logger's copy (a host waits for the
            # controller between commands, Core Vol 4 Part E 4.4): the first stays the one pending.
            again = (ad, command, r["frame.time_epoch"], frame - 1) == last_command
            last_command = (ad, command, r["frame.time_epoch"], frame)
            if command != 0x0C35 and command >> 10 in DEFINED_OGFS and not (again and (ad, command) in commands):
                commands[(ad, command)] = [frame, None, num(r["bthci_cmd.connection_handle"])]
            if command in CANCELS:
                creates.pop((ad, command == 0x0408), None)
            continue
        code = num(r["bthci_evt.code"])
        if code in (0x0E, 0x0F):
            answered = num(r["bthci_evt.opcode"])
            entry = commands.pop((ad, answered), None)
            ok = num(r["bthci_evt.status"]) == 0
            if entry and code == 0x0F and ok and answered in CREATES:
                creates[(ad, answered == 0x0405)] = (answered, entry[0], frame)
            elif entry and code == 0x0F and ok and answered in COMPLETIONS and entry[2] is not None:
                waiting[(ad, COMPLETIONS[answered], entry[2])] = (answered, entry[0], frame)
        elif code == 0x03 or (code == 0x3E and num(r["bthci_evt.le_meta_subevent"]) in (0x01, 0x0A, 0x29)):
            creates.pop((ad, code == 0x03), None)  # a BR/EDR complete answers Create Connection, an LE one LE's
        elif code == 0x05:
            handle = num(r["bthci_evt.connection_handle"])
            waiting.pop((ad, "disconnected", handle), None)
            att = {k: v for k, v in att.items() if k[:2] != (ad, handle)}
        elif code == 0x3E and num(r["bthci_evt.le_meta_subevent"]) == 0x04:
            waiting.pop((ad, "features", num(r["bthci_evt.connection_handle"])), None)
    for (ad, opcode), (frame, _status, _handle) in commands.items():
        events.append({"class": "pending-at-end", "frame": frame, "frames": [frame], "what": "command",
                       "opcode": opcode})
    for (ad, _kind, handle), (opcode, frame, status) in waiting.items():
        events.append({"class": "pending-at-end", "frame": frame, "frames": [frame, status], "what": "command",
                       "opcode": opcode, "handle": handle})
    for (ad, _bredr), (opcode, frame, status) in creates.items():
        events.append({"class": "pending-at-end", "frame": frame, "frames": [frame, status], "what": "connection",
                       "opcode": opcode})
    for link, (frame, opcode) in att.items():
        events.append({"class": "pending-at-end", "frame": frame, "frames": [frame], "what": "att", "opcode": opcode})
    events += air.events()
    if unread:
        events.append({"class": "air-encrypted-unread", "frame": unread[0], "frames": unread})
    cut = sorted(set(cut) | set(cut_in_log(acl_sizes)))
    if cut:
        events.append({"class": "acl-records-cut", "frame": cut[0], "frames": [cut[0]], "count": len(cut)})
    return sorted(events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
