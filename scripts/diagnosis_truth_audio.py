#!/usr/bin/env python3
"""Audio streams and their set-up, read by tshark alone: the truth for LA-02, LA-03, BR-07, BR-10, BR-11 and BR-13 (issue 48,
point 4), which the other truth scripts have no class for.

Usage: scripts/diagnosis_truth_audio.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each event: class,
frame, `frames` (the frames of the same fact a finding may cite) and class fields. One tshark pass of fields (tshark
resolves an ATT handle's characteristic UUID from the discovery in the capture, decodes A2DP media as RTP once AVDTP
configured the channel, and HFP AT commands on the RFCOMM channel SDP named). Python 3 standard library only.

  ase-operation-refused  (LA-02) an ATT Handle Value Notification of the ASE Control Point (UUID 0x2BC6) whose
                       Response_Code for some ASE is not 0x00 (ASCS 1.0, 5.1: Opcode, Number_of_ASEs, then ASE_ID,
                       Response_Code, Reason per ASE): frame = the notification, frames = it and the last write to the
                       handle on the link before it, codes.
  iso-sdu-lost         (LA-03) HCI ISO data (Core Vol 4, Part E, 5.4.5), per connection handle and direction: a
                       Packet_Sequence_Number that skips (not the previous + 1, modulo 2^16: lost = the SDUs skipped),
                       or a Packet_Status_Flag 0b10 (lost data): frame = that packet, prev_frame, lost. A step back
                       is no loss. PacketLogger's ISO records (types 0x12 sent, 0x13 received), which tshark
                       4.0.17 leaves as data, are read from their bytes (Vol 4, Part E, 5.4.5); iso-undecoded
                       (frame 0): such a record with no bytes to read (LA-03 cannot be judged there).
  a2dp-media-gap       (BR-07) on a link whose AVDTP Start was accepted (signal 0x07, response accept) and no Suspend,
                       Close or Abort (0x09, 0x08, 0x0A) sent since, two media packets (RTP on the L2CAP channel tshark
                       decodes as A2DP) more than 200 ms apart: frame = the later, frames = both, gap_ms.
  hfp-slc-failed       (BR-10) on an RFCOMM channel carrying HFP, before the service level connection's last step
                       was answered OK (AT+CMER, or AT+CHLD / AT+BIND after it): an SLC command (AT+BRSF, AT+BAC,
                       AT+CIND, AT+CMER, AT+CHLD, AT+BIND) answered ERROR or +CME ERROR (frames = the command and the
                       answer, step), or the channel closed (DISC or DM on its DLCI) after AT+BRSF (frame = the close,
                       step "closed").
  hfp-narrowband       (BR-11) a +BCS selecting CVSD (1) on a link whose AT+BAC offered mSBC (2) or LC3-SWB (3):
                       frame = the +BCS, frames = it and the AT+BAC; or a Synchronous Connection Complete (0x2C) with
                       air mode CVSD (0x02) after a +BCS selecting mSBC with the same peer: frame = the event.
  l2cap-channel-refused (BR-13) a BR/EDR L2CAP Connection Response (signalling command 0x03) with a result of 0x0002 or
                       above (Core Vol 3, Part A, 4.3): frame = the response, frames = it and the Connection Request
                       (0x02) of the same identifier sent the other way on the link, psm (of that request), result.
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import TSHARK, events_main, field_number as num  # noqa: E402

FIELDS = [
    "frame.number", "frame.time_epoch", "frame.p2p_dir", "hci_h4.direction", "packetlogger.type", "hci_mon.opcode",
    "bthci_acl.chandle", "btatt.opcode", "btatt.handle", "btatt.uuid16", "btatt.value", "bthci_iso.chandle",
    "bthci_iso.pb_flag",
    "bthci_iso_data.packet_seq_num", "bthci_iso_data.status_flag", "btavdtp.signal_id", "btavdtp.message_type",
    "rtp.seq", "btl2cap.cid", "btrfcomm.dlci", "btrfcomm.frame_type", "bthfp.command", "bthfp.bac.codec",
    "bthfp.bcs.codec",
    "bthfp", "_ws.col.Info", "bthci_evt.code", "bthci_evt.status", "bthci_evt.air_mode", "bthci_evt.bd_addr",
    "bthci_evt.connection_handle", "hci_mon.adapter_id", "data.data", "data", "btl2cap.cmd_code", "btl2cap.cmd_ident",
    "btl2cap.psm", "btl2cap.result",
]
SLC_COMMANDS = ("BRSF", "BAC", "CIND", "CMER", "CHLD=?", "BIND")
GAP_SECONDS = 0.2


def rows(path):
    args = TSHARK + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,",
                     "-E", "quote=n"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    for line in out.splitlines():
        cells = line.split("\t")
        yield {f: (cells[i] if i < len(cells) and cells[i] else None) for i, f in enumerate(FIELDS)}


def direction(row):
    """'sent' / 'received' / None: the datalink's direction field, whichever the format has."""
    for field, sent in (("frame.p2p_dir", "0"), ("hci_h4.direction", "0x00")):
        if row[field] is not None:
            return "sent" if row[field].split(",")[0] == sent else "received"
    kind = num(row["packetlogger.type"]) if row["packetlogger.type"] else num(row["hci_mon.opcode"])
    if kind is None:
        return None
    return {0x02: "sent", 0x03: "received", 0x04: "sent", 0x05: "received", 0x12: "sent", 0x13: "received"}.get(kind)


