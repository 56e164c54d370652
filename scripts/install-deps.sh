#!/usr/bin/env bash
# Installs what blescope needs on a fresh Debian/Ubuntu machine (as root, or with sudo).
# Needed: libpcap-dev, zlib1g-dev, libssl-dev (build); tshark (the reference decoder the differential tests use);
# python3-jsonschema (SchemaValidationTests validate every JSON output against schemas/ with it; pip's jsonschema
# does as well, so it is installed only when python3 cannot import one).
set -euo pipefail
need=()
for p in libpcap-dev zlib1g-dev libssl-dev pkg-config tshark; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  echo "installed: ${need[*]}" >&2
fi
command -v swift >/dev/null || { echo "swift (6.2 or newer) is not on PATH: install it from swift.org" >&2; exit 1; }
