#!/usr/bin/env python3
# usage: scan.py GITDIR  -> lists distinct capture-like blobs across all commits: blob size commit path
import subprocess, sys
g = sys.argv[1]
def git(*a, inp=None):
    return subprocess.run(['git', '--git-dir', g] + list(a), capture_output=True, input=inp).stdout
seen = {}
revs = git('rev-list', '--all').decode().split()
exts = ('.pklg', '.btsnoop', '.cfa', '.pcap', '.pcapng', '.cap', '.log', '.snoop', '.bin', '.dump', '.last')
for c in revs:
    for line in git('ls-tree', '-r', '-l', c).decode(errors='replace').splitlines():
        meta, path = line.split('\t', 1)
        _, typ, blob, size = meta.split()
        if typ != 'blob' or blob in seen: continue
        low = path.lower()
        if not (low.endswith(exts) or 'snoop' in low or 'hci' in low): continue
        seen[blob] = (size, c, path)
for blob, (size, c, path) in seen.items():
    try: head = git('cat-file', 'blob', blob)[:8] if int(size) > 8 else b''
    except ValueError: head = b''
    kind = 'btsnoop' if head.startswith(b'btsnoop') else 'pcapng' if head[:4] == b'\x0a\x0d\x0d\x0a' else 'pcap' if head[:4] in (b'\xd4\xc3\xb2\xa1', b'\xa1\xb2\xc3\xd4', b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d') else ('pklg?' if path.lower().endswith('.pklg') else '-')
    if kind != '-':
        print(blob, size, kind, c, path, sep='\t')
