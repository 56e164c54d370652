#!/usr/bin/env bash
# libFuzzer + AddressSanitizer harness for blescope's readers and pipeline.
#
#   scripts/fuzz.sh build                         # instrumented modules + .build-fuzz/blescope-fuzz
#   scripts/fuzz.sh run TARGET [SECONDS] [-- libFuzzer flags]
#                                                 # TARGET: btsnoop pcap pcapng pklg btsnooz gzip pipeline report
#   scripts/fuzz.sh all [SECONDS]                 # every target in turn (default 60 s each)
#   scripts/fuzz.sh campaign [TARGET...]          # the issue's bar: 10 M executions or 1 h per target, logs in
#                                                 # .build-fuzz/logs (FUZZ_TIMEOUT=60: a paused machine is no hang)
#   scripts/fuzz.sh worst-case N FILE             # the worst-case capture for memory (N records)
#   FUZZ_SCRATCH=DIR scripts/fuzz.sh …            # build and run in DIR instead of .build-fuzz
#
# How it is built: `swift build -c release --target BLEReports -Xswiftc -sanitize=fuzzer,address`
# compiles the package's modules with coverage and ASan instrumentation but links nothing (an
# executable linked with -sanitize=fuzzer gets libFuzzer's main); then swiftc links a small entry
# point (LLVMFuzzerTestOneInput) plus Tests/FuzzTests/FuzzTargets.swift against those objects.
# Each target gets a corpus directory under .build-fuzz/corpus/TARGET seeded with the Samples and
# ../shared/captures (when present); crashes, timeouts (-timeout=2) and OOMs (-rss_limit_mb=2048)
# land in .build-fuzz/artifacts/TARGET. Keep the ones that found a bug in Tests/FuzzTests/Corpus/TARGET.
# The test suite runs the same targets with a seeded mutation fuzzer for a few seconds (FuzzTests).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCRATCH=${FUZZ_SCRATCH:-$ROOT/.build-fuzz}   # another scratch path builds while a campaign runs
BIN=$SCRATCH/blescope-fuzz
TARGETS="btsnoop pcap pcapng pklg btsnooz gzip pipeline report"

build() {
    swift build -c release --scratch-path "$SCRATCH" --target BLEReports -Xswiftc -sanitize=fuzzer,address
    # The diagnosis rules: BLEReports does not import them, the link binds them (Sources/BLEDiagnosis/DiagnosisRuleTable.swift).
    swift build -c release --scratch-path "$SCRATCH" --target BLEDiagnosis -Xswiftc -sanitize=fuzzer,address
    local rel=$SCRATCH/release
    mkdir -p "$SCRATCH/entry"
    cat > "$SCRATCH/entry/Entry.swift" <<'EOF'
#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) let fuzzTarget: FuzzTarget = {
    let name = getenv("BLESCOPE_FUZZ_TARGET").map { String(cString: $0) } ?? "pipeline"
    guard let t = FuzzTarget(rawValue: name) else { fatalError("BLESCOPE_FUZZ_TARGET=\(name): unknown target") }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func blescopeFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = FuzzTargets.run(fuzzTarget, bytes)
    return 0
}
EOF
    local objects
    # Every module BLEReports depends on, the rules, and the C libraries' module maps and libraries (Package.swift's
    # system-library targets): one left out fails the link (BLESecurity and libcrypto did, 2026-11-29).
    objects=$(find "$rel"/{BLECore,BLECapture,BLESecurity,BLEYAML,BLEProtocols,BLECodecs,BLEAnalysis,BLEDiagnosis,BLEReports}.build -name '*.o' | sort)
    local maps=() lib
    for lib in CPcap CZlib CDeflate COpenSSL CYAML; do maps+=(-Xcc -fmodule-map-file="$ROOT/Sources/$lib/module.modulemap"); done
    # shellcheck disable=SC2086
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name BlescopeFuzz -I "$rel/Modules" "${maps[@]}" \
        "$SCRATCH/entry/Entry.swift" "$ROOT/Tests/FuzzTests/FuzzTargets.swift" $objects -lpcap -lz -ldeflate -lcrypto -lyaml \
        -o "$BIN" 2> >(grep -v "Cannot export local symbol" >&2)
    echo "built $BIN"
}

seed_corpus() {
    local target=$1 dir=$SCRATCH/corpus/$1
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir" 2>/dev/null)" ] && return
    # Seeds are the target's view of whole captures (FuzzTarget.seed(fromCapture:)), written by the test suite.
    BLESCOPE_FUZZ_SEEDS_OUT=$SCRATCH/corpus swift test --filter FuzzTests.SeedExport >/dev/null 2>&1 || true
    if [ -z "$(ls -A "$dir" 2>/dev/null)" ]; then
        for f in Samples/*.btsnoop Samples/*.pcap Samples/*.pklg ../shared/captures/*; do
            [ -f "$f" ] && case "$f" in *.md) ;; *) head -c 49152 "$f" > "$dir/$(basename "$f")" ;; esac
        done
    fi
    [ -d "Tests/FuzzTests/Corpus/$target" ] && cp Tests/FuzzTests/Corpus/"$target"/* "$dir"/ 2>/dev/null || true
}

run() {
    local target=$1 seconds=${2:-60}
    shift $(( $# >= 2 ? 2 : 1 ))
    [ "${1:-}" = "--" ] && shift
    [ -x "$BIN" ] || build
    seed_corpus "$target"
    mkdir -p "$SCRATCH/artifacts/$target"
    BLESCOPE_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 "$BIN" \
        -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-2}" -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$SCRATCH/artifacts/$target/" "$@" "$SCRATCH/corpus/$target"
}

case "${1:-}" in
    build) build ;;
    run) shift; run "$@" ;;
    all) for t in $TARGETS; do run "$t" "${2:-60}"; done ;;
    campaign)
        shift
        mkdir -p "$SCRATCH/logs"
        export FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-60}
        for t in ${*:-$TARGETS}; do
            run "$t" 3600 -- -runs=10000000 > "$SCRATCH/logs/$t.log" 2>&1 || echo "$t: stopped early (see $SCRATCH/logs/$t.log)"
            grep -E "stat::number_of_executed_units|SUMMARY" "$SCRATCH/logs/$t.log" | sed "s/^/$t: /"
        done ;;
    worst-case)
        n=${2:?N records}; out=${3:?output file}
        case "$out" in /*) ;; *) out=$PWD/$out ;; esac
        BLESCOPE_WORST_CASE="$n:$out" swift test --filter WorstCaseTests.writeWorstCaseCapture
        ls -l "$out" ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
esac
