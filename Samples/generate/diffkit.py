"""Shared parts of the diff Samples (difffw.py, diffcentral.py): one peripheral, the PulseBand fitness band, in two
firmware versions, and the facts of a written btsnoop that the truth files' ``diff`` blocks cite.

The band (random static address DEVICE_ADDRESS, name "PulseBand"):

* Battery service 0x180F: Battery Level 0x2A19 (read, notify), 90 %;
* the band's service ``5A1E0001-…``: Sensor ``5A1E0002`` (notify; firmware 2: notify + read), Command ``5A1E0003``
  (write: ``01`` = start streaming), and in firmware 2 only Sample Rate ``5A1E0004`` (read, write: ``0A`` = 10 Hz);
* the vendor OTA service of ``vendorota.py`` (``7E5A0001-…``; control ``7E5A0002`` write + notify: ``01`` size crc32
  → ``81``, ``02`` → ``82`` status; data ``7E5A0003`` write without response: index u16 LE + 240 image bytes).

Once the app has written ``01`` to Command and subscribed to Sensor, the band notifies SAMPLES sensor samples, one every
100 ms. Firmware 2 also asks, 0.1 s after the Command write, for a 45 ms connection interval (L2CAP Connection Parameter
Update Request; the phone's host accepts it and sends LE Connection Update), and its controller carries at most 3
link-layer packets per connection event (firmware 1: 4).

The facts (``Facts``) are read back from the written btsnoop by ``diagkit.Log`` (not bumble); ``verify_diff.py``
checks each of them with tshark.
"""

from __future__ import annotations

import asyncio
import struct

from bumble.gatt import Characteristic, CharacteristicValue, Service

import common
import diagkit
import simfaults
import vendorota

DEVICE_ADDRESS = "C2:5B:7E:31:A0:4F"
DEVICE_NAME = "PulseBand"

BATTERY_SERVICE = "180F"  # 16-bit UUIDs (bumble writes a full-form string as a 128-bit UUID)
BATTERY_LEVEL = "2A19"
BAND_SERVICE = "5A1E0001-8C2D-4F6B-A3E1-9B7C0D2E4F60"
SENSOR = "5A1E0002-8C2D-4F6B-A3E1-9B7C0D2E4F60"
COMMAND = "5A1E0003-8C2D-4F6B-A3E1-9B7C0D2E4F60"
SAMPLE_RATE = "5A1E0004-8C2D-4F6B-A3E1-9B7C0D2E4F60"
OTA_SERVICE, OTA_CONTROL, OTA_DATA = vendorota.SERVICE, vendorota.CONTROL, vendorota.DATA

START_STREAMING = b"\x01"
SAMPLES = 10
SAMPLE_SEED = 0x5A1E_0002
INTERVAL_MS = 30.0  # what the phone asks for when it connects
FW2_INTERVAL_MS = 45.0  # what firmware 2 asks for
SUPERVISION_TIMEOUT_MS = 5000.0
IMAGE_SIZE = 30_000
IMAGE_SEED = 0x5A1E_0FA2
PAYLOAD = vendorota.PAYLOAD

FIRMWARE = {
    1: {"version": "1.4.2", "packets_per_event": 4, "sensor_properties": ["notify"], "sample_rate": False,
        "requests_interval_ms": None},
    2: {"version": "1.5.0", "packets_per_event": 3, "sensor_properties": ["read", "notify"], "sample_rate": True,
        "requests_interval_ms": FW2_INTERVAL_MS},
}

PROPERTY_NAMES = [(0x02, "read"), (0x04, "write_without_response"), (0x08, "write"), (0x10, "notify"),
                  (0x20, "indicate")]


def property_names(bits: int) -> list[str]:
    return [name for bit, name in PROPERTY_NAMES if bits & bit]


def sample(i: int) -> bytes:
    """Sensor sample i: index u16 LE, heart rate u8, acceleration x, y, z (i16 LE, mg)."""
    r = common.xorshift_bytes(SAMPLE_SEED + i, 7)
    return struct.pack("<HBhhh", i, 60 + r[0] % 40, r[1] - 128, r[2] - 128, 1000 + r[3] % 64)


