#!/usr/bin/env bash
# Benchmark: generates the synthetic captures of ../shared/DESIGN.md §5 (1 M and 5 M records, btsnoop and pcap,
# plus a 5 M-record nRF Sniffer air capture when tshark is there) once, then times each blescope pass over them
# and prints, in one table, the median, the spread, records/s, peak RSS and the ratios the README and issue 20
# quote: against the bare record walk (`bench --pass read`) and against tshark on the same file.
#
# Usage: scripts/bench.sh [--runs N] [--tshark] [--baseline OLD_BINARY] [--files "cap1m.btsnoop …"] [passes...]
#   passes   read decode info info-nodecode throughput report timeline air (default: all but air; air runs
#            `bench --pass decode` on air5m.pcap)
#   --runs N           runs per pass (default 3; the median is shown, the spread is max − min)
#   --tshark           also time tshark's statistics pass (`tshark -q -z conv,bluetooth -r F`) and field export
#                      (`tshark -r F -T fields -e frame.number -e frame.time_epoch -e bthci_acl.chandle
#                      -e hci_h4.direction -e btatt.opcode -e btatt.handle -e btatt.value`), once each, on the
#                      1 M-record file only (on 5 M records tshark takes minutes and ~2 GB); BENCH_TSHARK=1 too.
#   --tshark-runs N    runs of each tshark pass (default 3; the median is the ratio's denominator: a single run of
#                      the statistics pass took 3.6 to 4.4 s on the same idle machine within an hour)
#   --baseline OLD     alternate every run with OLD (another blescope build) and add its median and new/old
#   --files "F …"      names inside $BENCH_DIR (default: cap1m.btsnoop cap5m.btsnoop)
#   BENCH_DIR          where the captures are generated (default bench-data; keep it outside the repository)
#   BLESCOPE           the binary to time (default: this tree's release build, built first)
#   BLESCOPE_THREADS=1 every pass on one thread (no read-ahead, no background trackers or rendering), to see
#                      what the second core brings
#
# How passes are timed: `read` and `decode` report the seconds of the pass inside the process
# (`blescope bench`), without process start; the others are whole commands timed from outside
# (`timeline --format jsonl > /dev/null`, `throughput --json`, `report -o F.html`, `info [--json]`),
# process start included, peak RSS from `/usr/bin/time -f %M`. "×walk" is median / median of `read` on the
# same file (issue 20: full decode within 4×); "vs tshark" is tshark's time / ours (throughput and report
# against the statistics pass, timeline against the field export; issue 20: ≥ 20× and ≥ 10×).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3 tshark=${BENCH_TSHARK:-0} tshark_runs=3 baseline="" files="cap1m.btsnoop cap5m.btsnoop" passes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --tshark) tshark=1; shift ;;
    --tshark-runs) tshark=1; tshark_runs=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) passes+=("$1"); shift ;;
  esac
done
[ ${#passes[@]} -gt 0 ] || passes=(read decode info info-nodecode throughput report timeline)
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
air=../shared/captures/nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap
if [[ " ${passes[*]} " == *" air "* ]] && [ ! -f "$out/air5m.pcap" ] && [ -f "$air" ] && command -v tshark >/dev/null; then
  python3 scripts/make_air_capture.py "$air" 5000000 "$out/air5m.pcap" >/dev/null
fi
if [ -z "${BLESCOPE:-}" ]; then
  bin=$(bash scripts/build-release.sh)
else
  bin=$BLESCOPE
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# One timed run of PASS over FILE with BINARY: prints "seconds rss_kib".
run_once() {
  local b=$1 pass=$2 f=$3 t0 t1 line
  case "$pass" in
    read|decode|air)
      local p=$pass; [ "$p" = air ] && p=decode
      line=$(/usr/bin/time -f "%M" -o "$tmp/rss" "$b" bench "$f" --pass "$p" --repeat 1)
      echo "$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line") $(tail -1 "$tmp/rss")"
      return ;;
  esac
  local args
  case "$pass" in
    info) args=(info "$f") ;;
    info-nodecode) args=(info --no-decode "$f") ;;
    throughput) args=(throughput --json "$f") ;;
    report) args=(report -o "$tmp/report.html" "$f") ;;
    timeline) args=(timeline --format jsonl "$f") ;;
    tshark-stats) args=(-q -z conv,bluetooth -r "$f") ;;
    tshark-fields) args=(-r "$f" -T fields -e frame.number -e frame.time_epoch -e bthci_acl.chandle
                         -e hci_h4.direction -e btatt.opcode -e btatt.handle -e btatt.value) ;;
    *) echo "unknown pass $pass" >&2; exit 2 ;;
  esac
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$tmp/rss" "$b" "${args[@]}" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  t1=$(date +%s%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(tail -1 "$tmp/rss")"
}

