"""The event extractor behind diagnosis_truth.py: HCI command/event state (connections per
adapter and handle, pending commands, create/cancel attempts) and the ACL/air facts, turned into
the classes documented there. It reads only what tshark decoded and the raw bytes tshark printed."""

from diagnosis_truth_bredr import Classic
from diagnosis_truth_smp import PairingTimer

DISCOVERY_REQUESTS = {0x04, 0x06, 0x08, 0x10}
CREATE_OPCODES = {0x200D, 0x2043}
NO_RESPONSE_OPCODES = {0x0C35}
# OGFs the Core spec defines (0x3E logo testing, 0x3F vendor). PacketLogger logs host-internal
# records with OGF 0x3D that never reach the controller: never reported as unanswered.
SPEC_OGFS = set(range(0x01, 0x09)) | {0x3E, 0x3F}
COMMAND_TIMEOUT = 2.0
# LE Add / Remove Device To / From Filter Accept List (Core Vol 4, Part E, 7.8.16-17).
ACCEPT_LIST_ADD, ACCEPT_LIST_REMOVE = 0x2011, 0x2012
# A removal from the accept list this soon (s) after a cancelled attempt's complete, before the next create, is the
# cancel's clean-up (CE-01 in docs/diagnosis.md: the same 1 s window).
REMOVAL_WINDOW = 1.0
# CtrData octets of each LL control opcode (Core v5.4 Vol 6, Part B, 2.4.2.1-2.4.2.37, LL_CONNECTION_
# UPDATE_IND .. LL_POWER_CHANGE_IND). A PDU whose Length is not 1 + this (+ 4 for a MIC a sniffer
# left on a decrypted PDU) is not the PDU its opcode names: `ll-control-malformed`, read no further.
CTRDATA_OCTETS = [11, 7, 1, 22, 12, 0, 0, 1, 8, 8, 0, 0, 5, 1, 8, 23, 23, 2, 0, 0, 8, 8, 2, 2, 4,
                  2, 1, 0, 34, 1, 1, 35, 8, 15, 3, 3, 4, 4]
# A data-channel PDU that starts more than T_IFS (150 us) + the longest LE 1M/2M packet (2,120 us:
# 1 + 4 + 2 + 251 + 4 MIC + 3 CRC octets at 1 Mb/s) + slack after the previous one on its access
# address cannot answer it: it opens a connection event, which only the central does (Vol 6,
# Part B, 4.5.1). Coded PHY packets last longer: not seen on the captures here.
EVENT_OPENING_GAP = 0.003


def number(text):
    """tshark prints 0x.. or decimal; an aggregated field takes its first value."""
    if text is None or text == "":
        return None
    first = text.split(",")[0]
    try:
        return int(first, 0)
    except ValueError:
        return int(float(first))


