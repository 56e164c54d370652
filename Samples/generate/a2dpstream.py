"""Audio Sample (BR/EDR): a phone streams SBC to a headset over A2DP, suspends, resumes, closes.

The phone pages the headset (Create Connection, Connection Complete), opens AVDTP's signalling channel (L2CAP PSM
0x0019), discovers the headset's one sink end point and its SBC capabilities (Get Capabilities), configures its own
source end point to it (Set Configuration: SBC 44.1 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2–53,
A2DP 1.4, 4.3.2), opens the stream (Open, then a second AVDTP channel: the media transport, AVDTP 1.3, 5.4.6) and
starts it. It sends 1 s of SBC media (RTP, A2DP 1.4, 4.3.4: 5 SBC frames of 128 samples per packet, 14.5 ms of audio,
the RTP timestamp in samples), suspends (the user pauses) for 1 s, starts again for 0.5 s, then closes the stream and
the link. The SBC frames are synthetic (valid headers, constant payload): the analysis reads only their headers.

bumble 0.0.236 runs AVDTP on both hosts over its BR/EDR link model; its packet pump paces the media on the virtual
clock. Nothing fails: no rule fires (the near miss of BR-07, stalls, and BR-08, rejections).
"""

from __future__ import annotations

import asyncio

from bumble import a2dp, avdtp, hci
from bumble.core import PhysicalTransport
from bumble.rtp import MediaPacket

import diagkit
import classickit

DEVICE_ADDRESS = "00:1B:66:E1:4C:70"  # the headset's BR/EDR public address
SAMPLING = 44100
FRAMES_PER_PACKET = 5
SAMPLES_PER_FRAME = 16 * 8  # blocks × subbands
BITPOOL = 53
FIRST_S, SECOND_S, PAUSE_S = 1.0, 0.5, 1.0


def sbc_capabilities(bitpool_min: int, bitpool_max: int) -> avdtp.MediaCodecCapabilities:
    info = a2dp.SbcMediaCodecInformation
    return avdtp.MediaCodecCapabilities(
        media_type=avdtp.AVDTP_AUDIO_MEDIA_TYPE,
        media_codec_type=a2dp.A2DP_SBC_CODEC_TYPE,
        media_codec_information=info(
            sampling_frequency=info.SamplingFrequency.SF_44100,
            channel_mode=info.ChannelMode.JOINT_STEREO,
            block_length=info.BlockLength.BL_16,
            subbands=info.Subbands.S_8,
            allocation_method=info.AllocationMethod.LOUDNESS,
            minimum_bitpool_value=bitpool_min,
            maximum_bitpool_value=bitpool_max,
        ),
    )


def sbc_frame() -> bytes:
    """One SBC frame header (A2DP 1.4, 12.6: sync 0x9C, 44.1 kHz, 16 blocks, joint stereo, loudness, 8 subbands,
    bitpool 53) and a constant payload of the frame's length (2 × 4 × 8 / 8 + (8 + 16 × 53) / 8 → 119 bytes in all)."""
    header = bytes([0x9C, 0b10_11_11_0_1, BITPOOL, 0x00])
    return header + bytes(119 - len(header))


class VirtualClock:
    def __init__(self, loop):
        self.loop = loop

    def now(self) -> float:
        return self.loop.time()

    async def sleep(self, duration: float) -> None:
        await asyncio.sleep(duration)


def packets(seconds: float, first_sequence: int, first_sample: int):
    """RTP packets of `seconds` of SBC, the timestamp in samples from `first_sample`."""
    async def generate():
        per_packet = FRAMES_PER_PACKET * SAMPLES_PER_FRAME
        count = int(seconds * SAMPLING / per_packet)
        payload = bytes([FRAMES_PER_PACKET]) + sbc_frame() * FRAMES_PER_PACKET
        for i in range(count):
            samples = first_sample + i * per_packet
            packet = MediaPacket(2, 0, 0, 0, first_sequence + i, samples, 0x5A17, [], 96, payload)
            packet.timestamp_seconds = samples / SAMPLING
            yield packet
    return generate()


