"""Scenario: an LE Audio call on an earbud (unicast, one bidirectional CIS), recorded at the phone.

The earbud runs bumble's Published Audio Capabilities Service and Audio Stream Control Service (one Sink ASE, id 1,
and one Source ASE, id 2); the phone is the unicast client (BAP), written here step by step as a phone's Bluetooth
stack does it: MTU exchange, discovery, PACS reads (Sink/Source PAC, audio locations, supported and available
contexts), subscriptions to the ASEs and the ASE Control Point, the ASE reads, Config Codec (LC3 16_2: 16 kHz,
10 ms, 40 octets per frame), LE Set CIG Parameters, Config QoS (the first refused: its presentation delay of 60 ms is
outside the 20-40 ms the earbud supports: Invalid Configuration Parameter Value, reason Presentation Delay; the second,
40 ms, accepted), Enable (Conversational context), LE Create CIS, LE Setup ISO Data Path both ways, Receiver Start
Ready for the Source ASE, LE Read ISO TX Sync, 3 s of audio both ways (300 SDUs of 40 octets each way, one per 10 ms
ISO interval), Disable, Receiver Stop Ready, LE Remove ISO Data Path, the CIS disconnected by the phone, Release,
LE Remove CIG, the ACL link disconnected.

The phone's controller hands it the earbud's microphone SDUs with a known loss pattern (``RX_FAULTS``): SDUs 40-41,
150-167 and 250 never delivered (gaps in the packet sequence numbers), 60-62 delivered with Packet_Status_Flag 0b10
"lost data" (no data), 90 and 200 with 0b01 "possibly invalid", SDU 120 in two HCI fragments. The truth file reads
every count back from the written btsnoop without bumble (``isoread``).
"""

from __future__ import annotations

import asyncio
import struct

from bumble import hci
from bumble.profiles import ascs, bap, le_audio, pacs

import common
import isoread
import isosim
import sim

DEVICE_ADDRESS = "D8:2A:7E:10:33:51"
SINK_ASE, SOURCE_ASE = 1, 2
CIG_ID, CIS_ID = 1, 0
SDU_INTERVAL_US = 10_000
OCTETS = 40
STREAM_SDUS = 300
REFUSED_DELAY_US, PRESENTATION_DELAY_US = 60_000, 40_000
RX_FAULTS = isosim.RxFaults(
    missing=frozenset([40, 41, 250] + list(range(150, 168))),
    lost=frozenset([60, 61, 62]),
    invalid=frozenset([90, 200]),
    fragmented=frozenset([120]),
)
CODEC_CONFIG = bap.CodecSpecificConfiguration(
    sampling_frequency=bap.SamplingFrequency.FREQ_16000, frame_duration=bap.FrameDuration.DURATION_10000_US,
    audio_channel_allocation=bap.AudioLocation.FRONT_LEFT, octets_per_codec_frame=OCTETS, codec_frames_per_sdu=1)
LC3 = hci.CodingFormat(hci.CodecID.LC3)


def sdu(seed: int, index: int) -> bytes:
    return common.xorshift_bytes(seed + index, OCTETS)


