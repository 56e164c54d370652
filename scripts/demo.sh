#!/usr/bin/env bash
# First command of the README: install what is missing, build, and run blescope on the bundled samples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "building blescope (release; the first build takes a few minutes)…" >&2
bin=$(bash scripts/build-release.sh)
run() { echo; echo "\$ blescope $*"; "$bin" "$@"; }
run info Samples/nordic-dfu.btsnoop
run ota Samples/nordic-dfu.btsnoop
run ota --codec Samples/codecs Samples/headset-ota.pklg
run transfers Samples/eom-transfer.pcap
run timeline --codec Samples/codecs --layer att --from '#74' --to '#84' Samples/bracelet.btsnoop
