"""Shared pieces of the MCUmgr, Silicon Labs and legacy DFU scenarios: a peripheral with one
service, a phone that connects, exchanges the MTU, discovers and subscribes."""

from __future__ import annotations

import asyncio

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import sim

MTU = 247


def cbor(value) -> bytes:
    """A minimal CBOR encoder (RFC 8949): unsigned ints, booleans, byte and text strings, lists, maps."""
    def head(major: int, n: int) -> bytes:
        if n < 24:
            return bytes([major << 5 | n])
        for size, extra in ((1, 24), (2, 25), (4, 26)):
            if n < 1 << (8 * size):
                return bytes([major << 5 | extra]) + n.to_bytes(size, "big")
        raise ValueError(n)
    if isinstance(value, bool):
        return bytes([0xF5 if value else 0xF4])
    if isinstance(value, int):
        return head(0, value)
    if isinstance(value, (bytes, bytearray)):
        return head(2, len(value)) + bytes(value)
    if isinstance(value, str):
        b = value.encode()
        return head(3, len(b)) + b
    if isinstance(value, list):
        return head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(type(value))


async def start(loop, out, name: str, address: str, service: str, chars: list[Characteristic]):
    rig = sim.Rig(loop, out, name, address, interval_ms=15.0)
    rig.device.gatt_server.max_mtu = MTU
    rig.device.add_service(Service(service, chars))
    conn = await rig.connect()
    mtu = await Peer(conn).request_mtu(MTU)
    assert mtu == MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    return rig, conn, peer


def char(uuid: str, props, write=None) -> Characteristic:
    value = CharacteristicValue(write=write) if write else b""
    perms = Characteristic.WRITEABLE | Characteristic.READABLE
    return Characteristic(uuid, props, perms, value)


class Pump:
    """The device's outgoing values, sent in order by one task (GATT callbacks cannot await):
    ``send(char, value)`` from a write callback, ``await close()`` at the end."""

    def __init__(self, loop, device, indicate: bool = False):
        self.device = device
        self.indicate = indicate
        self.queue: asyncio.Queue = asyncio.Queue()
        self.sent: list[str] = []
        self.task = loop.create_task(self._run())

    def send(self, char: Characteristic, value: bytes):
        self.sent.append(value.hex())
        self.queue.put_nowait((char, value))

    async def _run(self):
        while (item := await self.queue.get()) is not None:
            if self.indicate:
                await self.device.indicate_subscribers(item[0], item[1])
            else:
                await self.device.notify_subscribers(item[0], item[1])

    async def close(self):
        self.queue.put_nowait(None)
        await self.task


async def subscribe_all(peer, proxies) -> asyncio.Queue:
    """Subscribes to every proxy; the values arrive on one queue as (value handle, bytes), in order."""
    got: asyncio.Queue = asyncio.Queue()
    for p in proxies:
        await peer.subscribe(p, lambda v, h=p.handle: got.put_nowait((h, bytes(v))))
    await asyncio.sleep(0.2)
    return got


def image_record(image: bytes, generator: str) -> dict:
    """The truth file's description of an image."""
    import common
    return {"size": len(image), "sha256": common.sha256(image), "crc32": f"{common.crc32(image):08x}",
            "generator": generator}


def rate_bps(size: int, writes) -> float:
    """Image bits per second from the first to the last image write (AttPdu list)."""
    return size * 8 * 1_000_000 / (writes[-1].ts_us - writes[0].ts_us)


def new_device(rig, controller_name: str, address: str, name: str, mtu: int = MTU):
    """The device after a reset (a bootloader, or the application rebooted into a new image): a new
    controller and host on the rig's link. Add its services, then ``await reconnect(...)``."""
    from bumble import hci
    from bumble.device import Device, DeviceConfiguration
    from bumble.host import Host

    ctl = sim.SimController(controller_name, rig.link, address, is_peripheral=True)
    device = Device(host=Host(ctl, sim.DelayedSink(ctl)),
                    config=DeviceConfiguration(name=name, address=hci.Address(address),
                                               advertising_interval_min=100, advertising_interval_max=100))
    device.gatt_server.max_mtu = mtu
    return device


async def reconnect(loop, rig, device, scan_s: float = 0.4):
    """The device starts advertising; after `scan_s` the phone connects again (a new link starts at 27
    octets). Returns the phone's connection."""
    from bumble import hci

    await device.power_on()
    fut = loop.create_future()
    device.once("connection", fut.set_result)
    await device.start_advertising(auto_restart=False)
    await asyncio.sleep(scan_s)
    rig.phone_ctl.ll_tx_octets = rig.phone_ctl.ll_rx_octets = 27
    rig.link._slot.clear()
    conn = await rig.phone.connect(
        device.random_address,
        connection_parameters_preferences={hci.Phy.LE_1M: sim.ConnectionParametersPreferences(
            connection_interval_min=15.0, connection_interval_max=15.0, max_latency=0, supervision_timeout=5000)})
    await fut
    rig.link.anchor = loop.time()
    return conn


def connections_from_btsnoop(data: bytes) -> list[dict]:
    """Connection starts (LE Connection Complete, address) and ends (Disconnection Complete, reason)
    straight from the btsnoop records, for update stories across reconnects."""
    import struct as _struct
    pos, frame, events = 16, 0, []
    while pos + 24 <= len(data):
        incl = _struct.unpack(">I", data[pos + 4:pos + 8])[0]
        ts = _struct.unpack(">q", data[pos + 16:pos + 24])[0]
        body = data[pos + 24:pos + 24 + incl]
        pos += 24 + incl
        frame += 1
        if len(body) >= 3 and body[0] == 0x04:
            code, params = body[1], body[3:]
            if code == 0x3E and params[:1] in (b"\x01", b"\x0a") and params[1] == 0:
                addr = ":".join(f"{b:02X}" for b in reversed(params[6:12]))
                events.append({"event": "connected", "frame": frame, "ts_us": ts, "address": addr})
            elif code == 0x05 and params[0] == 0:
                events.append({"event": "disconnected", "frame": frame, "ts_us": ts, "reason": params[3]})
    conns = []
    for e in events:
        if e["event"] == "connected":
            conns.append({"address": e["address"], "start_frame": e["frame"], "start_us": e["ts_us"]})
        else:
            conns[-1].update(end_frame=e["frame"], end_us=e["ts_us"], end_reason_code=e["reason"])
    return conns
