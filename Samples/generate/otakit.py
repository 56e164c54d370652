"""Shared pieces of the MCUmgr, Silicon Labs and legacy DFU scenarios: a peripheral with one
service, a phone that connects, exchanges the MTU, discovers and subscribes."""

from __future__ import annotations

import asyncio

from bumble.device import Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service

import sim

MTU = 247


def cbor(value) -> bytes:
    """A minimal CBOR encoder (RFC 8949) for maps of text keys to unsigned ints and byte strings."""
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
