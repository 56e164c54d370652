"""The air links diagnosis_truth.py ends from what the capture shows after them (`air-link-*` classes).

A live LE link carries a packet from the central at every connection event (Core Vol 6, Part B,
4.5.1), so a sniffer that follows it hears it at least every connection interval. A link whose
access address carries no good packet for longer than its supervision timeout before the capture
ends (the connect request's Timeout, or the latest LL_CONNECTION_UPDATE_IND's) ended somewhere in
that silence; the capture holds no LL_TERMINATE_IND for it (a link that has one is a `disconnection`).
The peripheral advertising again (ADV_IND or ADV_DIRECT_IND from its address, or a SCAN_REQ to it:
a scanner sends one only on hearing its scannable advertisement, 4.4.2.3) shows it out of the link:
- no packet at all after the connect request, then the advertising: `air-link-not-established`
  (4.5.2: a link with no packet in its first six intervals failed to be established, 0x3E);
- advertising within one connection interval of the last packet: `air-link-left` (no connection
  event came between: no terminate can have been exchanged, the peripheral left);
- advertising later: `air-link-ended-unseen` (a terminate the sniffer missed, a loss, a reset);
- no advertising: `air-link-unfollowed` (the sniffer stopped following the link).
A link whose encryption started (LL_START_ENC_REQ) and whose PDUs the capturer did not decrypt may
hold its LL_TERMINATE_IND in PDUs tshark cannot read: `air-link-end-encrypted` (info), no claim.
Fields: access_address, last_frame (the frame named; the connect request's when no packet came),
readvertised_frame, seconds_after (last packet to the advertising), silence_seconds, timeout_seconds,
interval_seconds, peripheral."""

ADV_IND, ADV_DIRECT_IND, SCAN_REQ, CONNECT_IND = 0x00, 0x01, 0x03, 0x05
FIELDS = [
    "btle.advertising_header.pdu_type", "btle.advertising_address", "btle.link_layer_data.interval",
    "btle.link_layer_data.timeout", "btle.control.interval", "btle.control.timeout",
]


def good(row):
    """A packet whose CRC no tool says is bad."""
    return not row.get("btle.crc.incorrect") and row.get("nordic_ble.crcok") != "0" and not (
        row.get("btle_rf.flags.crc_checked") == "1" and row.get("btle_rf.flags.crc_valid") == "0")


def first(value):
    return value.split(",")[0] if value else None


def air_link_ends(rows, emit, end_time):
    links = {}  # access address -> the link's facts, the latest connect request's
    adverts = []  # (frame, time, pdu type, advertiser)
    terminated = set()
    for row in rows:
        frame, time = int(row["frame.number"]), float(row["frame.time_epoch"])
        kind = row.get("btle.advertising_header.pdu_type")
        if kind is not None and good(row):
            kind = int(first(kind), 16)
            advertiser = (first(row.get("btle.advertising_address")) or "").lower()
            if kind == CONNECT_IND and row.get("btle.link_layer_data.access_address"):
                aa = int(first(row["btle.link_layer_data.access_address"]), 16)
                links[aa] = {"connect_frame": frame, "connect_time": time, "peripheral": advertiser,
                             "interval": int(first(row["btle.link_layer_data.interval"]) or 0) * 1.25e-3,
                             "timeout": int(first(row["btle.link_layer_data.timeout"]) or 0) * 10e-3,
                             "last": None}
                terminated.discard(aa)
            else:
                adverts.append((frame, time, kind, advertiser))
            continue
        aa = row.get("btle.access_address")
        if aa is None or not good(row):
            continue
        link = links.get(int(first(aa), 16))
        if link is None:
            continue
        link["last"] = (frame, time)
        if row.get("nordic_ble.micok") == "1" or row.get("btle_rf.flags.decrypted") == "1":
            link["decrypted"] = True
        if row.get("btle.control.timeout"):
            link["timeout"] = int(first(row["btle.control.timeout"])) * 10e-3
            link["interval"] = int(first(row["btle.control.interval"]) or 0) * 1.25e-3
        opcode = int(first(row["btle.control_opcode"]), 16) if row.get("btle.control_opcode") else None
        if opcode == 0x02:
            terminated.add(int(first(aa), 16))
        elif opcode == 0x05:
            link["encrypted"] = True
    for aa, link in links.items():
        if aa in terminated or link["timeout"] <= 0:
            continue
        last_frame, last_time = link["last"] or (link["connect_frame"], link["connect_time"])
        silence = end_time - last_time
        if silence <= link["timeout"]:
            continue
        again = next((a for a in adverts if a[0] > last_frame and a[3] == link["peripheral"]
                      and a[2] in (ADV_IND, ADV_DIRECT_IND, SCAN_REQ)), None)
        if link.get("encrypted") and not link.get("decrypted"):
            cls = "air-link-end-encrypted"
        elif again is None:
            cls = "air-link-unfollowed"
        elif link["last"] is None:
            cls = "air-link-not-established"
        elif again[1] - last_time < link["interval"]:
            cls = "air-link-left"
        else:
            cls = "air-link-ended-unseen"
        emit(cls, last_frame, access_address=aa, peripheral=link["peripheral"],
             readvertised_frame=again[0] if again else None,
             seconds_after=round(again[1] - last_time, 6) if again else None,
             silence_seconds=round(silence, 6), timeout_seconds=round(link["timeout"], 6),
             interval_seconds=round(link["interval"], 6))
