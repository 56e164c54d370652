#!/usr/bin/env bash
# Installs what blescope needs on a fresh Debian/Ubuntu machine (as root, or with sudo).
# Needed: libpcap-dev, zlib1g-dev, libssl-dev (build); tshark (the reference decoder the differential tests use);
# python3-jsonschema (SchemaValidationTests validate every JSON output against schemas/ with it; pip's jsonschema
# does as well, so it is installed only when python3 cannot import one); chromium, chromium-driver and selenium
# (BrowserTests). Each only when missing.
set -euo pipefail
need=()
for p in libpcap-dev zlib1g-dev libssl-dev pkg-config tshark; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
# Chromium and its WebDriver: BrowserTests opens the HTML report in them (scripts/browser_test.py).
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  echo "installed: ${need[*]}" >&2
fi
# selenium drives the browser from scripts/browser_test.py: pip's when python3 has none (Debian's python3-selenium
# where pip may not install into the system python).
if ! python3 -c 'import selenium' >/dev/null 2>&1; then
  python3 -m pip install -q selenium >/dev/null 2>&1 || {
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-selenium >/dev/null
  }
  echo "installed: selenium" >&2
fi
command -v swift >/dev/null || { echo "swift (6.2 or newer) is not on PATH: install it from swift.org" >&2; exit 1; }
