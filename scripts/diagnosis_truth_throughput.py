#!/usr/bin/env python3
"""Value streams, the link settings they ran under, whether the radio had room, and write runs that end their link,
read by tshark alone: the truth for TP-03, TP-04 and SC-01 (issue 48, point 4).

Usage: scripts/diagnosis_truth_throughput.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields. A stream is the values (ATT Handle Value Notification 0x1B or
Indication 0x1D, Write Command 0x52 or Request 0x12) of one opcode to one handle on one link; a value's size is its ATT
PDU's length less 3 (opcode, handle).

  value-stream         every stream of 100 values or more: frame = its first value, frames = first and last, handle,
                       opcode, values, bytes, seconds (first to last), idle_share (the share of that time in pauses
                       over 500 ms between values), settings the link had at its first value when tshark saw the link
                       open (LE Connection Complete, CONNECT_IND; else null): interval_ms, att_mtu (23 until an Exchange
                       MTU Request and Response, Vol 3, Part F, 3.4.2), data_length (27 until an LE Data Length Change
                       or LL_LENGTH_RSP, Vol 6, Part B, 4.5.10), phy ("1M" until a PHY update names 2M or Coded); limits
                       (those at the floor TP-03 names: att_mtu 23, data_length 27, phy 1M, interval_ms >= 30; null
                       when the settings are unknown); room (true when the radio provably had room for more: idle_share
                       >= 0.5, or fewer link-layer PDUs of the stream than connection events in its time, each value
                       taking ceil((size + 7) / data_length) PDUs and each event carrying at least one PDU each way,
                       Vol 6, Part B, 4.5.1). TP-03's evidence (limits not empty) and TP-04's (room).
  link-settings-unknown  at a stream's first value when tshark did not see its link open: its limits cannot be read.
  stream-room-unproven   at a stream's first value when neither pauses nor the PDU count prove room (the radio may
                       or may not have been full: TP-04 there is not judged).
  write-run-ended      (SC-01) a Write Command or Request stream of 100 values or more, 8192 bytes or more, 95 % of its
                       values of its largest size, 16 bytes or more, after which the link ended within 30 s (a
                       Disconnection Complete, LL_TERMINATE_IND, or on air the link's last PDU while the capture goes
                       on), not by this side's Disconnect unless a new LE link opened within 60 s: frame = the run's last
                       write, frames = first and last write and the end, writes, size, same_size, bytes, end_frame,
                       came_back_frame.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import events_main, field_number as num, tshark_fields  # noqa: E402

FIELDS = [
    "frame.number", "frame.time_epoch", "hci_mon.adapter_id", "bthci_acl.chandle", "btle.access_address",
    "nordic_ble.crcok", "btle.crc.incorrect", "btatt.opcode", "btatt.handle", "btl2cap.cid", "btl2cap.length",
    "bthci_evt.code", "bthci_evt.le_meta_subevent", "bthci_evt.status", "bthci_evt.connection_handle",
    "bthci_evt.le_con_interval", "bthci_evt.max_tx_octets", "bthci_evt.max_rx_octets", "bthci_evt.le_tx_phy",
    "bthci_evt.le_rx_phy", "bthci_cmd.opcode", "bthci_cmd.connection_handle", "btle.advertising_header.pdu_type",
    "btle.link_layer_data.access_address", "btle.link_layer_data.interval", "btle.control_opcode",
    "btle.control.interval", "btle.control.max_tx_octets", "btle.control.m_to_s_phy", "btle.control.s_to_m_phy",
    "btatt.client_rx_mtu", "btatt.server_rx_mtu",
]
VALUES = (0x1B, 0x1D, 0x52, 0x12)
WRITES = (0x52, 0x12)
PAUSE, END_WINDOW, COME_BACK = 0.5, 30.0, 60.0


class Link:
    def __init__(self, known):
        self.settings = {"interval_ms": None, "att_mtu": 23, "data_length": 27, "phy": "1M"} if known else None
        self.client_mtu, self.streams, self.disconnect_sent = None, {}, False

    def set(self, **values):
        if self.settings is not None:
            self.settings.update({k: v for k, v in values.items() if v is not None})


class Stream:
    def __init__(self, frame, time, opcode, handle, settings):
        self.frames, self.times, self.sizes = [frame], [time], []
        self.opcode, self.handle, self.settings = opcode, handle, dict(settings) if settings else None


def limits(settings):
    if settings is None:
        return None
    floor = [("att_mtu", settings["att_mtu"] == 23), ("data_length", settings["data_length"] == 27),
             ("phy", settings["phy"] == "1M"), ("interval", (settings["interval_ms"] or 0) >= 30)]
    return [name for name, at in floor if at]


def stream_events(s):
    seconds = s.times[-1] - s.times[0]
    idle = sum(b - a for a, b in zip(s.times, s.times[1:]) if b - a > PAUSE)
    idle_share = round(idle / seconds, 3) if seconds > 0 else 0.0
    room = idle_share >= 0.5
    settings = s.settings or {}
    if not room and settings.get("interval_ms") and seconds > 0:
        per_value = [math.ceil((size + 7) / settings["data_length"]) for size in s.sizes]
        room = sum(per_value) < seconds * 1000 / settings["interval_ms"]
    first = s.frames[0]
    event = {"class": "value-stream", "frame": first, "frames": [first, s.frames[-1]], "handle": s.handle,
             "opcode": s.opcode, "values": len(s.sizes), "bytes": sum(s.sizes), "seconds": round(seconds, 3),
             "idle_share": idle_share, "settings": s.settings, "limits": limits(s.settings), "room": room}
    out = [event]
    if s.settings is None:
        out.append({"class": "link-settings-unknown", "frame": first, "frames": [first]})
    if not room:
        out.append({"class": "stream-room-unproven", "frame": first, "frames": [first]})
    return out


def write_run(s):
    """The run's facts when it is SC-01's shape, else None."""
    if s.opcode not in WRITES or len(s.sizes) < 100 or sum(s.sizes) < 8192:
        return None
    size = max(s.sizes)
    same = sum(1 for v in s.sizes if v == size)
    if size < 16 or same < 0.95 * len(s.sizes):
        return None
    return {"writes": len(s.sizes), "size": size, "same_size": same, "bytes": sum(s.sizes)}


class Throughput:
    def __init__(self):
        self.links, self.events, self.runs = {}, [], []  # runs: (run facts, last frame, end frame, time, local)

    def link(self, key):
        if key not in self.links:
            self.links[key] = Link(known=False)
        return self.links[key]

    def opened(self, key, interval, frame, time):
        self.close(key, frame, time, local=False)
        self.links[key] = Link(known=True)
        self.links[key].set(interval_ms=interval)
        for run in self.runs:
            if run["came_back_frame"] is None and 0 <= time - run["end_time"] <= COME_BACK:
                run["came_back_frame"] = frame

    def value(self, key, frame, time, opcode, handle, size):
        link = self.link(key)
        s = link.streams.get((opcode, handle))
        if s is None:
            s = link.streams[(opcode, handle)] = Stream(frame, time, opcode, handle, link.settings)
        else:
            s.frames.append(frame)
            s.times.append(time)
        s.sizes.append(size)

    def close(self, key, frame, time, local, ended=True):
        link = self.links.pop(key, None)
        if link is None:
            return
        for s in link.streams.values():
            if len(s.sizes) >= 100:
                self.events += stream_events(s)
            run = write_run(s)
            if run is not None and ended and frame is not None and time - s.times[-1] <= END_WINDOW:
                run.update({"first": s.frames[0], "last": s.frames[-1], "end_frame": frame, "end_time": time,
                            "local": local, "came_back_frame": None})
                self.runs.append(run)

    def finish(self):
        for run in self.runs:
            if run["local"] and run["came_back_frame"] is None:
                continue
            frames = sorted({run["first"], run["last"], run["end_frame"]})
            self.events.append({"class": "write-run-ended", "frame": run["last"], "frames": frames,
                                "writes": run["writes"], "size": run["size"], "same_size": run["same_size"],
                                "bytes": run["bytes"], "end_frame": run["end_frame"],
                                "came_back_frame": run["came_back_frame"]})
        return sorted(self.events, key=lambda e: (e["frame"], e["class"]))


def phy_name(value):
    return {1: "1M", 2: "2M", 3: "Coded", 4: "Coded"}.get(value) if value else None


def settings_from(r, link):
    """Apply the link settings the row changes."""
    code, sub, status = num(r["bthci_evt.code"]), num(r["bthci_evt.le_meta_subevent"]), num(r["bthci_evt.status"])
    if code == 0x3E and sub == 0x03 and status == 0:
        link.set(interval_ms=num(r["bthci_evt.le_con_interval"]) * 1.25 if r["bthci_evt.le_con_interval"] else None)
    if code == 0x3E and sub == 0x07:
        link.set(data_length=min(v for v in (num(r["bthci_evt.max_tx_octets"]), num(r["bthci_evt.max_rx_octets"]))
                                 if v) if r["bthci_evt.max_tx_octets"] else None)
    if code == 0x3E and sub == 0x0C and status == 0:
        link.set(phy=phy_name(num(r["bthci_evt.le_tx_phy"])))
    control = num(r["btle.control_opcode"])
    if control == 0x00 and r["btle.control.interval"]:
        link.set(interval_ms=num(r["btle.control.interval"]) * 1.25)
    if control == 0x15 and r["btle.control.max_tx_octets"]:  # LL_LENGTH_RSP
        link.set(data_length=num(r["btle.control.max_tx_octets"]))
    if control == 0x18:  # LL_PHY_UPDATE_IND: bit 0 1M, bit 1 2M, bit 2 Coded; 0 unchanged
        bits = num(r["btle.control.m_to_s_phy"]) or num(r["btle.control.s_to_m_phy"]) or 0
        link.set(phy="2M" if bits & 2 else "Coded" if bits & 4 else "1M" if bits & 1 else None)
    if r["btatt.client_rx_mtu"]:
        link.client_mtu = num(r["btatt.client_rx_mtu"])
    if r["btatt.server_rx_mtu"] and link.client_mtu:
        link.set(att_mtu=min(link.client_mtu, num(r["btatt.server_rx_mtu"])))


def analyse(path):
    t, last_seen, end_time = Throughput(), {}, 0.0
    for r in tshark_fields(path, FIELDS):
        frame, time = int(r["frame.number"]), float(r["frame.time_epoch"])
        end_time = max(end_time, time)
        air = r["btle.access_address"] is not None
        if air and (r["nordic_ble.crcok"] == "0" or r["btle.crc.incorrect"]):
            continue
        adapter = num(r["hci_mon.adapter_id"]) or 0
        key = ("aa", num(r["btle.access_address"])) if air else (adapter, num(r["bthci_acl.chandle"]))
        if air and num(r["btle.advertising_header.pdu_type"]) == 0x05 and r["btle.link_layer_data.access_address"]:
            new = ("aa", num(r["btle.link_layer_data.access_address"]))
            t.opened(new, num(r["btle.link_layer_data.interval"]) * 1.25 if r["btle.link_layer_data.interval"]
                     else None, frame, time)
        code, sub = num(r["bthci_evt.code"]), num(r["bthci_evt.le_meta_subevent"])
        if code == 0x3E and sub in (0x01, 0x0A) and num(r["bthci_evt.status"]) == 0:
            interval = num(r["bthci_evt.le_con_interval"])
            t.opened((adapter, num(r["bthci_evt.connection_handle"])), interval * 1.25 if interval else None,
                     frame, time)
        elif code == 0x3E and sub in (0x03, 0x07, 0x0C) and r["bthci_evt.connection_handle"]:
            settings_from(r, t.link((adapter, num(r["bthci_evt.connection_handle"]))))
        elif r["btle.control_opcode"] or r["btatt.client_rx_mtu"] or r["btatt.server_rx_mtu"]:
            settings_from(r, t.link(key))
        if num(r["bthci_cmd.opcode"]) == 0x0406 and r["bthci_cmd.connection_handle"]:
            t.link((adapter, num(r["bthci_cmd.connection_handle"]))).disconnect_sent = True
        if code == 0x05 and num(r["bthci_evt.status"]) == 0:
            gone = (adapter, num(r["bthci_evt.connection_handle"]))
            t.close(gone, frame, time, local=gone in t.links and t.links[gone].disconnect_sent)
        if air and num(r["btle.control_opcode"]) == 0x02:
            t.close(key, frame, time, local=False)
        if air and key in t.links:
            last_seen[key] = (frame, time)
        op = num(r["btatt.opcode"])
        length = num(r["btl2cap.length"])
        cids = [num(c) for c in (r["btl2cap.cid"] or "").split(",")]
        if op in VALUES and r["btatt.handle"] and length is not None and 4 in cids:
            t.value(key, frame, time, op, num(r["btatt.handle"]), length - 3)
    for key in list(t.links):
        seen = last_seen.get(key)
        silent = seen is not None and end_time - seen[1] >= 1.0  # an air link that went quiet while the capture went on
        t.close(key, seen[0] if silent else None, seen[1] if silent else end_time, local=False, ended=silent)
    return t.finish()


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
