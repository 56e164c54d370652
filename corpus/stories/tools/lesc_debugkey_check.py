#!/usr/bin/env python3
"""lesc_debugkey_check.py FILE PKa PKb NaLast NbLast Ea LL_ENC_REQ LL_ENC_RSP TypeA AddrA TypeB AddrB PASSKEY PREQ FRAME:DIR:CTR...
For an LT 256 air capture of an LE Secure Connections pairing where the responder used the specification's debug key
pair (Core Vol 3 Part H 2.3.5.6.1): DHKey from the debug private key and the initiator's public key (frame PKa),
(MacKey, LTK) = f5(DHKey, Na, Nb, A, B) with the LAST round's Pairing Randoms (NaLast/NbLast: Passkey Entry's 20th),
checks Ea = f6(MacKey, Na, Nb, passkey, IOcapA, A, B) against the initiator's DHKey Check on the air (frame Ea), then
SK = e(LTK, SKD) from LL_ENC_REQ/RSP and AES-CCM-decrypts each FRAME (DIR 1 = central to peripheral, CTR its packet
counter), printing 'MIC ok' and the plaintext or 'MIC fail'. Frames are read with tshark -x (bytes only)."""
import subprocess, sys, re
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import cmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM
F = sys.argv[1]; fa, fb, fra, frb, fea, fenc, frsp = [int(x) for x in sys.argv[2:9]]
def raw(n):
    out = subprocess.run(['tshark','-r',F,'-Y',f'frame.number=={n}','-x'], capture_output=True, text=True).stdout
    hx = ''
    for l in out.splitlines():
        m = re.match(r'^[0-9a-f]{4}  ((?:[0-9a-f]{2} ?)+)', l)
        if m: hx += m.group(1).replace(' ', '')
    return bytes.fromhex(hx)
def pdu(n):   # LT256: 10-byte RF header, AA 4, header 2, payload, CRC 3
    b = raw(n); hdr = b[14:16]; ln = hdr[1]; return hdr, b[16:16+ln]
def smp(n): return pdu(n)[1][4:]   # skip L2CAP header
def be(b): return b[::-1]
def cm(key, msg):
    c = cmac.CMAC(algorithms.AES(key)); c.update(msg); return c.finalize()
pa = smp(fa); pb = smp(fb)
PKa = ec.EllipticCurvePublicNumbers(int.from_bytes(be(pa[1:33]),'big'), int.from_bytes(be(pa[33:65]),'big'), ec.SECP256R1()).public_key()
d = 0x3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd
priv = ec.derive_private_key(d, ec.SECP256R1())
dh = priv.exchange(ec.ECDH(), PKa)
Na = be(smp(fra)[1:17]); Nb = be(smp(frb)[1:17])
A1 = bytes([int(sys.argv[9])]) + bytes.fromhex(sys.argv[10].replace(':','')); A2 = bytes([int(sys.argv[11])]) + bytes.fromhex(sys.argv[12].replace(':',''))
SALT = bytes.fromhex('6C888391AAF5A53860370BDB5A6083BE')
T = cm(SALT, dh)
m = lambda c: cm(T, bytes([c]) + b'btle' + Na + Nb + A1 + A2 + b'\x01\x00')
MacKey, LTK = m(0), m(1)
print('DHKey', dh.hex()); print('LTK', LTK.hex())
# f6 check for Ea: f6(MacKey, Na, Nb, rb, IOcapA, A1, A2); rb = passkey for Passkey Entry
pk = int(sys.argv[13]); rb = pk.to_bytes(16,'big')
prq = smp(int(sys.argv[14])); iocapA = bytes([prq[3], prq[2], prq[1]])  # AuthReq, OOB, IO  (MSB first)
Ea = cm(MacKey, Na + Nb + rb + iocapA + A1 + A2)
print('Ea computed', be(Ea).hex(), 'on air', smp(fea)[1:17].hex())
# LL: SKD = SKDs || SKDm (MSO first), IV = IVs||IVm? (spec: SKD = SKDm || SKDs with SKDm LSO) -> build as bytes
_, enc = pdu(fenc); _, rsp = pdu(frsp)
skdm, ivm = enc[1+8+2:1+8+2+8], enc[1+8+2+8:1+8+2+8+4]
skds, ivs = rsp[1:9], rsp[9:13]
SKD = skdm + skds   # little-endian octet order: SKDm is the least significant half
ecb = Cipher(algorithms.AES(be(LTK)[::-1] if False else LTK[::-1][::-1]), modes.ECB()).encryptor()
SK = Cipher(algorithms.AES(LTK), modes.ECB()).encryptor().update(be(SKD))
IV = ivm + ivs
print('SK', SK.hex(), 'IV', IV.hex())
ccm = AESCCM(SK, tag_length=4)
res = []
for n, dirn, ctr in [(int(x.split(':')[0]), int(x.split(':')[1]), int(x.split(':')[2])) for x in sys.argv[15:]]:
    hdr, p = pdu(n)
    nonce = (ctr | (dirn << 39)).to_bytes(5, 'little') + IV
    aad = bytes([hdr[0] & 0xE3])
    try:
        pt = ccm.decrypt(nonce, p, aad); res.append((n, 'MIC ok', pt.hex()))
    except Exception as e:
        res.append((n, 'MIC fail', type(e).__name__))
for r in res: print(*r)
