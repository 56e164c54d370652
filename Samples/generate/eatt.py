"""Scenario: GATT on the LE fixed channel and on three enhanced ATT bearers (EATT) of one connection.

The phone connects, exchanges the MTU (247) and discovers on the fixed channel (CID 0x0004), reads
the GATT Server Supported Features (EATT bit set) and writes its Client Supported Features (EATT bit),
then opens enhanced ATT bearers on L2CAP PSM 0x0027 (Core Spec Vol 3, Part G, 5.3): two in one
L2CAP Credit Based Connection Request (MTU 247, MPS 100) and one in a second request (MTU 128,
MPS 64). The device's MPS is bumble's default (2048), so the phone's SDUs go as one K-frame each
while the device's are cut into several K-frames of at most the phone's MPS.

On an enhanced bearer ATT_MTU is the smaller of the two L2CAP MTUs (Vol 3, Part G, 5.3.1); there is
no Exchange MTU there (Part F, 3.4.2.1). bumble's client sets its enhanced bearers to 23 after
connecting; this scenario gives them the value the spec says.

Then, all at once: long reads of a 600-byte log on the first and third enhanced bearers (Read +
Read Blob, whose sizes follow each bearer's MTU), write requests on the second, reads on the fixed
channel, and notifications of a sensor value on the fixed channel and on the first and third enhanced
bearers (the phone wrote the CCCD on each: bumble's server keeps subscriptions per bearer).

The truth's per-bearer counts come from ``read_bearers``, which reads the written btsnoop
independently of bumble: ACL reassembly, L2CAP signalling (which CIDs carry PSM 0x0027) and
K-frame SDU reassembly (Vol 3, Part A, 3.4.3).
"""

from __future__ import annotations

import asyncio
import struct
from collections import Counter, defaultdict

from bumble import att, gatt, l2cap
from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.gatt_client import Client

import common
import sim

SERVICE = "6E4B0001-2C8A-4E57-9A2B-EA77B3A2D001"
SENSOR = "6E4B0002-2C8A-4E57-9A2B-EA77B3A2D001"  # read + notify, 8 bytes
LOG = "6E4B0003-2C8A-4E57-9A2B-EA77B3A2D001"  # read, 600 bytes (long reads)
CONFIG = "6E4B0004-2C8A-4E57-9A2B-EA77B3A2D001"  # write
DEVICE_ADDRESS = "D7:1E:A7:70:00:27"
FIXED_MTU = 247
LOG_SIZE = 600
LOG_SEED = 0xEA77_0027
# The two L2CAP Credit Based Connection Requests the phone sends: (bearers, MTU, MPS, initial credits).
REQUESTS = [(2, 247, 100, 10), (1, 128, 64, 8)]
NOTIFICATIONS_PER_BEARER = 6
WRITES = 6
FIXED_READS = 3
EATT_PSM = 0x0027
ATT_NAMES = {**common.ATT_NAMES, 0x0C: "read_blob_req", 0x0D: "read_blob_rsp"}


def sensor_value(bearer: str, i: int) -> bytes:
    """The i-th sensor notification on a bearer: the bearer's name tag, the index, a counter."""
    tag = {"le-fixed": 0xF0, "eatt-1": 0xE1, "eatt-3": 0xE3}[bearer]
    return bytes([tag, i]) + struct.pack("<IH", 1000 + 17 * i, 0xBEEF)


