#!/usr/bin/env python3
"""How each pairing and encryption went, read by tshark alone: the truth for the security rules the other truth
scripts have no class for (SEC-08, SEC-09, SEC-10, SEC-12, SEC-13, SEC-14, SEC-15, SEC-19, SEC-20, SEC-22; issue 45, issue
48 point 4).

Usage: scripts/diagnosis_truth_security2.py [--base-name] CAPTURE...
Output: one JSON object per capture per line, {"file", "events": [...]}, events sorted by frame. Each event: class,
frame (the frame the rule's evidence names), `frames` (every frame of the same fact a finding may cite), link (HCI:
"adapter/handle"; air: the access address) and class fields. Python 3 standard library only; tshark 4.0.17.

Two tshark passes (the fields of every frame: SMP, LL control, connect requests, ATT; the raw bytes of every HCI
command and event, in the layouts of Core v5.4 Vol 4, Part E, 7.1 and 7.7, since tshark 4.0.17 leaves some undecoded,
e.g. Encryption Change v2 0x59), merged in frame order. Classes, each a reading of the spec for a rule's evidence:

  legacy-pairing       (SEC-10) LE: a Pairing Request and its Response, not both with the SC flag (Vol 3, Part H,
                       2.3.5.1: LE Secure Connections only when both set it), the model (Table 2.8, from the IO
                       capabilities, OOB and MITM flags; scripts/smp_method.py) Just Works or Passkey Entry (the TK is
                       0 or one of 10^6): frame = the Request, frames = both, method. An OOB legacy pairing is not
                       one (its TK is not in the capture). Nor is SMP on the BR/EDR Security Manager channel (L2CAP
                       CID 0x0007: cross-transport key derivation from a BR/EDR Secure Connections link key, Part H
                       2.4.2.4; no TK, no STK; tshark 4.0.17 does not decode it as SMP). BR/EDR: a PIN Code Request
                       event (0x16): method "PIN".
  key-size-short       (SEC-08) a key size under 16: an SMP Pairing Response whose smaller Maximum Encryption Key Size
                       with its Request is under 16 (Part H 2.3.4: the key is reduced to it; frame = the Response);
                       a Read Encryption Key Size answer (Command Complete 0x1408, status 0); an Encryption Change v2
                       (0x59, status 0, enabled): size. A size of 0 is not a key size (LE 7-16, Part H 2.3.4; BR/EDR
                       1-16, Vol 2, Part C, 4.1.3): benign "no key size reported" (a controller that left the field 0).
  key-size-down        (SEC-09) a key size (Read Encryption Key Size, Encryption Change v2, 1-16) smaller than an
                       earlier one with the same peer (the BD_ADDR / peer address of the link's connection complete):
                       size, earlier_size, earlier_frame (not a frame of this fact), peer.
  ediv-rand-nonzero    (SEC-12) an encryption start (air LL_ENC_REQ; HCI LE Enable Encryption 0x2019 or LE Long Term
                       Key Request 0x3E/0x05) with a non-zero EDIV or Rand, on a link whose last pairing (Pairing
                       Response seen) has not yet been followed by an encryption start: the key started is the STK of
                       a legacy pairing (Part H 2.4.4.1: EDIV and Rand zero) or the LTK of an LE Secure Connections
                       pairing (2.4.4.1 / 2.3.5.6.5: zero): key "stk" / "sc-ltk", frames = the start and the Pairing
                       Request, ediv, rand. A start under an LTK from an earlier bond is not judged (legacy LTKs
                       carry EDIV/Rand by design).
  mitm-not-achieved    (SEC-13) LE: a Pairing Request/Response where either AuthReq sets MITM and the model is Just
                       Works (the STK/LTK unauthenticated): frame = the Response, frames = both. BR/EDR: an IO
                       Capability Request Reply (0x042B) and IO Capability Response (0x32) with the same peer, either
                       Authentication_Requirements odd (MITM), and the model of Vol 3, Part C, Table 5.7 Just Works
                       (scripts/smp_method.py ssp_method), unless the Link Key Notification that follows has an
                       authenticated key type (0x05, 0x08): frames = the IO capability exchange, the User
                       Confirmation Request, Simple Pairing Complete and the Link Key Notification.
  same-key-peers       (SEC-14) the same LTK (LE Enable Encryption, LE Long Term Key Request Reply) or link key (Link
                       Key Request Reply, Link Key Notification) used with two different peers: frame = the first use
                       with the second peer, frames = it and the first use, peers.
  bonded-link-unencrypted  (SEC-15) a link (HCI connection complete with a peer; air CONNECT_IND / AUX_CONNECT_REQ
                       between an initiator and an advertiser) after a pairing with both Bonding flags set that went on
                       to encrypt the link, with the same peer (air: the same two addresses), that carried ATT PDUs
                       and never started encryption (no LL_ENC_REQ, LE Enable Encryption, LTK Request or Encryption
                       Change success) before it ended: frame = the link's connect frame, bond_frame.
  public-key-invalid   (SEC-19) an SMP Pairing Public Key (0x0C) in a pairing whose Request/Response made it legacy
                       (no public key belongs there: Part H 2.3.5.6) or whose point is not on P-256 (FIPS 186-4
                       D.1.2.3; the Invalid Curve attack): frame = the key, why.
  host-answered-user-step  (SEC-22) BR/EDR: this side's User Confirmation Request Reply (0x042C) under 1 s after the
                       User Confirmation Request (0x33) of a pairing whose IO capability exchange makes it Numeric
                       Comparison (Vol 3, Part C, Table 5.7), or its User Passkey Request Reply (0x042E) under 1 s
                       after a User Passkey Request (0x34) of a Passkey Entry one, and the Link Key Notification after
                       it authenticated (0x05, 0x08): no person answered, yet the key claims MITM protection. frame =
                       the Reply, frames = the request and the Link Key Notification, microseconds. Times are tshark's,
                       except in a PacketLogger log whose seconds field counts milliseconds (every time a whole unit,
                       and most commands answered a unit or more later, which HCI round trips of milliseconds never
                       are on a clock of seconds: BTstack's Windows port), read as milliseconds.
  irk-zero             (SEC-20) an SMP Identity Information (0x08) whose IRK is sixteen zero bytes (Vol 3, Part H,
                       3.6.4; Vol 6, Part B, 4.7: a zero peer IRK means the identity address is used, no privacy):
                       frame = the PDU.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from diagnosis_truth import TSHARK, events_main, hci_packets  # noqa: E402
from smp_method import NC, TABLE, ssp_method  # noqa: E402

JW, PE = "Just Works", "Passkey Entry"
P256_P = 2 ** 256 - 2 ** 224 + 2 ** 192 + 2 ** 96 - 1
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
UNAUTHENTICATED_LINK_KEYS = {0x00, 0x01, 0x02, 0x03, 0x04, 0x06, 0x07}
AUTHENTICATED_LINK_KEYS = {0x05, 0x08}

FIELDS = [
    "frame.number", "hci_mon.adapter_id", "bthci_acl.chandle", "btle.access_address", "nordic_ble.crcok",
    "btle.crc.incorrect", "btle.advertising_header.pdu_type", "btle.initiator_address", "btle.advertising_address",
    "btle.link_layer_data.access_address", "btle.control_opcode", "btle.control.encrypted_diversifier",
    "btle.control.random_number", "btsmp.opcode", "btsmp.io_capability", "btsmp.oob_data_flags",
    "btsmp.bonding_flags", "btsmp.mitm_flag", "btsmp.sc_flag", "btsmp.max_enc_key_size", "btsmp.public_key_x",
    "btsmp.public_key_y", "btsmp.id_resolving_key", "btatt.opcode",
]


def num(text):
    if not text:
        return None
    text = text.split(",")[0]
    try:
        return int(text, 0)
    except ValueError:
        return None


def field_facts(path):
    """(frame, kind, data) from the fields pass."""
    args = TSHARK + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    for line in out.splitlines():
        cells = line.split("\t")
        row = {f: (cells[i] if i < len(cells) and cells[i] else None) for i, f in enumerate(FIELDS)}
        frame = int(row["frame.number"])
        if row["btle.access_address"]:
            if row["nordic_ble.crcok"] == "0" or row["btle.crc.incorrect"]:
                continue
            link = "aa 0x%08x" % num(row["btle.access_address"])
        else:
            link = "%s/%s" % (row["hci_mon.adapter_id"] or 0, num(row["bthci_acl.chandle"]))
        pdu = num(row["btle.advertising_header.pdu_type"])
        if pdu == 0x05 and row["btle.link_layer_data.access_address"] and row["btle.advertising_address"]:
            # CONNECT_IND / AUX_CONNECT_REQ: a new link on the air.
            yield frame, "connect", {"link": "aa 0x%08x" % num(row["btle.link_layer_data.access_address"]),
                                     "peer": "%s>%s" % (row["btle.initiator_address"], row["btle.advertising_address"])}
            continue
        op = num(row["btle.control_opcode"])
        if op == 0x03:
            yield frame, "start", {"link": link, "ediv": num(row["btle.control.encrypted_diversifier"]) or 0,
                                   "rand": num(row["btle.control.random_number"]) or 0}
        elif op == 0x02:
            yield frame, "ended", {"link": link}
        smp = num(row["btsmp.opcode"])
        if smp in (0x01, 0x02):
            yield frame, "smp-pairing", {
                "link": link, "opcode": smp, "io": num(row["btsmp.io_capability"]),
                "oob": num(row["btsmp.oob_data_flags"]), "bond": num(row["btsmp.bonding_flags"]),
                "mitm": row["btsmp.mitm_flag"] == "1", "sc": row["btsmp.sc_flag"] == "1",
                "size": num(row["btsmp.max_enc_key_size"])}
        elif smp == 0x08:
            yield frame, "identity", {"link": link, "irk": row["btsmp.id_resolving_key"]}
        elif smp == 0x0C:
            yield frame, "public-key", {"link": link, "x": row["btsmp.public_key_x"], "y": row["btsmp.public_key_y"]}
        if row["btatt.opcode"]:
            yield frame, "att", {"link": link}


def address(raw):
    return ":".join("%02x" % b for b in raw[::-1])


def hci_facts(path, clock=None):
    """(frame, kind, data) from the raw HCI commands and events; `clock` (a ``Clock``) sees every command and answer."""
    clock = clock if clock is not None else Clock()
    for p in hci_packets(path):
        raw, ad, frame = p["raw"], p["adapter"] or 0, p["frame"]
        handle = lambda b: "%s/%d" % (ad, int.from_bytes(b, "little") & 0x0FFF)  # noqa: E731
        clock.see(p)
        if p["kind"] == "cmd" and len(raw) >= 3:
            opcode, q = int.from_bytes(raw[0:2], "little"), raw[3:]
            if opcode in (0x042C, 0x042E) and len(q) >= 6:
                yield frame, "user-answer", {"peer": address(q[0:6]), "opcode": opcode, "time": p["time"]}
            if opcode == 0x2019 and len(q) >= 28:
                yield frame, "start", {"link": handle(q[0:2]), "rand": int.from_bytes(q[2:10], "little"),
                                       "ediv": int.from_bytes(q[10:12], "little")}
                yield frame, "key", {"link": handle(q[0:2]), "key": q[12:28].hex(), "what": "LTK"}
            elif opcode == 0x201A and len(q) >= 18:
                yield frame, "key", {"link": handle(q[0:2]), "key": q[2:18].hex(), "what": "LTK"}
            elif opcode == 0x040B and len(q) >= 22:
                yield frame, "key", {"peer": address(q[0:6]), "key": q[6:22].hex(), "what": "link key"}
            elif opcode == 0x042B and len(q) >= 9:
                yield frame, "io-local", {"peer": address(q[0:6]), "io": q[6], "oob": q[7], "auth": q[8]}
            continue
        if p["kind"] != "evt" or len(raw) < 2:
            continue
        code, q = raw[0], raw[2:]
        if code == 0x3E and q and q[0] in (0x01, 0x0A, 0x29) and len(q) >= 11 and q[1] == 0:
            yield frame, "connected", {"link": handle(q[2:4]), "peer": address(q[6:12])}
        elif code == 0x3E and q and q[0] == 0x05 and len(q) >= 13:
            yield frame, "start", {"link": handle(q[1:3]), "rand": int.from_bytes(q[3:11], "little"),
                                   "ediv": int.from_bytes(q[11:13], "little")}
        elif code == 0x03 and len(q) >= 10 and q[0] == 0 and q[9] == 0x01:
            yield frame, "connected", {"link": handle(q[1:3]), "peer": address(q[3:9])}
        elif code == 0x05 and len(q) >= 3 and q[0] == 0:
            yield frame, "ended", {"link": handle(q[1:3])}
        elif code in (0x08, 0x59) and len(q) >= 4 and q[0] == 0:
            size = q[4] if code == 0x59 and len(q) >= 5 and q[3] else None
            yield frame, "encrypted", {"link": handle(q[1:3]), "enabled": q[3], "size": size}
        elif code == 0x0E and len(q) >= 7 and int.from_bytes(q[1:3], "little") == 0x1408 and q[3] == 0:
            yield frame, "key-size", {"link": handle(q[4:6]), "size": q[6]}
        elif code == 0x16 and len(q) >= 6:
            yield frame, "pin-request", {"peer": address(q[0:6])}
        elif code in (0x31, 0x33, 0x34, 0x36) and len(q) >= 6:
            peer = address(q[1:7]) if code == 0x36 else address(q[0:6])
            yield frame, "ssp-step", {"peer": peer, "code": code, "status": q[0] if code == 0x36 else 0, "time": p["time"]}
        elif code == 0x32 and len(q) >= 9:
            yield frame, "io-peer", {"peer": address(q[0:6]), "io": q[6], "oob": q[7], "auth": q[8]}
        elif code == 0x18 and len(q) >= 23:
            yield frame, "link-key", {"peer": address(q[0:6]), "key": q[6:22].hex(), "type": q[22]}


class Clock:
    """Whether the log's seconds field counts milliseconds (BTstack's Windows port wrote PacketLogger files so): every
    time a whole unit, and of at least 4 commands answered (Command Complete 0x0E / Status 0x0F for their opcode), 90 %
    answered one unit or more later. HCI round trips take milliseconds: on a clock of seconds nearly all fall within
    the unit."""

    def __init__(self):
        self.whole = True
        self.sent = {}  # opcode -> time
        self.answered = self.late = 0

    def see(self, p):
        raw, t = p["raw"], p["time"]
        self.whole = self.whole and t == int(t)
        if p["kind"] == "cmd" and len(raw) >= 2:
            self.sent[int.from_bytes(raw[0:2], "little")] = t
        elif p["kind"] == "evt" and len(raw) >= 6 and raw[0] in (0x0E, 0x0F):
            sent = self.sent.pop(int.from_bytes(raw[3:5] if raw[0] == 0x0E else raw[4:6], "little"), None)
            if sent is not None:
                self.answered += 1
                self.late += t - sent >= 1

    def scale(self):
        """Microseconds per unit of the log's times."""
        milliseconds = self.whole and self.answered >= 4 and self.late >= 0.9 * self.answered
        return 1000 if milliseconds else 1_000_000


