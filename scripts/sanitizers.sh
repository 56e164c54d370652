#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and ThreadSanitizer, each in its own scratch path
# (both git-ignored). Several minutes each on 2 cores.
#
#   scripts/sanitizers.sh            # address, then thread
#   scripts/sanitizers.sh address    # one of them
#   scripts/sanitizers.sh thread -- --filter FuzzTests   # extra `swift test` arguments after --
#
# The fuzz targets run their default 2 s each; set BLESCOPE_FUZZ_SECONDS for longer.
set -euo pipefail
cd "$(dirname "$0")/.."
which=("address" "thread")
if [ $# -gt 0 ] && [ "$1" != "--" ]; then which=("$1"); shift; fi
[ "${1:-}" = "--" ] && shift
status=0
for s in "${which[@]}"; do
    case "$s" in
        address) scratch=.build-asan; export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} ;;
        thread) scratch=.build-tsan; export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} ;;
        *) echo "unknown sanitizer $s (address or thread)" >&2; exit 2 ;;
    esac
    echo "== swift test --sanitize=$s --scratch-path $scratch $*"
    if ! swift test --sanitize="$s" --scratch-path "$scratch" "$@"; then
        echo "== $s: FAILED" >&2
        status=1
    else
        echo "== $s: passed"
    fi
done
exit $status
