#!/usr/bin/env python3
"""The LE pairing association model of each Pairing Request/Response pair in a capture, from tshark's btsmp fields
only (an independent check of `blescope diff`'s pairing method; it reads nothing of blescope).

Core Spec Vol 3, Part H, 2.3.5.1: LE Secure Connections when both set the SC flag; OOB when both (legacy) or either
(Secure Connections) set the OOB data flag; else Just Works when neither sets MITM; else Table 2.8 of the two IO
capabilities. Usage: smp_method.py CAPTURE...  → one line per pairing:
`FILE<TAB>REQUEST_FRAME<TAB>RESPONSE_FRAME<TAB>legacy|sc<TAB>METHOD<TAB>bonding|no bonding`.
"""
import subprocess
import sys

JW, PE, NC = "Just Works", "Passkey Entry", "Numeric Comparison"
# Table 2.8, rows the responder's IO capability, columns the initiator's: DisplayOnly, DisplayYesNo, KeyboardOnly,
# NoInputNoOutput, KeyboardDisplay. A pair (legacy, secure connections) where they differ.
TABLE = [
    [JW, JW, PE, JW, PE],
    [JW, (JW, NC), PE, JW, (PE, NC)],
    [PE, PE, PE, JW, PE],
    [JW, JW, JW, JW, JW],
    [PE, (PE, NC), PE, JW, (PE, NC)],
]

FIELDS = ["frame.number", "btsmp.opcode", "btsmp.io_capability", "btsmp.oob_data_flags", "btsmp.bonding_flags",
          "btsmp.mitm_flag", "btsmp.sc_flag"]


def rows(path):
    cmd = ["tshark", "-r", path, "-Y", "btsmp.opcode==0x01 || btsmp.opcode==0x02", "-T", "fields"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    for line in out.splitlines():
        frame, op, io, oob, bond, mitm, sc = line.split("\t")
        yield int(frame), int(op, 16), int(io, 16), int(oob, 16), int(bond, 16), mitm == "1", sc == "1"


def method(req, rsp):
    sc = req[6] and rsp[6]
    oob_i, oob_r = req[3] == 1, rsp[3] == 1
    if (oob_i or oob_r) if sc else (oob_i and oob_r):
        m = "OOB"
    elif not (req[5] or rsp[5]):
        m = JW
    elif req[2] > 4 or rsp[2] > 4:
        m = "unknown"
    else:
        cell = TABLE[rsp[2]][req[2]]
        m = cell[1 if sc else 0] if isinstance(cell, tuple) else cell
    bonding = req[4] == 1 and rsp[4] == 1
    return ("sc" if sc else "legacy"), m, ("bonding" if bonding else "no bonding")


def main():
    for path in sys.argv[1:]:
        request = None
        for r in rows(path):
            if r[1] == 1:
                request = r
            elif request is not None:
                print("\t".join([path, str(request[0]), str(r[0]), *method(request, r)]))
                request = None


if __name__ == "__main__":
    main()
