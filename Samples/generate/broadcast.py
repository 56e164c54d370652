"""Scenario: Auracast from a phone to an earbud (BAP broadcast), recorded at both ends.

The phone is the broadcast source and the broadcast assistant; the earbud is the broadcast sink and scan delegator.
Both run bumble's host. The phone connects to the earbud and discovers its Broadcast Audio Scan Service, subscribes to
the Broadcast Receive State, starts an extended advertising set (non-connectable; Broadcast Audio Announcement
service data with the Broadcast_ID, a Broadcast Name) with periodic advertising carrying the BASE (one subgroup, LC3
48_2: 48 kHz, 10 ms, 100 octets, BIS 1 front left and BIS 2 front right), LE Create BIG (2 BIS, 10 ms SDU interval,
2M PHY), LE Setup ISO Data Path on both BISes, and sends 400 SDUs on each (4 s). It writes Add Source to the earbud's
BASS control point; the earbud scans, synchronises to the periodic advertising (LE Periodic Advertising Create Sync),
receives the BIGInfo, synchronises to the BIG (LE BIG Create Sync for BIS 1 and 2) and reports each step in its
Broadcast Receive State. From SDU 250 on the earbud hears nothing (it left the room); a second later (the BIG sync
timeout, 1 s) its controller reports LE BIG Sync Lost (0x08, Connection Timeout) and its receive state says BIS sync
0. The phone then writes Modify Source (stop PA sync) and Remove Source, terminates the BIG, stops advertising and
disconnects.

The earbud's controller hands it the SDUs with a known loss pattern besides (``RX_FAULTS``): on BIS 1 SDUs 60-64
never delivered and 100-102 flagged lost, on BIS 2 SDU 80 possibly invalid, 120 missing and 150 in two fragments.

Two captures: ``le-audio-broadcast.btsnoop`` (the phone's HCI: the source side) and
``le-audio-broadcast-receiver.btsnoop`` (the earbud's HCI: the sink side, with the BIGInfo reports, the BIG sync and
the received BIS data); each has its truth file.

bumble's Broadcast Audio Scan Service is a stub (its control point ignores writes and its receive state needs an
encrypted link); the scan delegator here (``ScanDelegator``) implements the control point operations this story
uses on bumble's BASS types (``bass.AddSourceOperation``, ``bass.BroadcastReceiveState``), on an unencrypted link.
"""

from __future__ import annotations

import asyncio
import io
import struct

from bumble import core, gatt, hci
from bumble.device import AdvertisingEventProperties, AdvertisingParameters, BigParameters, BigSyncParameters
from bumble.device import PeriodicAdvertisingParameters
from bumble.profiles import bap, bass, le_audio

import common
import diagkit
import isoread
import isosim
import sim

DEVICE_ADDRESS = "E4:1F:3C:70:21:9A"
BROADCAST_ADDRESS = "C2:5A:01:77:3E:90"  # the phone's advertising set (random static)
BROADCAST_ID = 0x4C3A21
BROADCAST_NAME = "Pixel 8 Auracast"
SID = 1
SDU_INTERVAL_US = 10_000
OCTETS = 100
STREAM_SDUS = 400
SILENT_FROM = 250
BIG_SYNC_TIMEOUT = 100  # 10 ms units: 1 s
RECEIVER = "le-audio-broadcast-receiver"
EXTRA_SAMPLES = [RECEIVER]
extra_outputs: dict[str, io.BytesIO] = {}
RX_FAULTS = {
    "bis1": isosim.RxFaults(missing=frozenset(range(60, 65)), lost=frozenset([100, 101, 102]), silent_from=SILENT_FROM),
    "bis2": isosim.RxFaults(invalid=frozenset([80]), missing=frozenset([120]), fragmented=frozenset([150]),
                            silent_from=SILENT_FROM),
}
LC3 = hci.CodingFormat(hci.CodecID.LC3)


