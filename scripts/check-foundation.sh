#!/usr/bin/env bash
# The binary links no full Foundation: `import Foundation` (or FoundationNetworking, FoundationXML) in any source of a
# module blescope is built from pulls in FoundationInternationalization and ICU's data, 34 MB of the 67 MB binary it
# was (docs/performance.md#size-of-the-installed-binary). Use `FoundationEssentials` (FileManager, Data, Date,
# ProcessInfo, JSONEncoder) or Glibc/Darwin. BLETestSupport and BLEAnalysisTestSupport (linked into the tests only) and
# the build plugin (run at build time) may import Foundation.
# Exit 1 and the offending lines when a source imports it.
set -euo pipefail
cd "$(dirname "$0")/.."
hits=$(grep -rnE '^\s*(@_exported\s+|@preconcurrency\s+|(public|package|internal|private|fileprivate)\s+)*import\s+(struct\s+|class\s+|enum\s+|func\s+|protocol\s+|typealias\s+|let\s+|var\s+)?Foundation(Networking|XML)?(\.|\s|$)' \
  --include='*.swift' Sources | grep -vE '^Sources/(BLETestSupport|BLEAnalysisTestSupport)/' || true)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "check-foundation: import FoundationEssentials (or nothing) instead of Foundation: full Foundation brings ICU (34 MB) into the binary" >&2
  exit 1
fi
echo "check-foundation: no source of the binary imports Foundation"