async def run(loop, out):
    log_value = common.xorshift_bytes(LOG_SEED, LOG_SIZE)
    writes_seen: list[bytes] = []
    sensor = Characteristic(SENSOR, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
                            Characteristic.READABLE, bytes(8))
    log = Characteristic(LOG, Characteristic.Properties.READ, Characteristic.READABLE, log_value)
    config = Characteristic(CONFIG, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
                            CharacteristicValue(write=lambda _c, v: writes_seen.append(bytes(v))))

    rig = sim.Rig(loop, out, "EATT-Band", DEVICE_ADDRESS, interval_ms=15.0, eatt=True)
    rig.device.gatt_server.max_mtu = FIXED_MTU
    rig.device.add_service(Service(SERVICE, [sensor, log, config]))
    conn = await rig.connect()
    peer = Peer(conn)
    assert await peer.request_mtu(FIXED_MTU) == FIXED_MTU
    await conn.set_data_length(251, 2120)
    await peer.discover_all()

    def proxy(uuid):
        return next(c for s in peer.services for c in s.characteristics if str(c.uuid).upper() == uuid.upper())

    server_features = await proxy(str(gatt.GATT_SERVER_SUPPORTED_FEATURES_CHARACTERISTIC)).read_value()
    assert server_features[0] & 0x01, "device does not announce EATT"
    # Client Supported Features, bit 1: Enhanced ATT bearer (Core Spec Vol 3, Part G, 7.2).
    await proxy(str(gatt.GATT_CLIENT_SUPPORTED_FEATURES_CHARACTERISTIC)).write_value(bytes([0x02]), with_response=True)

    sensor_proxy, log_proxy, config_proxy = proxy(SENSOR), proxy(LOG), proxy(CONFIG)
    cccd = sim.cccd_handle(sensor_proxy)
    assert cccd is not None

    # Enhanced bearers, named in the order their CIDs were asked for.
    clients: list[Client] = []
    for count, mtu, mps, credits in REQUESTS:
        spec = l2cap.LeCreditBasedChannelSpec(psm=EATT_PSM, mtu=mtu, mps=mps, max_credits=credits)
        got = await Client.connect_eatt(conn, spec, count=count)
        clients.extend(got if isinstance(got, list) else [got])
    for c in clients:
        ch = c.bearer
        c.bearer.att_mtu = min(ch.mtu, ch.peer_mtu)  # Vol 3, Part G, 5.3.1 (see the module docstring)
    names = ["eatt-1", "eatt-2", "eatt-3"]
    by_name = dict(zip(names, clients))

    received: dict[str, list[bytes]] = defaultdict(list)
    await peer.subscribe(sensor_proxy, lambda v: received["le-fixed"].append(bytes(v)))
    for name in ("eatt-1", "eatt-3"):
        c = by_name[name]
        await c.write_value(cccd, b"\x01\x00", with_response=True)
        c.notification_subscribers.setdefault(sensor_proxy.handle, set()).add(
            lambda v, name=name: received[name].append(bytes(v)))

    # The device's side of each enhanced bearer (its channels, by the phone's CID they send to).
    server_channels = {ch.destination_cid: ch for ch in
                       rig.device.l2cap_channel_manager.le_coc_channels[rig.device_conn.handle].values()
                       if ch.psm == EATT_PSM}
    device_bearers = {"le-fixed": rig.device_conn,
                      **{n: server_channels[by_name[n].bearer.source_cid] for n in ("eatt-1", "eatt-3")}}

    await asyncio.sleep(0.1)

    async def notifier():
        for i in range(NOTIFICATIONS_PER_BEARER):
            for name, bearer in device_bearers.items():
                # One bearer at a time: bumble's public notify_subscriber, given the connection, would
                # send the same value on every subscribed bearer.
                await rig.device.gatt_server._notify_single_subscriber(bearer, sensor, sensor_value(name, i), False)
            await asyncio.sleep(0.045)

    async def long_read(name):
        return bytes(await by_name[name].read_value(log_proxy.handle))

    async def writer():
        for i in range(WRITES):
            await by_name["eatt-2"].write_value(config_proxy.handle, bytes([0xC0, i]) + b"cfg", with_response=True)

    async def fixed_reads():
        values = []
        for _ in range(FIXED_READS):
            values.append(bytes(await sensor_proxy.read_value()))
            await asyncio.sleep(0.02)
        return values

    results = await asyncio.gather(long_read("eatt-1"), long_read("eatt-3"), writer(), fixed_reads(), notifier())
    assert results[0] == log_value and results[1] == log_value
    assert writes_seen == [bytes([0xC0, i]) + b"cfg" for i in range(WRITES)]
    for name in device_bearers:
        assert received[name] == [sensor_value(name, i) for i in range(NOTIFICATIONS_PER_BEARER)], name
    await asyncio.sleep(0.1)
    await rig.disconnect()

    bearers = [{"name": "le-fixed", "kind": "le-fixed", "phone_cid": 0x0004, "device_cid": 0x0004, "mtu": FIXED_MTU}]
    for name, c in by_name.items():
        ch = c.bearer
        bearers.append({"name": name, "kind": "eatt", "psm": EATT_PSM, "phone_cid": ch.source_cid,
                        "device_cid": ch.destination_cid, "mtu": ch.att_mtu, "phone_l2cap_mtu": ch.mtu,
                        "phone_mps": ch.mps, "device_l2cap_mtu": ch.peer_mtu, "device_mps": ch.peer_mps})
    return {
        "description": "GATT on the LE fixed channel and on three enhanced ATT bearers (EATT, PSM 0x0027) with "
                       "MTUs 247, 247 and 128: interleaved long reads, write requests, reads, and notifications "
                       "on the fixed channel and two enhanced bearers",
        "service_uuid": SERVICE, "connection_handle": conn.handle,
        "sensor_value_handle": sensor_proxy.handle, "sensor_cccd_handle": cccd,
        "log_value_handle": log_proxy.handle, "config_value_handle": config_proxy.handle,
        "log": {"size": LOG_SIZE, "generator": f"xorshift32 seed 0x{LOG_SEED:08x}", "sha256": common.sha256(log_value)},
        "notifications_per_bearer": NOTIFICATIONS_PER_BEARER,
        "notification_values": {n: [sensor_value(n, i).hex() for i in range(NOTIFICATIONS_PER_BEARER)]
                                for n in device_bearers},
        "config_writes": [(bytes([0xC0, i]) + b"cfg").hex() for i in range(WRITES)],
        "bearers": bearers,
    }


