#!/usr/bin/env python3
"""diagnosis_truth_extra.py: truth classes diagnosis_truth.py does not extract, for diagnosis_precision.py.

Usage: scripts/diagnosis_truth_extra.py [--base-name] CAPTURE...
One JSON line per capture, as diagnosis_truth.py: {"file", "tshark", "records", "events": [...]}; one tshark pass
(`-T fields`), tshark's decoding only, never blescope's. Kept apart so the committed Tests/Truth/diagnosis files stay
current. Classes (frame = the frame named; times in seconds):
  supervision-timeout   a link's supervision timeout set: HCI LE (Enhanced) Connection Complete, LE Connection Update
                        Complete (status 0), air CONNECT_IND / LL_CONNECTION_UPDATE_IND; and requested: L2CAP
                        Connection Parameter Update Request (requested true). timeout, interval, latency (of the
                        request: its maximum interval), short (timeout < 1 s, or <= 2 x (1 + latency) x interval),
                        replaced_frame (the link's next setting that is not requested, or null). LP-02's evidence.
  bredr-mode-refused    Mode Change (0x14) or Role Change (0x12) with status != 0: status, handle. BR-06's evidence
                        (the refused Sniff/Exit Sniff/Switch Role commands are diagnosis_truth.py's command-error).
  acl-before-connection HCI logs: the first ACL packet, Number Of Completed Packets entry or Disconnection Complete of
                        a connection handle that no connection complete (LE, BR/EDR, synchronous) opened before, on
                        that adapter: handle; air: the first good data-channel packet on an access address no connect
                        request named before: access_address. CQ-01's evidence.
  att-unanswered        an ATT request or indication with no response (or Error Response, or confirmation) from the
                        other side for 30 s, or before the link ends or the capture does: opcode, waited (seconds to
                        the answer, the link's end or the capture's end), answered_frame, until ("answer", "link-end",
                        "capture-end"). Only where tshark gives the direction (HCI logs; air captures whose header or
                        tshark's Source column names central and peripheral). GATT-01's evidence.
  att-request-while-pending  an ATT request sent while an earlier request of the same side on the same link awaits its
                        answer: opcode, pending_frame. att-response-unrequested: a response (or confirmation) with no
                        request (indication) of the other side waiting: opcode. GATT-02's evidence.
  le-meta-undecoded     an LE Meta event tshark 4.0 does not decode (e.g. 0x29, LE Enhanced Connection Complete v2): its
                        connection parameters are not read here (a firing there is unjudged): subevent.
  att-direction-unknown frame 0, once per capture: the count of ATT PDUs whose direction tshark does not give (the
                        ATT classes above cannot be complete there: GATT-01/02 firings are unjudged).
  host-packets-stalled  host-to-controller ACL packets of a handle that Number Of Completed Packets did not report for
                        more than 5 s: frame = the report (or Disconnection Complete) that ends the wait, since_frame,
                        waited, handle. TP-01's and DC-08's evidence. A report for more packets than the log shows
                        waiting is counted against the next packets sent (the log missed their sending), as the
                        controller counts.
"""

import subprocess
import sys

from diagnosis_truth import truth_main
from diagnosis_truth_events import number

FIELDS = [
    "frame.number", "frame.time_epoch", "frame.p2p_dir", "hci_h4.direction", "packetlogger.type", "hci_mon.opcode",
    "hci_mon.adapter_id", "bthci_evt.code", "bthci_evt.le_meta_subevent", "bthci_evt.status",
    "bthci_evt.connection_handle", "bthci_evt.num_compl_packets", "bthci_evt.le_supv_timeout",
    "bthci_evt.le_con_interval", "bthci_evt.le_con_latency", "bthci_acl.chandle", "btatt.opcode",
    "btle.access_address", "btle.link_layer_data.access_address", "btle.link_layer_data.timeout",
    "btle.link_layer_data.interval", "btle.link_layer_data.latency", "btle.control_opcode", "btle.control.timeout",
    "btle.control.interval", "btle.control.latency", "btl2cap.cmd_code", "btl2cap.max_interval",
    "btl2cap.timeout_multiplier", "btl2cap.slave_latency", "_ws.col.Source", "nordic_ble.crcok", "btle.crc.incorrect",
    "btle_rf.flags.crc_checked", "btle_rf.flags.crc_valid",
]
UDLT = ["-o", 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""']
REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20}
ANSWERS = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21}
INDICATION, CONFIRMATION = 0x1D, 0x1E
ATT_TIMEOUT, NOCP_TIMEOUT = 30.0, 5.0


def rows(path):
    args = ["tshark", "-n", "-r", path] + UDLT + ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
                                                 "-E", "aggregator=,", "-E", "quote=n"]
    for name in FIELDS:
        args += ["-e", name]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    for line in out.splitlines():
        cells = line.split("\t")
        yield {name: (cells[i] if i < len(cells) and cells[i] != "" else None) for i, name in enumerate(FIELDS)}


