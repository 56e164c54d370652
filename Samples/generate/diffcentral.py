"""Diff Samples, pair 2: the PulseBand in firmware 1.4.2 (diffkit.py) with two centrals of different behaviour.

Central A (diff-central-a, the Android phone of the other Samples, F4:5C:89:A1:B2:C3 / 5E:3A:11:22:33:44): asks for
MTU 247, discovers everything (services, characteristics, descriptors), subscribes to Sensor then Battery Level, writes
``01`` to Command.

Central B (diff-central-b, another phone, 3C:22:FB:5A:71:0E / 4B:12:9C:E3:58:A6): asks for MTU 185, discovers the
services and the band service's characteristics, writes ``01`` to Command at once (before the OTA service's
characteristics and any descriptor are discovered), then goes on discovering and subscribes to Battery Level then
Sensor.

Both connect at 30 ms with data length 251, take the band's 10 sensor samples (it streams once it has the Command and a
Sensor subscription) and disconnect. The ``diff`` block of diff-central-b.truth.json lists the differences against
diff-central-a (``compare``): the MTU, the central's addresses, and the aligned GATT procedures with the first step
where they diverge.
"""

from __future__ import annotations

import asyncio
import types

from bumble.core import UUID
from bumble.device import Peer

import diffkit
import sim

CENTRALS = {
    "a": {"public": sim.PHONE_ADDRESS, "random": sim.PHONE_RANDOM, "mtu": 247, "write_before_descriptors": False,
          "subscriptions": [diffkit.SENSOR, diffkit.BATTERY_LEVEL]},
    "b": {"public": "3C:22:FB:5A:71:0E", "random": "4B:12:9C:E3:58:A6", "mtu": 185, "write_before_descriptors": True,
          "subscriptions": [diffkit.BATTERY_LEVEL, diffkit.SENSOR]},
}


async def discover(peer, command_first: bool):
    """bumble's Peer.discover_all (services, then the characteristics of each, then the descriptors of each); with
    ``command_first`` the Command write goes as soon as the band's service's characteristics are known (as an app
    does from didDiscoverCharacteristics), before the OTA service's characteristics and every descriptor."""
    await peer.discover_services()
    for service in peer.services:
        await peer.discover_characteristics(service=service)
        if command_first and service.uuid == UUID(diffkit.BAND_SERVICE):
            await sim.find_char(peer, diffkit.COMMAND).write_value(diffkit.START_STREAMING, with_response=True)
    for service in peer.services:
        for characteristic in service.characteristics:
            await peer.discover_descriptors(characteristic=characteristic)
    diffkit.mark_discovered(peer)


async def run_central(loop, out, which: str) -> dict:
    central = CENTRALS[which]
    saved = sim.PHONE_ADDRESS, sim.PHONE_RANDOM
    sim.PHONE_ADDRESS, sim.PHONE_RANDOM = central["public"], central["random"]  # read when the rig is built
    try:
        band = diffkit.Band(loop, out, 1)
    finally:
        sim.PHONE_ADDRESS, sim.PHONE_RANDOM = saved
    rig = band.rig
    conn = await rig.connect()
    peer = Peer(conn)
    assert await peer.request_mtu(central["mtu"]) == central["mtu"]
    await conn.set_data_length(251, 2120)
    await discover(peer, central["write_before_descriptors"])
    samples: asyncio.Queue = asyncio.Queue()
    for uuid in central["subscriptions"]:
        sink = (lambda v: samples.put_nowait(bytes(v))) if uuid == diffkit.SENSOR else (lambda v: None)
        await peer.subscribe(sim.find_char(peer, uuid), sink)
    if not central["write_before_descriptors"]:
        await sim.find_char(peer, diffkit.COMMAND).write_value(diffkit.START_STREAMING, with_response=True)
    got = [await samples.get() for _ in range(diffkit.SAMPLES)]
    assert got == [diffkit.sample(i) for i in range(diffkit.SAMPLES)]
    await asyncio.sleep(0.3)
    await band.close()
    await rig.disconnect()
    return {
        "description": f"PulseBand firmware {diffkit.FIRMWARE[1]['version']} with central {which.upper()}: MTU "
                       f"{central['mtu']}, " + ("Command written before descriptor discovery, " if
                                                central["write_before_descriptors"] else "full discovery, then ")
                       + "subscriptions in the order " + ", ".join(central["subscriptions"]) + ", 10 sensor samples",
        "phone_public_address": central["public"], "phone_random_address": central["random"],
        "device_name": diffkit.DEVICE_NAME, "firmware": {"version": diffkit.FIRMWARE[1]["version"]},
        "connection_handle": conn.handle, "requested_mtu": central["mtu"],
        "subscription_order": central["subscriptions"], "sensor_samples": band.sent_samples,
    }