class Truth:
    def __init__(self, severity_of):
        self.severity_of = severity_of
        self.events = []
        self.notes = []
        self.create = {}        # adapter -> {"frame", "time", "cancel_frame", "cancel_time"}
        self.accept_added = {}  # (adapter, address) -> time of its last LE Add Device To Filter Accept List
        self.cancelled = {}     # adapter -> (connection-failed event after a cancel, its time, the cancel's time)
        self.open = {}          # (adapter, handle) -> {"frame", "time", "local", "bqr"}
        self.pending = {}       # (adapter, opcode) -> [(frame, time)]
        self.unanswered = []
        self.air_encryption = {}  # access address -> pending / encrypted / plain
        self.skipped = {"bad_crc": 0, "encrypted": 0}
        self.pairings = PairingTimer()
        self.resets = []          # (adapter, frame, time) of HCI Resets: they end every link
        self.air_last_time = {}   # access address -> time of its last data-channel packet
        self.cccd_commands = []   # cccd-write-command events not yet honoured by a notification on their characteristic
        self.unreadable = set()   # access addresses whose encrypted PDUs the truth cannot read
        self.air_clock_breaks_at = None  # the first air frame stamped before the one before it: no timing from there
        self.classic = Classic(self)
        self.controls = {}        # access address -> [(frame, opcode)] of the LL control PDUs read
        self.now = 0.0

    def honour_cccd_commands(self, frame, attribute, connection_handle):
        """A notification or indication on the characteristic whose CCCD (its value handle + 1, the usual layout) was
        written by Write Command: the server honoured the write, so nothing was lost (GATT-03 at info)."""
        for event in [e for e in self.cccd_commands if e["connection_handle"] == connection_handle
                      and attribute is not None and e["handle"] == attribute + 1]:
            event["honoured_frame"] = frame
            event["severity"] = self.severity_of(event)
            self.cccd_commands.remove(event)

    def emit(self, cls, frame, **fields):
        event = {"class": cls, "frame": frame}
        event.update(fields)
        event["severity"] = self.severity_of(event)
        self.events.append(event)
        return event

    def check(self, packet, name, raw_value):
        """Compare tshark's decoded field with the raw decoding; return the tshark value if any."""
        shown = number(packet["fields"].get(name))
        if shown is not None and raw_value is not None and shown != raw_value:
            self.notes.append("frame %d: tshark disagrees on %s: tshark %s, raw bytes %s"
                              % (packet["frame"], name, hex(shown), hex(raw_value)))
        return shown if shown is not None else raw_value

    # HCI commands ---------------------------------------------------------------------------
    def command(self, p):
        raw, ad, frame = p["raw"], p["adapter"], p["frame"]
        if len(raw) < 3:
            return
        opcode = self.check(p, "bthci_cmd.opcode", int.from_bytes(raw[0:2], "little"))
        params = raw[3:]
        if opcode == 0x0C03:
            self.flush_at_reset(p)  # before the Reset itself waits for its answer
            self.resets.append((ad, frame, p["time"]))
        if opcode not in NO_RESPONSE_OPCODES:
            self.pending.setdefault((ad, opcode), []).append((frame, p["time"]))
        handle = None
        if len(params) >= 2:
            handle = int.from_bytes(params[0:2], "little") & 0x0FFF
        extra = {"adapter": ad} if ad is not None else {}
        self.classic.command(p, opcode, params)
        if opcode == 0x0C03:
            self.emit("hci-reset", frame, open_links=self.reset_open_links, **extra)
        elif opcode in CREATE_OPCODES:
            self.create[ad] = {"frame": frame, "time": p["time"], "cancel_frame": None,
                               "cancel_time": None}
            self.cancelled.pop(ad, None)
        elif opcode in (ACCEPT_LIST_ADD, ACCEPT_LIST_REMOVE) and len(params) >= 7:
            self.accept_list(p, opcode, ":".join("%02x" % b for b in params[1:7][::-1]))
        elif opcode == 0x200E:
            attempt = self.create.setdefault(ad, {"frame": None, "time": None,
                                                  "cancel_frame": None, "cancel_time": None})
            if attempt["cancel_frame"] is None:
                attempt.update(cancel_frame=frame, cancel_time=p["time"])
        elif opcode == 0x0406 and handle is not None:
            reason = self.check(p, "bthci_cmd.reason", params[2] if len(params) > 2 else None)
            link = self.open.get((ad, handle))
            if link is not None and link["local"] is None:
                link["local"] = (frame, reason)
            elif link is None:
                self.open[(ad, handle)] = {"frame": None, "time": None, "local": (frame, reason),
                                           "bqr": None}
        elif opcode == 0x201B and handle is not None:
            self.emit("ltk-negative-reply", frame, handle=handle, **extra)
        elif opcode == 0x2021 and handle is not None:
            reason = params[2] if len(params) > 2 else None
            self.emit("conn-update-rejected", frame, reason=reason, handle=handle, **extra)

    def accept_list(self, p, opcode, address):
        """The accept list's edits. A device removed within REMOVAL_WINDOW of a cancelled attempt's complete is that
        cancel's clean-up: `removed` (addresses) and, for the one device added before, `removed_added_seconds` (its add
        to the cancel). Android times a direct connect from the device's add, not from the create it re-issues for an
        address rotation (AOSP gd/hci/acl_manager/le_impl.h: create_le_connection schedules
        create_connection_timeout_alarms_ once per device, on_create_connection_timeout removes it), so a removal 30 s
        after the add is the time-out however short the last create was."""
        ad = p["adapter"]
        if opcode == ACCEPT_LIST_ADD:
            self.accept_added[(ad, address)] = p["time"]
            return
        failed = self.cancelled.get(ad)
        if failed is None or p["time"] - failed[1] > REMOVAL_WINDOW:
            return
        event, _time, cancel_time = failed
        event.setdefault("removed", []).append(address)
        added = self.accept_added.get((ad, address))
        if len(set(event["removed"])) == 1 and added is not None:
            event["removed_added_seconds"] = round(cancel_time - added, 6)
        else:
            event.pop("removed_added_seconds", None)
        event.pop("benign", None)
        event["severity"] = self.severity_of(event)

    def flush_at_reset(self, p):
        # Links opened in the capture and not closed, which the Reset drops (counted before they are forgotten).
        self.reset_open_links = sum(1 for (ad, _h), link in self.open.items()
                                    if ad == p["adapter"] and link["frame"] is not None)
        for (ad, opcode), waiting in self.pending.items():
            if ad != p["adapter"]:
                continue
            for frame, time in waiting:
                if p["time"] - time >= COMMAND_TIMEOUT and opcode >> 10 in SPEC_OGFS:
                    self.unanswered.append((frame, opcode, ad))
            waiting.clear()
        self.open = {k: v for k, v in self.open.items() if k[0] != p["adapter"]}
        self.create.pop(p["adapter"], None)

    def answer(self, ad, opcode):
        if opcode == 0xFFFF:
            # Qualcomm controllers answer a vendor command they do not know with opcode 0xFFFF
            # (the Android stack goes on at once in the captures): it answers the oldest
            # vendor (OGF 0x3F) command waiting.
            vendor = [(w[0], key) for key, w in self.pending.items()
                      if key[0] == ad and key[1] >> 10 == 0x3F and w]
            if not vendor:
                return None
            opcode = min(vendor)[1][1]
        waiting = self.pending.get((ad, opcode))
        if not waiting:
            return None
        frame, time = waiting.pop(0)
        if self.now - time >= COMMAND_TIMEOUT:
            self.notes.append("frame %d: command 0x%04X answered %.3f s later (not unanswered)"
                              % (frame, opcode, self.now - time))
        return frame

    # HCI events -----------------------------------------------------------------------------
    def event(self, p):
        self.now = p["time"]
        raw = p["raw"]
        if len(raw) < 2:
            return
        code = self.check(p, "bthci_evt.code", raw[0])
        params = raw[2:]
        if not params:
            return
        handler = {0x0E: self.command_complete, 0x0F: self.command_status, 0x3E: self.le_meta,
                   0x05: self.disconnection_complete, 0x08: self.encryption_change,
                   0x59: self.encryption_change, 0x10: self.hardware_error,
                   0x1A: self.buffer_overflow, 0x57: self.payload_timeout,
                   0x03: self.bredr_connection_complete, 0x2C: self.bredr_connection_complete,
                   0xFF: self.vendor_event}.get(code)
        if handler is not None:
            handler(p, params)
        self.classic.event(p, code, params)

    def extra(self, p):
        return {"adapter": p["adapter"]} if p["adapter"] is not None else {}

    def command_complete(self, p, params):
        if len(params) < 3:
            return
        opcode = self.check(p, "bthci_evt.opcode", int.from_bytes(params[1:3], "little"))
        if opcode == 0:
            return
        command_frame = self.answer(p["adapter"], opcode)
        if len(params) < 4:
            return
        status = self.check(p, "bthci_evt.status", params[3])
        self.command_result(p, opcode, status, command_frame)

    def command_status(self, p, params):
        if len(params) < 4:
            return
        opcode = self.check(p, "bthci_evt.opcode", int.from_bytes(params[2:4], "little"))
        if opcode == 0:
            return
        status = self.check(p, "bthci_evt.status", params[0])
        self.command_result(p, opcode, status, self.answer(p["adapter"], opcode))

    def command_result(self, p, opcode, status, command_frame):
        if status == 0:
            return
        if opcode in CREATE_OPCODES:
            self.create.pop(p["adapter"], None)  # the attempt never started
        if opcode == 0x0406 and command_frame is not None:
            # A refused Disconnect never took effect: an end that follows is the peer's (the blueprobe moto g04s:
            # Disconnect 22344 refused 0x12 at 22345, the Echo Auto's 0x13 at 22346).
            for link in self.open.values():
                if link["local"] is not None and link["local"][0] == command_frame:
                    link["local"] = None
        self.emit("command-error", p["frame"], opcode=opcode, status=status,
                  command_frame=command_frame, **self.extra(p))

    def le_meta(self, p, params):
        sub = self.check(p, "bthci_evt.le_meta_subevent", params[0])
        if sub in (0x01, 0x0A, 0x29) and len(params) >= 12:
            self.connection_complete(p, params)
        elif sub in (0x19, 0x2A) and len(params) >= 4 and params[1] != 0:
            # LE CIS Established v1/v2 (Core 6.0 Vol 4, Part E, 7.7.65.25): status, CIS handle. Raw for v2,
            # which tshark 4.0 shows as Unknown.
            self.emit("cis-failed", p["frame"], status=params[1],
                      handle=int.from_bytes(params[2:4], "little") & 0x0FFF, **self.extra(p))
        elif sub in (0x1B, 0x1D) and len(params) >= 3 and params[1] != 0:
            # LE Create BIG Complete / LE BIG Sync Established (7.7.65.27, 29): status, BIG handle.
            self.emit("big-failed" if sub == 0x1B else "big-sync-failed", p["frame"], status=params[1],
                      big_handle=params[2], **self.extra(p))
        elif sub == 0x1E and len(params) >= 3:
            # LE BIG Sync Lost (7.7.65.30): BIG handle, reason.
            self.emit("big-sync-lost", p["frame"], big_handle=params[1], reason=params[2], **self.extra(p))
        elif sub in (0x03, 0x0C) and len(params) >= 4:
            status = self.check(p, "bthci_evt.status", params[1])
            handle = int.from_bytes(params[2:4], "little") & 0x0FFF
            if status != 0 and sub == 0x03:
                self.emit("conn-update-rejected", p["frame"], status=status, handle=handle,
                          **self.extra(p))
            elif status != 0:
                self.emit("phy-update-failed", p["frame"], status=status, handle=handle,
                          **self.extra(p))

    def connection_complete(self, p, params):
        status = self.check(p, "bthci_evt.status", params[1])
        handle = int.from_bytes(params[2:4], "little") & 0x0FFF
        role = params[4]
        ad, attempt = p["adapter"], self.create.get(p["adapter"])
        if status == 0:
            self.open[(ad, handle)] = {"frame": p["frame"], "time": p["time"], "local": None,
                                       "bqr": None}
            if role == 0:
                self.create.pop(ad, None)
            return
        self.create.pop(ad, None)
        peer = params[6:12][::-1]
        peer_text = ":".join("%02x" % b for b in peer) if any(peer) else None
        shown = p["fields"].get("bthci_evt.bd_addr")
        if peer_text and shown and shown.lower() != peer_text:
            self.notes.append("frame %d: tshark disagrees on peer: %s vs %s"
                              % (p["frame"], shown, peer_text))
        attempt = attempt or {"frame": None, "time": None, "cancel_frame": None,
                              "cancel_time": None}
        started = attempt["time"] is not None
        event = self.emit("connection-failed", p["frame"], status=status, peer=peer_text,
                          create_frame=attempt["frame"], cancel_frame=attempt["cancel_frame"],
                          cancel_seconds=round(attempt["cancel_time"] - attempt["time"], 6)
                          if started and attempt["cancel_frame"] else None,
                          attempt_seconds=round(p["time"] - attempt["time"], 6) if started else None,
                          **self.extra(p))
        if attempt["cancel_frame"] is not None:
            self.cancelled[ad] = (event, p["time"], attempt["cancel_time"])

    def bredr_connection_complete(self, p, params):
        """BR/EDR ACL (0x03) and SCO (0x2C) links: opened for `disconnection`; failures are the Classic tracker's."""
        if len(params) >= 3 and params[0] == 0:
            handle = int.from_bytes(params[1:3], "little") & 0x0FFF
            self.open[(p["adapter"], handle)] = {"frame": p["frame"], "time": p["time"],
                                                 "local": None, "bqr": None}

    def disconnection_complete(self, p, params):
        if len(params) < 4:
            return
        status = self.check(p, "bthci_evt.status", params[0])
        handle = self.check(p, "bthci_evt.connection_handle",
                            int.from_bytes(params[1:3], "little") & 0x0FFF)
        reason = self.check(p, "bthci_evt.reason", params[3])
        ad = p["adapter"]
        link = self.open.get((ad, handle)) or {"frame": None, "time": None, "local": None,
                                               "bqr": None}
        local_frame, local_reason = link["local"] or (None, None)
        connect_frame = link["frame"]
        if reason == 0x3E:
            self.emit("establishment-failed", p["frame"], handle=handle,
                      connect_frame=connect_frame, **self.extra(p))
        self.emit("disconnection", p["frame"], handle=handle, status=status, reason=reason,
                  local_command_frame=local_frame, local_reason=local_reason,
                  connect_frame=connect_frame,
                  seconds_since_connect=round(p["time"] - link["time"], 6)
                  if link["time"] is not None else None,
                  quality_report_frame=link["bqr"], **self.extra(p))
        if status == 0:
            self.open.pop((ad, handle), None)
            self.pairings.note((ad, handle), p["frame"], p["time"], "ended")

    def encryption_change(self, p, params):
        if len(params) < 4:
            return
        status = self.check(p, "bthci_evt.status", params[0])
        handle = self.check(p, "bthci_evt.connection_handle",
                            int.from_bytes(params[1:3], "little") & 0x0FFF)
        enabled = self.check(p, "bthci_evt.encryption_enable", params[3])
        if status != 0:
            self.emit("encryption-error", p["frame"], handle=handle, status=status,
                      **self.extra(p))
        else:
            self.emit("encryption-started", p["frame"], handle=handle, enabled=enabled,
                      **self.extra(p))
            if enabled:
                self.pairings.note((p["adapter"], handle), p["frame"], p["time"], "encrypted")

    def hardware_error(self, p, params):
        code = self.check(p, "bthci_evt.hardware_code", params[0])
        self.emit("hardware-error", p["frame"], code=code, **self.extra(p))

    def buffer_overflow(self, p, params):
        self.emit("data-buffer-overflow", p["frame"], link_type=params[0], **self.extra(p))

    def payload_timeout(self, p, params):
        if len(params) >= 2:
            handle = self.check(p, "bthci_evt.connection_handle",
                                int.from_bytes(params[0:2], "little") & 0x0FFF)
            self.emit("authenticated-payload-timeout", p["frame"], handle=handle,
                      **self.extra(p))

    def vendor_event(self, p, params):
        if params[0] != 0x58 or len(params) < 2:
            return
        report_id, handle, rssi = params[1], None, None
        if report_id not in (0x06, 0x09) and len(params) >= 8:
            handle = int.from_bytes(params[3:5], "little") & 0x0FFF
            rssi = params[7] - 256 if params[7] > 127 else params[7]
            link = self.open.get((p["adapter"], handle))
            if link is not None:
                link["bqr"] = p["frame"]
        self.emit("quality-report", p["frame"], report_id=report_id, handle=handle, rssi=rssi,
                  **self.extra(p))

    def finish_commands(self, end_time):
        for (ad, opcode), waiting in self.pending.items():
            for frame, time in waiting:
                if end_time - time >= COMMAND_TIMEOUT and opcode >> 10 in SPEC_OGFS:
                    self.unanswered.append((frame, opcode, ad))
        for frame, opcode, ad in self.unanswered:
            self.emit("command-unanswered", frame, opcode=opcode,
                      **({"adapter": ad} if ad is not None else {}))

    def finish_pairings(self, end_time):
        for ad, frame, time in self.resets:
            for link in [k for k in self.pairings.facts if k[0] == ad and k[0] != "air"]:
                self.pairings.note(link, frame, time, "ended")
        self.pairings.finish(end_time, self.emit)

    # ACL and air ----------------------------------------------------------------------------
    def direction(self, row, opens_event=False):
        if row["nordic_ble.direction"] is not None or row["btle.access_address"] is not None:
            source = row["_ws.col.Source"] or ""
            return "c2p" if source.startswith("Master") else \
                "p2c" if source.startswith("Slave") else "c2p" if opens_event else None
        if row["hci_mon.opcode"] is not None:
            return {4: "sent", 5: "received"}.get(number(row["hci_mon.opcode"]))
        if row["packetlogger.type"] is not None:
            return {2: "sent", 3: "received"}.get(number(row["packetlogger.type"]))
        value = row["hci_h4.direction"] or row["frame.p2p_dir"]
        return {0: "sent", 1: "received"}.get(number(value))

    def air_frame_usable(self, row):
        """Skip air frames tshark can only dissect as nonsense (bad CRC, still encrypted)."""
        if row["btle.access_address"] is None or "btle" not in (row["frame.protocols"] or ""):
            return True
        if number(row["nordic_ble.crcok"]) == 0 or row["btle.crc.incorrect"] is not None or \
                (number(row["btle_rf.flags.crc_checked"]) == 1
                 and number(row["btle_rf.flags.crc_valid"]) == 0):
            self.skipped["bad_crc"] += 1
            return False
        if row["btle.data_header.llid"] is None or number(row["btle.data_header.length"]) == 0:
            return True  # advertising channel or empty PDU (never encrypted)
        if row["nordic_ble.encrypted"] is not None:
            usable = (number(row["nordic_ble.encrypted"]) == 0
                      or number(row["nordic_ble.micok"]) == 1)
        elif number(row["btle_rf.flags.decrypted"]) == 1:
            usable = True
        else:
            usable = self.air_plaintext(row)
        if not usable:
            self.skipped["encrypted"] += 1
            aa = number(row["btle.access_address"])
            if aa not in self.unreadable:
                self.unreadable.add(aa)
                self.pairings.note(("air", aa), int(row["frame.number"]),
                                   float(row["frame.time_epoch"]), "unreadable")
        return usable

    def air_plaintext(self, row):
        """LT 256/251/PPI: every PDU after LL_START_ENC_REQ is encrypted, unless the capture was
        decrypted offline (crackle -o): then the first one is a 1-byte LL_START_ENC_RSP, where
        ciphertext would carry 4 more bytes of MIC."""
        aa, state = number(row["btle.access_address"]), None
        state = self.air_encryption.get(aa)
        opcode = number(row["btle.control_opcode"]) if number(row["btle.data_header.llid"]) == 3 \
            else None
        if state == "pending":
            state = "plain" if opcode == 0x06 and number(row["btle.data_header.length"]) == 1 \
                else "encrypted"
            self.air_encryption[aa] = state
        elif state is None and opcode == 0x05:
            self.air_encryption[aa] = "pending"
        return state != "encrypted"

    def opens_event(self, row):
        """Timing (EVENT_OPENING_GAP): the packet comes too long after the previous one on its
        access address to answer it. The first packet of a connection opens an event too."""
        if row["btle.access_address"] is None or row["btle.data_header.llid"] is None:
            return False
        aa, time = number(row["btle.access_address"]), float(row["frame.time_epoch"])
        previous = self.air_last_time.get(aa)
        self.air_last_time[aa] = time
        trusted = self.air_clock_breaks_at is None or int(row["frame.number"]) < self.air_clock_breaks_at
        return trusted and (previous is None or time - previous > EVENT_OPENING_GAP)

    def acl_row(self, row):
        opens_event = self.opens_event(row)
        if not self.air_frame_usable(row):
            return
        frame, direction = int(row["frame.number"]), self.direction(row, opens_event)
        if row["btle.link_layer_data.access_address"] is not None:
            self.connect_request(row, frame)
        aa = number(row["btle.access_address"])
        link = {"access_address": aa} if aa is not None and row["btle.data_header.llid"] \
            else {"adapter": number(row["hci_mon.adapter_id"])} \
            if row["hci_mon.adapter_id"] is not None else {}
        handle = number(row["bthci_acl.chandle"])
        handle = handle & 0x0FFF if handle is not None else None
        if number(row["btatt.opcode"]) == 0x01 and row["btatt.error_code"] is not None:
            request = number(row["btatt.req_opcode_in_error"])
            error = number(row["btatt.error_code"])
            self.emit("att-error", frame, request_opcode=request,
                      handle=number(row["btatt.handle"]),
                      error=error, discovery_end=(error == 0x0A and request in DISCOVERY_REQUESTS)
                      # 0x10 Unsupported Group Type answers a Read By Group Type for a type the server does not
                      # group (Core Spec Vol 3, Part F, 3.4.4.9/3.4.4.10): the client goes on, as after 0x0A.
                      or (error == 0x10 and request == 0x10),
                      direction=direction, connection_handle=handle, **link)
        if number(row["btatt.opcode"]) == 0x52 and "0x2902" in (row["btatt.uuid16"] or "").split(","):
            self.cccd_commands.append(
                self.emit("cccd-write-command", frame, handle=number(row["btatt.handle"]), honoured_frame=None,
                          direction=direction, connection_handle=handle, **link))
        if number(row["btatt.opcode"]) in (0x1B, 0x1D):
            self.honour_cccd_commands(frame, number(row["btatt.handle"]), handle)
        if number(row["btsmp.opcode"]) == 0x05:
            self.emit("pairing-failed", frame, reason=number(row["btsmp.reason"]),
                      direction=direction, handle=handle, **link)
        if number(row["btsmp.opcode"]) is not None:
            self.smp_row(row, frame, direction, handle, link)
        result = number(row["btl2cap.move_result"])
        if number(row["btl2cap.cmd_code"]) == 0x13 and result:
            self.emit("conn-update-rejected", frame, result=result, handle=handle,
                      direction=direction, **link)
        if row["btle.data_header.llid"] is not None and number(row["btle.data_header.llid"]) == 3:
            self.ll_control(row, frame, direction, link)

    def connect_request(self, row, frame):
        """CONNECT_IND / AUX_CONNECT_REQ: a new connection on this access address (SweynTooth's
        tester reuses one for every connection): the last one is gone, its state starts over."""
        aa = number(row["btle.link_layer_data.access_address"])
        self.pairings.note(("air", aa), frame, float(row["frame.time_epoch"]), "connected-again")
        self.air_encryption.pop(aa, None)
        self.air_last_time.pop(aa, None)
        self.unreadable.discard(aa)

    def smp_row(self, row, frame, direction, handle, link):
        aa = link.get("access_address")
        key, fields, sides = (("air", aa), {"access_address": aa}, ("c2p", "p2c")) if aa is not None \
            else ((link.get("adapter"), handle), dict(handle=handle, **link), ("sent", "received"))
        for opcode in (row["btsmp.opcode"] or "").split(","):
            self.pairings.note(key, frame, float(row["frame.time_epoch"]), "smp",
                               opcode=number(opcode), side=direction, sides=sides,
                               link_fields=fields, sc=number(row["btsmp.sc_flag"]),
                               initiator_keys=number(row["btsmp.initiator_key_distribution"]),
                               responder_keys=number(row["btsmp.responder_key_distribution"]))

    def control_malformed(self, row, opcode, frame, direction, link):
        """Length is not 1 + CtrData for the opcode (4 more allowed on a decrypted PDU)."""
        length = number(row["btle.data_header.length"])
        if opcode is None or opcode >= len(CTRDATA_OCTETS) or length is None:
            return False
        expected = 1 + CTRDATA_OCTETS[opcode]
        decrypted = number(row["nordic_ble.encrypted"]) == 1 or \
            number(row["btle_rf.flags.decrypted"]) == 1
        if length == expected or decrypted and length == expected + 4:
            return False
        self.emit("ll-control-malformed", frame, opcode=opcode, length=length,
                  expected_length=expected, direction=direction, **link)
        return True

    def ll_control(self, row, frame, direction, link):
        opcode, error = number(row["btle.control_opcode"]), number(row["btle.control.error_code"])
        if self.control_malformed(row, opcode, frame, direction, link):
            return
        aa, time = link.get("access_address"), float(row["frame.time_epoch"])
        self.controls.setdefault(aa, []).append((frame, opcode))
        if opcode == 0x06 and direction != "c2p":
            # The peripheral's LL_START_ENC_RSP (read in plaintext or decrypted) ends the
            # encryption start procedure (Vol 6, Part B, 5.1.3.1): the link is encrypted.
            self.pairings.note(("air", aa), frame, time, "encrypted")
        if opcode == 0x02:
            self.pairings.note(("air", aa), frame, time, "ended")
        if opcode == 0x02 and error is not None:
            local = frame if direction == "c2p" else None
            self.emit("disconnection", frame, handle=None, status=0, reason=error,
                      local_command_frame=local, local_reason=error if local else None,
                      connect_frame=None, seconds_since_connect=None, quality_report_frame=None,
                      direction=direction, **link)
        elif opcode in (0x0D, 0x11) and error is not None:
            self.emit("ll-reject", frame, reason=error,
                      rejected_opcode=number(row["btle.control.reject_opcode"])
                      if opcode == 0x11 else None, direction=direction, redone_frame=None, **link)