def le_method(req, rsp):
    """(secure connections, model) of a Pairing Request/Response (Vol 3, Part H, 2.3.5.1, Table 2.8)."""
    sc = req["sc"] and rsp["sc"]
    oob_i, oob_r = req["oob"] == 1, rsp["oob"] == 1
    if (oob_i or oob_r) if sc else (oob_i and oob_r):
        return sc, "OOB"
    if not (req["mitm"] or rsp["mitm"]):
        return sc, JW
    if req["io"] is None or rsp["io"] is None or req["io"] > 4 or rsp["io"] > 4:
        return sc, None
    cell = TABLE[rsp["io"]][req["io"]]
    return sc, cell[1 if sc else 0] if isinstance(cell, tuple) else cell


def on_p256(x_hex, y_hex):
    """The point (X, Y as tshark prints them: little-endian octets) is on P-256."""
    try:
        x = int.from_bytes(bytes.fromhex(x_hex.replace(":", "")), "little")
        y = int.from_bytes(bytes.fromhex(y_hex.replace(":", "")), "little")
    except (AttributeError, ValueError):
        return None
    if x >= P256_P or y >= P256_P:
        return False
    return (y * y - (x ** 3 - 3 * x + P256_B)) % P256_P == 0


class Security:
    def __init__(self):
        self.events = []
        self.peers = {}        # link -> peer
        self.pairing = {}      # link -> the link's last pairing: request, response, sc, method, bond, encrypted
        self.request = {}      # link -> the Pairing Request awaiting its Response
        self.sizes = {}        # peer -> (largest size, frame)
        self.keys = {}         # key -> (peer, frame)
        self.bonds = {}        # peer -> frame of a bonding pairing that encrypted the link
        self.links = {}        # link -> {"frame", "peer", "att", "encrypted"}
        self.ssp = {}          # peer -> {"local", "peer", "frames", "asked", "answer"}
        self.microseconds_per_unit = 1_000_000

    def emit(self, cls, frame, frames=(), **fields):
        event = {"class": cls, "frame": frame, "frames": sorted(set(frames) | {frame})}
        event.update(fields)
        self.events.append(event)

    def fact(self, frame, kind, d):
        getattr(self, kind.replace("-", "_"))(frame, d)

    def connect(self, frame, d):
        self.close(d["link"])
        self.peers[d["link"]] = d["peer"]
        self.links[d["link"]] = {"frame": frame, "peer": d["peer"], "att": 0, "encrypted": False,
                                 "bond": self.bonds.get(d["peer"])}
        self.pairing.pop(d["link"], None)

    connected = connect

    def ended(self, frame, d):
        self.close(d["link"])

    def close(self, link):
        state = self.links.pop(link, None)
        if state and state["bond"] is not None and state["att"] and not state["encrypted"]:
            self.emit("bonded-link-unencrypted", state["frame"], peer=state["peer"], link=link,
                      bond_frame=state["bond"], att_pdus=state["att"])

    def finish(self):
        for link in list(self.links):
            self.close(link)

    def att(self, frame, d):
        if d["link"] in self.links:
            self.links[d["link"]]["att"] += 1

    def smp_pairing(self, frame, d):
        link = d["link"]
        if d["opcode"] == 0x01:
            self.request[link] = (frame, d)
            return
        if link not in self.request:
            return
        rframe, req = self.request.pop(link)
        sc, method = le_method(req, d)
        bond = req["bond"] == 1 and d["bond"] == 1
        self.pairing[link] = {"request": rframe, "response": frame, "sc": sc, "method": method, "bond": bond,
                              "started": False}
        if not sc and method in (JW, PE):
            self.emit("legacy-pairing", rframe, [frame], method=method, link=link)
        if (req["mitm"] or d["mitm"]) and method == JW:
            self.emit("mitm-not-achieved", frame, [rframe], method=method, pairing="sc" if sc else "legacy",
                      link=link)
        if req["size"] is not None and d["size"] is not None and min(req["size"], d["size"]) < 16:
            self.emit("key-size-short", frame, [rframe], size=min(req["size"], d["size"]), source="smp", link=link)

    def public_key(self, frame, d):
        pairing = self.pairing.get(d["link"])
        if pairing is not None and not pairing["sc"]:
            self.emit("public-key-invalid", frame, why="legacy pairing", pairing_frame=pairing["request"],
                      link=d["link"])
        elif on_p256(d["x"], d["y"]) is False:
            self.emit("public-key-invalid", frame, why="not on P-256", link=d["link"])

    def identity(self, frame, d):
        irk = (d["irk"] or "").replace(":", "")
        if irk and set(irk) == {"0"}:
            self.emit("irk-zero", frame, link=d["link"])

    def start(self, frame, d):
        link = d["link"]
        if link in self.links:
            self.links[link]["encrypted"] = True
        pairing = self.pairing.get(link)
        if pairing is None or pairing["started"]:
            return
        pairing["started"] = True
        if pairing["bond"] and link in self.peers:
            self.bonds[self.peers[link]] = pairing["request"]
        if d["ediv"] or d["rand"]:
            self.emit("ediv-rand-nonzero", frame, [pairing["request"]], key="sc-ltk" if pairing["sc"] else "stk",
                      ediv=d["ediv"], rand=d["rand"], link=link)

    def encrypted(self, frame, d):
        link = d["link"]
        if d["enabled"]:
            # The start itself (EDIV and Rand) is the command or LTK request before; this marks it when not seen.
            self.start(frame, {"link": link, "ediv": 0, "rand": 0})
        if d["size"] is not None:
            self.key_size(frame, d)

    def key_size(self, frame, d):
        size, peer = d["size"], self.peers.get(d["link"], d["link"])
        if size < 16:
            extra = {"benign": "no key size reported"} if size == 0 else {}
            self.emit("key-size-short", frame, size=size, source="hci", link=d["link"], **extra)
        if size == 0:
            return
        earlier = self.sizes.get(peer)
        if earlier and size < earlier[0]:
            self.emit("key-size-down", frame, size=size, earlier_size=earlier[0], earlier_frame=earlier[1], peer=peer)
        if not earlier or size > earlier[0]:
            self.sizes[peer] = (size, frame)

    def key(self, frame, d):
        peer = d.get("peer") or self.peers.get(d.get("link"))
        if peer is None:
            return
        if d["what"] == "link key":
            self.bonds.setdefault(peer, frame)  # the host holds a key for the peer (Reply) or was handed one
        first = self.keys.get(d["key"])
        if first is None:
            self.keys[d["key"]] = (peer, frame)
        elif first[0] != peer and not first[0].startswith("!"):
            self.emit("same-key-peers", frame, [first[1]], what=d["what"], peers=[first[0], peer])
            self.keys[d["key"]] = ("!" + peer, frame)  # told once per key

    def link_key(self, frame, d):
        self.key(frame, {"peer": d["peer"], "key": d["key"], "what": "link key"})
        s = self.ssp.pop(d["peer"], None)
        if s:
            self.host_answered(s, frame, d)
        if s and "local" in s and "peer" in s and (s["local"]["auth"] & 1 or s["peer"]["auth"] & 1):
            as_tuple = lambda x: (x["io"], x["oob"], x["auth"])  # noqa: E731
            method = ssp_method(as_tuple(s["local"]), as_tuple(s["peer"]))
            if method == JW and d["type"] not in AUTHENTICATED_LINK_KEYS:
                self.emit("mitm-not-achieved", min(s["frames"]), s["frames"] + [frame], method=method,
                          pairing="ssp", key_type=d["type"], peer=d["peer"])

    def user_answer(self, frame, d):
        s = self.ssp.get(d["peer"])
        if s and "asked" in s:
            asked_frame, asked_time, code = s.pop("asked")
            s["answer"] = {"frame": frame, "request": asked_frame, "opcode": d["opcode"], "code": code,
                           "microseconds": round((d["time"] - asked_time) * self.microseconds_per_unit)}
            s["frames"].append(frame)

    def host_answered(self, s, frame, d):
        """SEC-22's fact at the Link Key Notification `frame` of the pairing `s`."""
        answer = s.get("answer")
        if not answer or "local" not in s or "peer" not in s or d["type"] not in AUTHENTICATED_LINK_KEYS:
            return
        as_tuple = lambda x: (x["io"], x["oob"], x["auth"])  # noqa: E731
        method = ssp_method(as_tuple(s["local"]), as_tuple(s["peer"]))
        claimed = {(NC, 0x042C, 0x33), (PE, 0x042E, 0x34)}
        if (method, answer["opcode"], answer["code"]) in claimed and answer["microseconds"] < 1_000_000:
            self.emit("host-answered-user-step", answer["frame"], [answer["request"], frame], method=method,
                      microseconds=answer["microseconds"], key_type=d["type"], peer=d["peer"])

    def pin_request(self, frame, d):
        self.emit("legacy-pairing", frame, method="PIN", peer=d["peer"])

    def io_local(self, frame, d):
        self.ssp.setdefault(d["peer"], {"frames": []})
        self.ssp[d["peer"]]["local"] = d
        self.ssp[d["peer"]]["frames"].append(frame)

    def io_peer(self, frame, d):
        self.ssp.setdefault(d["peer"], {"frames": []})
        self.ssp[d["peer"]]["peer"] = d
        self.ssp[d["peer"]]["frames"].append(frame)

    def ssp_step(self, frame, d):
        if d["code"] == 0x31:
            prior = self.ssp.get(d["peer"])
            # The peer's IO Capability Response may come before this side's Request event (the Realtek headset log:
            # 75, then 76): it belongs to this pairing.
            if prior and "peer" in prior and "local" not in prior:
                prior["frames"].append(frame)
            else:
                self.ssp[d["peer"]] = {"frames": [frame]}
        elif d["peer"] in self.ssp:
            self.ssp[d["peer"]]["frames"].append(frame)
            if d["code"] in (0x33, 0x34):
                self.ssp[d["peer"]]["asked"] = (frame, d["time"], d["code"])
            if d["code"] == 0x36 and d["status"]:
                self.ssp.pop(d["peer"])


def analyse(path):
    clock = Clock()
    facts = list(field_facts(path)) + list(hci_facts(path, clock))
    facts.sort(key=lambda f: f[0])
    security = Security()
    security.microseconds_per_unit = clock.scale()
    for frame, kind, data in facts:
        security.fact(frame, kind, data)
    security.finish()
    return sorted(security.events, key=lambda e: (e["frame"], e["class"]))


if __name__ == "__main__":
    sys.exit(events_main(sys.argv[1:], __doc__, analyse))
