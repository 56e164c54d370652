#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and ThreadSanitizer, each in its own build folder
# (.build-asan, .build-tsan; several minutes each on 2 cores). Usage: scripts/sanitizers.sh [address|thread]...
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=("$@"); [ ${#kinds[@]} -gt 0 ] || kinds=(address thread)
for k in "${kinds[@]}"; do
  short=${k:0:1}san; [ "$k" = address ] && short=asan; [ "$k" = thread ] && short=tsan
  echo "== swift test --sanitize=$k" >&2
  swift test --sanitize="$k" --scratch-path ".build-$short" 2>&1 | tail -5
done
