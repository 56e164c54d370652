"""The SMP pairing timer behind diagnosis_truth.py's `smp-timeout` and `pairing-unfinished` classes.

Core Vol 3, Part H, 3.4 (Security Manager Timer): each side resets and starts its timer when it
sends or receives a Pairing Request, resets it when it queues an SMP command for transmission, and
stops it when the pairing process completes; when it reaches 30 s the procedure has failed (and no
further SMP command is sent on that link). Completion (Part H 2.1, 3.6.1): phase 3, the key
distribution, is done: the link is encrypted and every key the Pairing Response asked for has been
sent (EncKey: Encryption Information + Central Identification, ignored under LE Secure Connections;
IdKey: Identity Information + Identity Address Information; SignKey: Signing Information; LinkKey:
no SMP PDU). Pairing Failed ends the procedure too (its own class), and so does the end of the link.

The two tshark passes of diagnosis_truth.py are not interleaved in time, so facts are noted per link
as they are read (SMP PDUs, encryption started, link ended, link no longer readable) and judged at
the end, in frame order."""

TIMEOUT = 30.0
PAIRING_REQUEST, PAIRING_RESPONSE, PAIRING_FAILED = 0x01, 0x02, 0x05
KEY_PDUS = {0x06, 0x07, 0x08, 0x09, 0x0A}


def expected_key_pdus(initiator_keys, responder_keys, secure_connections):
    """SMP PDUs phase 3 sends for the Key Distribution fields of the Pairing Response (3.6.1)."""
    total = 0
    for keys in (initiator_keys, responder_keys):
        keys = keys or 0
        total += (0 if secure_connections else 2 * (keys & 1)) + 2 * (keys >> 1 & 1) + (keys >> 2 & 1)
    return total


class Pairing:
    def __init__(self, frame, time, link_fields, sides):
        self.frame, self.link_fields, self.sides = frame, link_fields, sides
        self.reset = {}             # side -> (frame, time) of its last timer reset
        self.start(frame, time)
        self.secure = {}            # opcode 0x01/0x02 -> SC flag of its AuthReq
        self.expected = None        # key PDUs to come, known from the Pairing Response
        self.keys_seen = 0
        self.encrypted = False
        self.progressed = False     # anything after the Pairing Request

    def start(self, frame, time):
        """A Pairing Request (sent or received) resets and starts both sides' timers."""
        self.reset = {side: (frame, time) for side in self.sides}

    def expiry(self):
        """(expiry time, silent side, (frame, time) of its last reset) of the first timer to reach
        30 s; the silent side has sent nothing since (None when both timers last restarted at the
        same PDU)."""
        side = min(self.sides, key=lambda s: self.reset[s][0])
        frame, time = self.reset[side]
        shared = len({self.reset[s][0] for s in self.sides}) == 1
        return time + TIMEOUT, None if shared else side, (frame, time)

    def complete(self):
        """Encrypted, and every key PDU asked for sent (all of phase 3 when no Response was seen)."""
        return self.encrypted and (self.expected is None or self.keys_seen >= self.expected)


class PairingTimer:
    def __init__(self):
        self.facts = {}  # link key -> [(frame, time, kind, data)]

    def note(self, link, frame, time, kind, **data):
        self.facts.setdefault(link, []).append((frame, time, kind, data))

    def finish(self, end_time, emit):
        for facts in self.facts.values():
            self.judge(sorted(facts, key=lambda f: f[0]), end_time, emit)

    def judge(self, facts, end_time, emit):
        pairing, previous_time = None, None
        for frame, time, kind, data in facts:
            stepped_back = previous_time is not None and time < previous_time
            previous_time = time
            if pairing is not None and stepped_back:
                # The capture's clock went backwards: no timer can be measured on it.
                emit("pairing-unfinished", pairing.frame, end="clock-backwards", end_frame=frame,
                     **pairing.link_fields)
                pairing = None
            if pairing is not None:
                expires, side, last = pairing.expiry()
                if time > expires:
                    self.timed_out(pairing, side, last, frame, time, emit)
                    pairing = None
            if kind == "smp":
                pairing = self.smp(pairing, frame, time, data, emit)
            elif pairing is None:
                continue
            elif kind == "encrypted":
                pairing.encrypted, pairing.progressed = True, True
            elif kind in ("ended", "connected-again", "unreadable"):
                emit("pairing-unfinished", pairing.frame, end=kind, end_frame=frame,
                     **pairing.link_fields)
                pairing = None
            if pairing is not None and pairing.complete():
                pairing = None
        if pairing is not None:
            expires, side, last = pairing.expiry()
            if end_time > expires:
                self.timed_out(pairing, side, last, None, end_time, emit)
            else:
                emit("pairing-unfinished", pairing.frame, end="capture-end", end_frame=None,
                     **pairing.link_fields)

    def smp(self, pairing, frame, time, data, emit):
        opcode, side = data["opcode"], data["side"]
        if opcode == PAIRING_REQUEST:
            if pairing is not None and pairing.progressed:
                emit("pairing-unfinished", pairing.frame, end="restarted", end_frame=frame,
                     **pairing.link_fields)
                pairing = None
            if pairing is None:
                pairing = Pairing(frame, time, data["link_fields"], data["sides"])
            pairing.start(frame, time)
            pairing.secure[opcode] = data["sc"]
            return pairing
        if pairing is None:
            return None
        if opcode == PAIRING_FAILED:
            return None  # its own class, pairing-failed
        pairing.progressed = True
        # The sender queued a command: its timer restarts. A sender the capture does not name
        # restarts both (the truth may then miss a time-out, never invent one).
        for s in ([side] if side in pairing.sides else pairing.sides):
            pairing.reset[s] = (frame, time)
        if opcode == PAIRING_RESPONSE:
            pairing.secure[opcode] = data["sc"]
            secure = bool(pairing.secure.get(PAIRING_REQUEST)) and bool(data["sc"])
            pairing.expected = expected_key_pdus(data["initiator_keys"], data["responder_keys"],
                                                 secure)
        elif opcode in KEY_PDUS and pairing.encrypted:
            pairing.keys_seen += 1
        return pairing

    def timed_out(self, pairing, side, last, next_frame, until, emit):
        """`silent_seconds`: from the last reset of the timer that ran out to the next fact on the
        link (or the end of the capture), over 30."""
        emit("smp-timeout", pairing.frame, silent_side=side, last_frame=last[0],
             silent_seconds=round(until - last[1], 6), next_frame=next_frame,
             **pairing.link_fields)
