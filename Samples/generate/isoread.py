"""Reads the LE Audio samples back from their btsnoop bytes, without bumble: HCI ISO data packets (Core Spec Vol 4,
Part E, 5.4.5), the isochronous HCI commands and events, and the audio profiles' ATT traffic. What it finds is the
truth the tests check."""

from __future__ import annotations

import struct
from collections import Counter, defaultdict

import common

STATUS_NAMES = {0: "valid", 1: "possibly_invalid", 2: "lost"}
ASE_STATES = {0: "idle", 1: "codec_configured", 2: "qos_configured", 3: "enabling", 4: "streaming", 5: "disabling",
              6: "releasing"}
ASE_OPCODES = {1: "config_codec", 2: "config_qos", 3: "enable", 4: "receiver_start_ready", 5: "disable",
               6: "receiver_stop_ready", 7: "update_metadata", 8: "release"}


def records(data: bytes):
    """(frame, sent, ts_us, packet) for every record of a btsnoop (datalink 1002)."""
    assert data[:8] == b"btsnoop\0"
    pos, frame = 16, 0
    while pos < len(data):
        _orig, incl, flags, _drops, ts = struct.unpack(">IIIIQ", data[pos : pos + 24])
        yield frame + 1, (flags & 1) == 0, ts, data[pos + 24 : pos + 24 + incl]
        pos += 24 + incl
        frame += 1


def u24(b: bytes, at: int) -> int:
    return b[at] | b[at + 1] << 8 | b[at + 2] << 16


def iso_streams(data: bytes, sdu_interval_us: int | None = None) -> dict:
    """Per ISO handle and direction: packets, SDUs, sequence numbers, gaps, statuses, fragments, time stamps."""
    streams: dict[tuple[int, str], dict] = {}
    partial: dict[tuple[int, str], dict] = {}
    for frame, sent, _ts, pkt in records(data):
        if pkt[0] != 0x05:
            continue
        word, length = struct.unpack("<HH", pkt[1:5])
        handle, pb, tsf = word & 0x0FFF, (word >> 12) & 3, (word >> 14) & 1
        body = pkt[5 : 5 + (length & 0x3FFF)]
        key = (handle, "tx" if sent else "rx")
        s = streams.setdefault(key, {"packets": 0, "first_fragments": 0, "continuations": 0, "last_fragments": 0,
                                     "complete": 0, "sdus": 0, "sdu_bytes": 0, "sequence_numbers": [],
                                     "status": Counter(), "status_frames": defaultdict(list), "fragmented_sdu_frames": [],
                                     "time_stamps": [], "packet_frames": []})
        s["packets"] += 1
        s["packet_frames"].append(frame)
        at = 0
        if pb in (0, 2):
            ts = None
            if tsf:
                ts = struct.unpack("<I", body[:4])[0]
                at = 4
            seq, info = struct.unpack("<HH", body[at : at + 4])
            at += 4
            sdu_len, status = info & 0x0FFF, info >> 14
            s["sequence_numbers"].append(seq)
            s["status"][STATUS_NAMES.get(status, str(status))] += 1
            if status:
                s["status_frames"][STATUS_NAMES[status]].append(frame)
            if ts is not None:
                s["time_stamps"].append((seq, ts))
            if pb == 0:
                s["first_fragments"] += 1
                partial[key] = {"frame": frame, "want": sdu_len, "have": len(body) - at}
            else:
                s["complete"] += 1
                s["sdus"] += 1
                s["sdu_bytes"] += len(body) - at
        else:
            s["continuations" if pb == 1 else "last_fragments"] += 1
            p = partial.get(key)
            if p is not None:
                p["have"] += len(body)
                if pb == 3:
                    del partial[key]
                    assert p["have"] == p["want"], (p, frame)
                    s["sdus"] += 1
                    s["sdu_bytes"] += p["have"]
                    s["fragmented_sdu_frames"].append({"first": p["frame"], "last": frame})
    out = {}
    for (handle, direction), s in sorted(streams.items()):
        seqs = s["sequence_numbers"]
        gaps, missing = [], []
        for a, b in zip(seqs, seqs[1:]):
            if (b - a) & 0xFFFF > 1:
                gaps.append({"after": a, "before": b, "missing": ((b - a) & 0xFFFF) - 1})
                missing += [(a + i) & 0xFFFF for i in range(1, (b - a) & 0xFFFF)]
        entry = {
            "handle": handle, "direction": direction, "packets": s["packets"], "sdus": s["sdus"],
            "sdu_bytes": s["sdu_bytes"],
            "fragments": {"first": s["first_fragments"], "continuation": s["continuations"], "last": s["last_fragments"],
                          "complete": s["complete"]},
            "first_sequence_number": seqs[0] if seqs else None, "last_sequence_number": seqs[-1] if seqs else None,
            "expected_sdus": ((seqs[-1] - seqs[0]) & 0xFFFF) + 1 if seqs else 0,
            "sequence_gaps": gaps, "missing_sequence_numbers": missing,
            "status": dict(sorted(s["status"].items())), "status_frames": {k: v for k, v in sorted(s["status_frames"].items())},
            "fragmented_sdus": s["fragmented_sdu_frames"], "time_stamped_packets": len(s["time_stamps"]),
            "first_frame": s["packet_frames"][0], "last_frame": s["packet_frames"][-1],
        }
        if s["time_stamps"] and sdu_interval_us:
            # Time stamp against the SDU interval: the deviation of each step from (sequence step x interval).
            dev = [abs((t2 - t1) - ((q2 - q1) & 0xFFFF) * sdu_interval_us)
                   for (q1, t1), (q2, t2) in zip(s["time_stamps"], s["time_stamps"][1:])]
            entry["time_stamp_max_deviation_us"] = max(dev) if dev else 0
            longest = max(gaps, key=lambda g: g["missing"]) if gaps else None
            entry["longest_gap_sdus"] = longest["missing"] if longest else 0
        out[f"0x{handle:04x} {direction}"] = entry
    return out


