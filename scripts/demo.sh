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
run() { echo; echo "\$ blescope $*"; "$bin" "$@"; }
run info Samples/nordic-dfu.btsnoop
run ota Samples/nordic-dfu.btsnoop
run ota --codec Samples/codecs Samples/headset-ota.pklg
run transfers Samples/eom-transfer.pcap
run timeline --codec Samples/codecs --layer att --from '#74' --to '#84' Samples/bracelet.btsnoop
