#!/usr/bin/env python3
"""tshark's reading of the diff Samples (diff-fw1/diff-fw2, diff-central-a/diff-central-b) against the ``diff`` block of
the second truth file of each pair: every difference, figure and frame is recomputed from tshark's fields (not from
the generator's reader, not from blescope). Used by verify_tshark.py; runs alone too:

    python3 Samples/generate/verify_diff.py   (needs tshark on PATH)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

SAMPLES = os.environ.get("SAMPLES_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = {"diff-fw2": "diff-fw1", "diff-central-b": "diff-central-a"}
PROPERTY_NAMES = [(0x02, "read"), (0x04, "write_without_response"), (0x08, "write"), (0x10, "notify"),
                  (0x20, "indicate")]


def tshark(name: str, *args: str) -> str:
    return subprocess.run(["tshark", "-r", os.path.join(SAMPLES, name + ".btsnoop"), *args], capture_output=True,
                          text=True, check=True).stdout


def fields(name: str, filter_: str, *names: str) -> list[list[str]]:
    out = tshark(name, "-Y", filter_, "-T", "fields", "-E", "occurrence=f", *sum((["-e", n] for n in names), []))
    return [line.split("\t") for line in out.splitlines()]


def epoch_us(text: str) -> int:
    """frame.time_epoch "1742038200.471230000" as µs, without binary rounding."""
    s, _, frac = text.partition(".")
    return int(s) * 1_000_000 + int((frac + "000000")[:6])


def uuid_text(wire_hex: str) -> str:
    raw = bytes.fromhex(wire_hex)[::-1].hex().upper()
    return raw if len(raw) == 4 else f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def declarations(name: str) -> list[dict]:
    """Characteristic declarations of the Read By Type Responses, from tshark's PDML (one Attribute Data per entry:
    declaration handle, properties, value handle, UUID as on the wire)."""
    root = ET.fromstring(tshark(name, "-Y", "btatt.opcode == 0x09", "-T", "pdml"))
    out = []
    for packet in root.iter("packet"):
        frame = int(packet.find("proto[@name='geninfo']/field[@name='num']").get("show"))
        for data in packet.iter("field"):
            if data.get("name") != "btatt.attribute_data":
                continue
            kids = list(data)
            handles = [int(k.get("show"), 16) for k in kids if k.get("name") == "btatt.handle"]
            props = int(next(k for k in kids if k.get("name") == "btatt.characteristic_properties").get("show"), 16)
            uuid = next(k for k in kids if k.get("name") in ("btatt.uuid16", "btatt.uuid128") and k.get("size") != "0")
            out.append({"frame": frame, "handle": handles[0], "value_handle": handles[1],
                        "uuid": uuid_text(uuid.get("value")),
                        "properties": [n for bit, n in PROPERTY_NAMES if props & bit]})
    return sorted(out, key=lambda d: d["handle"])


def procedures(name: str) -> list[dict]:
    """The central's GATT procedures from tshark's ATT fields, grouped as README "The diff Samples" says."""
    decls = declarations(name)
    value_handles = {d["value_handle"] for d in decls}
    rows = fields(name, "btatt && hci_h4.direction == 0x00", "frame.number", "btatt.opcode", "btatt.handle",
                  "btatt.characteristic_configuration_client", "btatt.uuid16")
    steps: list[dict] = []
    for frame, opcode, handle, cccd, uuid16 in rows:
        op = int(opcode, 16)
        if op == 0x02:
            what = "exchange mtu"
        elif op == 0x10:
            what = "discover services"
        elif op == 0x08 and int(uuid16, 16) == 0x2803:
            what = "discover characteristics"
        elif op == 0x04:
            what = "discover descriptors"
        elif op in (0x12, 0x52, 0x0A):
            h = int(handle, 16)
            owner = [d for d in decls if d["value_handle"] <= h][-1]["uuid"]
            if op == 0x12 and cccd in ("0x0001", "0x0002") and h not in value_handles:
                what = f"subscribe {owner}"
            else:
                what = {0x12: "write", 0x52: "write command", 0x0A: "read"}[op] + f" {owner}"
        else:
            continue
        if steps and steps[-1]["procedure"] == what and what.startswith(("discover", "write command")):
            continue
        steps.append({"step": len(steps) + 1, "procedure": what, "frame": int(frame)})
    return steps


def connection_events(name: str) -> dict:
    """LE Connection Complete (0x01) and LE Connection Update Complete (0x03): frame and interval in ms."""
    out: dict[int, list] = {1: [], 3: []}
    for frame, sub, interval in fields(name, "bthci_evt.le_meta_subevent == 0x01 || bthci_evt.le_meta_subevent == 0x03", "frame.number",
                                       "bthci_evt.le_meta_subevent", "bthci_evt.le_con_interval"):
        out[int(sub, 16)].append((int(frame), int(interval) * 1.25))
    return out


def stream(name: str, handle: int, interval_ms: float) -> dict:
    rows = fields(name, f"btatt.opcode == 0x52 && btatt.handle == {handle}", "frame.number", "frame.time_epoch",
                  "btatt.value")
    value_bytes = sum(len(v.replace(":", "")) // 2 for _f, _t, v in rows)
    first, last = rows[0], rows[-1]
    span = epoch_us(last[1]) - epoch_us(first[1])
    nocp = [epoch_us(t) for f, t in fields(name, "bthci_evt.code == 0x13", "frame.number", "frame.time_epoch")
            if int(first[0]) <= int(f) <= int(last[0]) + 40]
    groups, previous = [], None
    for t in nocp:  # Number Of Completed Packets grouped by connection event (gap > half an interval)
        if previous is None or t - previous > interval_ms * 500:
            groups.append(0)
        groups[-1] += 1
        previous = t
    return {"packets": len(rows), "value_bytes": value_bytes, "first_frame": int(first[0]), "last_frame": int(last[0]),
            "span_us": span, "rate_bps": round(value_bytes * 8 * 1e6 / span, 1), "packets_per_event": max(groups)}


def check(condition: bool, what: str, problems: list[str]):
    if not condition:
        problems.append(what)


def check_fw(b: str, a: str, truth: dict) -> list[str]:
    diff, problems = truth["diff"], []
    da, db = declarations(a), declarations(b)
    ua, ub = {d["uuid"]: d for d in da}, {d["uuid"]: d for d in db}
    for g in diff["gatt"]:
        u = g["uuid"]
        if g["change"] == "added":
            d = ub.get(u, {})
            check(u not in ua and d.get("handle") == g["handle_b"] and d.get("value_handle") == g["value_handle_b"]
                  and d.get("properties") == g["properties_b"] and d.get("frame") == g["frame_b"], f"added {u}", problems)
        elif g["change"] == "properties":
            check(ua[u]["properties"] == g["a"] and ub[u]["properties"] == g["b"] and ua[u]["frame"] == g["frame_a"]
                  and ub[u]["frame"] == g["frame_b"], f"properties {u}", problems)
    moved = [{"uuid": u, "handle_a": ua[u]["handle"], "handle_b": ub[u]["handle"], "value_handle_a": ua[u]["value_handle"],
              "value_handle_b": ub[u]["value_handle"]} for u in ua if u in ub and ua[u]["handle"] != ub[u]["handle"]]
    check(moved == diff["moved"], "moved handles", problems)
    listed = {g["uuid"] for g in diff["gatt"]}
    check(all(ua[u]["properties"] == ub[u]["properties"] for u in ua if u in ub and u not in listed)
          and set(ub) - set(ua) == {g["uuid"] for g in diff["gatt"] if g["change"] == "added"} and not set(ua) - set(ub),
          "no other GATT difference", problems)
    ea, eb = connection_events(a), connection_events(b)
    (interval, request) = diff["link"]
    check(ea[1][0] == (interval["frame_a"], interval["a"]) and not ea[3], "interval in A", problems)
    check(eb[3] == [(interval["frame_b"], interval["b"])] and eb[1][0][1] == interval["a"], "interval in B", problems)
    sig = {n: fields(n, "btl2cap.cmd_code == 0x12 || btl2cap.cmd_code == 0x13", "frame.number", "hci_h4.direction",
                     "btl2cap.cmd_code", "btl2cap.min_interval", "btl2cap.max_interval", "btl2cap.slave_latency",
                     "btl2cap.timeout_multiplier", "btl2cap.move_result") for n in (a, b)}  # tshark 4.0: "Move Result"
    r = request["b"]
    want = [[str(request["frame_b"]), "0x01", "0x12", str(int(r["interval_min_ms"] / 1.25)),
             str(int(r["interval_max_ms"] / 1.25)), str(r["latency"]), str(int(r["supervision_timeout_ms"] / 10)), ""],
            [str(request["response_frame_b"]), "0x00", "0x13", "", "", "", "", f"0x{r['result']:04x}"]]
    check(not sig[a] and sig[b] == want and r["from"] == "peripheral", "parameter request", problems)
    t = diff["throughput"][0]
    for side, name, interval_ms in (("a", a, interval["a"]), ("b", b, interval["b"])):
        s = stream(name, t[f"handle_{side}"], interval_ms)
        for key in ("packets", "value_bytes", "first_frame", "last_frame", "span_us", "rate_bps"):
            check(s[key] == t[f"{key}_{side}"], f"throughput {key}_{side}: tshark {s[key]}, truth {t[f'{key}_{side}']}",
                  problems)
        check(s["packets_per_event"] == t[f"packets_per_event_{side}"], f"packets per event {side}", problems)
        ota = diff["ota"][side]
        control = ua[truth_uuid(diff, "7E5A0002")] if side == "a" else ub[truth_uuid(diff, "7E5A0002")]
        writes = fields(name, f"btatt.opcode == 0x12 && btatt.handle == {control['value_handle']}", "frame.number",
                        "btatt.value")
        results = fields(name, f"btatt.opcode == 0x1b && btatt.handle == {control['value_handle']}", "btatt.value")
        check(int(writes[0][0]) == ota["start_frame"] and writes[0][1].startswith("01")
              and [int(writes[-1][0]), writes[-1][1]] == [ota["end_frame"], "02"]
              and results[-1][0].replace(":", "") == ota["result_hex"], f"OTA {side}", problems)
        check(round(ota["image_bytes"] * 8 * 1e6 / s["span_us"], 1) == ota["image_rate_bps"], f"image rate {side}",
              problems)
    check(round(100 * (1 - t["rate_bps_b"] / t["rate_bps_a"]), 1) == t["rate_drop_percent"] >= 10, "rate drop", problems)
    check([p["procedure"] for p in procedures(a)] == [p["procedure"] for p in procedures(b)]
          and diff["behaviour"]["first_divergence_step"] is None, "same procedures", problems)
    return problems


def truth_uuid(diff: dict, prefix: str) -> str:
    return next(m["uuid"] for m in diff["moved"] if m["uuid"].startswith(prefix))


def check_central(b: str, a: str, truth: dict, truth_a: dict) -> list[str]:
    diff, problems = truth["diff"], []
    strip = [[{k: v for k, v in d.items() if k != "frame"} for d in declarations(n)] for n in (a, b)]
    check(strip[0] == strip[1] and diff["gatt"] == [], "same GATT database", problems)
    (mtu,) = diff["link"]
    for side, name in (("a", a), ("b", b)):
        (req,) = fields(name, "btatt.opcode == 0x02", "frame.number", "btatt.client_rx_mtu")
        (rsp,) = fields(name, "btatt.opcode == 0x03", "frame.number", "btatt.server_rx_mtu")
        got = (int(req[0]), int(req[1]), int(rsp[0]), int(rsp[1]))
        check(got == (mtu[f"request_frame_{side}"], mtu[f"client_mtu_{side}"], mtu[f"frame_{side}"],
                      mtu[f"server_mtu_{side}"]) and min(got[1], got[3]) == mtu[side], f"mtu {side}", problems)
        public = fields(name, "bthci_evt.code == 0x0e && bthci_evt.bd_addr", "bthci_evt.bd_addr")[0][0]
        random_ = fields(name, "bthci_cmd.opcode == 0x2005", "bthci_cmd.bd_addr")[0][0]
        check(public.upper() == diff["central"][f"public_address_{side}"]
              and random_.upper() == diff["central"][f"random_address_{side}"], f"central address {side}", problems)
    ea, eb = connection_events(a), connection_events(b)
    check(ea[1][0][1] == eb[1][0][1] and not ea[3] and not eb[3], "same interval, no update", problems)
    pa, pb = procedures(a), procedures(b)
    beh = diff["behaviour"]
    check(pa == beh["sequence_a"] and pb == beh["sequence_b"], "procedure sequences", problems)
    k = next(i for i, (x, y) in enumerate(zip(pa, pb)) if x["procedure"] != y["procedure"])
    check((pa[k]["step"], pa[k]["procedure"], pb[k]["procedure"], pa[k]["frame"], pb[k]["frame"]) ==
          (beh["first_divergence_step"], beh["a"], beh["b"], beh["frame_a"], beh["frame_b"]), "first divergence", problems)
    subs = [[p["procedure"].split(" ", 1)[1] for p in ps if p["procedure"].startswith("subscribe")] for ps in (pa, pb)]
    check(subs == [beh["subscriptions_a"], beh["subscriptions_b"]] and sorted(subs[0]) == sorted(subs[1]),
          "subscriptions", problems)
    return problems


def verify(name: str) -> tuple[bool, str]:
    truth = json.load(open(os.path.join(SAMPLES, name + ".truth.json")))
    a = PAIRS[name]
    truth_a = json.load(open(os.path.join(SAMPLES, a + ".truth.json")))
    problems = check_fw(name, a, truth) if name == "diff-fw2" else check_central(name, a, truth, truth_a)
    return not problems, f"  diff against {a}: " + ("every difference matches tshark" if not problems
                                                     else "MISMATCH: " + "; ".join(problems))


def main() -> int:
    ok = True
    for name in PAIRS:
        good, text = verify(name)
        print(name + ":" + text[1:])
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
