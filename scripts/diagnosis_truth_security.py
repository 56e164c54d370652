"""How links were secured, and what is weak or out of spec, read by tshark (diagnosis_truth.py's security classes).

One extra tshark pass of plain fields (docs/security.md, issue 45). Classes (frame = the frame of the event named):
  smp-debug-public-key   a Pairing Public Key whose X is the debug key of Core Vol 3, Part H, 2.3.5.6.1 (error).
  link-key-debug         Link Key Notification (event 0x18) with key type 0x03, debug combination key (error).
  smp-key-size-out-of-range  a Pairing Request/Response Maximum Encryption Key Size outside 7-16 (3.5.1): size
                         (error).
  smp-key-size-short     a Pairing Response whose smaller Maximum Encryption Key Size with its request is under 16:
                         size, request_frame (warning; under 7 error).
  encryption-key-size    a Read Encryption Key Size answer (Command Complete 0x1408) under 16: size, handle, peer
                         (warning; under 7 error).
  encryption-key-size-down  an answer smaller than an earlier one for the same peer (BD_ADDR of the handle's
                         Connection Complete): size, earlier_size, earlier_frame, peer (error).
  sc-encryption-before-dhkey-check  LE Secure Connections (both SC flags) and the encryption start (LL_ENC_REQ,
                         LE Start Encryption, LE Long Term Key Request) before the DHKey Checks (air: neither seen;
                         HCI: fewer than two): pairing_frame (error).
  ll-channel-map-invalid  a connect request or LL_CHANNEL_MAP_IND with fewer than 2 used data channels (Vol 6, Part
                         B, 2.3.3.1): used (error).
"""

import subprocess

DEBUG_X = "e69d350e480103ccdbfdf4ac1191f4efb9a5f9e9a7832c5e2cbe97f2d203b020"  # wire order, as tshark prints it
FIELDS = [
    "frame.number", "btsmp.opcode", "btsmp.public_key_x", "btsmp.max_enc_key_size", "btsmp.sc_flag",
    "bthci_evt.code", "bthci_evt.key_type", "bthci_evt.opcode", "bthci_evt.enc_key_size", "bthci_evt.status",
    "bthci_evt.connection_handle", "bthci_evt.bd_addr", "bthci_evt.le_meta_subevent", "bthci_cmd.opcode",
    "btle.control_opcode", "btle.link_layer_data.channel_map", "btle.control.channel_map",
    "btle.advertising_header.pdu_type", "nordic_ble.crcok", "btle.crc.incorrect", "btle.access_address",
]

SEVERITY = [
    ("smp-debug-public-key", None, "error", "SEC-11"),
    ("link-key-debug", None, "error", "SEC-11"),
    ("smp-key-size-out-of-range", None, "error", "SEC-17"),
    ("smp-key-size-short", lambda e: e["size"] < 7, "error", "SEC-08 (under 7 bytes)"),
    ("smp-key-size-short", None, "warning", "SEC-08"),
    ("encryption-key-size", lambda e: e["size"] < 7, "error", "SEC-08 (under 7 bytes)"),
    ("encryption-key-size", None, "warning", "SEC-08"),
    ("encryption-key-size-down", None, "error", "SEC-09"),
    ("sc-encryption-before-dhkey-check", None, "error", "SEC-18"),
    ("ll-channel-map-invalid", None, "error", "LL-02"),
]


def num(value):
    if not value:
        return None
    value = value.split(",")[0]
    return int(value, 0) if value.startswith("0x") else int(value)


def rows(tshark, path):
    args = tshark + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    for line in out.splitlines():
        cells = line.split("\t")
        yield {f: (cells[i] if i < len(cells) and cells[i] else None) for i, f in enumerate(FIELDS)}


def good(row):
    return row["nordic_ble.crcok"] != "0" and not row["btle.crc.incorrect"]


def channels(value):
    """Used data channels of a 5-octet map as tshark prints it (hex, first octet first)."""
    digits = value.replace(":", "").replace("0x", "")
    octets = bytes.fromhex(digits.rjust(10, "0")) if len(digits) <= 10 else bytes.fromhex(digits[:10])
    return sum(bin(b).count("1") for b in octets[:4]) + bin(octets[4] & 0x1F).count("1")


def security_events(tshark, path, emit):
    request = None          # (frame, max key size, sc flag) of the last Pairing Request
    sc_pairing = None       # frame of an LE Secure Connections pairing whose DHKey Checks are awaited
    checks = 0
    air = False
    peers = {}              # handle -> BD_ADDR (Connection Complete)
    sizes = {}              # peer -> (size, frame) of the largest answer so far
    for row in rows(tshark, path):
        frame = int(row["frame.number"])
        if row["btle.access_address"]:
            air = True
            if not good(row):
                continue
        opcode = num(row["btsmp.opcode"])
        if opcode in (0x01, 0x02) and row["btsmp.max_enc_key_size"]:
            size = num(row["btsmp.max_enc_key_size"])
            if not 7 <= size <= 16:
                emit("smp-key-size-out-of-range", frame, size=size)
            sc = row["btsmp.sc_flag"] == "1"
            if opcode == 0x01:
                request = (frame, size, sc)
            elif request is not None:
                agreed = min(size, request[1])
                if agreed < 16:
                    emit("smp-key-size-short", frame, size=agreed, request_frame=request[0])
                if sc and request[2]:
                    sc_pairing, checks = request[0], 0
                request = None
        elif opcode == 0x0C and (row["btsmp.public_key_x"] or "").replace(":", "").lower() == DEBUG_X:
            emit("smp-debug-public-key", frame)
        elif opcode == 0x0D and sc_pairing is not None:
            checks += 1
        started = (num(row["btle.control_opcode"]) == 0x03 or num(row["bthci_cmd.opcode"]) == 0x2019
                   or (num(row["bthci_evt.code"]) == 0x3E and num(row["bthci_evt.le_meta_subevent"]) == 0x05))
        if started and sc_pairing is not None:
            if checks < (1 if air else 2):
                emit("sc-encryption-before-dhkey-check", frame, pairing_frame=sc_pairing)
            sc_pairing = None
        code = num(row["bthci_evt.code"])
        if code == 0x03 and num(row["bthci_evt.status"]) == 0:
            peers[num(row["bthci_evt.connection_handle"])] = row["bthci_evt.bd_addr"]
        if code == 0x18 and num(row["bthci_evt.key_type"]) == 0x03:
            emit("link-key-debug", frame)
        if code == 0x0E and num(row["bthci_evt.opcode"]) == 0x1408 and num(row["bthci_evt.status"]) == 0 \
                and row["bthci_evt.enc_key_size"]:
            size, handle = num(row["bthci_evt.enc_key_size"]), num(row["bthci_evt.connection_handle"])
            peer = peers.get(handle, "handle %s" % handle)
            if size < 16:
                emit("encryption-key-size", frame, size=size, handle=handle, peer=peer)
            earlier = sizes.get(peer)
            if earlier and size < earlier[0]:
                emit("encryption-key-size-down", frame, size=size, earlier_size=earlier[0], earlier_frame=earlier[1],
                     peer=peer)
            if not earlier or size > earlier[0]:
                sizes[peer] = (size, frame)
        pdu = num(row["btle.advertising_header.pdu_type"])
        chm = row["btle.link_layer_data.channel_map"] if pdu == 0x05 else None
        if num(row["btle.control_opcode"]) == 0x01:
            chm = row["btle.control.channel_map"]
        if chm is not None and channels(chm) < 2:
            emit("ll-channel-map-invalid", frame, used=channels(chm))