class Audio:
    def __init__(self):
        self.events = []
        self.writes = {}       # (link, handle) -> frame of the last ATT write
        self.iso = {}          # (handle, direction) -> (seq, frame)
        self.iso_unknown = {}  # (handle, direction) -> first fragments since, their numbers unread
        self.iso_unread = False
        self.streaming = {}    # link -> True while an accepted Start holds
        self.media = {}        # (link, cid) -> (time, frame) of the last media packet
        self.hfp = {}          # (link, dlci) -> {"pending": (command, frame), "brsf", "done"}
        self.bac = {}          # link -> frame of an AT+BAC offering a wideband codec
        self.msbc = {}         # peer -> frame of a +BCS selecting mSBC
        self.peers = {}        # handle -> BD_ADDR
        self.channel_requests = {}  # (link, direction, identifier) -> (frame, psm) of an L2CAP Connection Request

    def emit(self, cls, frame, frames=(), **fields):
        event = {"class": cls, "frame": frame, "frames": sorted(set(frames) | {frame})}
        event.update(fields)
        self.events.append(event)

    def row(self, r):
        frame, link = int(r["frame.number"]), "%s/%s" % (num(r["hci_mon.adapter_id"]) or 0, num(r["bthci_acl.chandle"]))
        self.att(r, frame, link)
        if r["bthci_iso.chandle"]:
            self.iso_packet(r, frame)
        elif num(r["packetlogger.type"]) in (0x12, 0x13):
            # PacketLogger's ISO records (0x12 sent, 0x13 received): tshark 4.0.17 leaves them as data, read here
            # in the layout of Vol 4, Part E, 5.4.5.
            raw = bytes.fromhex((r["data"] or "").replace(":", ""))
            if len(raw) >= 4:
                self.iso_packet(iso_fields(r, raw), frame)
            elif not self.iso_unread:
                self.iso_unread = True
                self.emit("iso-undecoded", 0, first_frame=frame)
        self.avdtp(r, frame, link)
        if r["btl2cap.cmd_code"]:
            self.signalling(r, frame, link)
        if r["btrfcomm.dlci"]:
            self.rfcomm(r, frame, link)
        code = num(r["bthci_evt.code"])
        if code == 0x03 and num(r["bthci_evt.status"]) == 0:
            self.peers["%s/%s" % (num(r["hci_mon.adapter_id"]) or 0, num(r["bthci_evt.connection_handle"]))] = \
                r["bthci_evt.bd_addr"]
        if code == 0x2C and num(r["bthci_evt.status"]) == 0 and num(r["bthci_evt.air_mode"]) == 0x02 \
                and r["bthci_evt.bd_addr"] in self.msbc:
            self.emit("hfp-narrowband", frame, [self.msbc.pop(r["bthci_evt.bd_addr"])], how="air mode CVSD")

    def signalling(self, r, frame, link):
        """L2CAP Connection Requests and their refusing Responses (a PDU may hold several commands, in order)."""
        codes = [num(c) for c in r["btl2cap.cmd_code"].split(",")]
        idents = [num(c) for c in (r["btl2cap.cmd_ident"] or "").split(",")]
        psms = [num(c) for c in (r["btl2cap.psm"] or "").split(",") if c]
        results = [num(c) for c in (r["btl2cap.result"] or "").split(",") if c]
        sent = direction(r)
        for code, ident in zip(codes, idents):
            if code == 0x02 and psms:
                self.channel_requests[(link, sent, ident)] = (frame, psms.pop(0))
            elif code == 0x03 and results:
                result = results.pop(0)
                other = "received" if sent == "sent" else "sent"
                request = self.channel_requests.get((link, other, ident))
                if result >= 2:
                    self.emit("l2cap-channel-refused", frame, [request[0]] if request else [],
                              psm=request[1] if request else None, result=result)

    def att(self, r, frame, link):
        op = num(r["btatt.opcode"])
        if op is None or num(r["btatt.uuid16"]) != 0x2BC6:
            return
        key = (link, num(r["btatt.handle"]))
        if op in (0x12, 0x52):
            self.writes[key] = frame
        elif op == 0x1B and r["btatt.value"]:
            value = bytes.fromhex(r["btatt.value"].replace(":", ""))
            codes = [value[3 + 3 * i] for i in range(value[1] if len(value) > 1 else 0) if 3 + 3 * i < len(value)]
            if any(codes):
                write = self.writes.get(key)
                self.emit("ase-operation-refused", frame, [write] if write else [], opcode=value[0], codes=codes)

    def iso_packet(self, r, frame):
        """Only a first fragment (PB 0b00) or a complete SDU (0b10) carries the ISO_Data_Load header (Vol 4, Part E,
        5.4.5); tshark 4.0.17 reads no header in a first fragment (its SDU is counted, its number unknown) and reads
        one in a last fragment (0b11) that has none (ignored)."""
        key, pb = (num(r["bthci_iso.chandle"]), direction(r)), num(r["bthci_iso.pb_flag"])
        if pb == 0:
            self.iso_unknown[key] = self.iso_unknown.get(key, 0) + 1
            return
        if pb != 2 or r["bthci_iso_data.packet_seq_num"] is None:
            return
        seq, status = num(r["bthci_iso_data.packet_seq_num"]), num(r["bthci_iso_data.status_flag"])
        previous, unknown = self.iso.get(key), self.iso_unknown.pop(key, 0)
        step = (seq - previous[0]) % 65536 if previous else 1
        lost = max(step - 1 - unknown, 0) if step < 32768 else 0  # a step back is no loss
        if status == 2 or lost:
            self.emit("iso-sdu-lost", frame, handle=key[0], direction=key[1], lost=max(lost, 1 if status == 2 else 0),
                      status=status, prev_frame=previous[1] if previous else None)
        if step < 32768:
            self.iso[key] = (seq, frame)

    def avdtp(self, r, frame, link):
        signal, kind = num(r["btavdtp.signal_id"]), num(r["btavdtp.message_type"])
        if signal == 0x07 and kind == 0x02:
            self.streaming[link] = True
        elif signal in (0x08, 0x09, 0x0A) and kind == 0x00:
            self.streaming[link] = False
            self.media = {k: v for k, v in self.media.items() if k[0] != link}
        if r["rtp.seq"] is None or not self.streaming.get(link):
            return
        key, time = (link, num(r["btl2cap.cid"])), float(r["frame.time_epoch"])
        last = self.media.get(key)
        if last and time - last[0] > GAP_SECONDS:
            self.emit("a2dp-media-gap", frame, [last[1]], gap_ms=round((time - last[0]) * 1000))
        self.media[key] = (time, frame)

    def rfcomm(self, r, frame, link):
        key = (link, num(r["btrfcomm.dlci"]))
        frame_type = num(r["btrfcomm.frame_type"])
        state = self.hfp.get(key)
        if frame_type in (0x43, 0x0F) and state and state["brsf"] and not state["done"]:
            self.emit("hfp-slc-failed", frame, [state["brsf"]], step="closed")
        if frame_type in (0x43, 0x0F, 0x2F):  # DISC, DM, SABM: the channel ends or starts again
            self.hfp.pop(key, None)
            return
        info = r["_ws.col.Info"] or ""
        if r["bthfp"] is None:
            # A channel SDP did not name in the capture: tshark leaves its payload as data; HFP's is AT text.
            text = bytes.fromhex((r["data.data"] or "").replace(":", "")).decode("ascii", "replace")
            if not re.match(r"(AT\+|\r\n[+A-Z])", text):
                return
            info = text.replace("\r", " ").replace("\n", " ")
        state = self.hfp.setdefault(key, {"pending": None, "brsf": None, "done": False})
        command = re.search(r"AT\+([A-Z]+)", info)
        if command:
            name = command.group(1) + ("=?" if command.group(1) == "CHLD" and "AT+CHLD=?" in info else "")
            state["pending"] = (name, frame)
            if name == "BRSF":
                state["brsf"] = frame
            if name == "BAC" and any(c in (2, 3) for c in codecs(r["bthfp.bac.codec"], info, "BAC")):
                self.bac[link] = frame
            return
        bcs = codecs(r["bthfp.bcs.codec"], info, "BCS")
        if bcs and "+BCS" in info:
            if bcs[0] == 1 and link in self.bac:
                self.emit("hfp-narrowband", frame, [self.bac[link]], how="+BCS CVSD")
            if bcs[0] == 2 and link in self.peers:
                self.msbc[self.peers[link]] = frame
        pending = state["pending"]
        if pending is None:
            return
        # After AT+CMER's OK only AT+CHLD=? and AT+BIND remain of the SLC (HFP 1.8, 4.2.1.3, 4.2.1.4).
        slc = pending[0] in SLC_COMMANDS and (not state["done"] or pending[0] in ("CHLD=?", "BIND"))
        if re.search(r"(^|\s)(ERROR|\+CME ERROR)", info) and slc:
            self.emit("hfp-slc-failed", frame, [pending[1]], step=pending[0])
            state["pending"] = None
        elif re.search(r"(^|\s)OK(\s|$)", info):
            if pending[0] == "CMER":
                state["done"] = True
            state["pending"] = None


