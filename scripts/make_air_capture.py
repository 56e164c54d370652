#!/usr/bin/env python3
"""Builds a large synthetic air capture (pcap, LT 272 nRF Sniffer) for the link-layer benchmark.

It takes a real nRF Sniffer capture (classic pcap, e.g. ../shared/captures/nrfsniffer-lt272_*.pcap),
keeps it whole once (advertising, CONNECT_IND, the connection), then repeats the records of the
connection's data channel, with timestamps moved on, until N records are written. The result has
the mix of a real sniffer session (empty PDUs, LL control, ATT) at any size; nothing of it is
committed.

Usage: make_air_capture.py SOURCE.pcap N OUT.pcap [--encrypt LTK]

--encrypt LTK (32 hex digits, most significant first): the link starts encryption before its data
(LL_ENC_REQ, LL_ENC_RSP, LL_START_ENC_REQ in the clear), and every later non-empty data PDU is
AES-CCM encrypted with that LTK (Core Spec Vol 6 Part E; packet counter per direction, a retransmission
keeps its counter), flagged as the nRF Sniffer flags a link it has no key for: the benchmark of
blescope's own decryption (`blescope bench OUT --pass decode --ltk LTK`). Needs python3-cryptography.
"""
import struct
import subprocess
import sys

args = [a for a in sys.argv[1:]]
ltk = None
if "--encrypt" in args:
    i = args.index("--encrypt")
    ltk = bytes.fromhex(args[i + 1])
    del args[i:i + 2]
src, n, out = args[0], int(args[1]), args[2]
data = open(src, "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic == 0xA1B2C3D4, "classic little-endian µs pcap expected"
header, records, off = data[:24], [], 24
while off + 16 <= len(data):
    sec, usec, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    records.append((sec * 1_000_000 + usec, data[off + 16:off + 16 + incl], orig))
    off += 16 + incl
# Data-channel records (access address other than the advertising one), as tshark sees them.
frames = subprocess.run(["tshark", "-n", "-r", src, "-Y", "btle.access_address != 0x8e89bed6", "-T", "fields",
                         "-e", "frame.number"], capture_output=True, text=True, check=True).stdout.split()
data_records = [records[int(f) - 1] for f in frames]
class Encryptor:
    """nRF Sniffer v2/v3 records (7-byte header, 10-byte event packet, then the LL packet)."""
    SKDM, SKDS, IVM, IVS = bytes(range(1, 9)), bytes(range(9, 17)), bytes([0xA1, 0xA2, 0xA3, 0xA4]), bytes([0xB1, 0xB2, 0xB3, 0xB4])

    def __init__(self, ltk):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.ciphers.aead import AESCCM
        # SK = e(LTK, SKDm || SKDs), the spec's e taking and giving most significant octet first.
        enc = Cipher(algorithms.AES(ltk), modes.ECB()).encryptor()
        sk = enc.update((self.SKDM + self.SKDS)[::-1]) + enc.finalize()
        self.ccm = AESCCM(sk, tag_length=4)
        self.iv = self.IVM + self.IVS
        self.counters = [0, 0]
        self.last = [None, None]  # (SN, plaintext, sealed) per direction

    def control(self, template, central, pdu):
        """A clear LL control record built on a data record of the stream."""
        rec = bytearray(template[:17])
        ll = bytes(template[17:21]) + bytes([0x03 | (0x08 if central else 0), len(pdu)]) + pdu + b"\0\0\0"
        rec[1:3] = struct.pack("<H", 10 + len(ll))
        rec[8] = (rec[8] & ~0x0E) | (0x02 if central else 0)
        return bytes(rec) + ll

    def start(self, template):
        return [self.control(template, True, bytes([0x03]) + bytes(8) + bytes(2) + self.SKDM + self.IVM),
                self.control(template, False, bytes([0x04]) + self.SKDS + self.IVS),
                self.control(template, False, bytes([0x05]))]

    def seal(self, rec):
        rec = bytearray(rec)
        if len(rec) < 23 or bytes(rec[17:21]) == bytes.fromhex("d6be898e"):
            return bytes(rec)
        length = rec[22]
        if length == 0:
            return bytes(rec)
        central = rec[8] & 0x02 != 0
        d = 0 if central else 1
        h0, plain, sn = rec[21], bytes(rec[23:23 + length]), rec[21] & 0x08
        if self.last[d] and self.last[d][0] == sn and self.last[d][1] == plain:
            sealed = self.last[d][2]          # a retransmission keeps its counter
        else:
            c = self.counters[d]
            nonce = bytes([(c >> (8 * i)) & 0xFF for i in range(4)]) + bytes([((c >> 32) & 0x7F) | (0x80 if central else 0)]) + self.iv
            sealed = self.ccm.encrypt(nonce, plain, bytes([h0 & 0xE3]))
            self.counters[d] += 1
            self.last[d] = (sn, plain, sealed)
        out = rec[:22] + bytes([len(sealed)]) + sealed + rec[23 + length:]
        out[1:3] = struct.pack("<H", struct.unpack("<H", bytes(rec[1:3]))[0] + 4)
        out[8] |= 0x04                       # encrypted; MIC not checked (the sniffer had no key)
        return bytes(out)

crypt = Encryptor(ltk) if ltk else None
with open(out, "wb") as f:
    f.write(header)
    written, t, last = 0, records[0][0], records[0][0]
    def put(ts, payload, orig):
        if crypt:
            payload = crypt.seal(payload)
            orig = len(payload)
        f.write(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(payload), orig))
        f.write(payload)
    first_data = data_records[0][0]
    for ts, payload, orig in records:
        if written >= n:
            break
        if crypt and ts == first_data and crypt.counters == [0, 0] and crypt.last == [None, None]:
            for k, clear in enumerate(crypt.start(payload)):
                f.write(struct.pack("<IIII", (ts - 3 + k) // 1_000_000, (ts - 3 + k) % 1_000_000, len(clear), len(clear)))
                f.write(clear)
                written += 1
            crypt.last = [(None, None, None), (None, None, None)]
        put(ts, payload, orig)
        written += 1
        last = ts
    span = data_records[-1][0] - data_records[0][0] + 1250
    shift = last - data_records[0][0] + 1250
    while written < n:
        for ts, payload, orig in data_records:
            if written >= n:
                break
            put(ts + shift, payload, orig)
            written += 1
        shift += span
print(f"{written} records written to {out}")
