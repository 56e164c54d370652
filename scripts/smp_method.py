#!/usr/bin/env python3
"""The LE pairing association model of each Pairing Request/Response pair in a capture, from tshark's btsmp fields
only (an independent check of `blescope diff`'s pairing method; it reads nothing of blescope).

Core Spec Vol 3, Part H, 2.3.5.1: LE Secure Connections when both set the SC flag; OOB when both (legacy) or either
(Secure Connections) set the OOB data flag; else Just Works when neither sets MITM; else Table 2.8 of the two IO
capabilities. Usage: smp_method.py CAPTURE...  → one line per pairing:
`FILE<TAB>REQUEST_FRAME<TAB>RESPONSE_FRAME<TAB>legacy|sc<TAB>METHOD<TAB>bonding|no bonding<TAB>KEY_SIZE`
(KEY_SIZE: the smaller Maximum Encryption Key Size of the two).

BR/EDR (from tshark's bthci_evt/bthci_cmd fields alone): Secure Simple Pairing from the IO Capability Request Reply
(this side) and IO Capability Response (the peer), Vol 3, Part C, 5.2.2.6, Table 5.7: OOB when either has OOB data;
Just Works when neither asks for MITM (Authentication_Requirements odd) or a side is NoInputNoOutput, or neither can
both show and confirm; Passkey Entry when a side is KeyboardOnly; Numeric Comparison between two DisplayYesNo. A PIN
Code Request is legacy PIN pairing. One line per pairing:
`FILE<TAB>FIRST_FRAME<TAB>LINK_KEY_FRAME<TAB>ssp|pin<TAB>METHOD<TAB>bonding|no bonding<TAB>LINK_KEY_TYPE`,
and one per Read Encryption Key Size answer: `FILE<TAB>FRAME<TAB>-<TAB>key-size<TAB>SIZE<TAB>handle 0xHHHH<TAB>-`.
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
          "btsmp.mitm_flag", "btsmp.sc_flag", "btsmp.max_enc_key_size"]


def rows(path):
    cmd = ["tshark", "-r", path, "-Y", "btsmp.opcode==0x01 || btsmp.opcode==0x02", "-T", "fields"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    for line in out.splitlines():
        frame, op, io, oob, bond, mitm, sc, size = line.split("\t")
        yield int(frame), int(op, 16), int(io, 16), int(oob, 16), int(bond, 16), mitm == "1", sc == "1", int(size or "0")


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
    return ("sc" if sc else "legacy"), m, ("bonding" if bonding else "no bonding"), str(min(req[7], rsp[7]))


KEY_TYPES = {0: "combination key", 1: "local unit key", 2: "remote unit key", 3: "debug combination key",
             4: "unauthenticated combination key (P-192)", 5: "authenticated combination key (P-192)",
             6: "changed combination key", 7: "unauthenticated combination key (P-256)",
             8: "authenticated combination key (P-256)"}


def bredr_rows(path):
    """The BR/EDR pairing events and commands, and Read Encryption Key Size's answers, in frame order."""
    fields = ["frame.number", "bthci_evt.code", "bthci_cmd.opcode", "bthci_evt.bd_addr", "bthci_cmd.bd_addr",
              "bthci_evt.io_capability", "bthci_evt.oob_data_present", "bthci_evt.auth_requirements",
              "bthci_cmd.io_capability", "bthci_cmd.oob_data_present", "bthci_cmd.auth_requirements",
              "bthci_evt.key_type", "bthci_evt.opcode", "bthci_evt.enc_key_size", "bthci_evt.connection_handle",
              "bthci_evt.status"]
    flt = ("bthci_evt.code in {0x16, 0x18, 0x31, 0x32, 0x33, 0x34, 0x35, 0x3b} || bthci_cmd.opcode == 0x042b"
           " || bthci_evt.opcode == 0x1408")
    cmd = ["tshark", "-r", path, "-Y", flt, "-T", "fields", "-E", "occurrence=f"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    for line in out.splitlines():
        v = dict(zip(fields, line.split("\t")))
        yield v


def ssp_method(local, peer):
    """Vol 3, Part C, 5.2.2.6, Table 5.7, from (io, oob, authReq) of each side."""
    if local[1] or peer[1]:
        return "OOB"
    if not (local[2] & 1 or peer[2] & 1):
        return JW
    a, b = local[0], peer[0]
    if a > 3 or b > 3 or 3 in (a, b):
        return JW
    if 2 in (a, b):
        return PE
    return NC if a == 1 and b == 1 else JW


def num(v):
    return int(v, 0) if v else 0


def bredr(path):
    open_pairing = {}  # bd_addr -> dict
    for v in bredr_rows(path):
        frame = v["frame.number"]
        code = num(v["bthci_evt.code"])
        if v["bthci_evt.opcode"] and num(v["bthci_evt.opcode"]) == 0x1408:
            if v["bthci_evt.enc_key_size"] and num(v["bthci_evt.status"] or "0") == 0:
                handle = num(v["bthci_evt.connection_handle"])
                print("\t".join([path, frame, "-", "key-size", str(num(v["bthci_evt.enc_key_size"])), "handle 0x%04x" % handle, "-"]))
            continue
        addr = v["bthci_evt.bd_addr"] or v["bthci_cmd.bd_addr"]
        p = open_pairing.setdefault(addr, {"first": frame, "kind": None})
        if code == 0x16:
            p["kind"] = "pin"
        elif code in (0x31,):
            p["kind"] = p["kind"] or "ssp"
        elif code == 0x32:
            p["kind"] = "ssp"
            p["peer"] = (num(v["bthci_evt.io_capability"]), num(v["bthci_evt.oob_data_present"]), num(v["bthci_evt.auth_requirements"]))
        elif v["bthci_cmd.opcode"] and num(v["bthci_cmd.opcode"]) == 0x042B:
            p["kind"] = "ssp"
            p["local"] = (num(v["bthci_cmd.io_capability"]), num(v["bthci_cmd.oob_data_present"]), num(v["bthci_cmd.auth_requirements"]))
        elif code == 0x18:
            kind = p["kind"] or "unknown"
            if kind == "pin":
                m, bonding = "PIN", "-"
            elif "local" in p and "peer" in p:
                m = ssp_method(p["local"], p["peer"])
                bonding = "bonding" if 2 <= p["local"][2] <= 5 and 2 <= p["peer"][2] <= 5 else "no bonding"
            else:
                m, bonding = "unknown", "-"
            t = num(v["bthci_evt.key_type"])
            print("\t".join([path, p["first"], frame, kind, m, bonding, KEY_TYPES.get(t, "type 0x%02x" % t)]))
            del open_pairing[addr]


def main():
    for path in sys.argv[1:]:
        request = None
        for r in rows(path):
            if r[1] == 1:
                request = r
            elif request is not None:
                print("\t".join([path, str(request[0]), str(r[0]), *method(request, r)]))
                request = None
        bredr(path)


if __name__ == "__main__":
    main()
