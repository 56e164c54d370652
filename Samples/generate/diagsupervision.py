"""Diagnosis Sample: the link is lost mid-stream and the supervision timeout (420 ms) expires.

At start-up the phone's host enables Android Bluetooth Quality Reports (vendor command 0xFD5E, the Pixel 8's event
mask 0x0004815E, which includes approaching-LSTO). A motion sensor connects at 30 ms and asks, over L2CAP, for a
420 ms supervision timeout (BlueZ's default, 42 x 10 ms); the phone's host accepts (the spec's rule holds: 420 ms >
2 x 30 ms) and the update takes effect at its instant. The app subscribes and starts the stream: 12-byte samples
every 10 ms. 1.5 s into the stream the sensor's radio goes silent (simfaults.FaultLink.lose_radio: the battery
contact bounces). Nothing more arrives; half a timeout later the phone's controller sends a quality report (id 0x02,
approaching LSTO); at 420 ms it reports Disconnection Complete 0x08 Connection Timeout. Rules DC-01, LP-02, HH-05.
"""

from __future__ import annotations

import asyncio
import struct

from bumble import hci
from bumble.gatt import Characteristic, CharacteristicValue, Service

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "E7:93:25:6A:F0:4C"
SERVICE = "8B4E0001-1D6F-4C3A-B7E9-0A2C4D6E8F13"
CONTROL = "8B4E0002-1D6F-4C3A-B7E9-0A2C4D6E8F13"
SAMPLES = "8B4E0003-1D6F-4C3A-B7E9-0A2C4D6E8F13"
BQR_MASK = 0x0004815E  # the event mask the Pixel 8's stack enables (../shared/captures, frame 91)
BQR_MIN_INTERVAL_MS = 500
STREAM_BEFORE_LOSS_S = 1.5


def sample(n: int) -> bytes:
    """An accelerometer sample: index u32, x, y, z in mg (int16 LE each), 2 bytes of flags."""
    return struct.pack("<Ihhhh", n, (n * 37) % 400 - 200, (n * 53) % 300 - 150, 1000 - (n * 11) % 40, 0)


async def run(loop, out):
    rig = simfaults.rig(loop, out, "MotionTag", DEVICE_ADDRESS, interval_ms=30.0)
    start = asyncio.Event()
    control = Characteristic(CONTROL, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
                             CharacteristicValue(write=lambda _c, _v: start.set()))
    stream = Characteristic(SAMPLES, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"")
    rig.device.add_service(Service(SERVICE, [control, stream]))
    decisions = diagkit.android_parameter_policy(rig.phone)
    quality_reports: list = []  # what the phone's host receives (bumble's host would only log "Ignoring event")
    rig.phone.host.on_hci_bluetooth_quality_report_event = quality_reports.append
    await rig.phone.power_on()
    enabled = await rig.phone.host.send_command(hci.HCI_Command(
        struct.pack("<BIH", 0x00, BQR_MASK, BQR_MIN_INTERVAL_MS), op_code=simfaults.BQR_COMMAND))
    assert bytes(enabled.return_parameters.data) == b"\x00" + struct.pack("<I", BQR_MASK)
    await rig.device.power_on()
    connected = loop.create_future()
    rig.device.once("connection", connected.set_result)
    await rig.device.start_advertising(auto_restart=False)
    await asyncio.sleep(0.35)
    conn = rig.phone_conn = await rig.phone.connect(rig.device.random_address, connection_parameters_preferences={
        hci.Phy.LE_1M: sim.ConnectionParametersPreferences(connection_interval_min=30.0, connection_interval_max=30.0,
                                                           max_latency=0, supervision_timeout=5000)})
    rig.device_conn = await connected
    lost = loop.create_future()
    conn.on("disconnection", lost.set_result)
    await rig.device.update_connection_parameters(rig.device_conn, 30.0, 30.0, 0, 420.0, use_l2cap=True)
    peer = await sim.discover_all(conn)
    received: list[bytes] = []
    await peer.subscribe(sim.find_char(peer, SAMPLES), lambda v: received.append(bytes(v)))
    sent = 0

    async def sensor():
        nonlocal sent
        await start.wait()
        while rig.device_conn.handle in rig.device.connections:
            await rig.device.notify_subscribers(stream, sample(sent))
            sent += 1
            await asyncio.sleep(0.01)

    task = loop.create_task(sensor())
    await sim.find_char(peer, CONTROL).write_value(b"\x01", with_response=True)
    await asyncio.sleep(STREAM_BEFORE_LOSS_S)
    last_heard = rig.link.lose_radio()
    reason = await lost
    await task
    await asyncio.sleep(0.3)
    assert reason == hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR and len(quality_reports) == 1, reason
    assert received == [sample(i) for i in range(len(received))] and decisions[0]["accepted"]
    return {
        "description": "A 420 ms supervision timeout (requested by the sensor, accepted) expires after the sensor's "
                       "radio goes silent mid-stream: an approaching-LSTO quality report, then Disconnection Complete "
                       "0x08",
        "service_uuid": SERVICE, "samples_value_handle": sim.find_char(peer, SAMPLES).handle,
        "bqr": {"command_mask": f"0x{BQR_MASK:08X}", "minimum_report_interval_ms": BQR_MIN_INTERVAL_MS},
        "parameter_request": {**decisions[0], "apple_rule_violations": diagkit.apple_rule_violations(
            decisions[0]["interval_min"], decisions[0]["interval_max"], decisions[0]["latency"], decisions[0]["timeout"])},
        "samples_sent_by_the_sensor": sent, "samples_received": len(received),
        "radio_lost_at_s": round(rig.link.radio_lost_at, 6), "last_connection_event_heard_s": round(last_heard, 6),
    }


