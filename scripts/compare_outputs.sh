#!/usr/bin/env bash
# Byte-identity check for refactoring: runs every command people and programs read over every Sample and every
# capture in ../shared/captures (plus $BLESCOPE_CORPUS when set) with two builds, and diffs stdout and exit codes.
# Usage: scripts/compare_outputs.sh OLD_BINARY [NEW_BINARY]   (NEW defaults to this tree's release build)
# Prints one line per difference and "identical: N runs" at the end; exits 1 when anything differs, 2 when a capture
# pattern (Samples, ../shared/captures, $BLESCOPE_CORPUS) matches nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/compare_outputs.sh OLD_BINARY [NEW_BINARY]}
new=${2:-}
if [ -z "$new" ]; then
  new=$(bash scripts/build-release.sh)
fi
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
patterns=("Samples/*.btsnoop" "Samples/*.pcap" "Samples/*.pklg" "../shared/captures/*")
if [ -n "${BLESCOPE_CORPUS:-}" ]; then patterns+=("$BLESCOPE_CORPUS/*"); fi
# A pattern that matches nothing would compare nothing and still say "identical": it is an error.
files=()
for p in "${patterns[@]}"; do
  mapfile -t matched < <(compgen -G "$p")
  if [ ${#matched[@]} -eq 0 ]; then echo "compare_outputs.sh: no capture matches $p" >&2; exit 2; fi
  files+=("${matched[@]}")
done
codecs=(--codec Samples/codecs)
# Each entry: a name and the arguments before the capture. Outputs that carry wall-clock figures (bench) are left out.
runs=(
  "info|info"
  "info-json|info --json"
  "timeline|timeline ${codecs[*]}"
  "timeline-jsonl|timeline ${codecs[*]} --format jsonl"
  "timeline-csv|timeline ${codecs[*]} --format csv"
  "gatt|gatt"
  "gatt-json|gatt --json"
  "transfers|transfers ${codecs[*]}"
  "transfers-json|transfers ${codecs[*]} --json"
  "ota|ota ${codecs[*]}"
  "ota-json|ota ${codecs[*]} --json"
  "throughput|throughput"
  "throughput-json|throughput --json"
  "report-md|report --format md"
  "report-html|report --format html"
  "report-json|report --format json"
  "adverts|adverts"
)
# Replaces the page's gzip+base64 timeline (class "tl-data") in file $1 by the JSON it inflates to.
inflate_page() {
  python3 - "$1" <<'PY'
import base64, gzip, re, sys
path = sys.argv[1]
text = open(path, "rb").read()
inflate = lambda m: m.group(1) + gzip.decompress(base64.b64decode(m.group(2))) + m.group(3)
text = re.sub(rb'(class="tl-data"[^>]*>)([^<]*)(<)', inflate, text)
open(path, "wb").write(text)
PY
}
n=0; bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  case "$f" in *.md|*.txt|*.json|*.yaml) continue ;; esac
  for r in "${runs[@]}"; do
    name=${r%%|*}; args=${r#*|}
    # shellcheck disable=SC2086
    "$old" $args "$f" >"$out/old" 2>"$out/old.err"; oc=$?
    # shellcheck disable=SC2086
    "$new" $args "$f" >"$out/new" 2>"$out/new.err"; nc=$?
    n=$((n + 1))
    # The page's timeline is compared inflated: the compressor (libdeflate since 2026-11-30, zlib before) may choose
    # other deflate blocks for the same rows; what the page's script reads must be the same.
    if [ "$name" = report-html ]; then inflate_page "$out/old"; inflate_page "$out/new"; fi
    # A usage error on a Sample means this script asks for an option that does not exist: it would compare nothing.
    case "$f" in Samples/*) if [ $oc -eq 2 ]; then echo "USAGE? $name $f: $(head -1 "$out/old.err")"; bad=$((bad + 1)); continue; fi ;; esac
    if [ $oc -ne $nc ] || ! cmp -s "$out/old" "$out/new"; then
      bad=$((bad + 1))
      echo "DIFF $name $f (exit $oc -> $nc)"
      diff "$out/old" "$out/new" | head -${COMPARE_CONTEXT:-6}
    fi
  done
done
echo "identical: $((n - bad)) of $n runs"
[ $bad -eq 0 ]