def hci_iso_lifecycle(data: bytes) -> dict:
    """The isochronous commands and events with their frames and fields (Core Spec Vol 4, Part E, 7.7.65, 7.8)."""
    out: dict[str, list] = defaultdict(list)
    pending: dict[int, int] = {}
    for frame, sent, _ts, pkt in records(data):
        if pkt[0] == 0x01:
            opcode, plen = struct.unpack("<HB", pkt[1:4])
            p = pkt[4 : 4 + plen]
            pending[opcode] = frame
            if opcode == 0x2062:
                n = p[14]
                cises = [dict(zip(("cis_id", "max_sdu_c_to_p", "max_sdu_p_to_c", "phy_c_to_p", "phy_p_to_c", "rtn_c_to_p",
                                   "rtn_p_to_c"), struct.unpack("<BHHBBBB", p[15 + 9 * i : 24 + 9 * i]))) for i in range(n)]
                out["le_set_cig_parameters"].append({"frame": frame, "cig_id": p[0], "sdu_interval_c_to_p": u24(p, 1),
                                                     "sdu_interval_p_to_c": u24(p, 4), "worst_case_sca": p[7],
                                                     "packing": p[8], "framing": p[9],
                                                     "max_transport_latency_c_to_p": struct.unpack("<H", p[10:12])[0],
                                                     "max_transport_latency_p_to_c": struct.unpack("<H", p[12:14])[0],
                                                     "cis": cises})
            elif opcode == 0x2064:
                n = p[0]
                out["le_create_cis"].append({"frame": frame, "pairs": [list(struct.unpack("<HH", p[1 + 4 * i : 5 + 4 * i]))
                                                                        for i in range(n)]})
            elif opcode == 0x206E:
                out["le_setup_iso_data_path"].append({"frame": frame, "handle": struct.unpack("<H", p[:2])[0],
                                                      "direction": p[2], "data_path_id": p[3], "codec_id": p[4:9].hex(),
                                                      "controller_delay_us": u24(p, 9), "codec_configuration": p[13:].hex()})
            elif opcode == 0x206F:
                out["le_remove_iso_data_path"].append({"frame": frame, "handle": struct.unpack("<H", p[:2])[0],
                                                       "directions": p[2]})
            elif opcode == 0x2044:
                out["le_periodic_advertising_create_sync"].append({"frame": frame, "sid": p[1]})
            elif opcode == 0x2046:
                out["le_periodic_advertising_terminate_sync"].append({"frame": frame,
                                                                      "sync_handle": struct.unpack("<H", p[:2])[0]})
            elif opcode == 0x2065:
                out["le_remove_cig"].append({"frame": frame, "cig_id": p[0]})
            elif opcode == 0x2068:
                out["le_create_big"].append({"frame": frame, "big_handle": p[0], "advertising_handle": p[1],
                                             "num_bis": p[2], "sdu_interval": u24(p, 3),
                                             "max_sdu": struct.unpack("<H", p[6:8])[0],
                                             "max_transport_latency": struct.unpack("<H", p[8:10])[0], "rtn": p[10],
                                             "phy": p[11], "packing": p[12], "framing": p[13], "encryption": p[14]})
            elif opcode == 0x206A:
                out["le_terminate_big"].append({"frame": frame, "big_handle": p[0], "reason": p[1]})
            elif opcode == 0x206B:
                n = p[23]
                out["le_big_create_sync"].append({"frame": frame, "big_handle": p[0],
                                                  "sync_handle": struct.unpack("<H", p[1:3])[0], "encryption": p[3],
                                                  "mse": p[20], "big_sync_timeout": struct.unpack("<H", p[21:23])[0],
                                                  "bis": list(p[24 : 24 + n])})
        elif pkt[0] == 0x04:
            code, plen = pkt[1], pkt[2]
            p = pkt[3 : 3 + plen]
            if code == 0x0E:
                opcode = struct.unpack("<H", p[1:3])[0]
                r = p[3:]
                if opcode == 0x2062:
                    n = r[2]
                    out["le_set_cig_parameters_complete"].append({
                        "frame": frame, "command_frame": pending.get(opcode), "status": r[0], "cig_id": r[1],
                        "cis_handles": [struct.unpack("<H", r[3 + 2 * i : 5 + 2 * i])[0] for i in range(n)]})
                elif opcode == 0x2061:
                    out["le_read_iso_tx_sync"].append({
                        "frame": frame, "status": r[0], "handle": struct.unpack("<H", r[1:3])[0],
                        "packet_sequence_number": struct.unpack("<H", r[3:5])[0],
                        "tx_time_stamp": struct.unpack("<I", r[5:9])[0], "time_offset": u24(r, 9)})
                elif opcode in (0x206E, 0x206F, 0x2065):
                    out[{0x206E: "le_setup_iso_data_path_complete", 0x206F: "le_remove_iso_data_path_complete",
                         0x2065: "le_remove_cig_complete"}[opcode]].append({"frame": frame, "status": r[0]})
            elif code == 0x0F:
                opcode = struct.unpack("<H", p[2:4])[0]
                if opcode in (0x2064, 0x2068, 0x206B, 0x206A, 0x0406):
                    out["command_status"].append({"frame": frame, "opcode": f"0x{opcode:04x}", "status": p[0]})
            elif code == 0x05:
                status, handle, reason = p[0], struct.unpack("<H", p[1:3])[0], p[3]
                out["disconnection_complete"].append({"frame": frame, "status": status, "handle": handle, "reason": reason})
            elif code == 0x3E:
                sub = p[0]
                q = p[1:]
                if sub == 0x19:
                    names = ("cig_sync_delay", "cis_sync_delay", "transport_latency_c_to_p", "transport_latency_p_to_c")
                    e = {"frame": frame, "status": q[0], "handle": struct.unpack("<H", q[1:3])[0]}
                    e.update({n: u24(q, 3 + 3 * i) for i, n in enumerate(names)})
                    e.update(dict(zip(("phy_c_to_p", "phy_p_to_c", "nse", "bn_c_to_p", "bn_p_to_c", "ft_c_to_p", "ft_p_to_c"),
                                      q[15:22])))
                    e.update(dict(zip(("max_pdu_c_to_p", "max_pdu_p_to_c", "iso_interval"), struct.unpack("<HHH", q[22:28]))))
                    out["le_cis_established"].append(e)
                elif sub == 0x1A:
                    out["le_cis_request"].append({"frame": frame, "acl_handle": struct.unpack("<H", q[:2])[0],
                                                  "cis_handle": struct.unpack("<H", q[2:4])[0], "cig_id": q[4], "cis_id": q[5]})
                elif sub == 0x1B:
                    n = q[17]
                    out["le_create_big_complete"].append({
                        "frame": frame, "status": q[0], "big_handle": q[1], "big_sync_delay": u24(q, 2),
                        "transport_latency_big": u24(q, 5), "phy": q[8], "nse": q[9], "bn": q[10], "pto": q[11],
                        "irc": q[12], "max_pdu": struct.unpack("<H", q[13:15])[0],
                        "iso_interval": struct.unpack("<H", q[15:17])[0],
                        "bis_handles": [struct.unpack("<H", q[18 + 2 * i : 20 + 2 * i])[0] for i in range(n)]})
                elif sub == 0x1C:
                    out["le_terminate_big_complete"].append({"frame": frame, "big_handle": q[0], "reason": q[1]})
                elif sub == 0x1D:
                    n = q[13]
                    out["le_big_sync_established"].append({
                        "frame": frame, "status": q[0], "big_handle": q[1], "transport_latency_big": u24(q, 2),
                        "nse": q[5], "bn": q[6], "pto": q[7], "irc": q[8], "max_pdu": struct.unpack("<H", q[9:11])[0],
                        "iso_interval": struct.unpack("<H", q[11:13])[0],
                        "bis_handles": [struct.unpack("<H", q[14 + 2 * i : 16 + 2 * i])[0] for i in range(n)]})
                elif sub == 0x1E:
                    out["le_big_sync_lost"].append({"frame": frame, "big_handle": q[0], "reason": q[1]})
                elif sub == 0x22:
                    out["le_biginfo_advertising_report"].append({
                        "frame": frame, "sync_handle": struct.unpack("<H", q[:2])[0], "num_bis": q[2], "nse": q[3],
                        "iso_interval": struct.unpack("<H", q[4:6])[0], "bn": q[6], "pto": q[7], "irc": q[8],
                        "max_pdu": struct.unpack("<H", q[9:11])[0], "sdu_interval": u24(q, 11),
                        "max_sdu": struct.unpack("<H", q[14:16])[0], "phy": q[16], "framing": q[17], "encryption": q[18]})
                elif sub == 0x0E:
                    out["le_periodic_advertising_sync_established"].append({
                        "frame": frame, "status": q[0], "sync_handle": struct.unpack("<H", q[1:3])[0], "sid": q[3]})
                elif sub == 0x0F:
                    out.setdefault("le_periodic_advertising_report_frames", []).append(frame)
    return dict(out)