class Band:
    """The band's GATT server and behaviour on a rig (simfaults: LE Connection Update at its instant)."""

    def __init__(self, loop, out, firmware: int):
        self.firmware = firmware
        fw = FIRMWARE[firmware]
        self.rig = simfaults.rig(loop, out, DEVICE_NAME, DEVICE_ADDRESS, interval_ms=INTERVAL_MS,
                                 per_event=fw["packets_per_event"])
        self.rig.device.gatt_server.max_mtu = vendorota.MTU
        self.loop = loop
        self.started = False
        self.subscribed = False
        self.streaming = None
        self.sent_samples: list[str] = []
        self.parameter_request: dict | None = None
        self.ota = {"size": None, "crc": None, "packets": {}, "notifications": []}
        self.outq: asyncio.Queue = asyncio.Queue()
        P = Characteristic.Properties
        sensor_props = P.NOTIFY | (P.READ if "read" in fw["sensor_properties"] else 0)
        self.sensor = Characteristic(SENSOR, sensor_props, Characteristic.READABLE, sample(0))
        self.sensor.on("subscription", self.on_sensor_subscription)
        self.command = Characteristic(COMMAND, P.WRITE, Characteristic.WRITEABLE, CharacteristicValue(write=self.on_command))
        band = [self.sensor, self.command]
        if fw["sample_rate"]:
            band.append(Characteristic(SAMPLE_RATE, P.READ | P.WRITE, Characteristic.READABLE | Characteristic.WRITEABLE,
                                       b"\x0a"))
        self.battery = Characteristic(BATTERY_LEVEL, P.READ | P.NOTIFY, Characteristic.READABLE, bytes([90]))
        self.control = Characteristic(OTA_CONTROL, P.WRITE | P.NOTIFY, Characteristic.WRITEABLE | Characteristic.READABLE,
                                      CharacteristicValue(write=self.on_ota_control))
        self.data = Characteristic(OTA_DATA, P.WRITE_WITHOUT_RESPONSE, Characteristic.WRITEABLE,
                                   CharacteristicValue(write=self.on_ota_data))
        self.rig.device.add_service(Service(BATTERY_SERVICE, [self.battery]))
        self.rig.device.add_service(Service(BAND_SERVICE, band))
        self.rig.device.add_service(Service(OTA_SERVICE, [self.control, self.data]))
        self.pump = loop.create_task(self._pump())

    # -- the band's behaviour

    def on_sensor_subscription(self, _bearer, notify: bool, _indicate: bool):
        self.subscribed = notify
        self._maybe_stream()

    def on_command(self, _connection, value):
        if bytes(value) == START_STREAMING:
            self.started = True
            self._maybe_stream()
            if FIRMWARE[self.firmware]["requests_interval_ms"]:
                self.loop.create_task(self._request_slower_interval())

    def _maybe_stream(self):
        if self.started and self.subscribed and self.streaming is None:
            self.streaming = self.loop.create_task(self._stream())

    async def _stream(self):
        await asyncio.sleep(0.2)
        for i in range(SAMPLES):
            self.sent_samples.append(sample(i).hex())
            self.outq.put_nowait((self.sensor, sample(i)))
            await asyncio.sleep(0.1)

    async def _request_slower_interval(self):
        await asyncio.sleep(0.1)
        ms = FIRMWARE[self.firmware]["requests_interval_ms"]
        await self.rig.device.update_connection_parameters(
            self.rig.device_conn, connection_interval_min=ms, connection_interval_max=ms, max_latency=0,
            supervision_timeout=SUPERVISION_TIMEOUT_MS, use_l2cap=True)
        self.parameter_request = {"interval_min_ms": ms, "interval_max_ms": ms, "latency": 0,
                                  "supervision_timeout_ms": SUPERVISION_TIMEOUT_MS}

    def on_ota_control(self, _connection, value):
        v = bytes(value)
        if v[0] == 0x01:
            self.ota["size"], self.ota["crc"] = struct.unpack("<II", v[1:9])
            self._ota_notify(b"\x81")
        elif v[0] == 0x02:
            data = b"".join(self.ota["packets"][i] for i in sorted(self.ota["packets"]))
            ok = len(data) == self.ota["size"] and common.crc32(data) == self.ota["crc"]
            self._ota_notify(b"\x82\x00" if ok else b"\x82\x01")

    def on_ota_data(self, _connection, value):
        v = bytes(value)
        self.ota["packets"][struct.unpack("<H", v[:2])[0]] = v[2:]

    def _ota_notify(self, value: bytes):
        self.ota["notifications"].append(value.hex())
        self.outq.put_nowait((self.control, value))

    async def _pump(self):
        while (item := await self.outq.get()) is not None:
            await self.rig.device.notify_subscribers(item[0], item[1])

    async def close(self):
        self.outq.put_nowait(None)
        await self.pump


