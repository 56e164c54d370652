#!/usr/bin/env python3
"""The LMP a Broadcom controller traces beside its HCI, read from tshark's bytes alone: the truth for SEC-21 and the
LMP part of SEC-08 and SEC-09 (issue 45).

Usage: scripts/diagnosis_truth_lmp.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields. tshark 4.0.17 shows the trace records undecoded: PacketLogger's
record types 0x0A (sent) and 0x0B (received) as "Sent/Recv LMP Data", and H4 packet type 0x07 as "Unknown HCI packet
type 0x07" (`data.data`, the bytes after the type). The layout (the same in both): a sent record is 0x00, 4 bytes,
the peer's BD_ADDR low 4 bytes, the baseband payload header (LENGTH << 3 | LLID 3, Core Spec Vol 2, Part B, 6.6.2),
then the LMP PDU; a received record is 0x01, 12 bytes (the BD_ADDR low 4 at 5-8), then the PDU. A record whose first
byte is neither is not a trace record. LMP (Vol 2, Part C, 5): opcode = first byte >> 1; 3 LMP_accepted (the opcode it
accepts), 16 LMP_encryption_key_size_req (the size), 17 LMP_start_encryption_req (EN_RAND, 16 bytes).

  lmp-key-size         (SEC-08) an LMP_encryption_key_size_req of under 16 bytes the other side accepted: frame = the
                       LMP_accepted, frames = it and the request, size, peer (the low 4 address bytes).
  lmp-key-size-down    (SEC-09) an accepted size smaller than the largest accepted earlier with the same peer: frame =
                       the LMP_accepted, size, earlier_size, earlier_frame.
  lmp-en-rand-fixed    (SEC-21) an LMP_start_encryption_req whose EN_RAND is sixteen zero bytes or one sent earlier
                       with the same peer: frame = the request, frames = it (and the earlier one), zeros.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import events_main, field_number as num, tshark_fields  # noqa: E402

FIELDS = ["frame.number", "packetlogger.type", "hci_h4.type", "data.data"]


def trace(r):
    """(sent, peer, pdu) of a trace record, or None."""
    data = bytes.fromhex((r["data.data"] or "").replace(":", ""))
    kind = num(r["packetlogger.type"]) if r["packetlogger.type"] else None
    if kind not in (0x0A, 0x0B) and num(r["hci_h4.type"]) != 0x07:
        return None
    if len(data) >= 11 and data[0] == 0x00 and data[9] & 0x03 == 0x03:
        return True, data[5:9].hex(), data[10:10 + (data[9] >> 3)]
    if len(data) >= 14 and data[0] == 0x01:
        return False, data[5:9].hex(), data[13:]
    return None


def analyse(path):
    events, proposed, accepted, randoms = [], {}, {}, {}
    for r in tshark_fields(path, FIELDS):
        t = trace(r)
        if t is None or not t[2]:
            continue
        frame, (sent, peer, pdu) = int(r["frame.number"]), t
        opcode = pdu[0] >> 1
        if opcode == 16 and len(pdu) >= 2:
            proposed[peer] = (pdu[1], frame, sent)
        elif opcode == 3 and len(pdu) >= 2 and pdu[1] == 16 and peer in proposed and proposed[peer][2] != sent:
            size, request, _ = proposed.pop(peer)
            if size < 16:
                events.append({"class": "lmp-key-size", "frame": frame, "frames": [request, frame], "size": size,
                               "peer": peer})
            earlier = accepted.get(peer)
            if earlier and size < earlier[0]:
                events.append({"class": "lmp-key-size-down", "frame": frame, "frames": [request, frame], "size": size,
                               "earlier_size": earlier[0], "earlier_frame": earlier[1], "peer": peer})
            if earlier is None or size > earlier[0]:
                accepted[peer] = (size, frame)
        elif opcode == 17 and len(pdu) >= 17:
            random = pdu[1:17]
            first = randoms.setdefault((peer, random), frame)
            if not any(random) or first != frame:
                events.append({"class": "lmp-en-rand-fixed", "frame": frame, "frames": sorted({first, frame}),
                               "zeros": not any(random), "peer": peer})
    return sorted(events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