def base() -> bap.BasicAudioAnnouncement:
    config = bap.CodecSpecificConfiguration(sampling_frequency=bap.SamplingFrequency.FREQ_48000,
                                            frame_duration=bap.FrameDuration.DURATION_10000_US,
                                            octets_per_codec_frame=OCTETS, codec_frames_per_sdu=1)
    metadata = le_audio.Metadata([le_audio.Metadata.Entry(tag=le_audio.Metadata.Tag.STREAMING_AUDIO_CONTEXTS,
                                                          data=struct.pack("<H", bap.ContextType.MEDIA))])
    return bap.BasicAudioAnnouncement(presentation_delay=40_000, subgroups=[bap.BasicAudioAnnouncement.Subgroup(
        codec_id=LC3, codec_specific_configuration=config, metadata=metadata,
        bis=[bap.BasicAudioAnnouncement.BIS(1, bap.CodecSpecificConfiguration(audio_channel_allocation=bap.AudioLocation.FRONT_LEFT)),
             bap.BasicAudioAnnouncement.BIS(2, bap.CodecSpecificConfiguration(audio_channel_allocation=bap.AudioLocation.FRONT_RIGHT))])])


class ScanDelegator:
    """The earbud's Broadcast Audio Scan Service (BASS 3.1, 3.2): Add Source, Modify Source and Remove Source, one
    Broadcast Receive State, notified at each step of the PA and BIG synchronisation."""

    def __init__(self, device):
        self.device = device
        self.control_point = gatt.Characteristic(
            gatt.GATT_BROADCAST_AUDIO_SCAN_CONTROL_POINT_CHARACTERISTIC,
            gatt.Characteristic.Properties.WRITE | gatt.Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            gatt.Characteristic.WRITEABLE, gatt.CharacteristicValue(write=self.on_write))
        self.receive_state = gatt.Characteristic(
            gatt.GATT_BROADCAST_RECEIVE_STATE_CHARACTERISTIC,
            gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.NOTIFY,
            gatt.Characteristic.Permissions.READABLE, b"")
        device.add_service(gatt.Service(gatt.GATT_BROADCAST_AUDIO_SCAN_SERVICE, [self.control_point, self.receive_state]))
        self.state: bass.BroadcastReceiveState | None = None
        self.pa_sync = None
        self.big_sync = None
        self.big_lost = asyncio.Event()

    async def publish(self) -> None:
        self.receive_state.value = bytes(self.state) if self.state else b""
        await self.device.notify_subscribers(self.receive_state, self.receive_state.value)

    def on_write(self, _connection, value: bytes) -> None:
        op = bass.ControlPointOperation.from_bytes(value)
        if isinstance(op, bass.AddSourceOperation):
            self.state = bass.BroadcastReceiveState(
                source_id=1, source_address=op.advertiser_address, source_adv_sid=op.advertising_sid,
                broadcast_id=op.broadcast_id,
                pa_sync_state=bass.BroadcastReceiveState.PeriodicAdvertisingSyncState.NOT_SYNCHRONIZED_TO_PA,
                big_encryption=bass.BroadcastReceiveState.BigEncryption.NOT_ENCRYPTED, bad_code=b"",
                subgroups=[bass.SubgroupInfo(0, s.metadata) for s in op.subgroups])
            asyncio.ensure_future(self.synchronise(op))
        elif isinstance(op, bass.ModifySourceOperation) and self.state:
            asyncio.ensure_future(self.stop_pa())
        elif isinstance(op, bass.RemoveSourceOperation):
            self.state = None
            asyncio.ensure_future(self.publish())

    async def synchronise(self, op: bass.AddSourceOperation) -> None:
        await self.publish()
        await self.device.start_scanning(legacy=False, active=False, scan_interval=60, scan_window=30)
        synced = asyncio.Event()
        self.pa_sync = await self.device.create_periodic_advertising_sync(op.advertiser_address, op.advertising_sid,
                                                                         sync_timeout=5.0)
        self.pa_sync.once("establishment", synced.set)
        await synced.wait()
        await self.device.stop_scanning()
        self.state.pa_sync_state = bass.BroadcastReceiveState.PeriodicAdvertisingSyncState.SYNCHRONIZED_TO_PA
        await self.publish()
        biginfo = asyncio.Event()
        self.pa_sync.once("biginfo_advertisement", lambda *_: biginfo.set())
        await biginfo.wait()
        self.big_sync = await self.device.create_big_sync(self.pa_sync, BigSyncParameters(
            big_sync_timeout=BIG_SYNC_TIMEOUT, bis=[1, 2]))
        for bis in self.big_sync.bis_links:
            await bis.setup_data_path(direction=bis.Direction.CONTROLLER_TO_HOST)
        self.state.subgroups = [bass.SubgroupInfo(0b11, s.metadata) for s in self.state.subgroups]
        await self.publish()

        def lost(_reason):
            self.state.subgroups = [bass.SubgroupInfo(0, s.metadata) for s in self.state.subgroups]
            asyncio.ensure_future(self.publish())
            self.big_lost.set()

        self.big_sync.once("termination", lost)

    async def stop_pa(self) -> None:
        if self.pa_sync is not None:
            await self.pa_sync.terminate()
            self.pa_sync = None
        self.state.pa_sync_state = bass.BroadcastReceiveState.PeriodicAdvertisingSyncState.NOT_SYNCHRONIZED_TO_PA
        await self.publish()


