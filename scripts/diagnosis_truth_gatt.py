#!/usr/bin/env python3
"""Subscriptions that nothing answered, notifications never enabled and ATT_MTU left at 23, read by tshark alone: the
truth for GATT-03, GATT-05 and GATT-07 (issue 48, point 4).

Usage: scripts/diagnosis_truth_gatt.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields (tshark names a handle's UUID from the discovery in the capture).

  subscribed-silent    (GATT-05) a write (Write Request 0x12 or Write Command 0x52) of a Client Characteristic
                       Configuration descriptor (UUID 0x2902) enabling notifications or indications (bit 0 or 1 of its
                       value, Core Vol 3, Part G, 3.3.3.3), not refused (no Error Response answering the request),
                       on a link that stayed up 30 s after it (no Disconnection Complete / LL_TERMINATE_IND, no HCI
                       Reset; the capture runs on 30 s), with no Handle Value Notification or Indication (0x1B,
                       0x1D) from the server for the characteristic in those 30 s: frame = the write, cccd, value
                       handle (the characteristic's, from the declarations the capture discovered: the greatest value
                       handle under the descriptor; else the descriptor's handle - 1, value_handle_source "assumed"),
                       link_seconds (how long the link then stayed up, to its end or the capture's).
  mtu-23-full          (GATT-07) a link seen from its connection (LE Connection Complete, CONNECT_IND) with no Exchange
                       MTU (ATT_MTU 23, Vol 3, Part F, 3.4.2) whose value PDUs (notifications, indications, writes,
                       read responses) filled it: 20 or more of 23 octets, half or more of those one side sent or of
                       all; or an ATT PDU over 23 octets: frame = the first, frames = all full ones, full, values,
                       over.
  mtu-23-pieces        (GATT-07) a link seen from its connection with no Exchange MTU on which 4 or more Read Blob
                       (0x0C) or Prepare Write (0x16) Requests moved long values in pieces of at most ATT_MTU - 1 or
                       - 5 octets (Vol 3, Part F, 3.4.4.5, 3.4.6.1): frame = the first, frames = all, requests, runs
                       (a run starts at another handle or at an offset not past the last), repeated (the most runs of
                       one handle), round_trip_seconds (each request to the next Read Blob / Prepare Write / Error
                       Response the other way, summed), link_seconds (the connection to its end or the capture's);
                       benign "value moved once" when no handle went in pieces twice, "pieces cheap" when the round
                       trips took under 1 s or under 5 % of the link.
  mtu-unknown          (GATT-07, what the truth cannot read) a link whose connection the capture does not show, whose
                       ATT PDUs filled 23 octets, passed them or moved values in pieces: whether an Exchange MTU came
                       before is not in the capture: frame = the first such PDU, frames = all.
  notify-unsubscribed  (GATT-03) a characteristic whose declaration (Read By Type Response of 0x2803, on this link or
                       an earlier one with the same peer) has the Notify or Indicate property (Vol 3, Part G, 3.3.1.1),
                       that the client on a link never subscribed to (no write of a CCCD, UUID 0x2902, under it) and
                       the server never notified or indicated (0x1B, 0x1D), while the client read it (Read Request)
                       or wrote (Write Request or Command) to a characteristic of its service (Read By Group Type
                       Response; not the Generic Attribute service 0x1801) and nothing in that service was subscribed
                       or notified: frame = the first read, else the first write to the service; value_handle,
                       reads, wrote_service.
  cccd-value-unsupported (GATT-03) a CCCD write enabling notifications (bit 0) on a characteristic declared without
                       Notify, or indications (bit 1) without Indicate: frame = the write, cccd, value_handle, value.
  att-unreadable       frames = ACL records the capturer cut, and air L2CAP starts tshark cannot read (encrypted with a
                       key tshark lacks, or a fragment): what they carry is not in this truth (a finding at one of
                       them cannot be judged).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import events_main, field_number as num, tshark_fields  # noqa: E402

FIELDS = [
    "frame.number", "frame.time_epoch", "hci_mon.adapter_id", "bthci_acl.chandle", "btle.access_address",
    "nordic_ble.crcok", "btle.crc.incorrect", "btatt.opcode", "btatt.handle", "btatt.uuid16", "btatt.value",
    "btatt.characteristic_configuration_client", "bthci_evt.code",
    "bthci_evt.connection_handle", "btle.control_opcode", "bthci_cmd.opcode", "btle.advertising_header.pdu_type",
    "btle.link_layer_data.access_address", "frame.len", "frame.cap_len", "btle.data_header.llid", "btl2cap.cid",
    "btl2cap.length", "bthci_evt.le_meta_subevent", "bthci_evt.status", "frame.p2p_dir", "hci_h4.direction",
    "packetlogger.type", "hci_mon.opcode", "nordic_ble.direction", "btatt.group_end_handle",
    "btatt.characteristic_properties", "bthci_evt.bd_addr", "btle.advertising_address", "btatt.offset",
]
WINDOW = 30.0


def numbers(text):
    return [int(v, 0) for v in (text or "").split(",") if v]


def direction(row):
    """'sent' / 'received' (HCI) or the nRF Sniffer's side (air); None when the format says none."""
    for field, sent in (("frame.p2p_dir", "0"), ("hci_h4.direction", "0x00")):
        if row[field] is not None:
            return "sent" if row[field].split(",")[0] == sent else "received"
    kind = num(row["packetlogger.type"]) if row["packetlogger.type"] else num(row["hci_mon.opcode"])
    return {0x02: "sent", 0x03: "received", 0x04: "sent", 0x05: "received"}.get(kind, row["nordic_ble.direction"])


