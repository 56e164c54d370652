#!/usr/bin/env bash
# Installs what blescope needs on a fresh Debian/Ubuntu machine (as root, or with sudo), each only when missing.
# Needed: libpcap-dev, zlib1g-dev, libdeflate-dev, libssl-dev, libyaml-dev (build); tshark (the reference decoder the differential tests use);
# python3-jsonschema (SchemaValidationTests validate every JSON output against schemas/ with it; pip's jsonschema
# does as well, so it is installed only when python3 cannot import one).
#
# --tests also installs what the end-to-end tests that drive other programs need (CI asks for it; a user who only
# runs blescope does not): chromium, chromium-driver and selenium (BrowserTests open the HTML report in them,
# scripts/browser_test.py); Java (Debian's openjdk-17-jre-headless, when no `java` is on PATH), pyspark and duckdb
# (FleetTablesTests, the fleet recipe of docs/fleets.md). `--fleet` is accepted as a synonym.
set -euo pipefail
tests=0
case "${1:-}" in --tests | --fleet) tests=1 ;; esac
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
for p in libpcap-dev zlib1g-dev libdeflate-dev libssl-dev libyaml-dev pkg-config tshark; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
if [ $tests = 1 ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
  command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
fi
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  echo "installed: ${need[*]}" >&2
fi
if [ $tests = 1 ]; then
  pip=()
  for m in selenium pyspark duckdb; do python3 -c "import $m" >/dev/null 2>&1 || pip+=("$m"); done
  if [ ${#pip[@]} -gt 0 ]; then
    python3 -m pip install -q "${pip[@]}" >/dev/null 2>&1 || { echo "pip install ${pip[*]} failed" >&2; exit 1; }
    echo "installed (pip): ${pip[*]}" >&2
  fi
fi
command -v swift >/dev/null || { echo "swift (6.2 or newer) is not on PATH: install it from swift.org" >&2; exit 1; }