def ase_story(data: bytes, handles: dict) -> dict:
    """ASE state transitions (notifications and reads of the ASE characteristics) and ASE Control Point operations
    and responses, with their frames (ASCS 4, 5)."""
    ase_handles = {handles["sink_ase"], handles["source_ase"]}
    cp = handles["ase_control_point"]
    _stats, att = common.read_btsnoop(data)
    transitions, operations, responses = [], [], []
    for p in att:
        if p.opcode in (0x1B, 0x1D) and p.handle in ase_handles and len(p.value) >= 2:
            transitions.append({"frame": p.frame, "ase_id": p.value[0], "state": ASE_STATES[p.value[1]]})
        elif p.opcode in (0x12, 0x52) and p.handle == cp:
            v = p.value
            operations.append({"frame": p.frame, "opcode": v[0], "name": ASE_OPCODES[v[0]], "ase_ids": aseids(v)})
        elif p.opcode == 0x1B and p.handle == cp:
            v = p.value
            responses.append({"frame": p.frame, "opcode": v[0],
                              "responses": [{"ase_id": v[2 + 3 * i], "code": v[3 + 3 * i], "reason": v[4 + 3 * i]}
                                            for i in range(v[1])]})
    reads = [p for p in att if p.opcode == 0x0B]
    return {"ase_transitions": transitions, "ase_control_point_operations": operations,
            "ase_control_point_responses": responses, "att_read_responses": len(reads)}