async def stream(bis, seed: int) -> None:
    for i in range(STREAM_SDUS):
        bis.write(common.xorshift_bytes(seed + i, OCTETS))
        await asyncio.sleep(SDU_INTERVAL_US / 1e6)


async def run(loop, out):
    receiver_out = extra_outputs.setdefault(RECEIVER, io.BytesIO())
    rig = isosim.AudioRig(loop, out, "Buds Pro", DEVICE_ADDRESS, device_snoop_out=receiver_out, interval_ms=30.0)
    rig.device_ctl.rx_faults.update(RX_FAULTS)
    delegator = ScanDelegator(rig.device)
    conn = await rig.connect()
    await conn.set_data_length(251, 2120)
    from bumble.device import Peer

    peer = Peer(conn)
    await peer.request_mtu(247)
    await peer.discover_all()
    control_point = sim.find_char(peer, "2BC7")
    receive_state = sim.find_char(peer, "2BC8")
    states: list[bytes] = []
    changed = asyncio.Event()

    def on_state(value):
        states.append(bytes(value))
        changed.set()

    await receive_state.subscribe(on_state)
    initial_state = bytes(await receive_state.read_value())

    announcement = bap.BroadcastAudioAnnouncement(BROADCAST_ID).get_advertising_data() + bytes(
        core.AdvertisingData([(core.AdvertisingData.BROADCAST_NAME, BROADCAST_NAME.encode())]))
    adv_set = await rig.phone.create_advertising_set(
        random_address=hci.Address(BROADCAST_ADDRESS),
        advertising_parameters=AdvertisingParameters(
            advertising_event_properties=AdvertisingEventProperties(is_connectable=False, is_scannable=False),
            primary_advertising_interval_min=100, primary_advertising_interval_max=100, advertising_sid=SID,
            secondary_advertising_phy=hci.Phy.LE_2M),
        advertising_data=announcement,
        periodic_advertising_parameters=PeriodicAdvertisingParameters(
            periodic_advertising_interval_min=100, periodic_advertising_interval_max=100),
        periodic_advertising_data=base().get_advertising_data())
    await adv_set.start_periodic()
    big = await rig.phone.create_big(adv_set, BigParameters(num_bis=2, sdu_interval=SDU_INTERVAL_US, max_sdu=OCTETS,
                                                            max_transport_latency=20, rtn=2))
    for bis in big.bis_links:
        await bis.setup_data_path(direction=bis.Direction.HOST_TO_CONTROLLER)
    streams = [asyncio.ensure_future(stream(bis, 0xB15_0000 + 0x1000 * i)) for i, bis in enumerate(big.bis_links)]
    await asyncio.sleep(0.3)

    add = bass.AddSourceOperation(hci.Address(BROADCAST_ADDRESS), SID, BROADCAST_ID,
                                  bass.PeriodicAdvertisingSyncParams.SYNCHRONIZE_TO_PA_PAST_NOT_AVAILABLE, 0xFFFF,
                                  [bass.SubgroupInfo(bass.SubgroupInfo.ANY_BIS, bytes(base().subgroups[0].metadata))])
    await control_point.write_value(bytes(add), with_response=True)
    await asyncio.gather(*streams)
    await delegator.big_lost.wait()
    await asyncio.sleep(0.2)
    await control_point.write_value(bytes(bass.ModifySourceOperation(
        1, bass.PeriodicAdvertisingSyncParams.DO_NOT_SYNCHRONIZE_TO_PA, 0xFFFF,
        [bass.SubgroupInfo(0, bytes(base().subgroups[0].metadata))])), with_response=True)
    await asyncio.sleep(0.2)
    await control_point.write_value(bytes(bass.RemoveSourceOperation(1)), with_response=True)
    await asyncio.sleep(0.2)
    await big.terminate()
    await adv_set.stop_periodic()
    await adv_set.stop()
    await rig.disconnect()
    return {
        "description": "Auracast (BAP broadcast) from the phone to an earbud, recorded at the phone (the source and "
                       "broadcast assistant): extended and periodic advertising with the BASE, LE Create BIG (2 BIS), "
                       "400 SDUs on each BIS, BASS Add/Modify/Remove Source on the earbud, LE Terminate BIG",
        "broadcast_id": BROADCAST_ID, "broadcast_address": BROADCAST_ADDRESS, "advertising_sid": SID,
        "broadcast_name": BROADCAST_NAME, "base_hex": bytes(base()).hex(),
        "bis_handles": [b.handle for b in big.bis_links], "big_handle": big.big_handle,
        "sdu_interval_us": SDU_INTERVAL_US, "octets_per_sdu": OCTETS, "sdus_per_bis": STREAM_SDUS,
        "configured_bitrate_bps_per_bis": OCTETS * 8 * 1_000_000 // SDU_INTERVAL_US,
        "lc3": {"sampling_frequency_hz": 48000, "frame_duration_us": 10000, "octets_per_codec_frame": OCTETS},
        "handles": {"bass_control_point": control_point.handle, "broadcast_receive_state": receive_state.handle},
        "receive_state_initial_hex": initial_state.hex(),
        "receive_states_notified_hex": [s.hex() for s in states],
        "bass_operations_hex": [bytes(add).hex()],
        "sdu_generator": f"xorshift32 seed 0x0B150000 + 0x1000 x (BIS - 1) + index, {OCTETS} bytes",
        "receiver": {"rx_fault_pattern": {name: {"missing": sorted(f.missing), "lost_flag": sorted(f.lost),
                                                 "possibly_invalid_flag": sorted(f.invalid),
                                                 "fragmented": sorted(f.fragmented), "silent_from": f.silent_from}
                                          for name, f in RX_FAULTS.items()},
                     "big_sync_timeout_ms": BIG_SYNC_TIMEOUT * 10},
    }