def earbud_services(device) -> ascs.AudioStreamControlService:
    capabilities = bap.CodecSpecificCapabilities(
        supported_sampling_frequencies=bap.SupportedSamplingFrequency.FREQ_16000 | bap.SupportedSamplingFrequency.FREQ_24000
        | bap.SupportedSamplingFrequency.FREQ_48000,
        supported_frame_durations=bap.SupportedFrameDuration.DURATION_10000_US_SUPPORTED,
        supported_audio_channel_count=[1], min_octets_per_codec_frame=30, max_octets_per_codec_frame=120,
        supported_max_codec_frames_per_sdu=1)
    mic = bap.CodecSpecificCapabilities(
        supported_sampling_frequencies=bap.SupportedSamplingFrequency.FREQ_16000 | bap.SupportedSamplingFrequency.FREQ_24000,
        supported_frame_durations=bap.SupportedFrameDuration.DURATION_10000_US_SUPPORTED,
        supported_audio_channel_count=[1], min_octets_per_codec_frame=30, max_octets_per_codec_frame=60,
        supported_max_codec_frames_per_sdu=1)
    contexts = bap.ContextType.CONVERSATIONAL | bap.ContextType.MEDIA | bap.ContextType.RINGTONE
    device.add_service(pacs.PublishedAudioCapabilitiesService(
        supported_source_context=bap.ContextType.CONVERSATIONAL, supported_sink_context=contexts,
        available_source_context=bap.ContextType.CONVERSATIONAL, available_sink_context=contexts,
        sink_pac=[pacs.PacRecord(LC3, capabilities)], sink_audio_locations=bap.AudioLocation.FRONT_LEFT,
        source_pac=[pacs.PacRecord(LC3, mic)], source_audio_locations=bap.AudioLocation.FRONT_LEFT))
    service = ascs.AudioStreamControlService(device, sink_ase_id=[SINK_ASE], source_ase_id=[SOURCE_ASE])
    for ase in service.ase_state_machines.values():
        ase.preferred_phy = 0x02
        ase.preferred_retransmission_number = 2
        ase.preferred_max_transport_latency = 20
        ase.supported_presentation_delay_min, ase.supported_presentation_delay_max = 20_000, 40_000
        ase.preferred_presentation_delay_min, ase.preferred_presentation_delay_max = 20_000, 40_000
        accept = ase.on_config_qos

        def checked(*args, accept=accept, ase=ase):
            # ASCS 5.2: a Presentation_Delay outside the range the server exposed is refused, naming the parameter.
            if not ase.supported_presentation_delay_min <= args[8] <= ase.supported_presentation_delay_max:
                return (ascs.AseResponseCode.INVALID_CONFIGURATION_PARAMETER_VALUE, ascs.AseReasonCode.PRESENTATION_DELAY)
            return accept(*args)

        ase.on_config_qos = checked
        ase.on_release = releaser(ase)
    device.add_service(service)
    return service


def releaser(ase):
    """Release as ASCS 5.8 orders it: the ASE goes to Releasing (notified after the control point's response), the
    server frees its resources, then Idle. bumble's own goes to Idle first when no CIS is left to remove its data path
    from, so its Idle notification overtook the Releasing one."""

    def on_release():
        if ase.state == ase.State.IDLE:
            return (ascs.AseResponseCode.INVALID_ASE_STATE_MACHINE_TRANSITION, ascs.AseReasonCode.NONE)
        ase.state = ase.State.RELEASING

        async def idle():
            await asyncio.sleep(0.06)
            ase.state = ase.State.IDLE
            await ase.service.device.notify_subscribers(ase, ase.value)

        asyncio.ensure_future(idle())
        return (ascs.AseResponseCode.SUCCESS, ascs.AseReasonCode.NONE)

    return on_release


def qos(presentation_delay: int) -> ascs.ASE_Config_QOS:
    n = 2
    return ascs.ASE_Config_QOS(
        ase_id=[SINK_ASE, SOURCE_ASE], cig_id=[CIG_ID] * n, cis_id=[CIS_ID] * n, sdu_interval=[SDU_INTERVAL_US] * n,
        framing=[0] * n, phy=[0x02] * n, max_sdu=[OCTETS] * n, retransmission_number=[2] * n,
        max_transport_latency=[20] * n, presentation_delay=[presentation_delay] * n)


