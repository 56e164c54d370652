#!/usr/bin/env python3
"""Lists the functions (func and init) over 80 lines in BLEAnalysis and BLEReports, and the hand-written source files
over 500 lines anywhere in Sources (the generated assigned-number tables aside); exits 1 when there is one (issue 29).

A simple brace counter, not a parser: a function runs from its `func`/`init` line to the brace that closes it, string
literals and `//` comments left out of the count. Usage: scripts/funclen.py [LIMIT] (from anywhere; default 80).
"""
import glob
import os
import re
import sys

LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 80
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HEAD = re.compile(
    r"\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|static|mutating|override|final"
    r"|nonisolated|consuming|borrowing|@inline\(__always\))\s+)*(?:func|init)\b")


def long_functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if HEAD.match(lines[i]) and "{" in "".join(lines[i:i + 8]):
            depth, started, j = 0, False, i
            while j < len(lines):
                line = re.sub(r'"(?:\\.|[^"\\])*"', '""', lines[j]).split("//")[0]
                depth += line.count("{") - line.count("}")
                started = started or "{" in line
                if started and depth <= 0:
                    break
                j += 1
            if j - i + 1 > LIMIT:
                yield j - i + 1, i + 1, lines[i].strip()[:80]
            i = j + 1 if started else i + 1
        else:
            i += 1


found = []
for module in ("BLEAnalysis", "BLEReports"):
    for path in glob.glob(os.path.join(ROOT, "Sources", module, "**", "*.swift"), recursive=True):
        rel = os.path.relpath(path, ROOT)
        found += [(n, rel, line, head) for n, line, head in long_functions(path)]
for n, rel, line, head in sorted(found, reverse=True):
    print(n, f"{rel}:{line}", head)
FILE_LIMIT = 500
large = []
for path in glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True):
    if os.path.basename(path).startswith("Generated"):
        continue
    n = open(path, encoding="utf-8").read().count("\n")
    if n > FILE_LIMIT:
        large.append((n, os.path.relpath(path, ROOT)))
for n, rel in sorted(large, reverse=True):
    print(n, rel, f"(file over {FILE_LIMIT} lines)")
sys.exit(1 if found or large else 0)
