"""The controller layer of the diagnosis Samples (diag*.py): what a real controller reports that bumble's virtual
controller does not, so that a failure shows in the phone's HCI log as it does on a phone.

The other Samples keep ``sim.SimController`` and ``sim.PacedLink`` and regenerate byte for byte; the diagnosis
Samples build their ``sim.Rig`` with ``FaultLink`` and ``FaultController``, which add:

* **LE Create Connection Cancel** (Core Vol 4, Part E, 7.8.13): Command Complete, then LE Connection Complete with
  status 0x02 Unknown Connection Identifier. bumble answers the cancel and reports nothing, so its host would wait
  for ever. Like the Pixel 8's controller in ``../shared/captures`` (``android-btsnoop_pixel8-…``, frame 1074), the
  failed complete carries a zero peer address and the interval, latency and timeout of the cancelled request.
* **Disconnect** (7.1.6): the local host's Disconnection Complete carries 0x16 Connection Terminated By Local Host,
  one connection event after the command (when LL_TERMINATE_IND is acknowledged). bumble repeats the host's reason
  there, which is only what the peer receives in LL_TERMINATE_IND.
* **LE Connection Update** (7.8.18; Vol 6, Part B, 5.1.1): Command Status, then the new parameters take effect at an
  instant 6 connection events later: LE Connection Update Complete on both sides then, and the link's events follow
  the new interval. bumble completes at once and keeps the old timing.
* **Link supervision** (Vol 6, Part B, 4.5.2): once ``FaultLink.lose_radio()`` is called nothing crosses the link,
  packets in flight are never acknowledged (no Number Of Completed Packets) and each side reports Disconnection
  Complete 0x08 Connection Timeout at the first connection event one supervision timeout after the last event it
  heard. bumble's links never fail.
* **LL control PDUs at connection events**: bumble hands them to the peer at once; here each goes at the next
  connection event, so that encryption start (LL_ENC_REQ, LL_START_ENC_REQ/RSP) or LL_REJECT_EXT_IND take the events
  they take on air.
* **A termination the peer never acknowledges** (``FaultLink.terminate_never_acknowledged``; Vol 6, Part B, 5.1.6
  and 5.2): the local Disconnect's LL_TERMINATE_IND is queued and never acknowledged, the peer keeps the link, and the
  phone's controller gives up when the LL procedure response timer (40 s) runs out: Disconnection Complete 0x22
  LMP/LL Response Timeout. (5.1.6 sets the terminate timer to connSupervisionTimeout; the controller modelled here
  uses the 40 s response timer, as issue 35's case has it.)
* **BR/EDR Disconnect**: as for LE, this side's Disconnection Complete carries 0x16, after LMP_DETACH.
* **BR/EDR authentication** (Vol 4, Part E, 7.1.19 and 7.7.23; Vol 2, Part F, 4.2): Authentication Requested gives
  Command Status, then Link Key Request, which the host answers with Link Key Request Reply or Negative Reply; bumble
  goes straight to the IO Capability Request, leaving out the Link Key Request. LMP PDUs take a few slots on air
  (``LMP_DELAY_S``) instead of being delivered at once.
* **Android Bluetooth Quality Report** (AOSP HCI requirements: vendor command 0xFD5E, vendor event 0xFF sub-event
  0x58, layout of bumble's ``vendor/android/hci.py``): the host enables report ids with a mask; with bit 1 (approaching
  LSTO) set, the phone's controller sends report id 0x02 once half the supervision timeout has passed without hearing
  the peer (the Pixel 8's controller sent one 3.0 s before its 6 s timeout expired).
"""

from __future__ import annotations

import asyncio
import math
import struct

from bumble import hci, ll, lmp
from bumble.vendor.android import hci as android_hci

import sim

BQR_COMMAND = 0xFD5E  # OGF 0x3F, OCF 0x15E
BQR_APPROACHING_LSTO = 0x02  # report id; its bit in the quality event mask is 1 << 1
BQR_LE_PACKET_TYPE = 0x11  # what the Pixel 8's controller reports for its LE links
UPDATE_INSTANT_EVENTS = 6
CLOCK_TICK_S = 0.0003125  # Bluetooth clock, the unit of BQR timestamps
SLOT_S = 0.000625  # the unit of the BQR LSTO field (the Pixel 8 reports 9600 for a 6 s timeout)
LL_RESPONSE_TIMEOUT_S = 40.0  # the LL procedure response timeout (Core Vol 6, Part B, 5.2)
LMP_DELAY_S = 6 * 0.000625  # an LMP PDU and its baseband acknowledgement: a few 625 us slots (Vol 2, Part C)


