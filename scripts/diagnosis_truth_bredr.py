"""BR/EDR for diagnosis_truth.py: pages that time out (folded per device), connections that fail, and the
authentication chain per peer (Link Key Request -> the host's Reply or Negative Reply -> IO capabilities or PIN code
-> Simple Pairing Complete / Authentication Complete). Reads the raw command and event bytes tshark printed, in the
layouts of Core v5.4 Vol 4, Part E, 7.1 and 7.7, and compares each with tshark's field where tshark has one."""

# Connection Complete statuses that are this host's own cancel, not a failure (7.1.7 Create Connection Cancel gives
# 0x02 Unknown Connection Identifier; 0x16 Connection Terminated By Local Host).
CANCELLED = {0x02, 0x16}
# Events naming a peer by its BD_ADDR (first 6 octets) that belong to the chain, and what each is called there.
CHAIN_EVENTS = {0x16: "pin_code_request_frame", 0x31: "io_capability_request_frame",
                0x32: "io_capability_response_frame", 0x33: "user_confirmation_request_frame",
                0x34: "user_passkey_request_frame"}
# An Authentication Complete this soon after a failed Simple Pairing Complete of the same peer reports the same failure
# (the controller sends both at once: Vol 4, Part E, 7.7.45 and 7.7.6).
FOLD_SECONDS = 2.0
PAIRING_STEPS = ("pin_code_request_frame", "io_capability_request_frame", "io_capability_response_frame")


def address(raw):
    """A BD_ADDR as tshark prints it (lower case), from its little-endian octets."""
    return ":".join("%02x" % b for b in raw[::-1])


class Classic:
    def __init__(self, truth):
        self.truth = truth
        self.pages = {}      # (adapter, peer) -> frames of Create Connection
        self.timeouts = {}   # (adapter, peer) -> frames of Connection Complete 0x04, in order
        self.peers = {}      # (adapter, handle) -> peer of a BR/EDR link
        self.chains = {}     # (adapter, peer) -> the authentication chain since the last Link Key Request

    def chain(self, ad, peer, frame=None):
        key = (ad, peer)
        if frame is not None or key not in self.chains:
            self.chains[key] = {"link_key_request_frame": frame, "link_key_answer": None,
                                "link_key_answer_frame": None, **{k: None for k in CHAIN_EVENTS.values()},
                                "failure": None, "failure_time": None}
        return self.chains[key]

    def peer_field(self, p, raw_peer):
        shown = p["fields"].get("bthci_evt.bd_addr") or p["fields"].get("bthci_cmd.bd_addr")
        if shown and shown.lower() != raw_peer:
            self.truth.notes.append("frame %d: tshark disagrees on peer: %s vs %s" % (p["frame"], shown, raw_peer))
        return raw_peer

    # Commands: Create Connection (7.1.5), Link Key Request Reply / Negative Reply (7.1.10, 7.1.11).
    def command(self, p, opcode, params):
        if len(params) < 6 or opcode not in (0x0405, 0x040B, 0x040C):
            return
        peer, ad = self.peer_field(p, address(params[0:6])), p["adapter"]
        if opcode == 0x0405:
            self.pages.setdefault((ad, peer), []).append(p["frame"])
        else:
            chain = self.chain(ad, peer)
            chain["link_key_answer"] = "reply" if opcode == 0x040B else "negative-reply"
            chain["link_key_answer_frame"] = p["frame"]

    def event(self, p, code, params):
        ad, frame = p["adapter"], p["frame"]
        if code in (0x03, 0x2C):
            self.connection_complete(p, params, code)
        elif code == 0x17 and len(params) >= 6:
            self.chain(ad, self.peer_field(p, address(params[0:6])), frame)
        elif code in CHAIN_EVENTS and len(params) >= 6:
            self.chain(ad, self.peer_field(p, address(params[0:6])))[CHAIN_EVENTS[code]] = frame
        elif code == 0x36 and len(params) >= 7:
            status = self.truth.check(p, "bthci_evt.status", params[0])
            if status != 0:
                self.failed(p, "simple-pairing-complete", status, self.peer_field(p, address(params[1:7])), None)
        elif code == 0x06 and len(params) >= 3:
            status = self.truth.check(p, "bthci_evt.status", params[0])
            handle = int.from_bytes(params[1:3], "little") & 0x0FFF
            if status != 0:
                self.failed(p, "authentication-complete", status, self.peers.get((ad, handle)), handle)
        elif code == 0x05 and len(params) >= 4 and params[0] == 0 and params[3] in (0x05, 0x06):
            # A BR/EDR link ended 0x05/0x06 with no Authentication Complete (the peer ended it when the key was
            # missing or refused, the blueprobe Clip 3 log: Negative Reply 3299, Disconnection Complete 0x06 at 3304):
            # the same missing key, unless an Authentication Complete already failed for it just before.
            handle = int.from_bytes(params[1:3], "little") & 0x0FFF
            peer = self.peers.get((ad, handle))
            chain = self.chain(ad, peer) if peer is not None else None
            if chain is not None and not (chain["failure"] is not None and p["time"] - chain["failure_time"] < FOLD_SECONDS):
                paired = any(chain[k] is not None for k in PAIRING_STEPS)
                if not paired and chain["link_key_answer"] is not None:
                    self.failed(p, "disconnection-complete", params[3], peer, handle)

    def connection_complete(self, p, params, code):
        """Connection Complete (0x03, 7.7.3) and Synchronous Connection Complete (0x2C, 7.7.35): status, handle,
        BD_ADDR, link type."""
        if len(params) < 10:
            return
        status = self.truth.check(p, "bthci_evt.status", params[0])
        handle = int.from_bytes(params[1:3], "little") & 0x0FFF
        peer, ad = self.peer_field(p, address(params[3:9])), p["adapter"]
        if status == 0:
            self.peers[(ad, handle)] = peer
            return
        link = {0x00: "SCO", 0x01: "ACL", 0x02: "eSCO"}.get(params[9], None)
        if code == 0x03 and status == 0x04:
            self.timeouts.setdefault((ad, peer), []).append(p["frame"])
            return
        pages = [f for f in self.pages.get((ad, peer), []) if f < p["frame"]]
        self.truth.emit("bredr-connection-failed", p["frame"], status=status, peer=peer, link_type=link,
                        create_frame=pages[-1] if pages else None, **self.truth.extra(p))

    def failed(self, p, source, status, peer, handle):
        """A failed Simple Pairing Complete or Authentication Complete. An Authentication Complete failing right after
        a failed Simple Pairing Complete for the same peer is the same failure (folded into it). With no pairing since
        the host's link key answer and status 0x05/0x06, or with 0x06 PIN or Key Missing, it is a missing or refused
        key: link-key-missing."""
        ad = p["adapter"]
        chain = self.chain(ad, peer) if peer is not None else self.chain(ad, None)
        earlier = chain["failure"]
        if source == "authentication-complete" and earlier is not None and earlier["source"] == \
                "simple-pairing-complete" and earlier["authentication_complete_frame"] is None \
                and p["time"] - chain["failure_time"] < FOLD_SECONDS:
            earlier["authentication_complete_frame"] = p["frame"]
            earlier["handle"] = handle
            return
        chain["failure_time"] = p["time"]
        paired = any(chain[k] is not None for k in PAIRING_STEPS)
        facts = {k: chain[k] for k in ("link_key_request_frame", "link_key_answer", "link_key_answer_frame")}
        if status == 0x06 or (status == 0x05 and not paired and chain["link_key_answer"] is not None):
            chain["failure"] = self.truth.emit("link-key-missing", p["frame"], source=source, status=status,
                                               peer=peer, handle=handle, **facts, **self.truth.extra(p))
            return
        pairing = "legacy" if chain["pin_code_request_frame"] is not None else "ssp" if paired or \
            source == "simple-pairing-complete" else None
        chain["failure"] = self.truth.emit(
            "bredr-auth-failed", p["frame"], source=source, status=status, peer=peer, handle=handle,
            pairing=pairing, **facts, **{k: chain[k] for k in CHAIN_EVENTS.values()},
            authentication_complete_frame=None, **self.truth.extra(p))

    def finish(self):
        """Page timeouts, one event per device: frame = the first, with the count and every frame."""
        for (ad, peer), frames in self.timeouts.items():
            pages = [f for f in self.pages.get((ad, peer), []) if f < frames[0]]
            self.truth.emit("page-timeout", frames[0], peer=peer, count=len(frames), last_frame=frames[-1],
                            frames=frames, create_frame=pages[-1] if pages else None,
                            **({"adapter": ad} if ad is not None else {}))


