#!/usr/bin/env python3
"""diagnosis_truth_coverage.py: holds `blescope diagnose --json` to the tshark truth of diagnosis_truth.py.

Usage: scripts/diagnosis_truth_coverage.py BLESCOPE TRUTH_DIR CAPTURE_DIR... [--json]

For every `<name>.jsonl` in TRUTH_DIR whose capture `<name>` is in one of the CAPTURE_DIRs, runs `BLESCOPE diagnose
--json CAPTURE` and measures, as DiagnosisTruthTests does:
  named    the truth's critical and error events whose frame some finding cites (`frames`: every occurrence's
           deciding frame and every supporting frame);
  evidence the critical and error findings (but the capture-quality CQ-*) that cite no frame the truth holds an
           event at (timestamp-step-back aside: it is about the clock);
  benign   the truth's events of a benign class (their `benign` field: capability probing, procedure redone, clock
           jitter, no open link, host cancel, ...) that a critical or error finding decides (its `frame` or one of its
           `occurrences` is the event's frame): each is a false alarm.
Prints one line per capture (named/serious, false alarms) and every miss: capture, frame, class, severity, and
what blescope says at that frame (every finding citing it, with rule and severity), then the totals. Exit 0 when
every serious event is named and no benign event is an error; 1 otherwise.
"""

import json
import os
import subprocess
import sys

SERIOUS = ("critical", "error")


def findings(blescope, capture):
    out = subprocess.run([blescope, "diagnose", "--json", capture], capture_output=True, text=True)
    line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
    if line is None:
        raise RuntimeError("%s: no JSON from blescope (exit %d): %s" % (capture, out.returncode, out.stderr[:200]))
    return json.loads(line).get("findings", [])


def said_at(found, frame):
    """What blescope says at a frame: every finding citing it."""
    return ["%s %s (deciding %d)" % (f["rule"], f["severity"], f["frame"]) for f in found if frame in f["frames"]]


def measure(blescope, truth, capture):
    found = findings(blescope, capture)
    cited = {frame for f in found for frame in f["frames"]}
    decided = {}
    for f in found:
        for frame in set(f.get("occurrences", [])) | {f["frame"]}:
            decided.setdefault(frame, []).append(f)
    serious = [e for e in truth["events"] if e["severity"] in SERIOUS]
    missed = [e for e in serious if e["frame"] not in cited]
    alarms = [(e, f) for e in truth["events"] if "benign" in e for f in decided.get(e["frame"], [])
              if f["severity"] in SERIOUS]
    events_at = {e["frame"] for e in truth["events"] if e["class"] != "timestamp-step-back"}
    unsupported = [f for f in found if f["severity"] in SERIOUS and not f["rule"].startswith("CQ-")
                   and not events_at & set(f["frames"])]
    by_class = {}
    for e in truth["events"]:
        counts = by_class.setdefault(e["class"], [0, 0])
        counts[0] += 1
        counts[1] += e["frame"] in cited
    return {"capture": os.path.basename(capture), "serious": len(serious), "named": len(serious) - len(missed),
            "benign": sum(1 for e in truth["events"] if "benign" in e), "false_alarms": len(alarms),
            "missed": [{"frame": e["frame"], "class": e["class"], "severity": e["severity"],
                        "blescope": said_at(found, e["frame"])} for e in missed],
            "alarms": [{"frame": e["frame"], "class": e["class"], "benign": e["benign"],
                        "finding": "%s %s" % (f["rule"], f["severity"])} for e, f in alarms],
            "unsupported": ["%s %s at %d: %s" % (f["rule"], f["severity"], f["frame"], f["message"][:120])
                            for f in unsupported],
            "classes": by_class}


def main(argv):
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    blescope, truth_dir, capture_dirs = args[0], args[1], args[2:]
    results = []
    for name in sorted(os.listdir(truth_dir)):
        if not name.endswith(".jsonl"):
            continue
        capture = next((os.path.join(d, name[:-6]) for d in capture_dirs if os.path.isfile(os.path.join(d, name[:-6]))),
                       None)
        if capture is None:
            continue
        with open(os.path.join(truth_dir, name)) as handle:
            truth = json.loads(handle.readline())
        if "events" not in truth:
            continue
        results.append(measure(blescope, truth, capture))
    if as_json:
        for r in results:
            print(json.dumps(r))
    else:
        for r in results:
            share = 100.0 * r["named"] / r["serious"] if r["serious"] else 100.0
            print("%-80s %4d/%-4d %5.1f%%  false alarms %d/%d" % (r["capture"], r["named"], r["serious"], share,
                                                                  r["false_alarms"], r["benign"]))
            for m in r["missed"]:
                print("    MISSED #%d %s (%s): blescope %s" % (m["frame"], m["class"], m["severity"],
                                                              "; ".join(m["blescope"]) or "cites nothing there"))
            for a in r["alarms"]:
                print("    FALSE ALARM #%d %s (%s): %s" % (a["frame"], a["class"], a["benign"], a["finding"]))
            for u in r["unsupported"]:
                print("    NO TRUTH EVENT CITED: %s" % u)
        serious = sum(r["serious"] for r in results)
        named = sum(r["named"] for r in results)
        print("total: %d captures, %d/%d critical+error events named (%.1f%%), %d false alarms on %d benign events, "
              "%d critical/error findings citing no truth event"
              % (len(results), named, serious, 100.0 * named / max(serious, 1),
                 sum(r["false_alarms"] for r in results), sum(r["benign"] for r in results),
                 sum(len(r["unsupported"]) for r in results)))
    ok = all(not r["missed"] and not r["alarms"] and not r["unsupported"] for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
