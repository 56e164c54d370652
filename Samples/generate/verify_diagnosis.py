"""tshark's reading of the diagnosis Samples (diag-*), against their truth files: the failure events, their codes and
frames, as tshark 4.0 decodes them. Where tshark shows "Vendor-Specific / Event undecoded" (the Android quality
report), the raw bytes of its frame are decoded here (bumble vendor/android/hci.py layout). Used by verify_tshark.py.
"""

import hashlib
import json
import os
import struct
import subprocess

SAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIELDS = ["frame.number", "frame.time_relative", "hci_h4.direction", "bthci_cmd.opcode", "bthci_cmd.reason",
          "bthci_evt.code", "bthci_evt.le_meta_subevent", "bthci_evt.status", "bthci_evt.reason",
          "bthci_evt.encryption_enable", "bthci_evt.le_supv_timeout", "btsmp.opcode", "btsmp.reason", "btatt.opcode",
          "btatt.error_code", "btatt.handle", "btatt.value", "btatt.characteristic_configuration_client",
          "btatt.invalid_usage", "btatt.starting_handle", "btatt.ending_handle", "btl2cap.cmd_code", "btl2cap.move_result",
          "btl2cap.min_interval", "btl2cap.max_interval", "btl2cap.slave_latency", "btl2cap.timeout_multiplier"]


class Row(dict):
    def int(self, key):
        v = self.get(key, "").split(",")[0]
        return None if v == "" else int(v, 16) if v.startswith("0x") else int(float(v)) if "." in v else int(v)


def rows(name):
    out = subprocess.run(["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-T", "fields",
                          *sum((["-e", f] for f in FIELDS), [])], capture_output=True, text=True, check=True).stdout
    return [Row(zip(FIELDS, line.split("\t"))) for line in out.splitlines()]


def raw_frame(name, frame):
    out = subprocess.run(["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), "-Y", f"frame.number == {frame}",
                          "-T", "json", "-x"], capture_output=True, text=True, check=True).stdout
    return bytes.fromhex(json.loads(out)[0]["_source"]["layers"]["frame_raw"][0])


def where(table, **want):
    return [r for r in table if all(r.int(k) == v for k, v in want.items())]


def frames(table, **want):
    return [r.int("frame.number") for r in where(table, **want)]


def check_connect_timeout(t, table, _name):
    first, second = t["attempts"]
    failed = where(table, **{"bthci_evt.le_meta_subevent": 0x01, "bthci_evt.status": 0x02})
    cancel = frames(table, **{"bthci_cmd.opcode": 0x200E})
    creates = frames(table, **{"bthci_cmd.opcode": 0x200D})
    waited = float(where(table, **{"frame.number": cancel[0]})[0]["frame.time_relative"]) - float(
        where(table, **{"frame.number": creates[0]})[0]["frame.time_relative"])
    good = frames(table, **{"bthci_evt.le_meta_subevent": 0x01, "bthci_evt.status": 0x00})
    ok = ([r.int("frame.number") for r in failed] == [first["connection_complete"]["frame"]]
          and cancel == [first["cancel_frame"]] and creates == [first["create_frame"], second["create_frame"]]
          and good == [second["connection_complete"]["frame"]] and abs(waited - 30.0) < 0.01)
    return ok, f"create {creates}, cancel {cancel} after {waited:.3f} s, complete 0x02 at {frames(table, **{'bthci_evt.status': 2})}"


def check_bond_lost(t, table, _name):
    changes = [(r.int("frame.number"), r.int("bthci_evt.status")) for r in where(table, **{"bthci_evt.code": 0x08})]
    disc = [(r.int("frame.number"), r.int("bthci_cmd.reason")) for r in where(table, **{"bthci_cmd.opcode": 0x0406})]
    ends = [r.int("bthci_evt.reason") for r in where(table, **{"bthci_evt.code": 0x05})]
    rc = t["reconnection"]
    ok = (changes == [(t["pairing"]["encryption_change_frame"], 0), (rc["encryption_change"]["frame"], 0x06)]
          and disc[-1] == (rc["disconnect_frame"], 0x05) and ends == [0x16, 0x16]
          and frames(table, **{"bthci_cmd.opcode": 0x2019})[-1] == rc["enable_encryption_frame"])
    return ok, f"encryption changes {changes}, disconnects {disc}, ends {ends}"


