"""BR/EDR on the simulation rig: bumble's LocalLink hands a classic ACL PDU to the peer at once and its controller
gives it to the host whole; this paces each PDU as 2-DH5 packets (up to 679 octets in 5 slots of 625 µs, Core Spec
Vol 2, Part B, 6.5.4) one after the other per sender, and splits what reaches the host into ACL fragments of the
controller's buffer size (1021 octets, as phones' controllers read it). The LE path is the rig's own (simfaults)."""

from __future__ import annotations

import asyncio

from bumble import hci
from bumble.core import PhysicalTransport

import sim
import simfaults

SLOT_S = 0.000625
DH5_OCTETS = 679
ACL_BUFFER = 1021


class ClassicLink(simfaults.FaultLink):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.busy_until: dict[int, float] = {}

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.BR_EDR:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        destination = self.find_classic_controller(destination_address)
        if destination is None:
            return
        loop = asyncio.get_running_loop()
        packets = max(1, -(-len(data) // DH5_OCTETS))
        t = max(loop.time(), self.busy_until.get(id(sender_controller), 0.0)) + packets * 5 * SLOT_S
        self.busy_until[id(sender_controller)] = t
        self.last_air_time[id(sender_controller)] = t
        loop.call_at(t, destination.on_link_acl_data, sender_controller.public_address, transport, data)


class ClassicController(simfaults.FaultController):
    # A phone controller's BR/EDR ACL buffers (Read Buffer Size): 1021 octets, 8 of them.
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.acl_data_packet_length = ACL_BUFFER
        self.total_num_acl_data_packets = 8

    # The air mode a synchronous link comes up with follows the coding the host asked for (the enhanced setup or accept
    # command): transparent for mSBC, CVSD otherwise; a controller reports the link's timing too (7.5 ms, 60 octets:
    # the T2 and S4 settings, HFP 1.9, 5.7.7), which bumble's model leaves at zero.
    # A peer whose link manager refuses eSCO (LMP_not_accepted with this reason, Core Spec Vol 2, Part C, 4.6.2):
    # the setup is accepted by this controller, then fails a few slots later. bumble's model has no refusal.
    refuse_esco: int | None = None

    def on_hci_enhanced_setup_synchronous_connection_command(self, command):
        self.asked_coding = command.transmit_coding_format
        if self.refuse_esco is None:
            return super().on_hci_enhanced_setup_synchronous_connection_command(command)
        connection = self.find_connection_by_handle(command.connection_handle)
        self._send_hci_command_status(hci.HCI_ErrorCode.SUCCESS, command.op_code)
        loop = asyncio.get_running_loop()
        loop.call_at(loop.time() + 6 * SLOT_S, self.on_classic_sco_connection_complete, connection.peer_address, self.refuse_esco,
                     hci.HCI_Connection_Complete_Event.LinkType.ESCO)
        return None

    def on_hci_enhanced_accept_synchronous_connection_request_command(self, command):
        self.asked_coding = command.transmit_coding_format
        return super().on_hci_enhanced_accept_synchronous_connection_request_command(command)

    def send_hci_packet(self, packet) -> None:
        if isinstance(packet, hci.HCI_Synchronous_Connection_Complete_Event) and packet.status == 0:
            coding = getattr(self, "asked_coding", None)
            transparent = coding is not None and int(getattr(coding, "codec_id", 2)) == 0x05
            packet = hci.HCI_Synchronous_Connection_Complete_Event(
                status=packet.status, connection_handle=packet.connection_handle, bd_addr=packet.bd_addr,
                link_type=packet.link_type, transmission_interval=12, retransmission_window=2, rx_packet_length=60,
                tx_packet_length=60, air_mode=3 if transparent else 2)
        super().send_hci_packet(packet)

    def on_link_acl_data(self, sender_address, transport, data: bytes) -> None:
        if transport != PhysicalTransport.BR_EDR:
            return super().on_link_acl_data(sender_address, transport, data)
        connection = self.classic_connections.get(sender_address)
        if connection is None:
            return
        for i in range(0, len(data), ACL_BUFFER):
            chunk = data[i : i + ACL_BUFFER]
            self.send_hci_packet(hci.HCI_AclDataPacket(connection.handle, 0x02 if i == 0 else 0x01, 0, len(chunk), chunk))


def rig(loop, out, name: str, address: str, **kw) -> sim.Rig:
    """A Rig whose link and controllers carry BR/EDR ACL data too."""
    r = sim.Rig(loop, out, name, address, interval_ms=30.0, link_class=ClassicLink, controller_class=ClassicController, **kw)
    for device in (r.phone, r.device):
        device.classic_enabled = True
    r.device.connectable = True
    return r
