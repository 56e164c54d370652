#!/usr/bin/env bash
# swift-format over the package with the repository's .swift-format (4-space indentation, 140 columns).
# Usage: scripts/format.sh           format Sources, Tests and Package.swift in place
#        scripts/format.sh --check   lint only: print what does not match and exit 1 if anything does (for CI)
# swift-format ships with the Swift 6 toolchains (`swift format`); a standalone `swift-format` is used otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
if swift format --version >/dev/null 2>&1; then fmt=(swift format)
elif command -v swift-format >/dev/null 2>&1; then fmt=(swift-format)
else echo "format: no swift-format (it ships with Swift 6 toolchains as \`swift format\`)" >&2; exit 2; fi
paths=(Sources Tests Plugins Package.swift)
case "${1:-}" in
  --check)
    out=$(mktemp); trap 'rm -f "$out"' EXIT
    "${fmt[@]}" lint --recursive --parallel "${paths[@]}" 2>"$out" || true
    if [ -s "$out" ]; then
      cat "$out"
      echo "format: $(wc -l <"$out") finding(s) in $(cut -d: -f1 "$out" | sort -u | wc -l) file(s); scripts/format.sh fixes most" >&2
      exit 1
    fi
    echo "format: clean"
    ;;
  "")
    "${fmt[@]}" format --in-place --recursive --parallel "${paths[@]}"
    ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