def read_bearers(data: bytes) -> dict:
    """ATT PDUs per bearer in a btsnoop (datalink 1002), independently of bumble.

    Reassembles ACL into L2CAP PDUs per (handle, direction); learns from the signalling channel
    (CID 0x0005: L2CAP Credit Based Connection Request 0x17 / Response 0x18, Vol 3 Part A 4.25–4.26)
    which CIDs belong to PSM 0x0027; reassembles K-frames into SDUs (the first K-frame of an SDU
    starts with its 2-byte length). Returns, per bearer (keyed by the phone's CID; 4 for the fixed
    channel): counts per opcode and direction, and (frame, sent, opcode, first bytes) rows.
    """
    pending_req: dict[int, tuple[int, list[int]]] = {}  # identifier -> (psm, phone source CIDs)
    eatt_cids: dict[int, int] = {}  # device CID -> phone CID
    phone_cids: set[int] = set()
    sdu: dict[tuple[bool, int], tuple[int, bytearray]] = {}
    rows: dict[int, list] = defaultdict(list)
    kframes: Counter = Counter()

    def att_pdu(frame, phone_cid, sent, pdu):
        rows[phone_cid].append((frame, sent, pdu[0], pdu))

    for frame, sent, cid, body in common.l2cap_pdus(data):
        if cid == 0x0004:
            att_pdu(frame, 0x0004, sent, body)
        elif cid == 0x0005:
            i = 0
            while i + 4 <= len(body):
                code, ident, n = body[i], body[i + 1], struct.unpack("<H", body[i + 2:i + 4])[0]
                p = body[i + 4:i + 4 + n]
                if code == 0x17 and sent:  # the phone asks: SPSM, MTU, MPS, credits, source CIDs
                    psm = struct.unpack("<H", p[:2])[0]
                    pending_req[ident] = (psm, [struct.unpack("<H", p[j:j + 2])[0] for j in range(8, len(p), 2)])
                elif code == 0x18 and not sent and ident in pending_req:  # MTU, MPS, credits, result, dest CIDs
                    psm, src = pending_req.pop(ident)
                    dst = [struct.unpack("<H", p[j:j + 2])[0] for j in range(8, len(p), 2)]
                    if psm == EATT_PSM:
                        for s, d in zip(src, dst):
                            if d:
                                eatt_cids[d] = s
                                phone_cids.add(s)
                i += 4 + n
        elif (sent and cid in eatt_cids) or (not sent and cid in phone_cids):
            phone_cid = eatt_cids[cid] if sent else cid
            kframes[phone_cid] += 1
            k = (sent, phone_cid)
            if k not in sdu:
                sdu[k] = (struct.unpack("<H", body[:2])[0], bytearray(body[2:]))
            else:
                sdu[k][1].extend(body)
            want, got = sdu[k]
            if len(got) >= want:
                del sdu[k]
                att_pdu(frame, phone_cid, sent, bytes(got))
    out = {}
    for phone_cid, rs in sorted(rows.items()):
        counts: dict[str, dict[str, int]] = defaultdict(lambda: {"sent": 0, "rcvd": 0})
        for _f, s, op, _p in rs:
            counts[f"0x{op:02x} {ATT_NAMES.get(op, 'unknown')}"]["sent" if s else "rcvd"] += 1
        out[phone_cid] = {"att_pdus": len(rs), "k_frames": kframes.get(phone_cid, 0),
                          "att_pdus_by_opcode": dict(sorted(counts.items())), "rows": rs}
    return out


def locate_capture(truth: dict, data: bytes) -> None:
    """Adds the per-bearer ATT counts and the frames of every notification, read from the btsnoop."""
    per = read_bearers(data)
    for b in truth["bearers"]:
        r = per.get(b["phone_cid"], {"att_pdus": 0, "k_frames": 0, "att_pdus_by_opcode": {}, "rows": []})
        b["att_pdus"] = r["att_pdus"]
        b["att_pdus_by_opcode"] = r["att_pdus_by_opcode"]
        if b["kind"] == "eatt":
            b["k_frames"] = r["k_frames"]
        b["notification_frames"] = [f for f, s, op, _p in r["rows"] if op == 0x1B and not s]
        b["read_blob_request_frames"] = [f for f, s, op, _p in r["rows"] if op == 0x0C and s]


def amend_capture(capture: dict, data: bytes) -> None:
    """``capture.att_pdus``/``att_pdus_by_opcode`` (``common.read_btsnoop`` reads the fixed channel only)
    become the totals over every bearer; the fixed channel's own stay under ``..._fixed_channel``."""
    per = read_bearers(data)
    capture["att_pdus_fixed_channel"] = capture["att_pdus"]
    capture["att_pdus_by_opcode_fixed_channel"] = capture["att_pdus_by_opcode"]
    total: dict[str, dict[str, int]] = defaultdict(lambda: {"sent": 0, "rcvd": 0})
    for r in per.values():
        for name, dirs in r["att_pdus_by_opcode"].items():
            for d, n in dirs.items():
                total[name][d] += n
    capture["att_pdus"] = sum(r["att_pdus"] for r in per.values())
    capture["att_pdus_by_opcode"] = dict(sorted(total.items()))
