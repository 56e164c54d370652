#!/usr/bin/env bash
# Strips a blescope binary for installing: the symbols and debug information (two fifths of a static release build)
# are of no use to a user. They are kept in DIR/.debug/blescope.debug, linked from the binary by .gnu_debuglink, where
# gdb and lldb look for them (unless BLESCOPE_NO_DEBUG_FILE=1). Writes DIR/blescope; prints the two sizes on stderr.
# Usage: scripts/strip-binary.sh BINARY DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/strip-binary.sh BINARY DIR" >&2; exit 2; }
bin=$1 dir=$2
mkdir -p "$dir"
cp "$bin" "$dir/blescope"
if command -v objcopy >/dev/null && [ "$(uname -s)" = Linux ]; then
  if [ "${BLESCOPE_NO_DEBUG_FILE:-0}" != 1 ]; then
    mkdir -p "$dir/.debug"
    objcopy --only-keep-debug "$dir/blescope" "$dir/.debug/blescope.debug"
    # The link names the file only; gdb finds it in .debug/ beside the binary.
    (cd "$dir" && objcopy --strip-all --add-gnu-debuglink=.debug/blescope.debug blescope)
  else
    objcopy --strip-all "$dir/blescope"
  fi
else
  strip "$dir/blescope" 2>/dev/null || true
fi
echo "blescope: $(wc -c <"$bin") bytes as built, $(wc -c <"$dir/blescope") bytes stripped" >&2
