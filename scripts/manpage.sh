#!/usr/bin/env bash
# Writes blescope's manual page (blescope.1: the command, then every subcommand with its options) into DIR, generated
# from the command definitions: swift-argument-parser's `generate-manual` tool (what its GenerateManual plugin runs)
# reads them from `BINARY --experimental-dump-help`. The tool is built from the argument-parser package already
# resolved for blescope (release, as scripts/build-release.sh builds), so it needs no network.
# Usage: scripts/manpage.sh BINARY DIR
set -euo pipefail
bin=${1:?usage: scripts/manpage.sh BINARY DIR}
dir=${2:?usage: scripts/manpage.sh BINARY DIR}
cd "$(dirname "$0")/.."
flags=(-c release)
if [ "$(uname -s)" = Linux ]; then flags+=(--static-swift-stdlib); fi
swift build "${flags[@]}" --product generate-manual 2>&1 | grep -v "the use of \`mktemp' is dangerous" | tail -1 >&2
mkdir -p "$dir"
"$(swift build "${flags[@]}" --show-bin-path)/generate-manual" "$bin" --output-directory "$dir" \
  ${SOURCE_DATE:+--date "$SOURCE_DATE"}
ls "$dir"/*.1 >/dev/null
