"""Isochronous channels for the simulation rig (LE Audio samples).

bumble's virtual controller sets up CIGs, CISes and BIGs over its in-process link (LL_CIS_REQ/RSP/IND, LE CIS
Established, LE Create BIG Complete, LE BIG Sync Established) but leaves three things out, which this module adds:

* **ISO data**: it drops HCI ISO data packets from its host. ``IsoController`` carries each SDU to the peer at the
  stream's next ISO event, reports it completed (Number Of Completed Packets) to the sender, and hands it to the
  receiving host as an HCI ISO data packet with a time stamp (the receiver's controller clock at the SDU's reference
  point), a packet sequence number (the SDU's ISO event counted from the stream's first SDU) and a packet status flag
  (Core Spec Vol 4, Part E, 5.4.5). A receiving controller may be given a loss pattern (``RxFaults``): SDUs never
  delivered (a gap in the sequence numbers), delivered with status "possibly invalid" (0b01) or "lost" (0b10, no
  data), or delivered in two HCI fragments.
* **timing fields**: it reports LE CIS Established with every timing field zero and BIG events with fixed values;
  here they are computed from the CIG/BIG parameters as the Core Spec defines them (Vol 6, Part B, 4.5.13 and
  4.4.6.4): sub-interval = air time of the two PDUs plus 2 x T_IFS, CIS sync delay = NSE x sub-interval, transport
  latency = CIG sync delay + FT x ISO interval - SDU interval (unframed).
* **BIGInfo**: a receiver synchronised to a periodic advertising train whose advertiser runs a BIG gets an LE BIGInfo
  Advertising Report with each periodic advertising report, and loses a BIG sync (LE BIG Sync Lost, reason 0x08
  Connection Timeout) when no SDU reached it for the BIG's sync timeout.

It also delays LL control PDUs to the next connection event (bumble's link hands them over at once), gives a CIS
disconnection the reasons the spec gives (0x16 on the side that asked, the LL_CIS_TERMINATE_IND's reason on the
other; bumble says 0x13 on both), and answers LE Read ISO TX Sync. Everything above the controllers (the hosts, ASCS,
PACS, the ASE state machines) is bumble's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import struct

from bumble import hci, ll

import sim

ISO_INTERVAL_UNIT_US = 1250

# bumble 0.0.236 gives LE Read ISO TX Sync's Time_Offset 4 octets; the Core Spec gives it 3 (Vol 4, Part E, 7.8.96;
# BlueZ's `bt_hci_rsp_le_read_iso_tx_sync` too). Both controller and host of the samples use the spec's width.
hci.HCI_LE_Read_ISO_TX_Sync_ReturnParameters.fields = [
    (name, 3 if name == "time_offset" else spec) for name, spec in hci.HCI_LE_Read_ISO_TX_Sync_ReturnParameters.fields]


def air_time_2m_us(payload: int) -> int:
    """Air time of an LE 2M packet with `payload` octets: (11 + n) x 4 us (preamble 2, AA 4, header 2, CRC 3)."""
    return (11 + payload) * 4


@dataclasses.dataclass
class CisTiming:
    """What LE CIS Established reports, computed from the CIG parameters (Vol 6, Part B, 4.5.13.1)."""

    sdu_interval_us: int
    iso_interval: int  # units of 1.25 ms
    nse: int
    bn: int
    ft: int
    max_pdu_c_to_p: int
    max_pdu_p_to_c: int
    phy: int = 2

    @property
    def sub_interval_us(self) -> int:
        return air_time_2m_us(self.max_pdu_c_to_p) + 150 + air_time_2m_us(self.max_pdu_p_to_c) + 150

    @property
    def cis_sync_delay_us(self) -> int:
        return self.nse * self.sub_interval_us

    @property
    def cig_sync_delay_us(self) -> int:
        return self.cis_sync_delay_us  # one CIS in the CIG

    @property
    def transport_latency_us(self) -> int:
        return self.cig_sync_delay_us + self.ft * self.iso_interval * ISO_INTERVAL_UNIT_US - self.sdu_interval_us


@dataclasses.dataclass
class BigTiming:
    """What LE Create BIG Complete and LE BIG Sync Established report (Vol 6, Part B, 4.4.6.4)."""

    num_bis: int
    sdu_interval_us: int
    max_sdu: int
    iso_interval: int
    bn: int = 1
    irc: int = 2
    pto: int = 0
    phy: int = 2

    @property
    def nse(self) -> int:
        return self.bn * self.irc

    @property
    def max_pdu(self) -> int:
        return self.max_sdu

    @property
    def mpt_us(self) -> int:
        return air_time_2m_us(self.max_pdu)

    @property
    def sub_interval_us(self) -> int:
        return self.mpt_us + 150

    @property
    def bis_spacing_us(self) -> int:  # sequential packing
        return self.nse * self.sub_interval_us

    @property
    def big_sync_delay_us(self) -> int:
        return (self.num_bis - 1) * self.bis_spacing_us + (self.nse - 1) * self.sub_interval_us + self.mpt_us

    @property
    def transport_latency_us(self) -> int:
        return (self.big_sync_delay_us + (self.pto * (self.nse // self.bn - self.irc) + 1) * self.iso_interval
                * ISO_INTERVAL_UNIT_US - self.sdu_interval_us)


@dataclasses.dataclass
class RxFaults:
    """A receiving controller's loss pattern, by SDU index in the stream (0 = the stream's first SDU)."""

    missing: frozenset[int] = frozenset()  # never handed to the host: a gap in the sequence numbers
    invalid: frozenset[int] = frozenset()  # Packet_Status_Flag 0b01 "possibly invalid", data kept
    lost: frozenset[int] = frozenset()  # Packet_Status_Flag 0b10 "lost data", no data
    fragmented: frozenset[int] = frozenset()  # handed over as a first and a last fragment
    silent_from: int | None = None  # nothing received from this index on (out of range)


class RawIsoPacket(hci.HCI_IsoDataPacket):
    """An HCI ISO data packet whose bytes are written as built: bumble's own encoder keeps one bit of the two-bit
    Packet_Status_Flag, and the snooper records what `bytes(packet)` gives."""

    raw: bytes

    def __bytes__(self) -> bytes:
        return self.raw


def iso_packet(handle: int, pb: int, payload: bytes, ts: int | None = None, seq: int | None = None,
               sdu_length: int | None = None, status: int = 0) -> RawIsoPacket:
    """HCI ISO data packet (Vol 4, Part E, 5.4.5): handle(12) PB(2) TS(1) RFU(1), length(14) RFU(2),
    [time stamp(4)] [sequence number(2) SDU length(12) RFU(2) status(2)] data."""
    head = b""
    if ts is not None:
        head += struct.pack("<I", ts & 0xFFFFFFFF)
    if seq is not None:
        head += struct.pack("<HH", seq & 0xFFFF, (sdu_length or 0) & 0x0FFF | (status & 3) << 14)
    body = head + payload
    word = handle | pb << 12 | (ts is not None) << 14
    raw = bytes([hci.HCI_ISO_DATA_PACKET]) + struct.pack("<HH", word, len(body)) + body
    packet = hci.HCI_IsoDataPacket.from_bytes(raw)
    packet.__class__ = RawIsoPacket
    packet.raw = raw
    return packet


@dataclasses.dataclass
class Stream:
    """One direction of a CIS or one BIS: when its ISO events are, and which the sender has used."""

    anchor: float  # time of ISO event 0 (s)
    interval_s: float
    next_event: int = 0
    first_event: int | None = None

    def event_after(self, t: float, lead_s: float = 0.0005) -> int:
        k = max(self.next_event, math.ceil((t + lead_s - self.anchor) / self.interval_s - 1e-9))
        self.next_event = k + 1
        if self.first_event is None:
            self.first_event = k
        return k

    def time_of(self, k: int) -> float:
        return self.anchor + k * self.interval_s


class IsoLink(sim.PacedLink):
    """PacedLink plus the isochronous state both controllers share: CIG timing by (CIG, CIS), BIGs by advertiser."""

    def __init__(self, interval_ms: float = 15.0, per_event: int = 4):
        super().__init__(interval_ms=interval_ms, per_event=per_event)
        self.cis_timing: dict[tuple[int, int], CisTiming] = {}
        self.cis_anchor: dict[tuple[int, int], float] = {}
        self.bigs: dict[tuple[str, int], dict] = {}  # (advertiser address, SID) -> {"timing", "anchor", "receivers"}

    def next_event_time(self) -> float:
        now = asyncio.get_running_loop().time()
        if self.anchor is None:
            return now + 0.001
        k = math.floor((now - self.anchor) / self.interval + 1e-9) + 1
        return self.anchor + k * self.interval + 0.0004

    def send_ll_control_pdu(self, sender_address, receiver_address, packet):
        receiver = self.find_le_controller(receiver_address)
        if receiver is None:
            return
        asyncio.get_running_loop().call_at(self.next_event_time(), receiver.on_ll_control_pdu, sender_address, packet)


class IsoController(sim.SimController):
    """SimController with ISO data, timing fields and BIGInfo (see the module docstring)."""

    def __init__(self, name, link: IsoLink, public_address, is_peripheral: bool, clock_base_us: int):
        super().__init__(name, link, public_address, is_peripheral)
        self.clock_base_us = clock_base_us
        self.rx_faults: dict[str, RxFaults] = {}  # by stream name ("cis", "bis1", ...)
        self.tx_streams: dict[int, Stream] = {}  # by handle
        self.big_by_handle: dict[int, tuple[str, int]] = {}  # source BIG handle -> link key
        self.bis_tx: dict[int, tuple[tuple[str, int], int]] = {}  # BIS handle -> (BIG key, BIS index)
        self.sync_rx: dict[tuple[tuple[str, int], int], int] = {}  # (BIG key, BIS index) -> our BIS handle
        self.big_syncs: dict[int, dict] = {}  # our BIG handle -> {"key", "last_rx", "timeout_s", "handles"}
        self.pending_nocp: dict[float, list[int]] = {}

    # -- clock ---------------------------------------------------------------------------------------------------------
    def clock_us(self, t: float) -> int:
        return (self.clock_base_us + int(round(t * 1e6))) & 0xFFFFFFFF

    # -- host -> controller ---------------------------------------------------------------------------------------------
    def on_hci_packet(self, packet) -> None:
        if isinstance(packet, hci.HCI_IsoDataPacket):
            self.on_hci_iso_data_packet(packet)
            return
        super().on_hci_packet(packet)

    def on_le_connect_ind(self, packet) -> None:
        self._connect_ind = packet
        super().on_le_connect_ind(packet)

    def send_hci_packet(self, packet) -> None:
        connect_ind = getattr(self, "_connect_ind", None)
        if isinstance(packet, hci.HCI_LE_Connection_Complete_Event) and connect_ind is not None:
            # bumble's peripheral reports placeholder figures (interval 12.5 ms, timeout 100 ms); a real one reports
            # what the CONNECT_IND said (Vol 4, Part E, 7.7.65.1), which a peripheral's log (the receiver sample) shows.
            packet.connection_interval = connect_ind.interval
            packet.peripheral_latency = connect_ind.latency
            packet.supervision_timeout = connect_ind.timeout
            self._connect_ind = None
        if isinstance(packet, RawIsoPacket):
            # Same latency and order as every other controller -> host packet, but the bytes as built.
            loop = asyncio.get_running_loop()
            t = max(loop.time() + 0.0002 + len(packet.raw) * 1e-6, self._next_host_delivery + 0.00002)
            self._next_host_delivery = t
            loop.call_at(t, self.host.on_hci_packet, packet)
            return
        super().send_hci_packet(packet)

    def on_hci_iso_data_packet(self, packet: hci.HCI_IsoDataPacket) -> None:
        handle = packet.connection_handle
        if packet.pb_flag != 0b10:
            raise NotImplementedError("the sample hosts send whole SDUs")
        sdu = bytes(packet.iso_sdu_fragment)
        link: IsoLink = self.link
        loop = asyncio.get_running_loop()
        if cis := self.find_iso_link_by_handle(handle):
            key = (cis.cig_id, cis.cis_id)
            timing = link.cis_timing[key]
            stream = self.tx_streams.setdefault(
                handle, Stream(anchor=link.cis_anchor[key], interval_s=timing.sdu_interval_us / 1e6))
            k = stream.event_after(loop.time())
            t = stream.time_of(k)
            peer = self.link.find_le_controller(cis.acl_connection.peer_address)
            ref = t + timing.cig_sync_delay_us / 1e6
            loop.call_at(ref + 0.0001, peer.on_link_cis_sdu, key, k - stream.first_event, ref, sdu)
            self._complete_at(t + timing.cis_sync_delay_us / 1e6 + 0.0003, handle)
        elif handle in self.bis_tx:
            big_key, index = self.bis_tx[handle]
            big = link.bigs[big_key]
            timing: BigTiming = big["timing"]
            stream = self.tx_streams.setdefault(handle, Stream(anchor=big["anchor"], interval_s=timing.sdu_interval_us / 1e6))
            k = stream.event_after(loop.time())
            t = stream.time_of(k)
            ref = t + timing.big_sync_delay_us / 1e6
            for receiver in list(big["receivers"]):
                loop.call_at(ref + 0.0001, receiver.on_link_bis_sdu, big_key, index, k - stream.first_event, ref, sdu)
            self._complete_at(t + timing.big_sync_delay_us / 1e6 + 0.0003, handle)

    def _complete_at(self, t: float, handle: int) -> None:
        """Number Of Completed Packets once the ISO event is over; the handles of one event share one event."""
        t = round(t, 6)
        if t not in self.pending_nocp:
            self.pending_nocp[t] = []
            asyncio.get_running_loop().call_at(t, self._send_nocp, t)
        self.pending_nocp[t].append(handle)

    def _send_nocp(self, t: float) -> None:
        counts: dict[int, int] = {}
        for h in self.pending_nocp.pop(t):
            counts[h] = counts.get(h, 0) + 1
        self.send_hci_packet(hci.HCI_Number_Of_Completed_Packets_Event(
            connection_handles=list(counts), num_completed_packets=list(counts.values())))

    # -- link -> controller -> host ---------------------------------------------------------------------------------------
    def deliver(self, handle: int, stream_name: str, index: int, ref_time: float, sdu: bytes) -> bool:
        """Hands one received SDU to the host, as the loss pattern says; returns whether anything was handed over."""
        faults = self.rx_faults.get(stream_name, RxFaults())
        if index in faults.missing or (faults.silent_from is not None and index >= faults.silent_from):
            return False
        ts = self.clock_us(ref_time)
        if index in faults.lost:
            self.send_hci_packet(iso_packet(handle, 0b10, b"", ts=ts, seq=index, sdu_length=0, status=0b10))
        elif index in faults.fragmented:
            half = len(sdu) // 2
            self.send_hci_packet(iso_packet(handle, 0b00, sdu[:half], ts=ts, seq=index, sdu_length=len(sdu)))
            self.send_hci_packet(iso_packet(handle, 0b11, sdu[half:]))
        else:
            status = 0b01 if index in faults.invalid else 0b00
            self.send_hci_packet(iso_packet(handle, 0b10, sdu, ts=ts, seq=index, sdu_length=len(sdu), status=status))
        return True

    def on_link_cis_sdu(self, key: tuple[int, int], index: int, ref_time: float, sdu: bytes) -> None:
        cis = next((c for c in list(self.central_cis_links.values()) + list(self.peripheral_cis_links.values())
                    if (c.cig_id, c.cis_id) == key and c.acl_connection is not None), None)
        if cis is not None:
            self.deliver(cis.handle, "cis", index, ref_time, sdu)

    def on_link_bis_sdu(self, big_key, bis_index: int, index: int, ref_time: float, sdu: bytes) -> None:
        handle = self.sync_rx.get((big_key, bis_index))
        if handle is None:
            return
        big_handle, sync = next((h, s) for h, s in self.big_syncs.items() if s["key"] == big_key)
        if self.deliver(handle, f"bis{bis_index}", index, ref_time, sdu):
            sync["last_rx"] = ref_time
        elif ref_time - sync["last_rx"] >= sync["timeout_s"]:
            self._lose_big_sync(big_handle, hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)

    def _lose_big_sync(self, big_handle: int, reason: int) -> None:
        sync = self.big_syncs.pop(big_handle)
        self.link.bigs[sync["key"]]["receivers"].discard(self)
        for (key, bis) in [k for k in self.sync_rx if k[0] == sync["key"]]:
            del self.sync_rx[(key, bis)]
        self.send_hci_packet(hci.HCI_LE_BIG_Sync_Lost_Event(big_handle=big_handle, reason=reason))

    # -- CIG / CIS -------------------------------------------------------------------------------------------------------
    def on_hci_le_set_cig_parameters_command(self, command):
        result = super().on_hci_le_set_cig_parameters_command(command)
        iso_interval = command.sdu_interval_c_to_p // ISO_INTERVAL_UNIT_US
        for i, cis_id in enumerate(command.cis_id):
            rtn = max(command.rtn_c_to_p[i], command.rtn_p_to_c[i])
            self.link.cis_timing[(command.cig_id, cis_id)] = CisTiming(
                sdu_interval_us=command.sdu_interval_c_to_p, iso_interval=iso_interval, nse=rtn, bn=1, ft=2,
                max_pdu_c_to_p=command.max_sdu_c_to_p[i], max_pdu_p_to_c=command.max_sdu_p_to_c[i])
        return result

    def on_le_cis_established(self, cig_id: int, cis_id: int) -> None:
        cis = next(c for c in list(self.central_cis_links.values()) + list(self.peripheral_cis_links.values())
                   if c.cis_id == cis_id and c.cig_id == cig_id)
        link: IsoLink = self.link
        timing = link.cis_timing[(cig_id, cis_id)]
        # The first ISO event a few ms after the LL_CIS_IND instant; both sides share it.
        link.cis_anchor.setdefault((cig_id, cis_id), asyncio.get_running_loop().time() + 0.0025)
        self.tx_streams.pop(cis.handle, None)
        self.send_hci_packet(hci.HCI_LE_CIS_Established_Event(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=cis.handle,
            cig_sync_delay=timing.cig_sync_delay_us, cis_sync_delay=timing.cis_sync_delay_us,
            transport_latency_c_to_p=timing.transport_latency_us, transport_latency_p_to_c=timing.transport_latency_us,
            phy_c_to_p=timing.phy, phy_p_to_c=timing.phy, nse=timing.nse, bn_c_to_p=timing.bn, bn_p_to_c=timing.bn,
            ft_c_to_p=timing.ft, ft_p_to_c=timing.ft, max_pdu_c_to_p=timing.max_pdu_c_to_p,
            max_pdu_p_to_c=timing.max_pdu_p_to_c, iso_interval=timing.iso_interval))

    def on_ll_control_pdu(self, sender_address, packet) -> None:
        if isinstance(packet, ll.CisTerminateInd):
            self.cis_disconnected(packet.cig_id, packet.cis_id, packet.error_code)
            return
        super().on_ll_control_pdu(sender_address, packet)

    def on_hci_disconnect_command(self, command) -> None:
        handle = command.connection_handle
        cis = self.central_cis_links.get(handle) or self.peripheral_cis_links.get(handle)
        if cis is None or cis.acl_connection is None:
            return super().on_hci_disconnect_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        cis.acl_connection.send_ll_control_pdu(ll.CisTerminateInd(cis.cig_id, cis.cis_id, command.reason))
        # The side that asked learns it once the peer acknowledged the LL_CIS_TERMINATE_IND (a connection event later).
        asyncio.get_running_loop().call_at(self.link.next_event_time() + self.link.interval, self.cis_disconnected,
                                           cis.cig_id, cis.cis_id, hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR)
        return None

    def cis_disconnected(self, cig_id: int, cis_id: int, reason: int) -> None:
        for table, keep in ((self.peripheral_cis_links, False), (self.central_cis_links, True)):
            cis = next((c for c in table.values() if (c.cig_id, c.cis_id) == (cig_id, cis_id)), None)
            if cis is None or cis.acl_connection is None:
                continue
            if keep:
                cis.acl_connection = None  # central CIS handles stay until LE Remove CIG
            else:
                table.pop(cis.handle)
            self.tx_streams.pop(cis.handle, None)
            self.send_hci_packet(hci.HCI_Disconnection_Complete_Event(
                status=hci.HCI_ErrorCode.SUCCESS, connection_handle=cis.handle, reason=reason))
            return

    def on_hci_le_read_iso_tx_sync_command(self, command):
        """LE Read ISO TX Sync (Vol 4, Part E, 7.8.96): the last SDU's sequence number and time stamp."""
        stream = self.tx_streams.get(command.connection_handle)
        if stream is None or stream.first_event is None:
            return hci.HCI_LE_Read_ISO_TX_Sync_ReturnParameters(
                status=hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR, connection_handle=command.connection_handle,
                packet_sequence_number=0, tx_time_stamp=0, time_offset=0)
        k = stream.next_event - 1
        return hci.HCI_LE_Read_ISO_TX_Sync_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=command.connection_handle,
            packet_sequence_number=(k - stream.first_event) & 0xFFFF, tx_time_stamp=self.clock_us(stream.time_of(k)),
            time_offset=0)

    def _is_bis(self, handle: int) -> bool:
        return handle in self.bis_tx or handle in self.sync_rx.values()

    def on_hci_le_setup_iso_data_path_command(self, command):
        """bumble's knows CIS handles only; a BIS handle (ours as source or as receiver) takes a data path too."""
        if self._is_bis(command.connection_handle):
            return hci.HCI_StatusAndConnectionHandleReturnParameters(hci.HCI_ErrorCode.SUCCESS, command.connection_handle)
        return super().on_hci_le_setup_iso_data_path_command(command)

    def on_hci_le_remove_iso_data_path_command(self, command):
        if self._is_bis(command.connection_handle):
            return hci.HCI_StatusAndConnectionHandleReturnParameters(hci.HCI_ErrorCode.SUCCESS, command.connection_handle)
        return super().on_hci_le_remove_iso_data_path_command(command)

    # -- BIG (source) ----------------------------------------------------------------------------------------------------
    def on_hci_le_create_big_command(self, command) -> None:
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        adv = self.advertising_sets[command.advertising_handle]
        key = (str(adv.address), adv.parameters.advertising_sid if adv.parameters else 0)
        timing = BigTiming(num_bis=command.num_bis, sdu_interval_us=command.sdu_interval, max_sdu=command.max_sdu,
                           iso_interval=command.sdu_interval // ISO_INTERVAL_UNIT_US)
        loop = asyncio.get_running_loop()
        self.link.bigs[key] = {"timing": timing, "anchor": loop.time() + 0.004, "receivers": set(),
                               "encryption": command.encryption, "framing": command.framing}
        handles = [0x0100 + i for i in range(command.num_bis)]
        self.big_by_handle[command.big_handle] = key
        for i, h in enumerate(handles):
            self.bis_tx[h] = (key, i + 1)

        def complete():
            self.send_hci_packet(hci.HCI_LE_Create_BIG_Complete_Event(
                status=hci.HCI_ErrorCode.SUCCESS, big_handle=command.big_handle,
                big_sync_delay=timing.big_sync_delay_us, transport_latency_big=timing.transport_latency_us,
                phy=hci.Phy.LE_2M, nse=timing.nse, bn=timing.bn, pto=timing.pto, irc=timing.irc,
                max_pdu=timing.max_pdu, iso_interval=timing.iso_interval, connection_handle=handles))

        loop.call_at(loop.time() + 0.004, complete)

    def on_hci_le_terminate_big_command(self, command) -> None:
        key = self.big_by_handle.pop(command.big_handle, None)
        if key is not None:
            self.link.bigs.pop(key, None)
            for h in [h for h, (k, _) in self.bis_tx.items() if k == key]:
                del self.bis_tx[h]
                self.tx_streams.pop(h, None)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        loop = asyncio.get_running_loop()
        loop.call_at(loop.time() + 0.01, lambda: self.send_hci_packet(hci.HCI_LE_Terminate_BIG_Complete_Event(
            big_handle=command.big_handle, reason=hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR)))

    # -- BIG (receiver) --------------------------------------------------------------------------------------------------
    def on_advertising_pdu(self, pdu) -> None:
        super().on_advertising_pdu(pdu)
        if not isinstance(pdu, ll.AdvExtInd) or pdu.periodic_advertising_data is None:
            return
        key = (str(pdu.advertiser_address), pdu.sid)
        big = self.link.bigs.get(key)
        if big is None:
            return
        for sync_handle, (address, sid) in self.established_periodic_advertising_syncs.items():
            if (str(address), sid) != key:
                continue
            t: BigTiming = big["timing"]
            self.send_hci_packet(hci.HCI_LE_BIGInfo_Advertising_Report_Event(
                sync_handle=sync_handle, num_bis=t.num_bis, nse=t.nse, iso_interval=t.iso_interval, bn=t.bn, pto=t.pto,
                irc=t.irc, max_pdu=t.max_pdu, sdu_interval=t.sdu_interval_us, max_sdu=t.max_sdu, phy=hci.Phy.LE_2M,
                framing=big["framing"], encryption=big["encryption"]))

    def on_hci_le_big_create_sync_command(self, command) -> None:
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        address, sid = self.established_periodic_advertising_syncs[command.sync_handle]
        key = (str(address), sid)
        big = self.link.bigs[key]
        t: BigTiming = big["timing"]
        handles = [0x0200 + i for i in range(len(command.bis))]
        loop = asyncio.get_running_loop()

        def established():
            for bis, handle in zip(command.bis, handles):
                self.sync_rx[(key, bis)] = handle
            self.big_syncs[command.big_handle] = {"key": key, "last_rx": loop.time(),
                                                  "timeout_s": command.big_sync_timeout / 100.0, "handles": handles}
            big["receivers"].add(self)
            self.send_hci_packet(hci.HCI_LE_BIG_Sync_Established_Event(
                status=hci.HCI_ErrorCode.SUCCESS, big_handle=command.big_handle,
                transport_latency_big=t.transport_latency_us, nse=t.nse, bn=t.bn, pto=t.pto, irc=t.irc,
                max_pdu=t.max_pdu, iso_interval=t.iso_interval, connection_handle=handles))

        # The receiver waits for the BIG's next anchor point to synchronise.
        loop.call_at(loop.time() + 0.012, established)


class AudioRig(sim.Rig):
    """sim.Rig with IsoControllers on an IsoLink; optionally records the device's HCI too (a second btsnoop)."""

    def __init__(self, loop, snoop_out, device_name, device_address, device_snoop_out=None, interval_ms: float = 30.0,
                 per_event: int = 4):
        from bumble.device import Device, DeviceConfiguration
        from bumble.host import Host

        self.loop = loop
        self.interval_ms = interval_ms
        self.link = IsoLink(interval_ms=interval_ms, per_event=per_event)
        self.phone_ctl = IsoController("phone-ctl", self.link, sim.PHONE_ADDRESS, is_peripheral=False,
                                       clock_base_us=0x2A3F_1000)
        self.device_ctl = IsoController("device-ctl", self.link, device_address, is_peripheral=True,
                                        clock_base_us=0x0451_8000)
        for ctl in (self.phone_ctl, self.device_ctl):
            ctl.le_features |= (hci.LeFeatureMask.CONNECTED_ISOCHRONOUS_STREAM_CENTRAL
                                | hci.LeFeatureMask.CONNECTED_ISOCHRONOUS_STREAM_PERIPHERAL
                                | hci.LeFeatureMask.ISOCHRONOUS_BROADCASTER
                                | hci.LeFeatureMask.SYNCHRONIZED_RECEIVER
                                | hci.LeFeatureMask.LE_2M_PHY)
            ctl.iso_data_packet_length = 251
            ctl.total_num_iso_data_packets = 8
        self.snooper = sim.VirtualBtSnooper(snoop_out, loop, sim.START_OFFSET)
        self.device_snooper = (sim.VirtualBtSnooper(device_snoop_out, loop, sim.START_OFFSET)
                               if device_snoop_out is not None else None)
        phone_host = Host(self.phone_ctl, sim.DelayedSink(self.phone_ctl))
        phone_host.snooper = self.snooper
        device_host = Host(self.device_ctl, sim.DelayedSink(self.device_ctl))
        device_host.snooper = self.device_snooper
        self.phone = Device(host=phone_host, config=DeviceConfiguration(name="Pixel 8", address=hci.Address(sim.PHONE_RANDOM)))
        self.device = Device(host=device_host, config=DeviceConfiguration(
            name=device_name, address=hci.Address(device_address), advertising_interval_min=100,
            advertising_interval_max=100))
        self.phone_conn = None
        self.device_conn = None
