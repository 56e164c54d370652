#!/usr/bin/env python3
"""diagnosis_precision.py: each diagnosis rule's precision, every firing held to the tshark-only truth.

Usage: scripts/diagnosis_precision.py BLESCOPE CAPTURE_OR_DIR... [--truth DIR]... [--json] [--markdown]
                                      [--commit SHA] [--measured DATE] [--truth-cache DIR]

For every capture (directories are walked, files tshark cannot read are skipped), runs `BLESCOPE diagnose --json` and
judges each occurrence of each finding (its deciding frame: `occurrences`, or `frame` when it has none) against the
truth of scripts/diagnosis_truth.py for that capture: `<name>.jsonl` in the first --truth DIR holding it (default:
Tests/Truth/diagnosis, then $BLESCOPE_CORPUS_TRUTH), else made now with diagnosis_truth.py (kept in --truth-cache
when given). A truth is tshark's alone: blescope's output never enters it.

An occurrence is
  true       when a truth event of a class the rule's evidence names (TRUTH below; the classes of
             diagnosis_truth.py, of diagnosis_truth_extra.py, cached as <name>.extra.jsonl, and of the truths of
             RULE_TRUTHS, each cached under its suffix and made only for a capture where one of its rules fires:
             diagnosis_truth_security2.py, _audio, _linklayer, _capture, _gatt, _host, _throughput and
             _attempts) is at its deciding frame (the
             event's own frame, or a frame the event names: its create, cancel, local command, folded frames), and
             the event is not benign, or the finding is only info;
  false      when the rule has a truth class and no such event is there, or the only such event is one the truth holds
             benign (capability probing, host cancel, procedure redone, clock jitter, ...) while the finding is a
             warning or above;
  unjudged   when the rule has no truth class yet (RULES_WITHOUT_TRUTH says why), or the firing is of a kind the
             truth does not extract (JUDGED_KIND: a gap for CQ-04).
Precision = true / (true + false). Output: one row per rule (captures fired on, occurrences, true, false, unjudged,
precision), then the false occurrences one per line (capture, frame, severity, what the truth holds there), so each
can be read with `tshark -V`. --markdown prints the table docs/diagnosis.md carries; --json one object per rule.
Exit 0; 2 on bad usage. Python 3 standard library only.
"""

import json
import os
import subprocess
import sys
import time

from diagnosis_truth import looks_like_capture

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

COLLISION = (0x23, 0x2A)
ALARMING_BQR = (0x02, 0x03, 0x04, 0x05, 0x07, 0x08)
LE_CREATE = (0x200D, 0x2043, 0x2085)


def cls(*names):
    return lambda e: e["class"] in names


def disc(condition):
    return lambda e: e["class"] == "disconnection" and condition(e)