# LL control procedures (Core v5.4 Vol 6, Part B, 5.1): the request opcode a reject names, and the PDUs that complete
# it. A collision (0x23 LL Procedure Collision, 0x2A Different Transaction Collision, 5.3) rejected the request; one of
# these PDUs later on the same link means the procedure was run again and completed: benign.
PROCEDURE_COMPLETIONS = {0x03: {0x04}, 0x08: {0x09}, 0x0E: {0x09}, 0x0F: {0x10, 0x00}, 0x12: {0x13},
                         0x14: {0x15}, 0x16: {0x17, 0x18}, 0x1F: {0x20}}
COLLISION_REASONS = {0x23, 0x2A}


def procedures_redone(events, controls, severity_of):
    """Set `redone_frame` of each collision ll-reject whose procedure later completed on its link (controls: access
    address -> [(frame, opcode)] of every LL control PDU read), and its severity again."""
    for event in events:
        if event["class"] != "ll-reject" or event["reason"] not in COLLISION_REASONS:
            continue
        wanted = PROCEDURE_COMPLETIONS.get(event["rejected_opcode"], set())
        event["redone_frame"] = next((f for f, op in controls.get(event.get("access_address"), [])
                                      if f > event["frame"] and op in wanted), None)
        event.pop("benign", None)
        event["severity"] = severity_of(event)


def timestamp_steps(rows, emit):
    """A record stamped earlier than the one before it (tshark's frame.time_delta < 0): step_seconds back."""
    previous = None
    for row in rows:
        time = float(row["frame.time_epoch"])
        if previous is not None and time < previous:
            emit("timestamp-step-back", int(row["frame.number"]), step_seconds=round(previous - time, 6))
        previous = time
