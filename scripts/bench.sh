#!/usr/bin/env bash
# Benchmark: generates the synthetic captures of ../shared/DESIGN.md §5 (1 M and 5 M records,
# btsnoop and pcap) once, then runs each blescope pass over them, reporting records/s and peak RSS.
# Also builds a synthetic air capture (nRF Sniffer, LT 272) with scripts/make_air_capture.py when tshark is there.
# Usage: scripts/bench.sh [passes...]   (default: info decode timeline)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_DIR:-bench-data}
mkdir -p "$out"
gen=../shared/tools/make_big_capture.py
for n in 1000000 5000000; do
  f="$out/cap$((n / 1000000))m"
  if [ ! -f "$f.btsnoop" ]; then
    [ -f "$gen" ] || { echo "no $gen: put shared/ beside the repository" >&2; exit 1; }
    python3 "$gen" -n "$n" --seed 1 -o "$f.btsnoop" --pcap "$f.pcap" >/dev/null
  fi
done
swift build -c release --product blescope 2>&1 | tail -1
bin=$(swift build -c release --show-bin-path)/blescope
air=../shared/captures/nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap
if [ ! -f "$out/air5m.pcap" ] && [ -f "$air" ] && command -v tshark >/dev/null; then
  python3 scripts/make_air_capture.py "$air" 5000000 "$out/air5m.pcap" >/dev/null
fi
passes=("$@"); [ ${#passes[@]} -gt 0 ] || passes=(info decode timeline)
printf '%-10s %-16s %12s %10s %12s\n' pass file records/s seconds peak_RSS_MiB
for pass in "${passes[@]}"; do
  for f in "$out"/cap1m.btsnoop "$out"/cap5m.btsnoop "$out"/cap1m.pcap "$out"/cap5m.pcap "$out"/air5m.pcap; do
    [ -f "$f" ] || continue
    line=$("$bin" bench "$f" --pass "$pass" --repeat 1)
    rate=$(sed -n 's/.*records_per_s=\([0-9]*\).*/\1/p' <<<"$line")
    secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line")
    rss=$(sed -n 's/.*peak_rss_mib=\([0-9.]*\).*/\1/p' <<<"$line")
    printf '%-10s %-16s %12s %10s %12s\n' "$pass" "$(basename "$f")" "$rate" "$secs" "$rss"
  done
done