class FaultLink(sim.PacedLink):
    """A PacedLink that knows its parameters, can change them at an instant, and can lose its radio."""

    def __init__(self, interval_ms: float = 15.0, per_event: int = 4):
        super().__init__(interval_ms=interval_ms, per_event=per_event)
        self.latency = 0
        self.timeout_s = 5.0
        self.radio_lost_at: float | None = None
        self.terminate_never_acknowledged = False  # set by a scenario whose peer ignores LL_TERMINATE_IND
        self.next_lmp_delivery = 0.0  # LMP PDUs arrive in the order they were sent

    def lost(self, t: float) -> bool:
        return self.radio_lost_at is not None and t >= self.radio_lost_at - 1e-9

    def event_at_or_after(self, t: float) -> float:
        k = math.ceil((t - self.anchor) / self.interval - 1e-9)
        return self.anchor + k * self.interval

    def retime(self, at: float, interval_s: float, latency: int, timeout_s: float) -> None:
        """New connection parameters from the connection event at ``at`` on."""
        self.anchor, self.interval, self.latency, self.timeout_s = at, interval_s, latency, timeout_s
        self._slot.clear()

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if not self.lost(asyncio.get_running_loop().time()):
            super().send_acl_data(sender_controller, destination_address, transport, data)

    def send_ll_control_pdu(self, sender_address, receiver_address, packet):
        """An LL control PDU goes at the next connection event (bumble delivers it at once), so that a procedure
        such as encryption start takes the few events it takes on air."""
        receiver = self.find_le_controller(receiver_address)
        loop = asyncio.get_running_loop()
        if receiver is None or self.lost(loop.time()) or self.anchor is None:
            return super().send_ll_control_pdu(sender_address, receiver_address, packet) if receiver else None
        at = self.event_at_or_after(loop.time() + 1e-6) + 0.0003
        loop.call_at(at, lambda: None if self.lost(at) else receiver.on_ll_control_pdu(sender_address, packet))
        return None

    def send_lmp_packet(self, sender_controller, receiver_address, packet):
        """An LMP PDU reaches the peer a few slots later (bumble delivers it at once)."""
        receiver = self.find_classic_controller(receiver_address)
        if receiver is None:
            return super().send_lmp_packet(sender_controller, receiver_address, packet)
        sender = sender_controller.public_address
        loop = asyncio.get_running_loop()
        at = self.next_lmp_delivery = max(loop.time() + LMP_DELAY_S, self.next_lmp_delivery + 1e-6)
        loop.call_at(at, lambda: receiver.on_lmp_packet(sender, packet))
        return None

    def lose_radio(self) -> float:
        """From now on nothing crosses the link; returns the time of the last connection event both sides heard."""
        now = asyncio.get_running_loop().time()
        self.radio_lost_at = now
        last_heard = self.anchor + math.floor((now - self.anchor) / self.interval + 1e-9) * self.interval
        for controller in list(self.controllers):
            if isinstance(controller, FaultController) and controller.le_connections:
                controller.on_radio_lost(last_heard)
        return last_heard


