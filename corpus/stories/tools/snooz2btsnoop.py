#!/usr/bin/env python3
"""snooz2btsnoop.py IN OUT: re-frame a file whose body is Android btsnooz v2 records (9-byte header:
length u16 LE (type byte + payload), packet_length u16, delta time u32, type u8 [0x10 evt in, 0x11 ACL in,
0x12 SCO in, 0x20 cmd out, 0x21 ACL out, 0x22 SCO out]) behind a 16-byte btsnoop header into a real btsnoop
(datalink 1002, H4), so that tshark can read it. Time: the deltas summed from 0 (the file holds no absolute time), read as
microseconds with --us (AOSP's btsnooz.py reads them as milliseconds)."""
import struct, sys
args = [a for a in sys.argv[1:] if a != '--us']
unit = 1 if '--us' in sys.argv else 1000
d = open(args[0], 'rb').read()
H4 = {0x10: (4, 1), 0x11: (2, 1), 0x12: (3, 1), 0x20: (1, 0), 0x21: (2, 0), 0x22: (3, 0)}
out = [b'btsnoop\0' + struct.pack('>II', 1, 1002)]
off, t, n = 16, 0, 0
BASE = 0x00dcddb30f2f8000  # btsnoop epoch offset (AD 0 -> 1970), so that t=0 reads as 1970-01-01
while off + 9 <= len(d):
    length, plen, delta, typ = struct.unpack_from('<HHIB', d, off)
    body = d[off + 9: off + 8 + length]
    off += 8 + length
    t += delta * unit
    h4, rx = H4[typ]
    pkt = bytes([h4]) + body
    flags = (1 if rx else 0) | (2 if h4 in (1, 4) else 0)
    out.append(struct.pack('>IIIIQ', len(pkt), len(pkt), flags, 0, BASE + t) + pkt)
    n += 1
open(args[1], 'wb').write(b''.join(out))
print(n, 'records; ended at byte', off, 'of', len(d))
