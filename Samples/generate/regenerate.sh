#!/usr/bin/env bash
# Regenerates every sample capture in Samples/ (see Samples/README.md).
#   1. generate.py writes Samples/<name>.btsnoop and Samples/<name>.truth.json
#      (needs: pip install bumble==0.0.236)
#   2. if a Swift toolchain is present, `blescope convert` writes the .pcap and
#      .pklg forms of every sample.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

python3 "$here/generate.py" --out "$root/Samples"

samples=(eom-transfer bracelet nordic-dfu headset-ota legacy-dfu mcumgr-upload silabs-ota vendor-ota buttonless-dfu ti-oad dialog-suota esp-ble-ota telink-ota mcumgr-confirm cypress-bootloader eatt coc-stream
         diag-connect-timeout diag-bond-lost diag-pairing-failed diag-insufficient-encryption diag-cccd-never-written
         diag-att-timeout diag-stale-handle diag-param-rejected diag-mtu-23 diag-supervision-timeout
         diag-unacked-terminate diag-unanswered-before-timeout diag-ssp-missing-key a2dp-stream hfp-call hfp-esco-fails
         le-audio-unicast le-audio-broadcast le-audio-broadcast-receiver
         diff-fw1 diff-fw2 diff-central-a diff-central-b
         sec-legacy-short-key sec-sc-debug-key sec-bredr-key-downgrade)
if command -v swift >/dev/null 2>&1; then
    swift build -c release --product blescope
    for s in "${samples[@]}"; do
        for ext in pcap pklg; do
            swift run -c release --skip-build blescope convert "Samples/$s.btsnoop" "Samples/$s.$ext"
        done
    done
else
    echo "swift not found: skipped the .pcap/.pklg conversions" >&2
fi