class Mtu:
    """GATT-07: links seen from their connection on which ATT_MTU stayed 23 (no Exchange MTU Request or Response,
    Vol 3, Part F, 3.4.2) while values filled it: ATT PDUs of 23 octets (MTU - 3 = 20 octets of value) among those
    carrying a value (Handle Value Notification/Indication, Write Request/Command, Read/Read Blob Response), at least 20
    and half of them; or an ATT PDU longer than 23."""
    VALUES = {0x1B, 0x1D, 0x12, 0x52, 0x0B, 0x0D}

    def __init__(self):
        self.links = {}
        self.ended = []  # the states of links whose handle a later connection reused

    def connected(self, link, time, unseen=False):
        if link in self.links:
            self.ended.append(self.links.pop(link))
        self.links[link] = {"unseen": unseen, "exchanged": False, "values": {}, "full": {}, "over": [], "start": time, "end": None,
                            "pieces": [], "runs": {}, "last": (None, None), "pending": None, "round_trips": 0.0}

    def closed(self, link, time):
        if link in self.links and self.links[link]["end"] is None:
            self.links[link]["end"] = time

    def piece(self, link, frame, time, op, handle, offset, side):
        """A Read Blob or Prepare Write Request, a run's start or not, waiting for its answer; or a PDU that answers."""
        state = self.links.get(link)
        if state is None:
            return
        if op in (0x0C, 0x16):
            state["pieces"].append(frame)
            if (handle, offset) == (None, None) or handle != state["last"][0] or offset <= state["last"][1]:
                state["runs"][handle] = state["runs"].get(handle, 0) + 1
            state["last"], state["pending"] = (handle, offset), (time, side)
        elif op in (0x0D, 0x17, 0x01) and state["pending"] and state["pending"][1] != side:
            state["round_trips"] += time - state["pending"][0]
            state["pending"] = None

    def att(self, link, frame, op, length, side):
        if length is None:
            return
        state = self.links.get(link)
        if state is None:  # ATT on a link whose connection the capture does not show: its MTU is not known
            self.connected(link, None, unseen=True)
            state = self.links[link]
        if op in (0x02, 0x03):
            state["exchanged"] = True
        elif op in self.VALUES:
            state["values"][side] = state["values"].get(side, 0) + 1
            if length == 23:  # 20 value octets after opcode and handle; a read response's 22 after its opcode
                state["full"].setdefault(side, []).append(frame)
        if length > 23 and not state["exchanged"]:
            state["over"].append(frame)

    def events(self, end):
        out = []
        for state in self.ended + list(self.links.values()):
            if state["exchanged"]:
                continue
            # The values of one side (a transfer runs one way) or of both: frames = every full value on the link.
            counts = [(len(f), state["values"][side]) for side, f in state["full"].items()]
            counts.append((sum(c[0] for c in counts), sum(state["values"].values())))
            full = sorted(f for frames in state["full"].values() for f in frames)
            if state["unseen"]:
                frames = sorted(full + state["over"] + state["pieces"])
                if frames:
                    out.append({"class": "mtu-unknown", "frame": frames[0], "frames": frames})
                continue
            if any(n >= 20 and 2 * n >= total for n, total in counts):
                out.append({"class": "mtu-23-full", "frame": full[0], "frames": full, "full": len(full),
                            "values": sum(state["values"].values())})
            if state["over"]:
                out.append({"class": "mtu-23-full", "frame": state["over"][0], "frames": state["over"],
                            "over": len(state["over"])})
            if len(state["pieces"]) >= 4:
                out.append(self.pieces(state, end))
        return out

    @staticmethod
    def pieces(state, end):
        link = max(1e-6, (state["end"] if state["end"] is not None else end) - state["start"])
        repeated, cost = max(state["runs"].values()), state["round_trips"]
        event = {"class": "mtu-23-pieces", "frame": state["pieces"][0], "frames": state["pieces"],
                 "requests": len(state["pieces"]), "runs": sum(state["runs"].values()), "repeated": repeated,
                 "round_trip_seconds": round(cost, 3), "link_seconds": round(link, 3)}
        if repeated < 2:
            event["benign"] = "value moved once"
        elif cost < 1.0 or cost < 0.05 * link:
            event["benign"] = "pieces cheap"
        return event