def iso_fields(row, raw):
    """tshark's ISO fields of an HCI ISO Data packet's bytes: handle, PB and TS flags, then (PB 0b00 or 0b10) the
    Time_Stamp when TS is set, Packet_Sequence_Number, ISO_SDU_Length and Packet_Status_Flag."""
    header = int.from_bytes(raw[0:2], "little")
    fields = dict(row, **{"bthci_iso.chandle": str(header & 0x0FFF), "bthci_iso.pb_flag": str(header >> 12 & 3),
                          "bthci_iso_data.packet_seq_num": None, "bthci_iso_data.status_flag": None})
    at = 4 + (4 if header >> 14 & 1 else 0)
    if header >> 12 & 3 in (0, 2) and len(raw) >= at + 4:
        fields["bthci_iso_data.packet_seq_num"] = str(int.from_bytes(raw[at:at + 2], "little"))
        fields["bthci_iso_data.status_flag"] = str(int.from_bytes(raw[at + 2:at + 4], "little") >> 14)
    return fields


def codecs(field, info, name):
    """Codec ids of an AT+BAC / +BCS: tshark's field, else the numbers after the command in the Info column."""
    if field:
        return [num(v) for v in field.split(",") if num(v) is not None]
    found = re.search(r"\+%s[=:]\s*([0-9, ]+)" % name, info)
    return [int(v) for v in found.group(1).replace(" ", "").split(",") if v] if found else []


def analyse(path):
    audio = Audio()
    for r in rows(path):
        audio.row(r)
    return sorted(audio.events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
