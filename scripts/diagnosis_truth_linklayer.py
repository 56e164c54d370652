#!/usr/bin/env python3
"""Link-layer compliance and link parameters, read by tshark alone: the truth for LL-01, LL-03, LL-04, LL-05, LL-06,
LP-03 and LP-05's LL_UNKNOWN_RSP (issue 45 scope 3, issue 48 point 4; LL-02's invalid channel maps are diagnosis_truth_security.py's
`ll-channel-map-invalid`).

Usage: scripts/diagnosis_truth_linklayer.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame; each: class, frame,
`frames`, class fields. One tshark pass of fields; PDUs with a bad CRC are skipped. Python 3 standard library only.

  ll-version-repeated  (LL-01) a second (or later) LL_VERSION_IND from the same side of a link (access address and the
                       sniffer's direction) that its receiver takes as new data (Core Vol 6, Part B, 4.5.9: its SN
                       is the NESN of the receiver's last PDU; with no receiver PDU since the sender's previous one,
                       a PDU repeating that one's SN and opcode is it resent); the version exchange runs once per
                       direction (5.1.4): frame = it, frames = it and the first, count (so far).
                       air-direction-unknown (frame 0): the capture's format says no direction (LT 256, PPI): which
                       side sent a PDU is not in the capture, LL-01 cannot be judged.
  ll-unknown-rsp       (LP-05, its LL_UNKNOWN_RSP kind) an LL_UNKNOWN_RSP (opcode 0x07, Vol 6, Part B, 2.4.2.8): the
                       sender does not support the control PDU whose opcode it names: frame, unknown_type.
  conn-param-ping-pong (LP-03) three connection updates within 60 s alternating between two parameter sets
                       (interval, latency, timeout): A, B, A, B, the first A the setting before them (LE Connection
                       Complete / Update Complete; CONNECT_IND / LL_CONNECTION_UPDATE_IND): frame = the last,
                       frames = all four, sets.
  ll-parameter-out-of-range  (LL-03) a CONNECT_IND / AUX_CONNECT_REQ or LL_CONNECTION_UPDATE_IND with a parameter
                       outside Vol 6, Part B, 2.3.3.1 / 2.4.2.1: Interval 6-3200 (units of 1.25 ms), Latency 0-499,
                       Timeout 10-3200 (10 ms) and, in ms, over
                       (1 + Latency) x Interval x 2, WinSize 1 to min(8, Interval - 1), WinOffset 0 to Interval, Hop
                       5-16 (connect requests only): frame, parameters (the names out of range).
  ll-reserved-llid     (LL-04) a data PDU whose header LLID is 0b00, reserved (Vol 6, Part B, 2.4): frame, length.
  ll-length-over-maximum  (LL-05) a data PDU the nRF Sniffer does not flag encrypted whose header Length is over
                       the link's maximum that way (4.5.10): 27 on a link whose CONNECT_IND is in
                       the capture and no LL_LENGTH_REQ / RSP since; after one from each side, the smaller of the
                       sender's MaxTxOctets and the receiver's MaxRxOctets (each side's last); after one from one side
                       only, not judged. Needs the sniffer's direction: frame, length, maximum.
  ll-control-size      (LL-06) an LL control PDU (LLID 0b11) of a defined opcode, not flagged encrypted, whose Length
                       is not its opcode's size (2.4.2; sizes as Core 5.4 gives them, opcode octet included): frame,
                       opcode, length, size. LL-05 and LL-06 need the nRF Sniffer's direction and encryption flags:
                       without them (air-direction-unknown) they are not judged.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import TSHARK, events_main, field_number as num  # noqa: E402

FIELDS = [
    "frame.number", "btle.access_address", "nordic_ble.crcok", "btle.crc.incorrect", "nordic_ble.direction",
    "btle.advertising_header.pdu_type", "btle.link_layer_data.access_address", "btle.control_opcode",
    "btle.data_header.sequence_number", "btle.data_header.next_expected_sequence_number",
    "btle.data_header.length",
    "btle.link_layer_data.window_size", "btle.link_layer_data.window_offset", "btle.link_layer_data.interval",
    "btle.link_layer_data.latency", "btle.link_layer_data.timeout", "btle.link_layer_data.hop",
    "btle.control.window_size", "btle.control.window_offset", "btle.control.interval", "btle.control.latency",
    "btle.control.timeout", "btle.control.unknown_type", "frame.time_epoch", "hci_mon.adapter_id",
    "bthci_evt.code", "bthci_evt.le_meta_subevent", "bthci_evt.status", "bthci_evt.connection_handle",
    "bthci_evt.le_con_interval", "bthci_evt.le_con_latency", "bthci_evt.le_supv_timeout",
    "btle.data_header.llid", "nordic_ble.encrypted", "nordic_ble.micok", "btle.control.max_rx_octets",
    "btle.control.max_tx_octets",
]

# Each defined LL control opcode's PDU size, opcode octet included (Core 5.4, Vol 6, Part B, 2.4.2.1-2.4.2.42); the
# last, LL_PERIODIC_SYNC_WR_IND, has no fixed size and is left out.
CONTROL_SIZES = [12, 8, 2, 23, 13, 1, 1, 2, 9, 9, 1, 1, 6, 2, 9, 24, 24, 3, 1, 1, 9, 9, 3, 3, 5, 3, 2, 1, 35, 2, 2, 37,
                 9, 16, 4, 4, 5, 5, 11, 11, 4, 11]


def out_of_range(size, offset, interval, latency, timeout, hop=None):
    """The names of the connection parameters outside the spec's ranges (None: not in the PDU)."""
    bad = []
    if interval is not None and not 6 <= interval <= 3200:
        bad.append("interval")
    if timeout is not None and not 10 <= timeout <= 3200:
        bad.append("timeout")
    if None not in (interval, latency, timeout):
        if not 0 <= latency <= 499:
            bad.append("latency")
        if timeout * 10 <= (1 + latency) * interval * 1.25 * 2 and "timeout" not in bad:
            bad.append("timeout")
    if size is not None and interval is not None and not 1 <= size <= min(8, interval - 1):
        bad.append("window_size")
    if offset is not None and interval is not None and not 0 <= offset <= interval:
        bad.append("window_offset")
    if hop is not None and not 5 <= hop <= 16:
        bad.append("hop")
    return bad


