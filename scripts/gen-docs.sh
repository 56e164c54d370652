#!/usr/bin/env bash
# Regenerates the parts of the docs that the binary can say itself, so they cannot drift from it:
#
#   <!-- gen: help CMD... -->        the output of `blescope CMD... --help` (docs/commands.md: every command's options)
#   <!-- gen: run COMMAND LINE -->   a transcript: `$ COMMAND LINE` and what it printed (stdout and stderr), run from
#                                    the repository root with `blescope` standing for the binary. A trailing
#                                    `| head -N` keeps the first N lines and adds `…` when more were cut; the shown
#                                    command line leaves the `| head -N` out.
#
# Each marker is followed by a fenced block and `<!-- /gen -->`; the script rewrites what is between them, in
# README.md and docs/*.md. Only Samples/ (in the repository) may be used, so that a fresh clone gives the same text.
#
# Usage: scripts/gen-docs.sh [--check] [--blescope BINARY]
#   --check      change nothing; print a diff and exit 1 when a generated part is out of date (CI, DocsTests)
#   --blescope   the binary to run (default: $BLESCOPE, else this tree's release build, built first)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0 bin=${BLESCOPE:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --blescope) bin=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gen-docs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$bin" ] || bin=$(bash scripts/build-release.sh)
[ -x "$bin" ] || { echo "gen-docs.sh: no blescope binary at $bin" >&2; exit 2; }

# Fixed terminal width and locale: help text wraps at COLUMNS, and nothing may depend on who runs the script.
export COLUMNS=100 LC_ALL=C.UTF-8 NO_COLOR=1 TZ=UTC
BLESCOPE_BIN=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") GEN_DOCS_CHECK=$check python3 - README.md docs/*.md <<'PY'
import difflib, os, re, subprocess, sys

binary = os.environ["BLESCOPE_BIN"]
check = os.environ["GEN_DOCS_CHECK"] == "1"
marker = re.compile(r"<!-- gen: (help|run) (.+?) -->\n(.*?)<!-- /gen -->\n", re.S)


def run(command_line):
    """Output of a shell command line in which `blescope` is the binary; `| head -N` cut and marked."""
    shown, limit = command_line, None
    m = re.search(r"\s*\|\s*head -(\d+)\s*$", command_line)
    if m:
        shown, limit = command_line[: m.start()], int(m.group(1))
    script = 'blescope() { "$BLESCOPE_BIN" "$@"; }\n' + shown + " 2>&1"
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=os.environ)
    lines = p.stdout.rstrip("\n").split("\n")
    if limit is not None and len(lines) > limit:
        lines = lines[:limit] + ["…"]
    return shown, [line.rstrip() for line in lines]


def block(kind, argument):
    if kind == "help":
        p = subprocess.run([binary] + argument.split() + ["--help"], capture_output=True, text=True, env=os.environ)
        if p.returncode != 0:
            sys.exit(f"gen-docs.sh: blescope {argument} --help failed: {p.stderr}")
        body = [line.rstrip() for line in p.stdout.rstrip("\n").split("\n")]
    else:
        shown, body = run(argument)
        body = ["$ " + shown] + body
    return "```text\n" + "\n".join(body) + "\n```\n"


stale = 0
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    new = marker.sub(lambda m: f"<!-- gen: {m.group(1)} {m.group(2)} -->\n{block(m.group(1), m.group(2))}<!-- /gen -->\n", text)
    if new == text:
        continue
    if check:
        stale += 1
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), path, path + " (generated)"))
    else:
        open(path, "w", encoding="utf-8").write(new)
        print(f"gen-docs.sh: rewrote {path}", file=sys.stderr)
if stale:
    print(f"gen-docs.sh: {stale} file(s) out of date: run scripts/gen-docs.sh", file=sys.stderr)
    sys.exit(1)
PY
# The report's screenshot (docs/report-screenshot.png): refreshed with the docs, never checked (a PNG from another
# Chromium differs by a pixel); skipped without Chromium or the shared captures.
if [ "$check" = 0 ]; then
  scripts/render-report.sh --docs "$bin" >/dev/null 2>&1 && echo "gen-docs.sh: rendered docs/report-screenshot.png" >&2 || true
fi