async def run(loop, out):
    rig = isosim.AudioRig(loop, out, "Buds L", DEVICE_ADDRESS, interval_ms=30.0)
    rig.phone_ctl.rx_faults["cis"] = RX_FAULTS
    service = earbud_services(rig.device)
    mic_stop = asyncio.Event()

    def on_state(ase):
        def changed():
            if ase.role == ascs.AudioRole.SOURCE and ase.state == ase.State.STREAMING:
                asyncio.ensure_future(stream(ase.cis_link, 0xEA2B_0000, mic_stop))
        return changed

    for ase in service.ase_state_machines.values():
        ase.on(ase.EVENT_STATE_CHANGE, on_state(ase))

    conn = await rig.connect()
    await conn.set_data_length(251, 2120)
    await asyncio.sleep(0.05)
    from bumble.device import Peer

    peer = Peer(conn)
    await peer.request_mtu(247)
    await peer.discover_all()
    reads = {}
    for uuid in ("2BC9", "2BCA", "2BCB", "2BCC", "2BCE", "2BCD"):
        reads[uuid] = bytes(await sim.find_char(peer, uuid).read_value())

    ase_chars = {SINK_ASE: sim.find_char(peer, "2BC4"), SOURCE_ASE: sim.find_char(peer, "2BC5")}
    control_point = sim.find_char(peer, "2BC6")
    states: dict[int, int] = {}
    changed = asyncio.Event()
    responses: asyncio.Queue = asyncio.Queue()

    def on_ase(value):
        states[value[0]] = value[1]
        changed.set()

    async def until(ase_id, state):
        while states.get(ase_id) != state:
            changed.clear()
            await changed.wait()

    await control_point.subscribe(lambda v: responses.put_nowait(bytes(v)))
    for char in ase_chars.values():
        await char.subscribe(on_ase)
    for char in ase_chars.values():
        on_ase(bytes(await char.read_value()))

    async def operate(op) -> bytes:
        await control_point.write_value(bytes(op), with_response=True)
        return await responses.get()

    config = bytes(CODEC_CONFIG)
    await operate(ascs.ASE_Config_Codec(ase_id=[SINK_ASE, SOURCE_ASE], target_latency=[0x02, 0x02],
                                        target_phy=[0x02, 0x02], codec_id=[LC3, LC3],
                                        codec_specific_configuration=[config, config]))
    await until(SOURCE_ASE, 1)
    from bumble.device import CigParameters

    cis_handles = await rig.phone.setup_cig(CigParameters(
        cig_id=CIG_ID, sdu_interval_c_to_p=SDU_INTERVAL_US, sdu_interval_p_to_c=SDU_INTERVAL_US,
        max_transport_latency_c_to_p=20, max_transport_latency_p_to_c=20,
        cis_parameters=[CigParameters.CisParameters(cis_id=CIS_ID, max_sdu_c_to_p=OCTETS, max_sdu_p_to_c=OCTETS,
                                                    rtn_c_to_p=2, rtn_p_to_c=2)]))
    refused = await operate(qos(REFUSED_DELAY_US))
    await operate(qos(PRESENTATION_DELAY_US))
    await until(SOURCE_ASE, 2)
    metadata = bytes(le_audio.Metadata([le_audio.Metadata.Entry(
        tag=le_audio.Metadata.Tag.STREAMING_AUDIO_CONTEXTS, data=struct.pack("<H", bap.ContextType.CONVERSATIONAL))]))
    await operate(ascs.ASE_Enable(ase_id=[SINK_ASE, SOURCE_ASE], metadata=[metadata, metadata]))
    await until(SOURCE_ASE, 3)
    (cis,) = await rig.phone.create_cis([(cis_handles[0], conn)])
    await cis.setup_data_path(direction=cis.Direction.HOST_TO_CONTROLLER)
    await cis.setup_data_path(direction=cis.Direction.CONTROLLER_TO_HOST)
    await until(SINK_ASE, 4)
    await operate(ascs.ASE_Receiver_Start_Ready(ase_id=[SOURCE_ASE]))
    await until(SOURCE_ASE, 4)

    phone_stop = asyncio.Event()
    phone_stream = asyncio.ensure_future(stream(cis, 0x5A1E_0000, phone_stop))
    await asyncio.sleep(0.5)
    tx_sync = await cis.get_tx_time_stamp()
    await asyncio.sleep(STREAM_SDUS * SDU_INTERVAL_US / 1e6 - 0.5 + 0.05)
    phone_stop.set()
    mic_stop.set()
    await phone_stream
    await asyncio.sleep(0.1)

    await operate(ascs.ASE_Disable(ase_id=[SINK_ASE, SOURCE_ASE]))
    await until(SOURCE_ASE, 5)
    await operate(ascs.ASE_Receiver_Stop_Ready(ase_id=[SOURCE_ASE]))
    await until(SOURCE_ASE, 2)
    await cis.remove_data_path([cis.Direction.HOST_TO_CONTROLLER, cis.Direction.CONTROLLER_TO_HOST])
    await cis.disconnect()
    await asyncio.sleep(0.1)
    await operate(ascs.ASE_Release(ase_id=[SINK_ASE, SOURCE_ASE]))
    await until(SOURCE_ASE, 0)
    await until(SINK_ASE, 0)
    await rig.phone.send_sync_command(hci.HCI_LE_Remove_CIG_Command(cig_id=CIG_ID))
    await rig.disconnect()
    return {
        "description": "an LE Audio call (BAP unicast, one bidirectional CIS) recorded at the phone: PACS reads, ASE "
                       "configuration through the ASCS control point (one Config QoS refused), CIG/CIS setup, ISO data "
                       "paths, 3 s of LC3 16_2 audio each way with a known loss pattern on the received stream, "
                       "Disable/Release and teardown",
        "acl_handle": conn.handle, "cis_handle": cis.handle, "cig_id": CIG_ID, "cis_id": CIS_ID,
        "ase_ids": {"sink": SINK_ASE, "source": SOURCE_ASE},
        "handles": {"sink_ase": ase_chars[SINK_ASE].handle, "source_ase": ase_chars[SOURCE_ASE].handle,
                    "ase_control_point": control_point.handle,
                    **{f"pacs_{u}": sim.find_char(peer, u).handle for u in ("2BC9", "2BCA", "2BCB", "2BCC", "2BCE", "2BCD")}},
        "pacs_values_hex": {u: v.hex() for u, v in reads.items()},
        "codec_specific_configuration_hex": config.hex(),
        "lc3": {"sampling_frequency_hz": 16000, "frame_duration_us": 10000, "octets_per_codec_frame": OCTETS,
                "codec_frames_per_sdu": 1, "audio_channel_allocation": int(bap.AudioLocation.FRONT_LEFT)},
        "refused_config_qos": {"presentation_delay_us": REFUSED_DELAY_US, "response_hex": refused.hex(),
                               "response_code": 0x09, "reason": 0x09},
        "presentation_delay_us": PRESENTATION_DELAY_US,
        "sdu_interval_us": SDU_INTERVAL_US,
        "configured_bitrate_bps": OCTETS * 8 * 1_000_000 // SDU_INTERVAL_US,
        "rx_fault_pattern": {"missing": sorted(RX_FAULTS.missing), "lost_flag": sorted(RX_FAULTS.lost),
                             "possibly_invalid_flag": sorted(RX_FAULTS.invalid), "fragmented": sorted(RX_FAULTS.fragmented)},
        "read_iso_tx_sync": {"packet_sequence_number": tx_sync[0], "tx_time_stamp": tx_sync[1], "time_offset": tx_sync[2]},
        "sdu_generator": "xorshift32 seed 0x5A1E0000 + index (phone -> earbud), 0xEA2B0000 + index (earbud -> phone), "
                         f"{OCTETS} bytes",
    }


async def stream(iso_link, seed: int, stop: asyncio.Event) -> None:
    """One LC3 frame every SDU interval until `stop`, at most STREAM_SDUS."""
    for i in range(STREAM_SDUS):
        if stop.is_set():
            break
        iso_link.write(sdu(seed, i))
        await asyncio.sleep(SDU_INTERVAL_US / 1e6)


def locate_capture(truth: dict, data: bytes) -> None:
    """Everything the tests count, read back from the written btsnoop (``isoread``, not bumble)."""
    truth.update(isoread.audio_truth(data, truth))