def new_pdu(previous, other, sn, opcode):
    """Whether a PDU is new data to its receiver (Vol 6, Part B, 4.5.9), from the sender's previous PDU and the
    receiver's last one ((frame, SN, NESN, opcode), None when not seen): when the receiver spoke since the sender's
    previous PDU, the PDU is new when its SN is the NESN the receiver asked for (else the receiver takes it as resent);
    otherwise a PDU repeating the SN and opcode of the sender's previous one is that PDU resent."""
    if other is not None and (previous is None or other[0] > previous[0]):
        return other[2] is None or sn == other[2]
    return previous is None or (previous[1], previous[3]) != (sn, opcode)


class Settings:
    """LP-03: the connection parameters each link ran with (HCI: LE Connection Complete 0x01/0x0A, LE Connection Update
    Complete 0x03; air: CONNECT_IND, LL_CONNECTION_UPDATE_IND), and three updates within 60 s alternating between two
    sets (A, B, A, B: the setting before the first of them counts)."""
    def __init__(self, events):
        self.events, self.links = events, {}

    def hci(self, r, frame):
        sub = num(r["bthci_evt.le_meta_subevent"]) if num(r["bthci_evt.code"]) == 0x3E else None
        if sub in (0x01, 0x0A, 0x03) and num(r["bthci_evt.status"]) == 0:
            link = (num(r["hci_mon.adapter_id"]) or 0, num(r["bthci_evt.connection_handle"]))
            values = tuple(num(r["bthci_evt." + k]) for k in ("le_con_interval", "le_con_latency", "le_supv_timeout"))
            self.note(link, frame, float(r["frame.time_epoch"]), values, new=sub != 0x03)

    def set(self, link, frame, r, prefix, new=False):
        values = tuple(num(r[prefix + k]) for k in ("interval", "latency", "timeout"))
        self.note(link, frame, float(r["frame.time_epoch"]), values, new)

    def note(self, link, frame, time, values, new):
        if None in values:
            return
        if new:
            self.links[link] = []
        seen = self.links.setdefault(link, [])
        seen.append((frame, time, values))
        if len(seen) >= 4:
            (f0, _t0, a), (f1, t1, b), (f2, _t2, a2), (f3, t3, b2) = seen[-4:]
            if a == a2 and b == b2 and a != b and t3 - t1 <= 60:
                self.events.append({"class": "conn-param-ping-pong", "frame": f3, "frames": [f0, f1, f2, f3],
                                    "sets": [list(a), list(b)]})