# Rule -> the truth events that bear it out (the rule's evidence column in docs/diagnosis.md, read by tshark).
TRUTH = {
    "CE-01": lambda e: e["class"] == "connection-failed" and e.get("status") == 0x02,
    "CE-02": lambda e: e["class"] == "establishment-failed"
    or (e["class"] == "connection-failed" and e.get("status") == 0x3E) or e["class"] == "air-link-not-established",
    "CE-03": lambda e: e["class"] == "command-error" and e.get("opcode") in LE_CREATE,
    "CE-04": disc(lambda e: e.get("reason") in (0x13, 0x05, 0x15, 0x1A) and e.get("local_command_frame") is None
                  and (e.get("seconds_since_connect") is None or e["seconds_since_connect"] < 2)),
    "CE-05": lambda e: e["class"] == "command-error" and e.get("opcode") == 0x2016,
    "DC-01": disc(lambda e: e.get("reason") == 0x08),
    "DC-02": disc(lambda e: e.get("reason") in (0x13, 0x14, 0x15) and e.get("local_command_frame") is None),
    "DC-03": disc(lambda e: e.get("local_command_frame") is not None),
    "DC-04": disc(lambda e: e.get("reason") == 0x22),
    "DC-05": disc(lambda e: e.get("reason") == 0x28),
    "DC-06": lambda e: (e["class"] == "disconnection" and e.get("reason") in COLLISION)
    or (e["class"] == "ll-reject" and e.get("reason") in COLLISION)
    or (e["class"] in ("conn-update-rejected", "phy-update-failed", "command-error") and e.get("status") in COLLISION),
    "DC-07": lambda e: e["class"] == "disconnection" and e.get("reason") == 0x3D,
    "DC-09": disc(lambda e: e.get("local_command_frame") is None),
    "DC-10": cls("air-link-not-established", "air-link-left", "air-link-ended-unseen", "air-link-unfollowed",
                 "air-link-end-encrypted"),
    "SEC-01": lambda e: (e["class"] == "encryption-error" and e.get("status") in (0x05, 0x06))
    or (e["class"] == "ll-reject" and e.get("reason") in (0x05, 0x06)),
    "SEC-02": cls("ltk-negative-reply"),
    "SEC-03": cls("pairing-failed"),
    "SEC-04": cls("smp-timeout", "pairing-unfinished"),
    "SEC-05": lambda e: e["class"] == "att-error" and e.get("error") in (0x05, 0x0F, 0x08),
    "SEC-06": lambda e: (e["class"] == "att-error" and e.get("error") == 0x0C)
    or (e["class"] == "pairing-failed" and e.get("reason") == 0x06),
    "SEC-07": cls("authenticated-payload-timeout"),
    "GATT-03": cls("cccd-write-command", "notify-unsubscribed", "cccd-value-unsupported"),
    "GATT-04": lambda e: e["class"] == "att-error" and e.get("request_opcode") == 0x12,
    "GATT-06": lambda e: e["class"] == "att-error" and e.get("error") in (0x01, 0x12),
    "GATT-08": lambda e: e["class"] == "att-error",
    "HH-01": cls("command-unanswered"),
    "HH-02": cls("hardware-error"),
    "HH-03": lambda e: e["class"] == "hci-reset" and (e.get("open_links") or 0) > 0,
    "HH-04": cls("command-error"),
    "HH-05": lambda e: e["class"] == "quality-report" and e.get("report_id") in ALARMING_BQR,
    "LP-01": cls("conn-update-rejected"),
    "LP-04": lambda e: e["class"] == "phy-update-failed"
    or (e["class"] == "command-error" and e.get("opcode") in (0x2032, 0x2031)),
    "LP-05": lambda e: (e["class"] == "ll-reject" and e.get("reason") not in (0x05, 0x06))
    or (e["class"] in ("command-error", "conn-update-rejected", "phy-update-failed")
        and e.get("status") in (0x1A, 0x11, 0x1E, 0x20)) or e["class"] == "ll-unknown-rsp",
    "TP-02": cls("data-buffer-overflow"),
    "LA-01": cls("cis-failed", "big-failed", "big-sync-failed"),
    "LA-05": cls("big-sync-lost"),
    "BR-01": cls("page-timeout"),
    "BR-02": cls("bredr-connection-failed"),
    "BR-03": cls("bredr-auth-failed"),
    "BR-04": lambda e: e["class"] == "link-key-missing"
    or (e["class"] == "bredr-connection-failed" and e.get("status") in (0x05, 0x06)),
    "BR-05": cls("encryption-error"),
    "CQ-04": cls("timestamp-step-back"),
    # diagnosis_truth_extra.py's classes
    "CQ-01": cls("acl-before-connection"),
    "BR-06": lambda e: e["class"] == "bredr-mode-refused"
    or (e["class"] == "command-error" and e.get("opcode") in (0x080B, 0x0803, 0x0804, 0x0811)),
    "GATT-01": lambda e: e["class"] == "att-unanswered" and e.get("waited", 0) >= 30,
    "GATT-02": cls("att-request-while-pending", "att-response-unrequested"),
    "TP-01": cls("host-packets-stalled"),
    "DC-08": cls("host-packets-stalled"),
    "LP-02": lambda e: e["class"] == "supervision-timeout" and e.get("short") and not e.get("replaced_long"),
    "BR-09": lambda e: (e["class"] == "bredr-connection-failed" and e.get("link_type") in ("SCO", "eSCO"))
    or (e["class"] == "command-error" and e.get("opcode") in (0x0428, 0x0429, 0x043D, 0x043E)),
    # diagnosis_truth_security.py's classes (in diagnosis_truth.py's truth)
    "SEC-11": cls("smp-debug-public-key", "link-key-debug"),
    "SEC-17": cls("smp-key-size-out-of-range"),
    "SEC-18": cls("sc-encryption-before-dhkey-check"),
    # diagnosis_truth_security2.py's classes (cached as <name>.security.jsonl)
    "SEC-08": cls("key-size-short", "lmp-key-size"),
    "SEC-09": cls("key-size-down", "lmp-key-size-down"),
    "SEC-10": cls("legacy-pairing"),
    "SEC-12": cls("ediv-rand-nonzero"),
    "SEC-13": cls("mitm-not-achieved"),
    "SEC-14": cls("same-key-peers"),
    "SEC-15": cls("bonded-link-unencrypted"),
    "SEC-19": cls("public-key-invalid"),
    "SEC-20": cls("irk-zero"),
    # diagnosis_truth_lmp.py's (cached as <name>.lmp.jsonl): a controller's LMP trace
    "SEC-21": cls("lmp-en-rand-fixed"),
    "SEC-22": cls("host-answered-user-step"),
    # diagnosis_truth_audio.py's classes (cached as <name>.audio.jsonl)
    "LA-02": cls("ase-operation-refused"),
    "LA-03": cls("iso-sdu-lost"),
    "BR-07": cls("a2dp-media-gap"),
    "BR-10": cls("hfp-slc-failed"),
    "BR-11": cls("hfp-narrowband"),
    "BR-13": cls("l2cap-channel-refused"),
    "LL-02": cls("ll-channel-map-invalid"),
    # diagnosis_truth_linklayer.py's classes (cached as <name>.ll.jsonl)
    "LL-01": cls("ll-version-repeated"),
    "LL-03": cls("ll-parameter-out-of-range"),
    "LL-04": cls("ll-reserved-llid"),
    "LL-05": cls("ll-length-over-maximum"),
    "LL-06": cls("ll-control-size"),
    "LP-03": cls("conn-param-ping-pong"),
    # diagnosis_truth_capture.py's classes (cached as <name>.capture.jsonl)
    "CQ-02": cls("acl-records-cut"),
    "CQ-03": cls("pending-at-end"),
    "CQ-05": cls("air-joined-late", "air-encrypted-undecrypted", "advertising-crc-bad"),
    # diagnosis_truth_gatt.py's (cached as <name>.gatt.jsonl)
    "GATT-05": cls("subscribed-silent"),
    "GATT-07": cls("mtu-23-full", "mtu-23-pieces"),
    # diagnosis_truth_host.py's (cached as <name>.host.jsonl)
    "HH-06": cls("acl-on-closed-handle"),
    "HH-07": cls("controllers-several"),
    # diagnosis_truth_throughput.py's (cached as <name>.throughput.jsonl)
    "TP-03": lambda e: e["class"] == "value-stream" and e["values"] >= 100 and e["bytes"] >= 2000 and e["limits"]
    and not e["room"],
    "TP-04": lambda e: e["class"] == "value-stream" and e["values"] >= 100 and e["bytes"] >= 10000 and e["room"],
    "SC-01": cls("write-run-ended"),
    # diagnosis_truth_attempts.py's (cached as <name>.attempts.jsonl)
    "SC-02": cls("attempt-run"),
}
# The truths that add classes of their own, each made (one more tshark pass) only for a capture where one of the rules
# it judges fires: the rules, the script, the suffix of its cached output.
RULE_TRUTHS = [
    ({"SEC-08", "SEC-09", "SEC-10", "SEC-12", "SEC-13", "SEC-14", "SEC-15", "SEC-19", "SEC-20"}, "diagnosis_truth_security2.py",
     ".security.jsonl"),
    # .audio2.jsonl: with BR-13's class (the .audio.jsonl of earlier runs have none).
    ({"LA-02", "LA-03", "BR-07", "BR-10", "BR-11", "BR-13"}, "diagnosis_truth_audio.py", ".audio2.jsonl"),
    ({"LL-01", "LL-03", "LL-04", "LL-05", "LL-06", "LP-05", "LP-03"}, "diagnosis_truth_linklayer.py", ".ll.jsonl"),
    # .capture.jsonl and .gatt.jsonl hold older outputs (without ACL records cut in the log, without GATT-03's classes).
    # SEC-20 too: an IRK blescope read after decrypting an air link is a frame tshark cannot read (air-encrypted-unread).
    ({"CQ-02", "CQ-03", "CQ-05", "SEC-20"}, "diagnosis_truth_capture.py", ".capture2.jsonl"),
    # .gatt3.jsonl: with long values moved in pieces, the links whose handle a later link reused, and MTUs not known.
    ({"GATT-03", "GATT-05", "GATT-07"}, "diagnosis_truth_gatt.py", ".gatt3.jsonl"),
    ({"HH-06", "HH-07"}, "diagnosis_truth_host.py", ".host.jsonl"),
    ({"TP-03", "TP-04", "SC-01"}, "diagnosis_truth_throughput.py", ".throughput.jsonl"),
    ({"SC-02"}, "diagnosis_truth_attempts.py", ".attempts.jsonl"),
    ({"SEC-08", "SEC-09", "SEC-21"}, "diagnosis_truth_lmp.py", ".lmp.jsonl"),
    # .security2.jsonl: with SEC-22's class (the .security.jsonl of earlier runs have none).
    ({"SEC-22"}, "diagnosis_truth_security2.py", ".security2.jsonl"),
]