class Unsubscribed:
    """GATT-03: per link, the notifying characteristics the client used (read, or wrote to their service) but never
    subscribed to and that never notified. The characteristics and services a link discovered serve its peer's later
    links that do not discover again (a bonded client caches them)."""

    def __init__(self):
        self.links, self.databases, self.events = {}, {}, []

    def link(self, key, peer=None):
        if key not in self.links:
            self.links[key] = {"peer": peer, "services": [], "chars": {}, "subscribed": set(), "notified": set(),
                               "reads": {}, "writes": {}}
        return self.links[key]

    def connected(self, key, peer):
        self.close(key)
        self.link(key, peer)

    def att(self, key, frame, op, r, side):
        state = self.link(key)
        handles = numbers(r["btatt.handle"])
        if op == 0x11:
            uuids = [u for u in numbers(r["btatt.uuid16"]) if u not in (0x2800, 0x2801)]
            uuids = uuids if len(uuids) == len(handles) else [None] * len(handles)
            state["services"] += list(zip(handles, numbers(r["btatt.group_end_handle"]), uuids))
        elif op == 0x09 and numbers(r["btatt.uuid16"])[:1] == [0x2803]:
            state["chars"].update(zip(handles[1::2], numbers(r["btatt.characteristic_properties"])))
        elif op in (0x1B, 0x1D) and side != "sent" and handles:
            state["notified"].add(handles[0])
        elif op == 0x0A and side != "received" and handles:
            state["reads"].setdefault(handles[0], []).append(frame)
        elif op in (0x12, 0x52) and side != "received" and handles:
            state["writes"].setdefault(handles[0], frame)
            if 0x2902 in numbers(r["btatt.uuid16"]):
                self.cccd(state, frame, handles[0], numbers(r["btatt.characteristic_configuration_client"]))

    def cccd(self, state, frame, cccd, value):
        chars = self.database(state)[1]
        below = [v for v in chars if v < cccd]
        owner = max(below) if below else cccd - 1
        state["subscribed"].add(owner)
        if value and owner in chars:
            props = chars[owner]
            if (value[0] & 1 and not props & 0x10) or (value[0] & 2 and not props & 0x20):
                self.events.append({"class": "cccd-value-unsupported", "frame": frame, "frames": [frame], "cccd": cccd,
                                    "value_handle": owner, "value": value[0]})

    def database(self, state):
        if state["chars"]:
            return state["services"], state["chars"]
        return self.databases.get(state["peer"], (state["services"], state["chars"]))

    def close(self, key):
        state = self.links.pop(key, None)
        if state is None:
            return
        if state["chars"] and state["peer"] is not None:
            self.databases[state["peer"]] = (state["services"], state["chars"])
        services, chars = self.database(state)
        used = state["subscribed"] | state["notified"]
        wrote = set()
        for start, end, uuid in services:
            inside = [v for v in chars if start <= v <= end]
            if uuid != 0x1801 and not used.intersection(inside) and any(v in state["writes"] for v in inside):
                wrote.update(inside)
        for value, props in sorted(chars.items()):
            reads = state["reads"].get(value, [])
            if not props & 0x30 or value in used or not (reads or value in wrote):
                continue
            service = next(((s, e) for s, e, _u in services if s <= value <= e), None)
            written = [f for v, f in state["writes"].items() if v in chars and service and service[0] <= v <= service[1]]
            frame = reads[0] if reads else min(written)
            self.events.append({"class": "notify-unsubscribed", "frame": frame, "frames": [frame],
                                "value_handle": value, "reads": len(reads), "wrote_service": value in wrote})

    def close_adapter(self, adapter):
        for key in [k for k in self.links if k[0] == adapter]:
            self.close(key)


