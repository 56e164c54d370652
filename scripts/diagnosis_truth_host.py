#!/usr/bin/env python3
"""Handles used after their link ended and captures of more than one controller, read by tshark alone: the truth for
HH-06 and HH-07 (issue 48, point 4).

Usage: scripts/diagnosis_truth_host.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields. A controller is an HCI log's adapter (Linux monitor index, 0xFFFF
"no controller" aside) or, in a pcapng file, an interface that carries Bluetooth records (tshark decodes a Bluetooth
protocol in them: HCI, monitor, PacketLogger, LE link layer).

  acl-on-closed-handle (HH-06) an ACL data packet, either way, on a connection handle whose link a Disconnection
                       Complete (status 0, Vol 4, Part E, 7.7.5) or an HCI Reset ended on that controller, with no
                       Connection Complete (BR/EDR 0x03, synchronous 0x2C, LE 0x3E/0x01 or 0x0A, status 0) for the
                       handle since: frame = the packet, handle, closed_frame (the end). The handle then counts as
                       open again (one event per reuse).
  controllers-several  (HH-07) records of two or more controllers: frame = the first record of the second one, frames =
                       each controller's first record, controllers (how many), keys ("adapter N" or "interface N").
  controller-index-unread  frame 0, PacketLogger files: the format carries no controller index tshark shows (an
                       HH-07 firing there cannot be judged).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import events_main, field_number as num, tshark_fields  # noqa: E402

FIELDS = [
    "frame.number", "frame.interface_id", "frame.protocols", "hci_mon.adapter_id", "bthci_acl.chandle",
    "bthci_evt.code", "bthci_evt.status", "bthci_evt.connection_handle", "bthci_evt.le_meta_subevent",
    "bthci_cmd.opcode", "packetlogger.type",
]
BLUETOOTH = ("bluetooth", "hci_mon", "hci_h4", "bthci", "btle", "nordic_ble", "packetlogger", "hci_usb")
NO_CONTROLLER = 0xFFFF


def opened(r):
    """The handle a Connection Complete of status 0 opens, or None."""
    code, status = num(r["bthci_evt.code"]), num(r["bthci_evt.status"])
    le = code == 0x3E and num(r["bthci_evt.le_meta_subevent"]) in (0x01, 0x0A)
    if (code in (0x03, 0x2C) or le) and status == 0:
        return num(r["bthci_evt.connection_handle"])
    return None


def analyse(path):
    events, first, open_handles, closed, packetlogger = [], {}, {}, {}, False
    for r in tshark_fields(path, FIELDS):
        frame, protocols = int(r["frame.number"]), (r["frame.protocols"] or "").split(":")
        packetlogger = packetlogger or "packetlogger" in protocols
        adapter = num(r["hci_mon.adapter_id"])
        key = "adapter %d" % adapter if adapter is not None else "interface %d" % (num(r["frame.interface_id"]) or 0)
        if adapter != NO_CONTROLLER and any(p in BLUETOOTH for p in protocols):
            first.setdefault(key, frame)
        live, ended = open_handles.setdefault(key, set()), closed.setdefault(key, {})
        handle = opened(r)
        if handle is not None:
            live.add(handle)
            ended.pop(handle, None)
        if num(r["bthci_evt.code"]) == 0x05 and num(r["bthci_evt.status"]) == 0:
            gone = num(r["bthci_evt.connection_handle"])
            live.discard(gone)
            ended[gone] = frame
        if num(r["bthci_cmd.opcode"]) == 0x0C03:
            ended.update({h: frame for h in live})
            live.clear()
        acl = num(r["bthci_acl.chandle"])
        if acl is None:
            continue
        if acl in ended:
            events.append({"class": "acl-on-closed-handle", "frame": frame, "frames": [frame], "handle": acl,
                           "closed_frame": ended.pop(acl)})
        live.add(acl)
    if len(first) > 1:
        frames = sorted(first.values())
        events.append({"class": "controllers-several", "frame": frames[1], "frames": frames,
                       "controllers": len(first), "keys": sorted(first, key=first.get)})
    if packetlogger:
        events.append({"class": "controller-index-unread", "frame": 0, "frames": []})
    return sorted(events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