def aseids(v: bytes) -> list[int]:
    """The ASE IDs an ASE Control Point operation names (the first of each per-ASE record)."""
    op, n = v[0], v[1]
    at, ids = 2, []
    for _ in range(n):
        ids.append(v[at])
        if op == 1:
            at += 1 + 1 + 1 + 5
            at += 1 + v[at]
        elif op == 2:
            at += 16
        elif op in (3, 7):
            at += 1
            at += 1 + v[at]
        else:
            at += 1
    return ids


def audio_truth(data: bytes, truth: dict) -> dict:
    streams = iso_streams(data, truth.get("sdu_interval_us"))
    result = {"iso_streams": streams, "iso_lifecycle": hci_iso_lifecycle(data)}
    if "handles" in truth and "sink_ase" in truth["handles"]:
        result.update(ase_story(data, truth["handles"]))
    return result


BASS_OPCODES = {0: "remote_scan_stopped", 1: "remote_scan_started", 2: "add_source", 3: "modify_source",
                4: "set_broadcast_code", 5: "remove_source"}


def bass_story(data: bytes, handles: dict) -> dict:
    """BASS control point operations and Broadcast Receive State notifications with their frames (BASS 3.1, 3.2)."""
    _stats, att = common.read_btsnoop(data)
    ops, states = [], []
    for p in att:
        if p.opcode in (0x12, 0x52) and p.handle == handles["bass_control_point"]:
            ops.append({"frame": p.frame, "opcode": p.value[0], "name": BASS_OPCODES[p.value[0]]})
        elif p.opcode == 0x1B and p.handle == handles["broadcast_receive_state"]:
            v = p.value
            if not v:
                states.append({"frame": p.frame, "empty": True})
                continue
            at = 14 + (16 if v[13] == 3 else 0)
            states.append({"frame": p.frame, "source_id": v[0], "broadcast_id": v[9] | v[10] << 8 | v[11] << 16,
                           "pa_sync_state": v[12], "big_encryption": v[13],
                           "bis_sync": [struct.unpack("<I", v[at + 1 : at + 5])[0]] if v[at] else []})
    return {"bass_operations": ops, "broadcast_receive_states": states}