def shapes(events, limits, r, frame, aa, opcode):
    """LL-04, LL-05 and LL-06's classes for one CRC-good data PDU. `limits[aa]`: the link's LL_LENGTH values by side
    (absent: no CONNECT_IND in the capture, not judged)."""
    llid, length, side = num(r["btle.data_header.llid"]), num(r["btle.data_header.length"]), r["nordic_ble.direction"]
    if llid == 0:
        events.append({"class": "ll-reserved-llid", "frame": frame, "frames": [frame], "length": length})
    # An encrypted PDU's Length counts its MIC unless the sniffer decrypted it and wrote the plaintext's (the
    # cyberquest captures' LL_START_ENC_RSP of Length 1): not judged. Without the nRF Sniffer's flags (LT 256, PPI) the
    # truth cannot tell an encrypted PDU from a plaintext one: not judged either (air-direction-unknown).
    if r["nordic_ble.encrypted"] == "1" or side is None:
        return
    payload = length
    if opcode in (0x14, 0x15) and side is not None and aa in limits:
        limits[aa][side] = (num(r["btle.control.max_rx_octets"]), num(r["btle.control.max_tx_octets"]))
    link = limits.get(aa)
    if link is not None:
        other = "0" if side == "1" else "1"
        if not link:
            maximum = 27
        elif side in link and other in link:
            maximum = min(link[side][1], link[other][0])
        else:
            maximum = None
        if maximum is not None and payload > maximum:
            events.append({"class": "ll-length-over-maximum", "frame": frame, "frames": [frame], "length": payload,
                           "maximum": maximum})
    if llid == 3 and opcode is not None and opcode < len(CONTROL_SIZES):
        if payload != CONTROL_SIZES[opcode]:
            events.append({"class": "ll-control-size", "frame": frame, "frames": [frame], "opcode": opcode,
                           "length": payload, "size": CONTROL_SIZES[opcode]})


def analyse(path):
    args = TSHARK + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    events, last, versions, unknown, limits = [], {}, {}, False, {}
    settings = Settings(events)
    for line in out.splitlines():
        cells = line.split("\t")
        r = {f: (cells[i] if i < len(cells) and cells[i] else None) for i, f in enumerate(FIELDS)}
        frame = int(r["frame.number"])
        settings.hci(r, frame)
        if not r["btle.access_address"] or r["nordic_ble.crcok"] == "0" or r["btle.crc.incorrect"]:
            continue
        if num(r["btle.advertising_header.pdu_type"]) == 0x05 and r["btle.link_layer_data.access_address"]:
            aa = num(r["btle.link_layer_data.access_address"])
            settings.set(("aa", aa), frame, r, "btle.link_layer_data.", new=True)
            limits[aa] = {}
            bad = out_of_range(*(num(r["btle.link_layer_data." + k]) for k in
                                 ("window_size", "window_offset", "interval", "latency", "timeout", "hop")))
            if bad:
                events.append({"class": "ll-parameter-out-of-range", "frame": frame, "frames": [frame],
                               "pdu": "connect request", "parameters": bad})
            for key in [k for k in versions if k[0] == aa]:  # a new link on the address: counts start again
                versions.pop(key)
                last.pop(key, None)
            continue
        if r["btle.data_header.sequence_number"] is None:
            continue
        aa, opcode = num(r["btle.access_address"]), num(r["btle.control_opcode"])
        shapes(events, limits, r, frame, aa, opcode)
        if opcode == 0x07:
            events.append({"class": "ll-unknown-rsp", "frame": frame, "frames": [frame],
                           "unknown_type": num(r["btle.control.unknown_type"]), "access_address": aa})
        if opcode == 0x00:
            settings.set(("aa", aa), frame, r, "btle.control.")
            bad = out_of_range(*(num(r["btle.control." + k]) for k in
                                 ("window_size", "window_offset", "interval", "latency", "timeout")))
            if bad:
                events.append({"class": "ll-parameter-out-of-range", "frame": frame, "frames": [frame],
                               "pdu": "LL_CONNECTION_UPDATE_IND", "parameters": bad})
        side = r["nordic_ble.direction"]
        if side is None:
            unknown = True
            continue
        key, sn = (aa, side), num(r["btle.data_header.sequence_number"])
        nesn = num(r["btle.data_header.next_expected_sequence_number"])
        previous, other = last.get(key), next((v for k, v in last.items() if k[0] == aa and k != key), None)
        last[key] = (frame, sn, nesn, opcode)
        if opcode != 0x0C or not new_pdu(previous, other, sn, opcode):
            continue
        first, count = versions.get(key, (frame, 0))
        versions[key] = (first, count + 1)
        if count:
            events.append({"class": "ll-version-repeated", "frame": frame, "frames": sorted({first, frame}),
                           "count": count + 1, "access_address": aa})
    if unknown:
        events.append({"class": "air-direction-unknown", "frame": 0, "frames": [0]})
    return sorted(events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