def good_air(row):
    return not (number(row["nordic_ble.crcok"]) == 0 or row["btle.crc.incorrect"] is not None
                or (number(row["btle_rf.flags.crc_checked"]) == 1 and number(row["btle_rf.flags.crc_valid"]) == 0))


def side(row):
    """'a'/'b' for the two ends of a link (sent/received, central/peripheral), None when tshark does not say."""
    if row["btle.access_address"] is not None:
        source = row["_ws.col.Source"] or ""
        return "a" if source.startswith("Master") else "b" if source.startswith("Slave") else None
    for name, table in (("hci_mon.opcode", {4: "a", 5: "b"}), ("packetlogger.type", {2: "a", 3: "b"})):
        if row[name] is not None:
            return table.get(number(row[name]))
    return {0: "a", 1: "b"}.get(number(row["hci_h4.direction"] or row["frame.p2p_dir"]))


class Extra:
    def __init__(self):
        self.events, self.opened, self.seen, self.timeouts = [], set(), set(), {}
        self.pending, self.sent, self.credit, self.undirected = {}, {}, {}, 0
        self.connected_air, self.seen_air = set(), set()

    def emit(self, cls, frame, **fields):
        self.events.append(dict({"class": cls, "frame": frame}, **fields))

    def setting(self, link, frame, timeout, interval, latency, requested=False):
        short = timeout < 1.0 or (interval is not None and timeout <= 2 * (1 + (latency or 0)) * interval)
        event = {"class": "supervision-timeout", "frame": frame, "timeout": round(timeout, 4),
                 "interval": interval, "latency": latency, "short": short, "requested": requested,
                 "replaced_frame": None}
        for earlier in self.timeouts.get(link, []):
            if earlier["replaced_frame"] is None and not requested:
                earlier["replaced_frame"] = frame
        self.timeouts.setdefault(link, []).append(event)
        self.events.append(event)

    def hci(self, row, frame, time, adapter):
        code, handle = number(row["bthci_evt.code"]), number(row["bthci_evt.connection_handle"])
        sub, status = number(row["bthci_evt.le_meta_subevent"]), number(row["bthci_evt.status"])
        if code in (0x03, 0x2C) or (code == 0x3E and sub in (0x01, 0x0A)):
            if status == 0 and handle is not None:
                self.opened.add((adapter, handle))
                self.end_link((adapter, handle), frame, time, "link-end")
            if code == 0x3E and status == 0 and row["bthci_evt.le_supv_timeout"]:
                self.setting((adapter, handle), frame, number(row["bthci_evt.le_supv_timeout"]) * 0.01,
                             number(row["bthci_evt.le_con_interval"]) * 0.00125, number(row["bthci_evt.le_con_latency"]))
        elif code == 0x3E and sub == 0x03 and status == 0 and row["bthci_evt.le_supv_timeout"]:
            self.setting((adapter, handle), frame, number(row["bthci_evt.le_supv_timeout"]) * 0.01,
                         number(row["bthci_evt.le_con_interval"]) * 0.00125, number(row["bthci_evt.le_con_latency"]))
        elif code == 0x3E and sub not in (None, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C,
                                          0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14):
            self.emit("le-meta-undecoded", frame, subevent=sub)
        elif code in (0x12, 0x14) and status:
            self.emit("bredr-mode-refused", frame, status=status, handle=handle)
        elif code == 0x05 and handle is not None:
            self.first_use(adapter, handle, frame)
            self.nocp_wait((adapter, handle), frame, time, drop=True)
            self.end_link((adapter, handle), frame, time, "link-end")
        elif code == 0x13 and row["bthci_evt.connection_handle"]:
            handles = [number(h) for h in row["bthci_evt.connection_handle"].split(",")]
            counts = [number(c) for c in (row["bthci_evt.num_compl_packets"] or "").split(",") if c]
            for h, count in zip(handles, counts):
                self.first_use(adapter, h, frame)
                self.nocp_wait((adapter, h), frame, time, done=count)

    def first_use(self, adapter, handle, frame):
        key = (adapter, handle)
        if key not in self.opened and key not in self.seen:
            self.emit("acl-before-connection", frame, handle=handle)
        self.seen.add(key)

    def nocp_wait(self, key, frame, time, done=0, drop=False):
        queue = self.sent.setdefault(key, [])
        if queue and time - queue[0][1] > NOCP_TIMEOUT:
            self.emit("host-packets-stalled", frame, since_frame=queue[0][0], waited=round(time - queue[0][1], 3),
                      handle=key[1])
        # A report for more packets than the log shows waiting completes packets the log did not show being sent
        # (a snoop log can miss some): count it against the next ones, as the controller's count does.
        self.credit[key] = 0 if drop else self.credit.get(key, 0) + max(0, done - len(queue))
        del queue[:len(queue) if drop else done]

    def end_link(self, link, frame, time, why):
        for key in [k for k in self.pending if k[0] == link]:
            for request_frame, request_time, opcode in self.pending.pop(key):
                self.emit("att-unanswered", request_frame, opcode=opcode, waited=round(time - request_time, 3),
                          answered_frame=None, until=why)

    def att(self, link, who, opcode, frame, time):
        other = "b" if who == "a" else "a"
        if opcode in REQUESTS or opcode == INDICATION:
            waiting = self.pending.setdefault((link, who), [])
            if opcode in REQUESTS and any(o in REQUESTS for _f, _t, o in waiting):
                earlier = next(f for f, _t, o in waiting if o in REQUESTS)
                self.emit("att-request-while-pending", frame, opcode=opcode, pending_frame=earlier)
            waiting.append((frame, time, opcode))
        elif opcode in ANSWERS or opcode == CONFIRMATION:
            waiting = self.pending.get((link, other), [])
            match = next((w for w in waiting if (opcode == CONFIRMATION) == (w[2] == INDICATION)), None)
            if match is None:
                self.emit("att-response-unrequested", frame, opcode=opcode)
            if match:
                waiting.remove(match)
                if time - match[1] >= ATT_TIMEOUT:
                    self.emit("att-unanswered", match[0], opcode=match[2], waited=round(time - match[1], 3),
                              answered_frame=frame, until="answer")

    def row(self, row):
        frame, time = int(row["frame.number"]), float(row["frame.time_epoch"])
        adapter = number(row["hci_mon.adapter_id"])
        if row["bthci_evt.code"] is not None:
            self.hci(row, frame, time, adapter)
            return
        aa = number(row["btle.access_address"])
        if aa is not None and not good_air(row):
            return
        if row["btle.link_layer_data.access_address"] is not None and row["btle.link_layer_data.timeout"]:
            link = ("air", number(row["btle.link_layer_data.access_address"]))
            self.connected_air.add(link[1])
            self.end_link(link, frame, time, "link-end")
            self.timeouts.pop(link, None)
            self.setting(link, frame, number(row["btle.link_layer_data.timeout"]) * 0.01,
                         number(row["btle.link_layer_data.interval"]) * 0.00125,
                         number(row["btle.link_layer_data.latency"]))
            return
        if aa is not None and aa != 0x8E89BED6 and aa not in self.connected_air and aa not in self.seen_air:
            self.seen_air.add(aa)
            self.emit("acl-before-connection", frame, access_address=aa)
        handle = number(row["bthci_acl.chandle"])
        link = ("air", aa) if aa is not None else (adapter, handle & 0x0FFF) if handle is not None else None
        if link is None:
            return
        if handle is not None:
            self.first_use(adapter, handle & 0x0FFF, frame)
            if side(row) == "a" and self.credit.get(link, 0) > 0:
                self.credit[link] -= 1
            elif side(row) == "a":
                self.sent.setdefault(link, []).append((frame, time))
        if number(row["btle.control_opcode"]) == 0x00 and row["btle.control.timeout"]:
            self.setting(link, frame, number(row["btle.control.timeout"]) * 0.01,
                         number(row["btle.control.interval"]) * 0.00125, number(row["btle.control.latency"]))
        if number(row["btl2cap.cmd_code"]) == 0x12 and row["btl2cap.timeout_multiplier"]:
            self.setting(link, frame, number(row["btl2cap.timeout_multiplier"]) * 0.01,
                         number(row["btl2cap.max_interval"]) * 0.00125, number(row["btl2cap.slave_latency"]), requested=True)
        who, opcode = side(row), number(row["btatt.opcode"])
        if opcode is not None and who is not None:
            self.att(link, who, opcode, frame, time)
        elif opcode is not None:
            self.undirected += 1

    def finish(self, end):
        if self.undirected:
            self.emit("att-direction-unknown", 0, count=self.undirected)
        for (link, _who), waiting in list(self.pending.items()):
            for request_frame, request_time, opcode in waiting:
                self.emit("att-unanswered", request_frame, opcode=opcode, waited=round(end - request_time, 3),
                          answered_frame=None, until="capture-end")
        self.events.sort(key=lambda e: (e["frame"], e["class"]))


def analyse(path, name):
    extra, count, end = Extra(), 0, 0.0
    for row in rows(path):
        count += 1
        end = max(end, float(row["frame.time_epoch"]))
        extra.row(row)
    extra.finish(end)
    version = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.split("\n")[0].split()[-1]
    return {"file": name, "tshark": version, "records": count, "events": extra.events}


if __name__ == "__main__":
    sys.exit(truth_main(sys.argv[1:], __doc__, analyse))
