"""Diff Samples, pair 1: the same app and the PulseBand (diffkit.py) in firmware 1.4.2 (diff-fw1) and 1.5.0 (diff-fw2).

The app (the same in both): connect at 30 ms, MTU 247, data length 251, discover everything, subscribe to Sensor,
Battery Level and OTA control (in that order), write ``01`` to Command, take the 10 sensor samples, then update the
band over the vendor OTA of vendor-ota (a 30,000-byte image in 125 write commands of index + 240 bytes, sent as fast
as the phone's controller takes them: the link decides the rate), end, result ``82 00``, disconnect.

Firmware 2 differs by exactly: Sample Rate ``5A1E0004`` added at the end of the band's service (so the OTA service's
handles move by 2), Sensor notify → read + notify, a 45 ms interval asked for by the band (L2CAP Connection Parameter
Update Request, accepted; LE Connection Update Complete at the instant), and 3 link-layer packets per connection event
instead of 4: the OTA runs at half the rate (3 × 240 bytes per 45 ms against 4 × 240 per 30 ms).

The ``diff`` block of diff-fw2.truth.json lists these differences against diff-fw1 (``compare``).
"""

from __future__ import annotations

import asyncio
import struct
import types

from bumble.device import Peer

import common
import diffkit
import sim


async def run_app(loop, out, firmware: int) -> dict:
    band = diffkit.Band(loop, out, firmware)
    rig = band.rig
    image = common.xorshift_bytes(diffkit.IMAGE_SEED, diffkit.IMAGE_SIZE)
    conn = await rig.connect()
    assert await Peer(conn).request_mtu(diffkit.vendorota.MTU) == diffkit.vendorota.MTU
    await conn.set_data_length(251, 2120)
    peer = await sim.discover_all(conn)
    diffkit.mark_discovered(peer)
    sensor, battery = sim.find_char(peer, diffkit.SENSOR), sim.find_char(peer, diffkit.BATTERY_LEVEL)
    control, data = sim.find_char(peer, diffkit.OTA_CONTROL), sim.find_char(peer, diffkit.OTA_DATA)
    samples: asyncio.Queue = asyncio.Queue()
    replies: asyncio.Queue = asyncio.Queue()
    await peer.subscribe(sensor, lambda v: samples.put_nowait(bytes(v)))
    await peer.subscribe(battery, lambda v: None)
    await peer.subscribe(control, lambda v: replies.put_nowait(bytes(v)))
    await sim.find_char(peer, diffkit.COMMAND).write_value(diffkit.START_STREAMING, with_response=True)
    got = [await samples.get() for _ in range(diffkit.SAMPLES)]
    assert got == [diffkit.sample(i) for i in range(diffkit.SAMPLES)]
    await asyncio.sleep(0.3)

    crc = common.crc32(image)
    await control.write_value(b"\x01" + struct.pack("<II", len(image), crc), with_response=True)
    assert await replies.get() == b"\x81"
    total = -(-len(image) // diffkit.PAYLOAD)
    for i in range(total):  # queued at once: the host's flow control and the link pace them
        await data.write_value(struct.pack("<H", i) + image[i * diffkit.PAYLOAD:(i + 1) * diffkit.PAYLOAD])
    await control.write_value(b"\x02", with_response=True)
    result = await replies.get()
    assert result == b"\x82\x00", result.hex()
    await asyncio.sleep(0.2)
    await band.close()
    await rig.disconnect()
    fw = diffkit.FIRMWARE[firmware]
    return {
        "description": f"PulseBand firmware {fw['version']} and its app: discovery, subscriptions, 10 sensor samples, "
                       f"an OTA of a {len(image):,}-byte image over the vendor OTA of vendor-ota (125 write commands)",
        "device_name": diffkit.DEVICE_NAME,
        "firmware": {"version": fw["version"], "packets_per_event": fw["packets_per_event"]},
        "connection_handle": conn.handle,
        "sensor_samples": band.sent_samples,
        "parameter_request_by_peripheral": band.parameter_request,
        "ota": {"service_uuid": diffkit.OTA_SERVICE, "control_uuid": diffkit.OTA_CONTROL,
                "data_uuid": diffkit.OTA_DATA, "control_value_handle": control.handle,
                "data_value_handle": data.handle, "packets": total, "packet_payload_size": diffkit.PAYLOAD,
                "image": {"size": len(image), "sha256": common.sha256(image), "crc32": f"{crc:08x}",
                          "generator": f"xorshift32(13,17,5) seed 0x{diffkit.IMAGE_SEED:08x}; one step per byte, "
                                       "low 8 bits"},
                "notifications": band.ota["notifications"], "result_hex": result.hex(), "result": "success"},
    }


CHARACTERISTICS = [diffkit.BATTERY_LEVEL, diffkit.SENSOR, diffkit.COMMAND, diffkit.OTA_CONTROL, diffkit.OTA_DATA]


def facts(truth: dict, data: bytes) -> dict:
    """The frames and figures of one capture that the diff cites (diffkit.Facts: the written btsnoop)."""
    f = diffkit.Facts(data)
    names = CHARACTERISTICS + ([diffkit.SAMPLE_RATE] if truth["firmware"]["version"] == "1.5.0" else [])
    ota = truth["ota"]
    stream = f.stream(0x52, ota["data_value_handle"])
    assert stream["packets"] == ota["packets"]
    updates = f.updates()
    interval = updates[-1]["interval_ms"] if updates else f.connection()["interval_ms"]
    start = f.writes(0x12, ota["control_value_handle"])
    (end_frame, _v), = [(fr, v) for fr, v in start if v == b"\x02"]
    per_event = f.completed_per_event(stream["first_frame"], stream["last_frame"], interval)
    return {
        "characteristics": {u: f.declaration(u) for u in names},
        "connection": f.connection(), "connection_updates": updates, "parameter_requests": f.parameter_requests(),
        "mtu": f.mtu(), "procedures": f.procedures(),
        "ota_stream": {**stream, "image_bytes": ota["image"]["size"],
                       "image_rate_bps": round(ota["image"]["size"] * 8 * 1e6 / stream["span_us"], 1),
                       "start_frame": start[0][0], "end_frame": end_frame,
                       "packets_per_event_max": max(per_event), "completed_per_event": per_event},
    }


def locate_capture(truth: dict, data: bytes):
    truth["facts"] = facts(truth, data)


def compare(truth_b: dict, truth_a: dict, name_a: str) -> dict:
    """diff-fw2 against diff-fw1: every expected difference, with the frames on both sides."""
    fa, fb = truth_a["facts"], truth_b["facts"]
    ca, cb = fa["characteristics"], fb["characteristics"]
    gatt = [{"change": "added", "uuid": diffkit.SAMPLE_RATE, "service_uuid": diffkit.BAND_SERVICE,
             "handle_b": cb[diffkit.SAMPLE_RATE]["handle"], "value_handle_b": cb[diffkit.SAMPLE_RATE]["value_handle"],
             "properties_b": cb[diffkit.SAMPLE_RATE]["properties"], "frame_b": cb[diffkit.SAMPLE_RATE]["frame"]},
            {"change": "properties", "uuid": diffkit.SENSOR, "service_uuid": diffkit.BAND_SERVICE,
             "a": ca[diffkit.SENSOR]["properties"], "b": cb[diffkit.SENSOR]["properties"],
             "frame_a": ca[diffkit.SENSOR]["frame"], "frame_b": cb[diffkit.SENSOR]["frame"]}]
    moved = [{"uuid": u, "handle_a": ca[u]["handle"], "handle_b": cb[u]["handle"], "value_handle_a": ca[u]["value_handle"],
              "value_handle_b": cb[u]["value_handle"]}
             for u in CHARACTERISTICS if ca[u]["handle"] != cb[u]["handle"]]
    assert [m["uuid"] for m in moved] == [diffkit.OTA_CONTROL, diffkit.OTA_DATA]
    assert all(ca[u]["properties"] == cb[u]["properties"] for u in CHARACTERISTICS if u != diffkit.SENSOR)
    (req,) = fb["parameter_requests"]
    (upd,) = fb["connection_updates"]
    assert not fa["parameter_requests"] and not fa["connection_updates"] and req["result"] == 0
    conn_a = fa["connection"]
    link = [{"field": "interval_ms", "a": conn_a["interval_ms"], "b": upd["interval_ms"], "frame_a": conn_a["frame"],
             "frame_b": upd["frame"], "how_b": "requested by the peripheral (L2CAP Connection Parameter Update "
                                               "Request), accepted, LE Connection Update Complete"},
            {"field": "parameter_request", "a": None,
             "b": {k: req[k] for k in ("from", "interval_min_ms", "interval_max_ms", "latency",
                                       "supervision_timeout_ms", "result")},
             "frame_b": req["frame"], "response_frame_b": req["response_frame"]}]
    assert [p["procedure"] for p in fa["procedures"]] == [p["procedure"] for p in fb["procedures"]]
    sa, sb = fa["ota_stream"], fb["ota_stream"]
    stream = f"write_cmd {diffkit.OTA_DATA}"
    throughput = [{"stream": stream, "uuid": diffkit.OTA_DATA, "direction": "tx", "opcode": "0x52",
                   "handle_a": truth_a["ota"]["data_value_handle"], "handle_b": truth_b["ota"]["data_value_handle"],
                   "packets_a": sa["packets"], "packets_b": sb["packets"],
                   "value_bytes_a": sa["value_bytes"], "value_bytes_b": sb["value_bytes"],
                   "first_frame_a": sa["first_frame"], "last_frame_a": sa["last_frame"],
                   "first_frame_b": sb["first_frame"], "last_frame_b": sb["last_frame"],
                   "span_us_a": sa["span_us"], "span_us_b": sb["span_us"],
                   "rate_bps_a": sa["rate_bps"], "rate_bps_b": sb["rate_bps"],
                   "rate_drop_percent": round(100 * (1 - sb["rate_bps"] / sa["rate_bps"]), 1),
                   "packets_per_event_a": sa["packets_per_event_max"], "packets_per_event_b": sb["packets_per_event_max"],
                   "interval_ms_a": conn_a["interval_ms"], "interval_ms_b": upd["interval_ms"]}]
    ota = {"protocol": "vendor OTA of vendor-ota (control 7E5A0002, data 7E5A0003)",
           "a": {"result": "success", "result_hex": "8200", "image_bytes": sa["image_bytes"],
                 "image_rate_bps": sa["image_rate_bps"], "start_frame": sa["start_frame"], "end_frame": sa["end_frame"]},
           "b": {"result": "success", "result_hex": "8200", "image_bytes": sb["image_bytes"],
                 "image_rate_bps": sb["image_rate_bps"], "start_frame": sb["start_frame"], "end_frame": sb["end_frame"]}}
    assert throughput[0]["rate_drop_percent"] >= 10
    return {"against": f"{name_a}.btsnoop", "peer": diffkit.DEVICE_ADDRESS, "gatt": gatt, "moved": moved, "link": link,
            "throughput": throughput, "ota": ota,
            "behaviour": {"first_divergence_step": None, "note": "the same app: the same GATT procedures in the same "
                                                                 "order"},
            "unchanged": ["mtu 247", "data length 251", "latency 0", "supervision timeout 5000 ms", "1M PHY",
                          "no pairing", "sensor samples (10, same bytes)", "OTA image (same bytes)"]}


def _variant(firmware: int, name: str, against: str | None) -> types.SimpleNamespace:
    ns = types.SimpleNamespace(DEVICE_ADDRESS=diffkit.DEVICE_ADDRESS, locate_capture=locate_capture,
                               run=lambda loop, out: run_app(loop, out, firmware))
    if against:
        ns.DIFF_AGAINST = against
        ns.compare = compare
    return ns


FW1 = _variant(1, "diff-fw1", None)
FW2 = _variant(2, "diff-fw2", "diff-fw1")
