#!/usr/bin/env bash
# First command of the README: install blescope (scripts/install.sh: what is missing, the release build, the binary,
# its manual and shell completions under PREFIX, default /usr/local), then run it on the bundled samples: the summary
# of a capture, a firmware update followed (and one described by a codec spec), a chunked transfer reassembled, and the
# decoded conversation.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-${PREFIX:-/usr/local}}
bash scripts/install.sh "$prefix"
bin="$prefix/bin/blescope"
# Issue 47's bound on the installed (stripped) binary: 25 MiB. CI does not build a release, the demo does, so the demo
# is where growing past it fails (what each megabyte is: docs/performance.md#size).
limit=$((25 * 1024 * 1024)) size=$(wc -c <"$bin")
if [ "$size" -gt "$limit" ]; then
  echo "blescope: the stripped binary is $size bytes, over the 25 MiB bound ($limit bytes; docs/performance.md#size)" >&2
  exit 1
fi
run() { echo; echo "\$ blescope $*"; "$bin" "$@"; }
run info Samples/nordic-dfu.btsnoop
run ota Samples/nordic-dfu.btsnoop
run ota --codec Samples/codecs Samples/headset-ota.pklg
run transfers Samples/eom-transfer.pcap
run timeline --codec Samples/codecs --layer att --from '#74' --to '#84' Samples/bracelet.btsnoop