def bqr_fields(r: diagkit.Record) -> dict:
    """Vendor event 0xFF, sub-event 0x58 (bumble vendor/android/hci.py layout): report id, packet type, handle, role,
    TX power, RSSI, SNR, unused AFH, unideal AFH, LSTO (0.625 ms slots), piconet clock, retransmissions, no-RX..."""
    p = r.params
    rid, ptype, handle, role, tx, rssi, snr, unused, unideal, lsto, clock, retx, norx = struct.unpack_from(
        "<BBHBbbBBBHIII", p, 1)
    return {"frame": r.frame, "sub_event": p[0], "report_id": rid, "packet_type": ptype, "connection_handle": handle,
            "role": role, "tx_power_dbm": tx, "rssi_dbm": rssi, "snr_db": snr, "lsto_ms": lsto * 0.625,
            "retransmissions": retx, "no_rx": norx, "parameters_length": len(p)}


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    bqr_cmd = log.commands(simfaults.BQR_COMMAND)[0]
    bqr_complete = log.status_of(bqr_cmd)
    reports = [bqr_fields(r) for r in log.events(0xFF, 0x58)]
    assert len(reports) == 1 and reports[0]["report_id"] == 0x02, reports
    update = log.events(0x3E, 0x03)[0]
    timeout_ms = int.from_bytes(update.params[8:10], "little") * 10
    request = log.signalling(0x12)[0][0]
    response = log.signalling(0x13)[0]
    end = diagkit.disconnection(log.events(0x05)[-1])
    assert end["reason_code"] == 0x08 and timeout_ms == 420
    rx = [r.frame for r in log.records if r.kind == "acl" and not r.sent and r.frame < end["frame"]]
    nocp = [r.frame for r in log.events(0x13) if r.frame < end["frame"]]
    last_rx = rx[-1]
    notifications = [f for f, _s, p in log.att(0x1B, sent=False)]
    truth["bqr"].update({"command_frame": bqr_cmd.frame, "command_complete_frame": bqr_complete.frame,
                         "command_status": diagkit.status_field(bqr_complete), "report": reports[0],
                         "report_seconds_after_last_rx": log.seconds(last_rx, reports[0]["frame"])})
    truth["connection_update"] = {"l2cap_request_frame": request, "l2cap_response_frame": response[0],
                                  "result": int.from_bytes(response[2][4:6], "little"),
                                  "command_frame": log.commands(0x2013)[0].frame, "complete_frame": update.frame,
                                  "supervision_timeout_ms": timeout_ms,
                                  "interval_ms": int.from_bytes(update.params[4:6], "little") * 1.25}
    truth["loss"] = {"last_rx_frame": last_rx, "last_nocp_frame": nocp[-1], "last_notification_frame": notifications[-1],
                     "notifications_received": len(notifications), "disconnection": end,
                     "silence_s": log.seconds(last_rx, end["frame"])}
    truth["diagnosis"] = {
        "rules": ["DC-01", "LP-02", "HH-05"],
        "findings": [
            diagkit.finding("DC-01", "C", end["frame"], [last_rx, update.frame, reports[0]["frame"]],
                            f"Link lost: the sensor went silent after #{last_rx} and the 420 ms supervision timeout "
                            f"(#{update.frame}) expired (#{end['frame']} 0x08, {truth['loss']['silence_s']:.3f} s of "
                            f"silence); the controller warned at #{reports[0]['frame']} (RSSI {reports[0]['rssi_dbm']} "
                            f"dBm)"),
            diagkit.finding("LP-02", "W", update.frame, [request, response[0]],
                            f"Supervision timeout 420 ms (#{update.frame}, asked by the sensor at #{request}) is under "
                            f"1 s: one short fade drops the link"),
            diagkit.finding("HH-05", "W", reports[0]["frame"], [end["frame"]],
                            f"The controller warned of imminent link loss (#{reports[0]['frame']}, quality report "
                            f"0x02 approaching LSTO, RSSI {reports[0]['rssi_dbm']} dBm, {reports[0]['no_rx']} events "
                            f"without RX)"),
        ],
        "causal_chain": [update.frame, reports[0]["frame"], end["frame"]],
        "not_flagged": [
            diagkit.quiet("the accepted parameter request (the spec's rule holds; an iPhone would refuse a timeout under "
                          "2 s, which may be said, as information)", [request, response[0]], ["LP-01"], at_most="info"),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
    }
