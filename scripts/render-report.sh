#!/usr/bin/env bash
# Renders a blescope HTML report to PNG with headless Chromium (apt-get install -y chromium), to look at it.
#   scripts/render-report.sh report.html [out.png] [width] [height]
#   scripts/render-report.sh --docs [blescope]   docs/report-screenshot.png: the top of the report of the shared
#                                                 14-connection Android log (../shared/captures), as README shows it
# Exit status: Chromium's; 3 when Chromium is missing (4: --docs without the shared capture). The PNG path is printed on success.
set -euo pipefail
if [[ "${1:-}" == "--docs" ]]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    bin=${2:-$root/.build/debug/blescope}
    capture=$root/../shared/captures/android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last
    [[ -f "$capture" ]] || { echo "render-report.sh: $capture not found" >&2; exit 4; }
    work=$(mktemp -d)
    "$bin" report --quiet "$capture" -o "$work/report.html"
    exec "$0" "$work/report.html" "$root/docs/report-screenshot.png" 1280 1250
fi
html=${1:?usage: render-report.sh report.html [out.png] [width] [height]}
png=${2:-${html%.html}.png}
width=${3:-1280}
height=${4:-4000}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z "$browser" ]]; then
    echo "render-report.sh: chromium not found (apt-get install -y chromium)" >&2
    exit 3
fi
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
rm -f "$png"
# No network: the page must not need it (it is self-contained).
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-extensions \
    --user-data-dir="$(mktemp -d)" --proxy-server=127.0.0.1:9 \
    --screenshot="$png" --window-size="${width},${height}" "file://$abs" >/dev/null 2>&1
test -s "$png"
echo "$png"