# Rules whose evidence has several kinds, of which the truth extracts some: a firing of another kind is unjudged.
JUDGED_KIND = {
    "CQ-04": lambda message: "step back" in message,  # gaps and btsnoop drops: not extracted
}

# Why the others are not judged yet: what the truth would need.
RULES_WITHOUT_TRUTH = {
    "TP-05": "LE credit-based channels (not extracted)",
    "LP-06": "CRC error ratio (not extracted)",
}

# Fields of a truth event that name other frames of the same fact (a folded event, the command behind a completion).
FRAME_FIELDS = ("frame", "create_frame", "cancel_frame", "local_command_frame", "command_frame", "last_frame",
                "readvertised_frame", "connect_frame", "end_frame")


def captures(args):
    for arg in args:
        if os.path.isdir(arg):
            for base, _dirs, files in os.walk(arg):
                for name in sorted(files):
                    path = os.path.join(base, name)
                    if looks_like_capture(path):
                        yield path
        elif looks_like_capture(arg):
            yield arg


def cached_truth(path, script, suffix, truth_dirs, cache):
    """The first line `script --base-name path` prints, read from `<name><suffix>` in a truth directory or the cache
    when one holds it, else made now (and kept in the cache when given)."""
    name = os.path.basename(path) + suffix
    for directory in truth_dirs + ([cache] if cache else []):
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.path.getsize(candidate) > 0:
            with open(candidate) as handle:
                return json.loads(handle.readline())
    out = subprocess.run([sys.executable, os.path.join(HERE, script), "--base-name", path], capture_output=True, text=True)
    line = out.stdout.splitlines()[0] if out.stdout else "{}"
    if cache:
        os.makedirs(cache, exist_ok=True)
        with open(os.path.join(cache, name), "w") as handle:
            handle.write(line + "\n")
    return json.loads(line)


