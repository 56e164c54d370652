#!/usr/bin/env bash
# Renders a blescope HTML report to PNG with headless Chromium (apt-get install -y chromium), to look at it.
#   scripts/render-report.sh report.html [out.png] [width] [height]
# Exit status: Chromium's; 3 when Chromium is missing. The PNG path is printed on success.
set -euo pipefail
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