def mark_discovered(peer):
    """The app discovered every descriptor: bumble 0.0.236's subscribe() would discover a characteristic's descriptors
    again (its ``descriptors_discovered`` flag is never set), which the phones of ../shared/captures do not."""
    for service in peer.services:
        for characteristic in service.characteristics:
            characteristic.descriptors_discovered = True


# ---------------------------------------------------------------------------
# The written capture's facts, for the diff blocks


def uuid_le(uuid: str) -> bytes:
    """A UUID as ATT carries it: 2 octets for a Bluetooth base UUID, else 16, little endian."""
    if len(uuid) == 4:
        return bytes.fromhex(uuid)[::-1]
    return bytes.fromhex(uuid.replace("-", ""))[::-1]


class Facts:
    """What one diff Sample's btsnoop shows, read by ``diagkit.Log`` (independent of bumble)."""

    def __init__(self, data: bytes):
        self.log = diagkit.Log(data)
        self.att = [(f, s, p) for f, s, cid, p in self.log.l2cap if cid == 0x0004]

    def declaration(self, uuid: str) -> dict:
        """The Read By Type Response (0x09) that declares the characteristic ``uuid``: its frame, declaration and
        value handles and properties (Core Vol 3, Part G, 3.3.1)."""
        want = uuid_le(uuid)
        for frame, sent, p in self.att:
            if sent or p[0] != 0x09:
                continue
            size = p[1]
            for i in range(2, len(p) - size + 1, size):
                entry = p[i:i + size]
                if entry[5:] == want:
                    decl, props, value = struct.unpack("<HBH", entry[:5])
                    return {"frame": frame, "handle": decl, "value_handle": value, "properties": property_names(props)}
        raise LookupError(f"no declaration of {uuid}")

    def mtu(self) -> dict:
        (rf, _s, req), = [(f, s, p) for f, s, p in self.att if s and p[0] == 0x02]
        (sf, _s, rsp), = [(f, s, p) for f, s, p in self.att if not s and p[0] == 0x03]
        client, server = struct.unpack("<H", req[1:3])[0], struct.unpack("<H", rsp[1:3])[0]
        return {"client_mtu": client, "server_mtu": server, "mtu": min(client, server), "request_frame": rf,
                "response_frame": sf}

    def connection(self) -> dict:
        return diagkit.le_connection_complete(self.log.events(0x3E, 0x01)[0])

    def updates(self) -> list[dict]:
        out = []
        for r in self.log.events(0x3E, 0x03):
            interval, latency, timeout = struct.unpack("<HHH", r.params[4:10])
            out.append({"frame": r.frame, "status": r.params[1], "interval_ms": interval * 1.25, "latency": latency,
                        "supervision_timeout_ms": timeout * 10})
        return out

    def parameter_requests(self) -> list[dict]:
        out = []
        rsps = self.log.signalling(0x13)
        for (f, sent, p), (rf, _rs, rp) in zip(self.log.signalling(0x12), rsps):
            imin, imax, latency, timeout = struct.unpack("<HHHH", p[4:12])
            out.append({"frame": f, "from": "central" if sent else "peripheral", "interval_min_ms": imin * 1.25,
                        "interval_max_ms": imax * 1.25, "latency": latency, "supervision_timeout_ms": timeout * 10,
                        "response_frame": rf, "result": struct.unpack("<H", rp[4:6])[0]})
        return out

    def writes(self, opcode: int, handle: int) -> list[tuple[int, bytes]]:
        return [(f, p[3:]) for f, s, p in self.att if s and p[0] == opcode and struct.unpack("<H", p[1:3])[0] == handle]

    def stream(self, opcode: int, handle: int) -> dict:
        """A stream of writes as ``ThroughputStream`` counts it: value bytes over the span first to last packet."""
        rows = [(f, v) for f, v in self.writes(opcode, handle)]
        first, last = rows[0][0], rows[-1][0]
        value_bytes = sum(len(v) for _f, v in rows)
        span_us = self.log.ts[last] - self.log.ts[first]
        return {"packets": len(rows), "value_bytes": value_bytes, "first_frame": first, "last_frame": last,
                "span_us": span_us, "rate_bps": round(value_bytes * 8 * 1e6 / span_us, 1)}

    def completed_per_event(self, first: int, last: int, interval_ms: float) -> list[int]:
        """Number Of Completed Packets between two frames, grouped by connection event (a gap of more than half an
        interval starts a new event): the link-layer packets each event carried."""
        times = [r.ts_us for r in self.log.events(0x13) if first <= r.frame <= last + 40]
        groups, previous = [], None
        for t in times:
            if previous is None or t - previous > interval_ms * 500:
                groups.append(0)
            groups[-1] += 1
            previous = t
        return groups

    def declarations(self) -> list[dict]:
        """Every characteristic the Read By Type Responses (0x09) declare, in handle order."""
        out = []
        for frame, sent, p in self.att:
            if sent or p[0] != 0x09:
                continue
            size = p[1]
            for i in range(2, len(p) - size + 1, size):
                decl, props, value = struct.unpack("<HBH", p[i:i + 5])
                raw = p[i + 5:i + size][::-1].hex().upper()
                uuid = raw if len(raw) == 4 else f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"
                out.append({"frame": frame, "handle": decl, "value_handle": value, "uuid": uuid,
                            "properties": property_names(props)})
        return sorted(out, key=lambda d: d["handle"])

    def owner(self, handle: int) -> str:
        """The UUID of the characteristic a value or descriptor handle belongs to."""
        return [d for d in self.declarations() if d["value_handle"] <= handle][-1]["uuid"]

    def procedures(self) -> list[dict]:
        """The central's GATT procedures in order, from its ATT requests (README, "The diff Samples"): one step per
        run of discovery requests of one kind or of write commands to one characteristic, and one per write request,
        read or subscription."""
        steps: list[dict] = []
        for frame, sent, p in self.att:
            if not sent:
                continue
            op = p[0]
            if op == 0x02:
                what = "exchange mtu"
            elif op == 0x10:
                what = "discover services"
            elif op == 0x08 and p[5:7] == b"\x03\x28":
                what = "discover characteristics"
            elif op == 0x04:
                what = "discover descriptors"
            elif op in (0x12, 0x52, 0x0A):
                handle = struct.unpack("<H", p[1:3])[0]
                uuid = self.owner(handle)
                if op == 0x12 and p[3:] in (b"\x01\x00", b"\x02\x00") and not any(
                        d["value_handle"] == handle for d in self.declarations()):
                    what = f"subscribe {uuid}"
                else:
                    what = {0x12: "write", 0x52: "write command", 0x0A: "read"}[op] + f" {uuid}"
            else:
                continue
            if steps and steps[-1]["procedure"] == what and what.startswith(("discover", "write command")):
                steps[-1]["requests"] += 1
                continue
            steps.append({"step": len(steps) + 1, "procedure": what, "frame": frame, "requests": 1})
        return steps