def truth_for(path, truth_dirs, cache):
    return cached_truth(path, "diagnosis_truth.py", ".jsonl", truth_dirs, cache)


def extra_truth_for(path, truth_dirs, cache):
    """diagnosis_truth_extra.py's events (the classes diagnosis_truth.py does not extract), cached like the truth."""
    return cached_truth(path, "diagnosis_truth_extra.py", ".extra.jsonl", truth_dirs, cache).get("events", [])


def findings(blescope, path):
    out = subprocess.run([blescope, "diagnose", "--json", path], capture_output=True, text=True)
    line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
    return json.loads(line).get("findings", []) if line else None


def index(events):
    # A short supervision timeout a later setting of the same link replaced with a long one is not the one in force.
    by_frame = {e["frame"]: e for e in events if e["class"] == "supervision-timeout"}
    for e in by_frame.values():
        later = by_frame.get(e.get("replaced_frame"))
        e["replaced_long"] = later is not None and not later["short"] and not e.get("requested")
    at = {}
    for event in events:
        frames = {event.get(f) for f in FRAME_FIELDS} | set(event.get("frames") or [])
        for frame in frames:
            if isinstance(frame, int):
                at.setdefault(frame, []).append(event)
    return at


# Rules whose deciding frame is not where the truth puts the fact: the end of a wait (the disconnection or the late
# answer: GATT-01, SEC-04; the truth's event is at the request or the Pairing Request) or the connection event where an
# update took effect (LP-02, LP-03 on air: the truth's event is at the LL_CONNECTION_UPDATE_IND or the L2CAP request;
# LP-03 cites the setting before the ping-pong, its connect request on air). The finding cites those frames among its
# `frames`; they are matched too.
MATCH_CITED = {"GATT-01", "SEC-04", "LP-02", "LP-03"}
# What the truth cannot read, by rule: a firing with one of these at its frame (frame 0: anywhere in the capture) is
# unjudged rather than false.
OPAQUE = {"LP-02": {"le-meta-undecoded"}, "GATT-01": {"att-direction-unknown"}, "GATT-02": {"att-direction-unknown"},
          "LA-03": {"iso-undecoded"}, "LL-01": {"air-direction-unknown"}, "LL-05": {"air-direction-unknown"},
          "LL-06": {"air-direction-unknown"}, "CQ-03": {"air-encrypted-unread"},
          "CQ-05": {"air-encrypted-unread"}, "SEC-20": {"air-encrypted-unread"},
          "GATT-03": {"att-unreadable"}, "GATT-07": {"mtu-unknown"}, "GATT-05": {"att-unreadable"}, "HH-07": {"controller-index-unread"},
          "TP-03": {"link-settings-unknown"}, "TP-04": {"stream-room-unproven"}, "SC-02": {"attempts-not-air"}}


