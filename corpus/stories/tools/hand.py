#!/usr/bin/env python3
"""hand.py FILE SPEC.py -> markdown bullets of hand-written points, each kept only if every (frame, regex)
is found in that frame's `tshark -V -x` output; prints the kept points then a count line."""
import re, subprocess, sys
F, spec = sys.argv[1], sys.argv[2]
points = eval(open(spec).read())
cache = {}
def verbose(n):
    if n not in cache:
        cache[n] = subprocess.run(['tshark', '-r', F, '-o', 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""', '-V', '-x', '-Y', f'frame.number=={n}'], capture_output=True, text=True).stdout
    return cache[n]
kept = dropped = 0
for text, checks in points:
    bad = [(n, rx) for n, rx in checks if not re.search(rx, verbose(n))]
    if bad:
        dropped += 1; print(f'<!-- dropped: {text} (not found: {bad}) -->')
    else:
        kept += 1; print(f'- {text}')
print(f'\nHand-written points: {kept} kept, {dropped} dropped; {len(cache)} frames re-read with `tshark -V -x`.')
