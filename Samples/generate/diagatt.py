"""Diagnosis Sample: an ATT Read Request the peripheral never answers; after 30 s the phone tears the link down.

A smart plug's firmware answers a read of its model number, then hangs in the read handler of its energy meter
(a bumble read callback that never returns), so no Read Response and no Error Response ever leaves it; its link layer
keeps the connection alive. bumble's GATT client on the phone gives up after its 30 s request timeout (GATT's
transaction timeout, Core Vol 3, Part F, 3.3.3; Android's GATT_WAIT_FOR_RSP_TIMEOUT_MS is 30 s too); the app then
closes the link: HCI Disconnect (0x13 Remote User Terminated Connection, the reason Android's stack gives) and
Disconnection Complete 0x16 Connection Terminated By Local Host. Rules GATT-01 and DC-03.
"""

from __future__ import annotations

import asyncio

from bumble import core, hci
from bumble.gatt import Characteristic, CharacteristicValue, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "EA:41:9C:53:2D:70"
SERVICE = "3F7C0001-5D1E-4B8A-9C2F-7A6E5B4D3C21"
MODEL = "3F7C0002-5D1E-4B8A-9C2F-7A6E5B4D3C21"
ENERGY = "3F7C0003-5D1E-4B8A-9C2F-7A6E5B4D3C21"
MODEL_NUMBER = b"SP-20"


async def run(loop, out):
    rig = simfaults.rig(loop, out, "SmartPlug", DEVICE_ADDRESS, interval_ms=30.0)
    hung = loop.create_future()  # the firmware's read handler waits on something that never happens

    async def read_energy(_connection):
        await hung
        return b""

    model = Characteristic(MODEL, Characteristic.Properties.READ, Characteristic.READABLE, MODEL_NUMBER)
    energy = Characteristic(ENERGY, Characteristic.Properties.READ, Characteristic.READABLE,
                            CharacteristicValue(read=read_energy))
    rig.device.add_service(Service(SERVICE, [model, energy]))
    conn = await rig.connect()
    peer = await sim.discover_all(conn)
    assert bytes(await sim.find_char(peer, MODEL).read_value()) == MODEL_NUMBER
    energy_proxy = sim.find_char(peer, ENERGY)
    started = loop.time()
    try:
        await energy_proxy.read_value()
        raise AssertionError("the read should time out")
    except core.TimeoutError:
        waited = loop.time() - started
    await conn.disconnect(reason=hci.HCI_ErrorCode.REMOTE_USER_TERMINATED_CONNECTION_ERROR)
    await asyncio.sleep(0.1)
    hung.cancel()
    return {
        "description": "A Read Request the smart plug never answers; the phone's GATT client times out after 30 s and "
                       "the app disconnects (Disconnect 0x13, Disconnection Complete 0x16)",
        "service_uuid": SERVICE, "model_value_handle": sim.find_char(peer, MODEL).handle,
        "energy_uuid": ENERGY, "energy_value_handle": energy_proxy.handle,
        "gatt_client_timeout_s": 30.0, "host_gave_up_after_s": round(waited, 6),
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    h = truth["energy_value_handle"]
    reads = [(f, int.from_bytes(p[1:3], "little")) for f, _s, p in log.att(0x0A, sent=True)]
    pending = [f for f, handle in reads if handle == h]
    assert len(pending) == 1
    request = pending[0]
    later = [f for f, sent, _cid, _p in log.l2cap if f > request and not sent]
    assert not later, later  # nothing at all came back from the plug after the request
    disconnect = log.commands(0x0406)[0]
    status = log.status_of(disconnect)
    end = diagkit.connection_spans(log)[0]["end"]
    nocp = [r.frame for r in log.events(0x13) if r.frame > request]
    truth["unanswered_request"] = {"frame": request, "opcode": 0x0A, "handle": h,
                                   "acknowledged_by_the_link_frame": nocp[0] if nocp else None}
    truth["teardown"] = {"disconnect_frame": disconnect.frame, "disconnect_reason": disconnect.params[2],
                         "seconds_after_request": log.seconds(request, disconnect.frame),
                         "command_status_frame": status.frame, "end": end}
    model_read = next(f for f, handle in reads if handle == truth["model_value_handle"])
    truth["diagnosis"] = {
        "rules": ["GATT-01", "DC-03"],
        "findings": [
            diagkit.finding("GATT-01", "C", request, [disconnect.frame, end["frame"]],
                            f"Read Request for 0x{h:04X} (#{request}) was never answered; "
                            f"{log.seconds(request, disconnect.frame):.1f} s later the phone tore the link down "
                            f"(#{disconnect.frame}) with the request still outstanding"),
            diagkit.finding("DC-03", "W", end["frame"], [disconnect.frame, request],
                            f"This phone closed the link (#{disconnect.frame} Disconnect, reason 0x13; #{end['frame']} "
                            f"0x16) right after a 30 s ATT timeout"),
        ],
        "deciding_frame_note": "GATT-01's deciding frame is the unanswered request; DC-03's is the Disconnection "
                               "Complete",
        "not_flagged": [
            diagkit.quiet("the earlier read of the model number, answered", [model_read], ["GATT-01", "GATT-02"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