# A benign label that exempts only some rules: the others' claims about the same event stand. The termination this side
# asked for and the peer never acknowledged (0x22 after this side's Disconnect) is no LL response timeout worth a
# warning (DC-04), but it is still this side closing the link after the failure DC-03 cites (the blueprobe Xiaomi
# band: Disconnect 30 s after the unanswered Find Information Request, 54130 -> 54133, completion 0x22 at 54161).
BENIGN_FOR = {"termination unacknowledged": {"DC-04"}}


def benign_for(rule, event):
    label = event.get("benign")
    return label is not None and (label not in BENIGN_FOR or rule in BENIGN_FOR[label])


def judge(rule, severity, message, frame, at, cited=()):
    """'true', 'false' or None (unjudged), and what the truth holds at the frame."""
    test = TRUTH.get(rule)
    held = at.get(frame, [])
    if test is None or not JUDGED_KIND.get(rule, lambda _m: True)(message):
        return None, held
    frames = {frame} | (set(cited) if rule in MATCH_CITED else set())
    matching = [e for f in sorted(frames) for e in at.get(f, []) if test(e)]
    if not matching:
        opaque = OPAQUE.get(rule, set())
        if any(e["class"] in opaque for e in held + at.get(0, [])):
            return None, held
        return "false", held
    if severity != "info" and all(benign_for(rule, e) for e in matching):
        return "false", held
    return "true", held


def describe(events):
    parts = []
    for e in events:
        keys = [k for k in ("status", "reason", "error", "opcode", "report_id") if e.get(k) is not None]
        detail = " ".join("%s 0x%02X" % (k, e[k]) for k in keys)
        parts.append("%s%s%s" % (e["class"], " " + detail if detail else "",
                                 " (benign: %s)" % e["benign"] if "benign" in e else ""))
    return "; ".join(parts) or "nothing"