def locate_capture(truth: dict, data: bytes):
    f = diffkit.Facts(data)
    cccds = [w for w in f.procedures() if w["procedure"].startswith("subscribe ")]
    assert [c["procedure"].split(" ", 1)[1] for c in cccds] == truth["subscription_order"]
    truth["facts"] = {"connection": f.connection(), "mtu": f.mtu(), "procedures": f.procedures(),
                      "characteristics": f.declarations()}


def compare(truth_b: dict, truth_a: dict, name_a: str) -> dict:
    """diff-central-b against diff-central-a: every expected difference, with the frames on both sides."""
    fa, fb = truth_a["facts"], truth_b["facts"]
    def without_frames(ds):
        return [{k: v for k, v in d.items() if k != "frame"} for d in ds]

    assert without_frames(fa["characteristics"]) == without_frames(fb["characteristics"])  # the same database
    pa, pb = fa["procedures"], fb["procedures"]
    k = next(i for i, (x, y) in enumerate(zip(pa, pb)) if x["procedure"] != y["procedure"])
    ma, mb = fa["mtu"], fb["mtu"]
    ca, cb = fa["connection"], fb["connection"]
    assert (ca["interval_ms"], ca["latency"], ca["supervision_timeout_ms"]) == (
        cb["interval_ms"], cb["latency"], cb["supervision_timeout_ms"])

    def steps(ps):
        return [{"step": p["step"], "procedure": p["procedure"], "frame": p["frame"]} for p in ps]

    return {
        "against": f"{name_a}.btsnoop", "peer": diffkit.DEVICE_ADDRESS,
        "gatt": [],
        "link": [{"field": "mtu", "a": ma["mtu"], "b": mb["mtu"], "requested_by": "central",
                  "client_mtu_a": ma["client_mtu"], "client_mtu_b": mb["client_mtu"],
                  "server_mtu_a": ma["server_mtu"], "server_mtu_b": mb["server_mtu"],
                  "frame_a": ma["response_frame"], "frame_b": mb["response_frame"],
                  "request_frame_a": ma["request_frame"], "request_frame_b": mb["request_frame"]}],
        "central": {"public_address_a": truth_a["phone_public_address"],
                    "public_address_b": truth_b["phone_public_address"],
                    "random_address_a": truth_a["phone_random_address"],
                    "random_address_b": truth_b["phone_random_address"]},
        "throughput": [],
        "behaviour": {"first_divergence_step": pa[k]["step"], "a": pa[k]["procedure"], "b": pb[k]["procedure"],
                      "frame_a": pa[k]["frame"], "frame_b": pb[k]["frame"],
                      "subscriptions_a": truth_a["subscription_order"], "subscriptions_b": truth_b["subscription_order"],
                      "sequence_a": steps(pa), "sequence_b": steps(pb)},
        "unchanged": ["GATT database (same firmware 1.4.2)", "interval 30 ms, latency 0, supervision timeout 5000 ms",
                      "data length 251", "1M PHY", "no pairing", "sensor samples (10, same bytes)"],
    }


def _variant(which: str, against: str | None) -> types.SimpleNamespace:
    ns = types.SimpleNamespace(DEVICE_ADDRESS=diffkit.DEVICE_ADDRESS, locate_capture=locate_capture,
                               run=lambda loop, out: run_central(loop, out, which))
    if against:
        ns.DIFF_AGAINST = against
        ns.compare = compare
    return ns


CENTRAL_A = _variant("a", None)
CENTRAL_B = _variant("b", "diff-central-a")
