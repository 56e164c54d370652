#!/usr/bin/env python3
"""Runs of connection attempts by one central to one device, most of them malformed or aborted, read by tshark alone
from air captures: the truth for SC-02 (issue 48, point 4).

Usage: scripts/diagnosis_truth_attempts.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields.

  attempt-run          8 or more CONNECT_IND / AUX_CONNECT_REQ (Vol 6, Part B, 2.3.3.1) from one initiator address to
                       one advertiser address, each within 60 s of the one before, the median attempt lasting 60 s or
                       less (its CONNECT_IND to its link's last PDU before the next attempt), and 60 % or more of them
                       abnormal: a Pairing Request (SMP 0x01) then Pairing Failed (0x05) or no key distributed (0x06 to
                       0x0A), an LL_REJECT_IND or an LL_REJECT_EXT_IND of LL_ENC_REQ, a PDU tshark finds malformed, or
                       the link left without an LL_TERMINATE_IND before the next attempt: frame = the last attempt's
                       CONNECT_IND, frames = the first and last CONNECT_IND and the last link's LL_TERMINATE_IND or last
                       PDU, initiator, advertiser, attempts, abnormal, pairings_started, pairings_failed,
                       pairings_unfinished, encryption_refused, malformed, abandoned. The largest run of a capture.
  attempts-not-air     frame 0, a capture with no air PDU: its attempts are not read here (an HCI log's SC-02 firing
                       is not judged).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import events_main, field_numbers as numbers, tshark_fields  # noqa: E402

FIELDS = [
    "frame.number", "frame.time_epoch", "btle.access_address", "nordic_ble.crcok", "btle.crc.incorrect",
    "btle.advertising_header.pdu_type", "btle.initiator_address", "btle.advertising_address",
    "btle.link_layer_data.access_address", "btle.control_opcode", "btle.control.reject_opcode", "btsmp.opcode",
    "_ws.malformed", "_ws.expert.severity",
]
MINIMUM, GAP, MEDIAN, SHARE = 8, 60.0, 60.0, 0.6
EXPERT_ERROR = 0x00800000


class Attempt:
    def __init__(self, frame, time, pair):
        self.frame, self.time, self.pair = frame, time, pair
        self.last_frame, self.last_time, self.terminated = frame, time, None
        self.started = self.failed = self.keys = self.refused = self.malformed = False
        self.next = False  # another attempt on its access address followed

    def row(self, r, frame, time):
        self.last_frame, self.last_time = frame, time
        control, smp = numbers(r["btle.control_opcode"]), numbers(r["btsmp.opcode"])
        self.started = self.started or 0x01 in smp
        self.failed = self.failed or 0x05 in smp
        self.keys = self.keys or any(0x06 <= o <= 0x0A for o in smp)
        self.refused = self.refused or 0x0D in control or (0x11 in control and 0x03 in numbers(
            r["btle.control.reject_opcode"]))
        severity = max(numbers(r["_ws.expert.severity"]) or [0])
        self.malformed = self.malformed or r["_ws.malformed"] is not None or severity >= EXPERT_ERROR
        if 0x02 in control and self.terminated is None:
            self.terminated = frame

    def abandoned(self):
        return self.next and self.terminated is None

    def abnormal(self):
        aborted = self.failed or (self.started and not self.keys) or self.refused
        return aborted or self.malformed or self.abandoned()


def run_event(cluster):
    lengths = sorted(a.last_time - a.time for a in cluster)
    if lengths[len(lengths) // 2] > MEDIAN:
        return None
    abnormal = sum(1 for a in cluster if a.abnormal())
    if abnormal < SHARE * len(cluster):
        return None
    first, last = cluster[0], cluster[-1]
    end = last.terminated or last.last_frame
    return {"class": "attempt-run", "frame": last.frame, "frames": sorted({first.frame, last.frame, end}),
            "initiator": first.pair[0], "advertiser": first.pair[1], "attempts": len(cluster), "abnormal": abnormal,
            "pairings_started": sum(a.started for a in cluster), "pairings_failed": sum(a.failed for a in cluster),
            "pairings_unfinished": sum(a.started and not a.failed and not a.keys for a in cluster),
            "encryption_refused": sum(a.refused for a in cluster), "malformed": sum(a.malformed for a in cluster),
            "abandoned": sum(a.abandoned() for a in cluster)}


def analyse(path):
    attempts, current, air = [], {}, False  # current: access address -> its latest attempt
    for r in tshark_fields(path, FIELDS):
        if r["btle.access_address"] is None or r["nordic_ble.crcok"] == "0" or r["btle.crc.incorrect"]:
            continue
        air = True
        frame, time = int(r["frame.number"]), float(r["frame.time_epoch"])
        if numbers(r["btle.advertising_header.pdu_type"])[:1] == [0x05] and r["btle.link_layer_data.access_address"]:
            aa = numbers(r["btle.link_layer_data.access_address"])[0]
            for earlier in [a for a in current.values()] + attempts[-1:]:
                if earlier.pair == (r["btle.initiator_address"], r["btle.advertising_address"]):
                    earlier.next = True
            attempt = Attempt(frame, time, (r["btle.initiator_address"], r["btle.advertising_address"]))
            current[aa] = attempt
            attempts.append(attempt)
            continue
        link = current.get(numbers(r["btle.access_address"])[0])
        if link is not None:
            link.row(r, frame, time)
    best = None
    for pair in {a.pair for a in attempts}:
        cluster = []
        for a in [a for a in attempts if a.pair == pair] + [None]:
            if a is not None and (not cluster or a.time - cluster[-1].time <= GAP):
                cluster.append(a)
                continue
            event = run_event(cluster) if len(cluster) >= MINIMUM else None
            if event is not None and (best is None or event["attempts"] > best["attempts"]):
                best = event
            cluster = [a] if a is not None else []
    if not air:
        return [{"class": "attempts-not-air", "frame": 0, "frames": []}]
    return [best] if best else []


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