async def run(loop, out):
    rig = classickit.rig(loop, out, "Headset 9", DEVICE_ADDRESS)
    listener = avdtp.Listener.for_device(rig.device)
    headset = {}

    def on_avdtp(server):
        headset["sink"] = server.add_sink(sbc_capabilities(2, 53))
    listener.on(listener.EVENT_CONNECTION, on_avdtp)

    await rig.phone.power_on()
    await rig.device.power_on()
    await asyncio.sleep(0.4)  # the user picks the headset
    conn = await rig.phone.connect(hci.Address(DEVICE_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS), transport=PhysicalTransport.BR_EDR)
    protocol = await avdtp.Protocol.connect(conn)
    per_packet = FRAMES_PER_PACKET * SAMPLES_PER_FRAME
    first_count = int(FIRST_S * SAMPLING / per_packet)
    clock = VirtualClock(loop)
    pump = avdtp.MediaPacketPump(packets(FIRST_S, 0, 0), clock)
    source = protocol.add_source(sbc_capabilities(2, 53), pump)
    endpoints = await protocol.discover_remote_endpoints()
    sink = protocol.find_remote_sink_by_codec(avdtp.AVDTP_AUDIO_MEDIA_TYPE, a2dp.A2DP_SBC_CODEC_TYPE)
    assert sink is not None, list(endpoints)
    stream = await protocol.create_stream(source, sink)
    await stream.open()
    await asyncio.sleep(0.2)
    await stream.start()
    await pump.wait_for_completion()
    await asyncio.sleep(0.05)
    await stream.stop()  # Suspend: the user pauses
    await asyncio.sleep(PAUSE_S)
    second = avdtp.MediaPacketPump(packets(SECOND_S, first_count, first_count * per_packet), clock)
    source.packet_pump = second
    await stream.start()
    await second.wait_for_completion()
    await asyncio.sleep(0.05)
    await stream.stop()
    await stream.close()
    await asyncio.sleep(0.3)
    ended = loop.create_future()
    conn.on("disconnection", ended.set_result)
    await conn.disconnect()
    await ended
    await asyncio.sleep(0.1)
    second_count = int(SECOND_S * SAMPLING / per_packet)
    return {
        "description": "BR/EDR A2DP: the phone streams SBC 44.1 kHz joint stereo (bitpool 2–53) to a headset for "
                       "2 s, suspends for 1.5 s, streams 1 s more, closes the stream and the link",
        "codec": {"name": "SBC", "sampling_hz": SAMPLING, "channel_mode": "joint stereo", "blocks": 16, "subbands": 8,
                  "allocation": "loudness", "bitpool": [2, 53]},
        "media_packets": first_count + second_count, "sbc_frames_per_packet": FRAMES_PER_PACKET,
        "media_payload_bytes": 12 + 1 + 119 * FRAMES_PER_PACKET,
    }


def channels(log, psm: int) -> list[tuple[int, int]]:
    """The (local CID, remote CID) of each channel to `psm` the phone opened (Connection Request 0x02 / Response 0x03
    on the BR/EDR signalling channel 0x0001, Core Spec Vol 3, Part A, 4.2–4.3), in order."""
    out, asked = [], {}
    for _frame, sent, cid, p in log.l2cap:
        if cid != 0x0001 or len(p) < 8:
            continue
        if p[0] == 0x02 and sent and int.from_bytes(p[4:6], "little") == psm:
            asked[p[1]] = int.from_bytes(p[6:8], "little")
        elif p[0] == 0x03 and not sent and p[1] in asked and int.from_bytes(p[8:10], "little") == 0:
            out.append((asked.pop(p[1]), int.from_bytes(p[4:6], "little")))
    return out


SIGNALS = {0x01: "Discover", 0x0C: "Get All Capabilities", 0x02: "Get Capabilities", 0x03: "Set Configuration",
           0x06: "Open", 0x07: "Start", 0x09: "Suspend", 0x08: "Close"}


def locate_capture(truth, data: bytes):
    """The frames of each AVDTP step and of the media, found in the capture itself (L2CAP PDUs by CID)."""
    log = diagkit.Log(data)
    complete = log.events(0x03)
    assert len(complete) == 1 and complete[0].params[0] == 0, complete
    handle = int.from_bytes(complete[0].params[1:3], "little")
    (sig_local, sig_remote), (media_local, media_remote) = channels(log, 0x0019)
    signals = []
    for frame, sent, cid, p in log.l2cap:
        if cid in (sig_local, sig_remote) and len(p) >= 2:
            kind = ["command", "general reject", "accept", "reject"][p[0] & 0x03]
            signals.append({"frame": frame, "from": "phone" if sent else "headset", "signal": SIGNALS.get(p[1] & 0x3F, hex(p[1])),
                            "message": kind})
    media = [(frame, int.from_bytes(p[2:4], "big"), len(p)) for frame, sent, cid, p in log.l2cap if cid == media_remote and sent]
    starts = [s["frame"] for s in signals if s["signal"] == "Start" and s["message"] == "accept"]
    suspends = [s["frame"] for s in signals if s["signal"] == "Suspend" and s["message"] == "accept"]
    config = next(s["frame"] for s in signals if s["signal"] == "Set Configuration" and s["message"] == "command")
    assert len(media) == truth["media_packets"] and [m[1] for m in media] == list(range(len(media))), media[:3]
    truth["connection"] = {"complete_frame": complete[0].frame, "connection_handle": handle, "peer_address": DEVICE_ADDRESS,
                           "link_type": "ACL"}
    truth["avdtp"] = {"signalling_cids": [sig_local, sig_remote], "media_cids": [media_local, media_remote], "signals": signals,
                      "rejections": 0}
    truth["stream"] = {"acp_seid": 1, "int_seid": 1, "configuration_frame": config, "starts": starts, "suspends": suspends,
                       "close_frame": next(s["frame"] for s in signals if s["signal"] == "Close" and s["message"] == "accept"),
                       "media_first_frame": media[0][0], "media_last_frame": media[-1][0], "packets": len(media),
                       "bytes": sum(m[2] for m in media), "sequence_gaps": 0, "stalls": 0,
                       "duration_us": log.ts[media[-1][0]] - log.ts[media[0][0]]}
    truth["diagnosis"] = {"rules": [], "findings": [],
                          "not_flagged": [diagkit.quiet("the 1 s pause between the suspend and the second start: not a stall",
                                                        suspends[:1] + starts[1:2], ["BR-07"]),
                                          diagkit.quiet("every AVDTP command accepted", [config], ["BR-08"])]}