def analyse(path):
    values = {}       # link -> value handles declared (Read By Type Response of 0x2803)
    writes = {}       # link -> [subscription dicts] open
    pending = {}      # link -> the subscription a Write Request awaits its answer for
    events, end, unread, mtu, unsubscribed = [], 0.0, [], Mtu(), Unsubscribed()

    def close(link, time):
        unsubscribed.close(link)
        for s in writes.pop(link, []):
            if not s["notified"] and time - s["time"] >= WINDOW and not s["refused"]:
                events.append({"class": "subscribed-silent", "frame": s["frame"], "frames": [s["frame"]],
                               "cccd": s["cccd"], "value_handle": s["value"], "value_handle_source": s["source"],
                               "link_seconds": round(time - s["time"], 3)})
        pending.pop(link, None)

    for r in tshark_fields(path, FIELDS):
        frame, time = int(r["frame.number"]), float(r["frame.time_epoch"])
        end = max(end, time)
        if r["btle.access_address"] and (r["nordic_ble.crcok"] == "0" or r["btle.crc.incorrect"]):
            continue
        ad = num(r["hci_mon.adapter_id"]) or 0
        link = ("aa", num(r["btle.access_address"])) if r["btle.access_address"] else (ad, num(r["bthci_acl.chandle"]))
        if r["bthci_acl.chandle"] and num(r["frame.cap_len"]) < num(r["frame.len"]):
            unread.append(frame)  # cut by the capturer: a CCCD value may be missing
        if r["btle.access_address"] and num(r["btle.data_header.llid"]) == 2 and r["btl2cap.cid"] is None:
            unread.append(frame)  # an L2CAP start tshark could not read: encrypted (no key), or its start missed
        new_link = None
        if num(r["btle.advertising_header.pdu_type"]) == 0x05 and r["btle.link_layer_data.access_address"]:
            new = new_link = ("aa", num(r["btle.link_layer_data.access_address"]))
            close(new, time)
            values.pop(new, None)
        if num(r["bthci_evt.code"]) == 0x3E and num(r["bthci_evt.le_meta_subevent"]) in (0x01, 0x0A) \
                and num(r["bthci_evt.status"]) == 0:
            new_link = (ad, num(r["bthci_evt.connection_handle"]))
        if num(r["btle.control_opcode"]) == 0x02:
            close(link, time)
            mtu.closed(link, time)
        if num(r["bthci_evt.code"]) == 0x05:
            gone = (ad, num(r["bthci_evt.connection_handle"]))
            close(gone, time)
            mtu.closed(gone, time)
            values.pop(gone, None)
        if num(r["bthci_cmd.opcode"]) == 0x0C03:
            for held in [k for k in writes if k[0] == ad]:
                close(held, time)
            unsubscribed.close_adapter(ad)
        op = num(r["btatt.opcode"])
        if new_link is not None:
            mtu.connected(new_link, time)
            unsubscribed.connected(new_link, r["bthci_evt.bd_addr"] or r["btle.advertising_address"])
        if op is None:
            continue
        if r["btl2cap.cid"] is not None and 0x0004 in numbers(r["btl2cap.cid"]):
            mtu.att(link, frame, op, num(r["btl2cap.length"]), direction(r))
            mtu.piece(link, frame, time, op, num(r["btatt.handle"]), num(r["btatt.offset"]), direction(r))
            unsubscribed.att(link, frame, op, r, direction(r))
        for s in writes.get(link, []):
            if time - s["time"] < WINDOW and op in (0x1B, 0x1D) and s["value"] <= (num(r["btatt.handle"]) or -1) \
                    < s["cccd"]:
                s["notified"] = True
        if op == 0x09 and numbers(r["btatt.uuid16"])[:1] == [0x2803]:
            # Characteristic declarations: tshark lists each declaration's handle, then its value handle.
            values.setdefault(link, set()).update(numbers(r["btatt.handle"])[1::2])
        elif op in (0x12, 0x52) and 0x2902 in numbers(r["btatt.uuid16"]):
            value = numbers(r["btatt.characteristic_configuration_client"])
            if value and value[0] & 0x03:
                cccd = num(r["btatt.handle"])
                below = [v for v in values.get(link, ()) if v < cccd]
                s = {"frame": frame, "time": time, "cccd": cccd, "value": max(below) if below else cccd - 1,
                     "source": "discovered" if below else "assumed", "notified": False, "refused": False}
                writes.setdefault(link, []).append(s)
                if op == 0x12:
                    pending[link] = s
        elif op == 0x01 and link in pending:
            pending.pop(link)["refused"] = True
        elif op == 0x13:
            pending.pop(link, None)
    for link in list(writes):
        close(link, end)
    for link in list(unsubscribed.links):
        unsubscribed.close(link)
    events += mtu.events(end) + unsubscribed.events
    if unread:
        events.append({"class": "att-unreadable", "frame": unread[0], "frames": unread})
    return sorted(events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