class FaultController(sim.SimController):
    """SimController plus the events of the module docstring."""

    def __init__(self, name, link: FaultLink, public_address, is_peripheral: bool):
        super().__init__(name, link, public_address, is_peripheral)
        self.bqr_mask = 0
        self.bqr_reports: list[float] = []  # when each approaching-LSTO report was sent (virtual time)

    # LE Create Connection Cancel -> Command Complete, then LE Connection Complete 0x02.
    def on_hci_le_create_connection_cancel_command(self, _command):
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        event = hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            connection_handle=0,
            role=hci.Role.CENTRAL,
            peer_address_type=hci.AddressType.PUBLIC_DEVICE,
            peer_address=hci.Address("00:00:00:00:00:00", hci.Address.PUBLIC_DEVICE_ADDRESS),
            connection_interval=pending.connection_interval_max,
            peripheral_latency=pending.max_latency,
            supervision_timeout=pending.supervision_timeout,
            central_clock_accuracy=0,
        )
        # After the Command Complete, which bumble sends when this handler returns.
        asyncio.get_running_loop().call_soon(self.send_hci_packet, event)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    # A new connection: its events start now, with the parameters the central asked for (the link's timing of an
    # earlier connection is forgotten).
    def create_le_connection(self, peer_address) -> None:
        request = self.pending_le_connection
        super().create_le_connection(peer_address)
        if request is not None and self.le_connections:
            self.link.retime(asyncio.get_running_loop().time(), request.connection_interval_max * 1.25e-3,
                             request.max_latency, request.supervision_timeout / 100)

    # Disconnect -> the peer gets the host's reason; this side reports 0x16 one connection event later.
    def on_hci_disconnect_command(self, command):
        classic = self.find_classic_connection_by_handle(command.connection_handle)
        if classic is not None and isinstance(self.link, FaultLink):
            return self.detach(classic, command)
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None or not isinstance(self.link, FaultLink):
            return super().on_hci_disconnect_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        if self.link.terminate_never_acknowledged:
            return self.terminate_unacknowledged(connection)
        connection.send_ll_control_pdu(ll.TerminateInd(command.reason))
        loop = asyncio.get_running_loop()
        acknowledged = self.link.event_at_or_after(loop.time() + 1e-6) + 0.0005

        def terminated():
            if self.le_connections.get(connection.peer_address) is connection:
                self.on_le_disconnected(connection, hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR)

        loop.call_at(acknowledged, terminated)
        return None

    def detach(self, connection, command) -> None:
        """BR/EDR Disconnect: LMP_DETACH carries the host's reason to the peer; this side reports 0x16 once the peer
        acknowledged it (Vol 2, Part C, 4.1.3). bumble reports the host's reason to this side too."""
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        self.send_lmp_packet(connection.peer_address, lmp.LmpDetach(command.reason))
        loop = asyncio.get_running_loop()
        loop.call_at(loop.time() + 2 * LMP_DELAY_S, self.on_classic_disconnected, connection.peer_address,
                     hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR)
        return None

    def terminate_unacknowledged(self, connection) -> None:
        """LL_TERMINATE_IND queued, never acknowledged: the peer keeps the link; 0x22 when the response timer runs
        out, at a connection event."""
        loop = asyncio.get_running_loop()
        at = self.link.event_at_or_after(loop.time() + LL_RESPONSE_TIMEOUT_S)

        def timed_out():
            if self.le_connections.get(connection.peer_address) is connection:
                self.on_le_disconnected(connection, hci.HCI_ErrorCode.LMP_OR_LL_RESPONSE_TIMEOUT_ERROR)

        loop.call_at(at, timed_out)
        return None

    # Write Secure Connections Host Support (7.3.92): a phone's controller supports it; bumble's answers 0x01.
    def on_hci_write_secure_connections_host_support_command(self, _command):
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    # Authentication Requested (BR/EDR) -> Command Status, then Link Key Request; the host's Reply or Negative Reply
    # goes on in bumble's controller (Authentication Complete, or the IO Capability Request of Simple Pairing).
    def on_hci_authentication_requested_command(self, command):
        connection = self.find_classic_connection_by_handle(command.connection_handle)
        if connection is None:
            return super().on_hci_authentication_requested_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        connection.ssp_state.is_initiator = True
        self.send_hci_packet(hci.HCI_Link_Key_Request_Event(bd_addr=connection.peer_address))
        return None

    # Link Key Request Negative Reply -> Command Complete, then the IO Capability Request of Simple Pairing (bumble
    # sends the event before the Command Complete).
    def on_hci_link_key_request_negative_reply_command(self, command):
        connection = self.classic_connections.get(command.bd_addr)
        if connection is None:
            return super().on_hci_link_key_request_negative_reply_command(command)
        connection.ssp_state.is_initiator = True
        asyncio.get_running_loop().call_soon(
            self.send_hci_packet, hci.HCI_IO_Capability_Request_Event(bd_addr=connection.peer_address))
        return hci.HCI_StatusAndAddressReturnParameters(status=hci.HCI_ErrorCode.SUCCESS, bd_addr=command.bd_addr)

    # LE Connection Update -> Command Status; the update completes on both sides at the instant.
    def on_hci_le_connection_update_command(self, command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            return super().on_hci_le_connection_update_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        link: FaultLink = self.link
        loop = asyncio.get_running_loop()
        instant = link.event_at_or_after(loop.time() + 1e-6) + UPDATE_INSTANT_EVENTS * link.interval
        peer = link.find_le_controller(connection.peer_address)

        def at_instant():
            link.retime(instant, command.connection_interval_max * 1.25e-3, command.max_latency,
                        command.supervision_timeout / 100)
            for ctl, conn in ((self, connection), (peer, peer and peer.le_connections.get(connection.self_address))):
                if conn is not None:
                    ctl.send_hci_packet(hci.HCI_LE_Connection_Update_Complete_Event(
                        status=hci.HCI_ErrorCode.SUCCESS, connection_handle=conn.handle,
                        connection_interval=command.connection_interval_max,
                        peripheral_latency=command.max_latency, supervision_timeout=command.supervision_timeout))

        loop.call_at(instant, at_instant)
        return None

    # Host -> controller ACL: Number Of Completed Packets only for packets the peer acknowledged.
    def on_hci_acl_data_packet(self, packet: hci.HCI_AclDataPacket) -> None:
        connection = self.find_connection_by_handle(packet.connection_handle)
        if connection is None:
            return
        connection.assembler.feed_packet(packet)
        loop = asyncio.get_running_loop()
        link: FaultLink = self.link
        t = max(link.last_air_time.get(id(self), loop.time()), loop.time()) + 0.0003
        handle = connection.handle

        def completed():
            if not link.lost(t) and self.find_connection_by_handle(handle) is not None:
                self.send_hci_packet(hci.HCI_Number_Of_Completed_Packets_Event(
                    connection_handles=[handle], num_completed_packets=[1]))

        loop.call_at(t, completed)

    def on_link_ll_data(self, sender_address, piece: bytes, first: bool) -> None:
        if not self.link.lost(asyncio.get_running_loop().time()):
            super().on_link_ll_data(sender_address, piece, first)

    # Link supervision and the approaching-LSTO quality report.
    def on_radio_lost(self, last_heard: float) -> None:
        link: FaultLink = self.link
        loop = asyncio.get_running_loop()
        for connection in list(self.le_connections.values()):
            if not self.is_peripheral and self.bqr_mask & (1 << (BQR_APPROACHING_LSTO - 1)):
                at = link.event_at_or_after(last_heard + link.timeout_s / 2)
                loop.call_at(at, self.send_approaching_lsto, connection, last_heard)
            loop.call_at(link.event_at_or_after(last_heard + link.timeout_s), self.supervision_timeout, connection)

    def supervision_timeout(self, connection) -> None:
        if self.le_connections.get(connection.peer_address) is connection:
            self.on_le_disconnected(connection, hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)

    def send_approaching_lsto(self, connection, last_heard: float) -> None:
        if self.le_connections.get(connection.peer_address) is not connection:
            return
        link: FaultLink = self.link
        now = asyncio.get_running_loop().time()
        missed = round((now - last_heard) / link.interval)  # connection events with nothing heard
        self.bqr_reports.append(now)
        self.send_hci_packet(android_hci.HCI_Bluetooth_Quality_Report_Event(
            quality_report_id=BQR_APPROACHING_LSTO, packet_types=BQR_LE_PACKET_TYPE,
            connection_handle=connection.handle, connection_role=hci.Role.CENTRAL,
            tx_power_level=9, rssi=-94, snr=0, unused_afh_channel_count=0, afh_select_unideal_channel_count=0,
            lsto=round(link.timeout_s / SLOT_S), connection_piconet_clock=int(now / CLOCK_TICK_S) & 0xFFFFFFFF,
            retransmission_count=missed, no_rx_count=missed, nak_count=0,
            last_tx_ack_timestamp=int(last_heard / CLOCK_TICK_S) & 0xFFFFFFFF, flow_off_count=0,
            last_flow_on_timestamp=0, buffer_overflow_bytes=0, buffer_underflow_bytes=0,
            bdaddr=connection.peer_address, cal_failed_item_count=0,
            tx_total_packets=missed, tx_unacked_packets=missed, tx_flushed_packets=0, tx_last_subevent_packets=0,
            crc_error_packets=0, rx_duplicate_packets=0, rx_unreceived_packets=missed,
            vendor_specific_parameters=b""))

    # Android's Bluetooth Quality Report command: Report_Action, Quality_Event_Mask, Minimum_Report_Interval;
    # returns Status and Current_Quality_Event_Mask.
    def on_hci_command_packet(self, command: hci.HCI_Command) -> None:
        if command.op_code != BQR_COMMAND:
            return super().on_hci_command_packet(command)
        action, mask, _interval_ms = struct.unpack_from("<BIH", command.parameters)
        self.bqr_mask = {0: self.bqr_mask | mask, 1: self.bqr_mask & ~mask}.get(action, 0)
        self.send_hci_packet(bytes([hci.HCI_EVENT_PACKET, hci.HCI_COMMAND_COMPLETE_EVENT, 8, 1])
                             + struct.pack("<HBI", BQR_COMMAND, 0, self.bqr_mask))
        return None


def rig(loop, out, name: str, address: str, interval_ms: float = 30.0, **kw) -> sim.Rig:
    """A Rig whose link and controllers are the ones of this module."""
    return sim.Rig(loop, out, name, address, interval_ms=interval_ms, link_class=FaultLink,
                   controller_class=FaultController, **kw)