# Median and spread (max − min) of the seconds in file $1, the largest RSS, as "median spread rss_mib".
summarize() {
  sort -n "$1" | awk '{ s[NR] = $1; if ($2 > r) r = $2 } END {
    m = NR % 2 ? s[(NR + 1) / 2] : (s[NR / 2] + s[NR / 2 + 1]) / 2
    printf "%.3f %.3f %.1f", m, s[NR] - s[1], r / 1024 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else printf "—" }'; }

echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ); runs=$runs"
echo "binary: $bin${baseline:+ (baseline $baseline)}"
printf '%-14s %-14s %9s %8s %11s %8s %7s %10s' file pass median_s spread rec/s RSS_MiB ×walk "vs tshark"
[ -n "$baseline" ] && printf ' %9s %8s %7s' old_s old_sprd new/old
echo
targets=()
for name in $files; do targets+=("$out/$name"); done
[[ " ${passes[*]} " == *" air "* ]] && [ -f "$out/air5m.pcap" ] && targets+=("$out/air5m.pcap")
for f in "${targets[@]}"; do
  [ -f "$f" ] || { echo "no $f" >&2; continue; }
  base=$(basename "$f")
  records=$("$bin" bench "$f" --pass read | sed -n 's/.*records=\([0-9]*\).*/\1/p')
  ts_stats="" ts_fields=""
  if [ "$tshark" = 1 ] && [ "$records" -le 1000000 ] && [[ "$base" != air* ]] && command -v tshark >/dev/null; then
    : >"$tmp/ts-stats"; : >"$tmp/ts-fields"
    for ((i = 0; i < tshark_runs; i++)); do
      run_once tshark tshark-stats "$f" >>"$tmp/ts-stats"; run_once tshark tshark-fields "$f" >>"$tmp/ts-fields"
    done
    # "median rss_kib", as run_once prints one run.
    ts_stats=$(sort -n "$tmp/ts-stats" | awk '{ s[NR] = $1; r[NR] = $2 } END { printf "%.3f %d", s[int((NR + 1) / 2)], r[NR] }')
    ts_fields=$(sort -n "$tmp/ts-fields" | awk '{ s[NR] = $1; r[NR] = $2 } END { printf "%.3f %d", s[int((NR + 1) / 2)], r[NR] }')
    printf '%-14s %-14s %9s %8s %11s %8s\n' "$base" tshark-stats "${ts_stats% *}" — \
      "$(awk -v n="$records" -v s="${ts_stats% *}" 'BEGIN { printf "%d", n / s }')" "$(awk -v r="${ts_stats#* }" 'BEGIN { printf "%.1f", r / 1024 }')"
    printf '%-14s %-14s %9s %8s %11s %8s\n' "$base" tshark-fields "${ts_fields% *}" — \
      "$(awk -v n="$records" -v s="${ts_fields% *}" 'BEGIN { printf "%d", n / s }')" "$(awk -v r="${ts_fields#* }" 'BEGIN { printf "%.1f", r / 1024 }')"
  fi
  walk=""
  for pass in "${passes[@]}"; do
    [ "$pass" = air ] && [[ "$base" != air* ]] && continue
    [[ "$base" == air* ]] && [ "$pass" != air ] && [ "$pass" != read ] && continue
    : >"$tmp/new"; : >"$tmp/old"
    "$bin" bench "$f" --pass read >/dev/null  # page cache warm
    for ((i = 0; i < runs; i++)); do
      [ -n "$baseline" ] && run_once "$baseline" "$pass" "$f" >>"$tmp/old"
      run_once "$bin" "$pass" "$f" >>"$tmp/new"
    done
    read -r med spread rss <<<"$(summarize "$tmp/new")"
    [ "$pass" = read ] && walk=$med
    vs="—"
    case "$pass" in
      throughput|report) [ -n "$ts_stats" ] && vs=$(ratio "${ts_stats% *}" "$med") ;;
      timeline) [ -n "$ts_fields" ] && vs=$(ratio "${ts_fields% *}" "$med") ;;
    esac
    printf '%-14s %-14s %9s %8s %11s %8s %7s %10s' "$base" "$pass" "$med" "$spread" \
      "$(awk -v n="$records" -v s="$med" 'BEGIN { printf "%d", n / s }')" "$rss" "$( [ -n "$walk" ] && ratio "$med" "$walk" || echo —)" "$vs"
    if [ -n "$baseline" ]; then
      read -r omed ospread _ <<<"$(summarize "$tmp/old")"
      printf ' %9s %8s %7s' "$omed" "$ospread" "$(awk -v a="$med" -v b="$omed" 'BEGIN { printf "%.2f", a / b }')"
    fi
    echo
  done
done
