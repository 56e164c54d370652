#!/usr/bin/env bash
# First command of the README: install what is missing, build, and run blescope on a bundled sample.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product blescope 2>&1 | tail -1
bin=$(swift build -c release --show-bin-path)/blescope
sample=Samples/nordic-dfu.btsnoop
[ -f "$sample" ] || sample=$(ls Samples/*.btsnoop | head -1)
echo "\$ blescope info $sample"
"$bin" info "$sample"