def check_pairing_failed(t, table, _name):
    failed = [(r.int("frame.number"), r.int("hci_h4.direction"), r.int("btsmp.reason"))
              for r in where(table, **{"btsmp.opcode": 0x05})]
    pf = t["pairing"]["pairing_failed"]
    ok = failed == [(pf["frame"], 1, 0x04)] and not where(table, **{"bthci_evt.code": 0x08})
    return ok, f"Pairing Failed (frame, rcvd, reason) {failed}"


def check_insufficient_encryption(t, table, _name):
    errors = [(r.int("frame.number"), r.int("btatt.error_code"), r.int("btatt.handle"))
              for r in where(table, **{"btatt.opcode": 0x01}) if r.int("btatt.error_code") in (0x05, 0x0F)]
    want = [(r["answer_frame"], r["error"]["error_code"], r["handle"]) for r in t["reads"] if r["error"]]
    ok = errors == want and frames(table, **{"bthci_evt.code": 0x08, "bthci_evt.status": 0}) == [
        t["pairing"]["encryption_change_frame"]]
    return ok, f"ATT errors (frame, code, handle) {errors}"


def check_cccd(t, table, _name):
    b, s = t["battery"], t["spo2"]
    # tshark decodes a CCCD value as btatt.characteristic_configuration_client, and marks a Write Command to a
    # CCCD "Invalid usage of this characteristic with this opcode" (btatt.invalid_usage).
    cmds = [(r.int("frame.number"), r.int("btatt.handle"), r.int("btatt.characteristic_configuration_client"),
             r.get("btatt.invalid_usage", "") != "") for r in where(table, **{"btatt.opcode": 0x52})]
    cccd_requests = [r for r in where(table, **{"btatt.opcode": 0x12}) if r.int("btatt.handle") in
                     (b["cccd_handle"], s["cccd_handle"])]
    notes = [r.int("btatt.handle") for r in where(table, **{"btatt.opcode": 0x1B})]
    ok = (cmds == [(s["cccd_write_command_frame"], s["cccd_handle"], 0x0001, True)] and not cccd_requests
          and notes.count(b["value_handle"]) == 0 and notes.count(s["value_handle"]) == s["notifications_received"])
    return ok, f"write commands {cmds}, CCCD write requests {len(cccd_requests)}, notifications {len(notes)}"


def check_att_timeout(t, table, _name):
    u, td = t["unanswered_request"], t["teardown"]
    later = [r for r in table if r.int("frame.number") > u["frame"] and r.get("btatt.opcode")]
    disc = where(table, **{"bthci_cmd.opcode": 0x0406})
    gap = float(disc[0]["frame.time_relative"]) - float(where(table, **{"frame.number": u["frame"]})[0]["frame.time_relative"])
    ok = (not later and frames(table, **{"btatt.opcode": 0x0A})[-1] == u["frame"] and disc[0].int("bthci_cmd.reason") == 0x13
          and [r.int("bthci_evt.reason") for r in where(table, **{"bthci_evt.code": 0x05})] == [0x16]
          and abs(gap - 30.0) < 0.01 and disc[0].int("frame.number") == td["disconnect_frame"])
    return ok, f"read at {u['frame']}, nothing after it, Disconnect (0x13) {gap:.3f} s later, ends 0x16"


def check_stale(t, table, _name):
    st = t["stale_write"]
    errors = [(r.int("frame.number"), r.int("btatt.error_code"), r.int("btatt.handle"))
              for r in where(table, **{"btatt.opcode": 0x01}) if r.int("btatt.error_code") == 0x01]
    ind = [(r.int("frame.number"), r.int("btatt.handle"), r.int("btatt.starting_handle"), r.int("btatt.ending_handle"))
           for r in where(table, **{"btatt.opcode": 0x1D})]
    ok = (errors == [(st["error_frame"], 0x01, st["handle"])]
          and ind == [(t["service_changed_indication_frame"], t["service_changed_value_handle"], 0x0001, 0xFFFF)])
    return ok, f"Invalid Handle (frame, code, handle) {errors}, Service Changed {ind}"