def locate_capture(truth: dict, data: bytes) -> None:
    truth.update(isoread.audio_truth(data, truth))
    truth.update(isoread.bass_story(data, truth["handles"]))


def extra_truth(name: str, truth: dict, data: bytes) -> dict:
    """The receiver's truth: its capture read back the same way."""
    out = {"description": "the same Auracast, recorded at the earbud (broadcast sink, scan delegator): periodic "
                          "advertising sync, BIGInfo, LE BIG Create Sync, the BIS data received with a known loss "
                          "pattern, LE BIG Sync Lost",
           "broadcast_id": truth["broadcast_id"], "sdu_interval_us": SDU_INTERVAL_US, **truth["receiver"]}
    out.update(isoread.audio_truth(data, out))
    out["handles"] = truth["handles"]
    out.update(isoread.bass_story(data, truth["handles"]))
    out["diagnosis"] = receiver_diagnosis(out, data)
    return out


def receiver_diagnosis(out: dict, data: bytes) -> dict:
    """What a diagnosis of the receiver must say: the source stopped both BISes, so the one BIG Sync Lost (timeout) is
    one error citing each BIS's last SDU, not one more per BIS; the phone removing its source and then disconnecting
    (0x13) is the assistant's normal exit, at most context."""
    lost = out["iso_lifecycle"]["le_big_sync_lost"][0]
    last = [s["last_frame"] for s in out["iso_streams"].values()]
    remove = next(op["frame"] for op in out["bass_operations"] if op["name"] == "remove_source")
    disconnect = diagkit.Log(data).events(0x05)[-1].frame
    return {
        "rules": ["LA-04", "LA-05", "DC-02"],
        "findings": [diagkit.finding(
            "LA-05", "E", lost["frame"], last,
            f"the source stopped both BISes (SDU {min(f.silent_from for f in RX_FAULTS.values())} on): the receiver's "
            f"BIG sync timed out ({out['big_sync_timeout_ms']} ms, reason 0x{lost['reason']:02X}) at #{lost['frame']}")],
        "not_flagged": [
            diagkit.quiet("each BIS stopping at that one sync loss (LA-05's finding, not one more per BIS)",
                          [lost["frame"]], ["LA-04"]),
            diagkit.quiet("the phone's BASS Remove Source, then its disconnection (0x13): the assistant leaving",
                          [remove, disconnect], ["DC-02"], at_most="info"),
        ],
    }