def measure(blescope, paths, truth_dirs, cache):
    rows, falses, unread, count = {}, [], [], 0
    for path in paths:
        found = findings(blescope, path)
        if found is None:
            unread.append(path)
            continue
        truth = truth_for(path, truth_dirs, cache)
        if "events" not in truth:
            unread.append(path)
            continue
        count += 1
        events = truth["events"] + extra_truth_for(path, truth_dirs, cache)
        for rules, script, suffix in RULE_TRUTHS:
            if any(f["rule"] in rules for f in found):
                events += cached_truth(path, script, suffix, truth_dirs, cache).get("events", [])
        at = index(events)
        for f in found:
            row = rows.setdefault(f["rule"], {"rule": f["rule"], "captures": set(), "occurrences": 0, "true": 0,
                                              "false": 0, "unjudged": 0})
            row["captures"].add(os.path.basename(path))
            for frame in f.get("occurrences") or [f["frame"]]:
                verdict, held = judge(f["rule"], f["severity"], f.get("message", ""), frame, at, f.get("frames", []))
                row["occurrences"] += 1
                row[verdict or "unjudged"] += 1
                if verdict == "false":
                    falses.append((f["rule"], os.path.basename(path), frame, f["severity"], describe(held)))
    for row in rows.values():
        judged = row["true"] + row["false"]
        row["precision"] = round(100.0 * row["true"] / judged, 1) if judged else None
        row["captures"] = len(row["captures"])
        row["why_unjudged"] = RULES_WITHOUT_TRUTH.get(row["rule"]) if row["rule"] not in TRUTH else None
    order = sorted(rows.values(), key=lambda r: r["rule"])
    return order, sorted(falses), unread, count


def markdown(rows, count, commit, measured):
    lines = ["Measured on %d captures (the public corpus of `corpus/fetch.sh`, the Samples and `../shared/captures`; a "
             "capture neither blescope nor tshark reads is left out) with a release build of main at `%s`, measured %s "
             "with tshark 4.0.17. Precision = true / (true + false); **bold** under 90 %%." % (count, commit, measured),
             "",
             "| rule | captures | occurrences | true | false | unjudged | precision |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        precision = "%.1f %%" % r["precision"] if r["precision"] is not None else "—"
        if r["precision"] is not None and r["precision"] < 90:
            precision = "**%s**" % precision
        lines.append("| %s | %d | %d | %d | %d | %d | %s |" % (r["rule"], r["captures"], r["occurrences"], r["true"],
                                                              r["false"], r["unjudged"], precision))
    return "\n".join(lines)


def main(argv):
    opts = {"--truth": [], "--commit": ["?"], "--truth-cache": [None],
            "--measured": [time.strftime("%Y-%m-%d", time.gmtime())]}
    flags, rest, i = set(), [], 0
    while i < len(argv):
        a = argv[i]
        if a in opts:
            if i + 1 >= len(argv):
                return 2
            opts[a].append(argv[i + 1])
            i += 2
            continue
        if a in ("--json", "--markdown"):
            flags.add(a)
        else:
            rest.append(a)
        i += 1
    if len(rest) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    truth_dirs = opts["--truth"] or [d for d in (os.path.join(ROOT, "Tests/Truth/diagnosis"),
                                                  os.environ.get("BLESCOPE_CORPUS_TRUTH")) if d]
    rows, falses, unread, count = measure(rest[0], list(captures(rest[1:])), truth_dirs, opts["--truth-cache"][-1])
    if "--json" in flags:
        for r in rows:
            print(json.dumps(r, sort_keys=True))
        return 0
    if "--markdown" in flags:
        print(markdown(rows, count, opts["--commit"][-1], opts["--measured"][-1]))
        return 0
    print("%-8s %8s %11s %6s %6s %9s %9s" % ("rule", "captures", "occurrences", "true", "false", "unjudged",
                                              "precision"))
    for r in rows:
        precision = "%.1f%%" % r["precision"] if r["precision"] is not None else "-"
        print("%-8s %8d %11d %6d %6d %9d %9s" % (r["rule"], r["captures"], r["occurrences"], r["true"], r["false"],
                                                  r["unjudged"], precision))
    print("%d captures judged; %d unreadable by blescope or tshark" % (count, len(unread)))
    for rule, capture, frame, severity, held in falses:
        print("FALSE %s %s #%d %s: truth holds %s" % (rule, capture, frame, severity, held))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