def check_params(t, table, _name):
    reqs = [(r.int("frame.number"), r.int("btl2cap.min_interval"), r.int("btl2cap.max_interval"),
             r.int("btl2cap.slave_latency"), r.int("btl2cap.timeout_multiplier"))
            for r in where(table, **{"btl2cap.cmd_code": 0x12})]
    # tshark 4.0 labels the Connection Parameter Update Response's result "Move Result" (btl2cap.move_result).
    rsps = [(r.int("frame.number"), r.int("btl2cap.move_result")) for r in where(table, **{"btl2cap.cmd_code": 0x13})]
    want_req = [(q["request_frame"], q["interval_min"], q["interval_max"], q["latency"], q["timeout"]) for q in t["requests"]]
    want_rsp = [(q["response_frame"], q["result"]) for q in t["requests"]]
    done = frames(table, **{"bthci_evt.le_meta_subevent": 0x03, "bthci_evt.status": 0})
    ok = reqs == want_req and rsps == want_rsp and done == [t["connection_update"]["complete_frame"]]
    return ok, f"requests {reqs}, responses {rsps}, update complete {done}"


def check_mtu(t, table, _name):
    notes = [r for r in where(table, **{"btatt.opcode": 0x1B}) if r.int("btatt.handle") == t["history_value_handle"]]
    sizes = {len(r["btatt.value"]) // 2 for r in notes}
    mtu = [r for r in table if r.int("btatt.opcode") in (0x02, 0x03)]
    length = where(table, **{"bthci_evt.le_meta_subevent": 0x07})
    data = bytes.fromhex("".join(r["btatt.value"] for r in notes))
    ok = (len(notes) == t["notifications"] and sizes == {20} and not mtu and not length
          and hashlib.sha256(data).hexdigest() == t["history"]["sha256"])
    return ok, f"{len(notes)} notifications of {sorted(sizes)} bytes, MTU PDUs {len(mtu)}, data length changes {len(length)}"


def check_supervision(t, table, name):
    report = t["bqr"]["report"]
    vendor = frames(table, **{"bthci_evt.code": 0xFF})
    raw = raw_frame(name, vendor[0])
    # H4 type, event code 0xFF, length, then sub-event 0x58, report id, packet type, handle, role, TX, RSSI, SNR,
    # unused AFH, unideal AFH, LSTO (0.625 ms slots)
    sub, rid, _ptype, handle, _role, _tx, rssi, _snr, _u, _ui, lsto = struct.unpack_from("<BBBHBbbBBBH", raw, 3)
    ends = [(r.int("frame.number"), r.int("bthci_evt.reason")) for r in where(table, **{"bthci_evt.code": 0x05})]
    update = where(table, **{"bthci_evt.le_meta_subevent": 0x03})
    ok = (vendor == [report["frame"]] and (sub, rid, handle, rssi) == (0x58, 0x02, report["connection_handle"],
                                                                         report["rssi_dbm"])
          and lsto * 0.625 == report["lsto_ms"] == 420 and ends == [(t["loss"]["disconnection"]["frame"], 0x08)]
          and update[0].int("bthci_evt.le_supv_timeout") == 42)
    return ok, (f"quality report at {vendor} (sub-event 0x{sub:02x}, id 0x{rid:02x}, RSSI {rssi} dBm, LSTO "
                f"{lsto * 0.625:g} ms), ends {ends}, update timeout {update[0].int('bthci_evt.le_supv_timeout') * 10} ms")


def check_unacked_terminate(t, table, _name):
    tm = t["termination"]
    disc = [(r.int("frame.number"), r.int("bthci_cmd.reason")) for r in where(table, **{"bthci_cmd.opcode": 0x0406})]
    ends = [(r.int("frame.number"), r.int("bthci_evt.reason")) for r in where(table, **{"bthci_evt.code": 0x05})]
    gap = float(where(table, **{"frame.number": ends[0][0]})[0]["frame.time_relative"]) - float(
        where(table, **{"frame.number": disc[0][0]})[0]["frame.time_relative"])
    later = [r.int("frame.number") for r in table if r.int("frame.number") > disc[0][0] and r.get("btatt.opcode")]
    ok = (disc == [(tm["disconnect_frame"], 0x13)] and ends == [(tm["end"]["frame"], 0x22)] and 40.0 <= gap < 40.1
          and not later)
    return ok, f"Disconnect (frame, reason) {disc}, then {gap:.3f} s of nothing, Disconnection Complete {ends}"


def check_unanswered(t, table, _name):
    u, loss = t["unanswered_request"], t["loss"]
    writes = [(r.int("frame.number"), r.int("btatt.handle")) for r in where(table, **{"btatt.opcode": 0x12})]
    later = [r.int("frame.number") for r in table if r.int("frame.number") > u["frame"] and r.get("btatt.opcode")]
    ends = [(r.int("frame.number"), r.int("bthci_evt.reason")) for r in where(table, **{"bthci_evt.code": 0x05})]
    gap = float(where(table, **{"frame.number": ends[0][0]})[0]["frame.time_relative"]) - float(
        where(table, **{"frame.number": u["frame"]})[0]["frame.time_relative"])
    ok = (writes[-1] == (u["frame"], u["handle"]) and not later and ends == [(loss["disconnection"]["frame"], 0x08)]
          and abs(gap - loss["seconds_after_request"]) < 1e-5)
    return ok, f"Write Request {writes[-1]}, no ATT after it, Disconnection Complete {ends} {gap:.3f} s later"


def check_ssp(t, table, _name):
    # tshark 4.0: Link Key Request 0x17, IO Capability Request/Response 0x31/0x32, Simple Pairing Complete 0x36,
    # Authentication Complete 0x06 (bthci_evt.status), Link Key Request Negative Reply 0x040C.
    f = t["pairing"]["frames"]
    codes = {code: [(r.int("frame.number"), r.int("bthci_evt.status")) for r in where(table, **{"bthci_evt.code": code})]
             for code in (0x03, 0x17, 0x31, 0x32, 0x33, 0x36, 0x06, 0x05)}
    negative = frames(table, **{"bthci_cmd.opcode": 0x040C})
    ok = (codes[0x03] == [(f["Connection Complete"], 0)] and [x[0] for x in codes[0x17]] == [f["Link Key Request"]]
          and negative == [f["Link Key Request Negative Reply"]]
          and [x[0] for x in codes[0x31]] == [f["IO Capability Request"]]
          and [x[0] for x in codes[0x32]] == [f["IO Capability Response"]]
          and codes[0x36] == [(f["Simple Pairing Complete"], 0x05)] and codes[0x06] == [(f["Authentication Complete"], 0x05)]
          and [r.int("bthci_evt.reason") for r in where(table, **{"bthci_evt.code": 0x05})] == [0x16])
    return ok, (f"Link Key Request {codes[0x17]}, Negative Reply {negative}, IO capabilities {codes[0x31]} {codes[0x32]}, "
                f"Simple Pairing Complete {codes[0x36]}, Authentication Complete {codes[0x06]}")


CHECKS = {"diag-connect-timeout": check_connect_timeout, "diag-bond-lost": check_bond_lost,
          "diag-pairing-failed": check_pairing_failed, "diag-insufficient-encryption": check_insufficient_encryption,
          "diag-cccd-never-written": check_cccd, "diag-att-timeout": check_att_timeout,
          "diag-stale-handle": check_stale, "diag-param-rejected": check_params, "diag-mtu-23": check_mtu,
          "diag-supervision-timeout": check_supervision, "diag-unacked-terminate": check_unacked_terminate,
          "diag-unanswered-before-timeout": check_unanswered, "diag-ssp-missing-key": check_ssp}


def check(name, truth):
    """(ok, text) for a diagnosis Sample; also every deciding frame of the truth's findings exists in tshark's view."""
    table = rows(name)
    ok, text = CHECKS[name](truth, table, name)
    numbers = {r.int("frame.number") for r in table}
    cited = {f for finding in truth["diagnosis"]["findings"] for f in finding["frames"]}
    ok &= cited <= numbers
    return ok, f"  {text}: {'match' if ok else 'MISMATCH'}"
