"""Simulation rig for the sample captures.

Two bumble hosts ("phone" = central, "device" = peripheral), each on a bumble
virtual controller, joined by bumble's LocalLink. Everything above the
controllers is bumble's real host stack (HCI, L2CAP, ATT/GATT). This module adds
only what bumble's virtual controller leaves out and a recording clock:

* a virtual-time asyncio event loop: ``asyncio.sleep`` and every bumble timer
  advance a simulated clock instead of waiting, so generation is fast and the
  timestamps are deterministic;
* connection-event pacing on the link: an L2CAP PDU sent by one controller is
  delivered to the peer at the next connection event with room (at most
  ``per_event`` link-layer packets per direction and event), and the
  Number Of Completed Packets event is sent when the packet went over the air;
* link-layer fragmentation towards the host (the virtual controller hands a
  whole L2CAP PDU to the host in one ACL packet; real controllers split it in
  LL-payload-sized fragments, 27 octets until the data length is raised);
* HCI LE Set Data Length + LE Data Length Change events (unsupported by the
  virtual controller);
* a btsnoop writer whose timestamps come from the virtual clock.
"""

from __future__ import annotations

import asyncio
import datetime
import math
import struct
from typing import BinaryIO

from bumble import hci
from bumble.controller import Controller
from bumble.device import ConnectionParametersPreferences, Device, DeviceConfiguration
from bumble.host import Host
from bumble.link import LocalLink
from bumble.snoop import BtSnooper, Snooper

# ---------------------------------------------------------------------------
# Virtual time


class _VirtualSelector:
    """Wraps the loop's selector: a blocking select advances the virtual clock."""

    def __init__(self, loop: "VirtualTimeLoop", real):
        self._loop = loop
        self._real = real

    def select(self, timeout=None):
        if timeout is None:
            raise RuntimeError("virtual loop would block forever (deadlock in scenario)")
        if timeout > 0:
            self._loop.vtime += timeout
        return self._real.select(0)

    def __getattr__(self, name):
        return getattr(self._real, name)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """Event loop whose clock only moves when every task is waiting."""

    def __init__(self):
        super().__init__()
        self.vtime = 0.0
        self._selector = _VirtualSelector(self, self._selector)

    def time(self) -> float:  # noqa: D401 - asyncio API
        return self.vtime


# ---------------------------------------------------------------------------
# btsnoop writer with virtual timestamps

# 2025-03-14 09:30:00 UTC, the fixed wall-clock start of every sample.
EPOCH = datetime.datetime(2025, 3, 14, 9, 30, 0, tzinfo=datetime.UTC)


class VirtualBtSnooper(BtSnooper):
    """bumble's BtSnooper (datalink 1002, H4) with timestamps from the virtual clock.

    bumble's own BtSnooper stamps records with ``datetime.now()``; this one uses
    ``EPOCH + loop.time()`` and keeps records strictly increasing (at least
    ``min_gap_us`` apart) so that packets handled in one loop turn still get
    distinct timestamps. Also keeps the raw records for the generator's own counts.
    """

    def __init__(self, output: BinaryIO, loop: VirtualTimeLoop, start_offset_s: float = 0.0):
        super().__init__(output)
        self.loop = loop
        self.base_us = (
            int((EPOCH - self.TIMESTAMP_ANCHOR) / self.ONE_MS)
            + self.TIMESTAMP_DELTA
            + int(round(start_offset_s * 1e6))
        )
        self.last_us = 0
        self.records: list[tuple[int, int, bytes]] = []  # (flags, ts_us, packet)

    def snoop(self, hci_packet: bytes, direction: Snooper.Direction) -> None:
        flags = int(direction)
        if hci_packet[0] in (hci.HCI_EVENT_PACKET, hci.HCI_COMMAND_PACKET):
            flags |= 0x02
        ts = self.base_us + int(round(self.loop.time() * 1e6))
        # H4-over-UART-ish cost: the packet occupies the transport a little while.
        ts = max(ts, self.last_us + 12 + len(hci_packet) // 8)
        self.last_us = ts
        self.records.append((flags, ts, bytes(hci_packet)))
        self.output.write(
            struct.pack(">IIIIQ", len(hci_packet), len(hci_packet), flags, 0, ts) + hci_packet
        )


# ---------------------------------------------------------------------------
# Link with connection events


class PacedLink(LocalLink):
    """LocalLink that delivers ACL data at connection events.

    Both controllers of a scenario share one connection; its events happen at
    ``anchor + k * interval``. Each direction may carry ``per_event`` LL packets
    per event; an L2CAP PDU of ``n`` bytes takes ``ceil((n) / ll_octets)`` LL
    packets, where ``ll_octets`` is the sender's current max TX octets.
    """

    def __init__(self, interval_ms: float = 15.0, per_event: int = 4):
        super().__init__()
        self.interval = interval_ms / 1000.0
        self.per_event = per_event
        self.anchor: float | None = None
        # per sender controller: (event index, LL packets used in it, microseconds used in it)
        self._slot: dict[int, tuple[int, int, int]] = {}
        self.last_air_time: dict[int, float] = {}

    def reserve(self, sender: "SimController", lengths: list[int]) -> list[float]:
        """Reserve air time for LL packets of the given payload lengths; returns when each is sent.

        Air time on the 1M PHY: 8 us per octet of (payload + 10 octets of preamble,
        access address, header and CRC [+4 MIC unused]), then 150 us inter-frame
        space, the peer's (empty, 80 us) packet and another 150 us.
        """
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self.anchor is None:
            self.anchor = now
        # Next event strictly after now (a PDU handed over during an event waits for the next).
        k_now = math.floor((now - self.anchor) / self.interval + 1e-9) + 1
        k, used, offset_us = self._slot.get(id(sender), (k_now, 0, 0))
        if k < k_now:
            k, used, offset_us = k_now, 0, 0
        times = []
        for n in lengths:
            pair_us = 8 * (n + 10) + 150 + 80 + 150
            if used >= self.per_event or offset_us + pair_us > self.interval * 1e6 - 500:
                k, used, offset_us = k + 1, 0, 0
            # the central transmits first in each pair; the peripheral answers 150 us later
            start = offset_us if not sender.is_peripheral else offset_us + 80 + 150
            times.append(self.anchor + k * self.interval + (start + 8 * (n + 10)) / 1e6)
            used += 1
            offset_us += pair_us
        self._slot[id(sender)] = (k, used, offset_us)
        self.last_air_time[id(sender)] = times[-1]
        return times

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        destination = self.find_le_controller(destination_address)
        if destination is None:
            return
        source_address = sender_controller.random_address
        size = sender_controller.ll_tx_octets
        pieces = [data[i : i + size] for i in range(0, len(data), size)] or [b""]
        times = self.reserve(sender_controller, [len(p) for p in pieces])
        loop = asyncio.get_running_loop()
        for i, (t, piece) in enumerate(zip(times, pieces)):
            loop.call_at(t, destination.on_link_ll_data, source_address, piece, i == 0)


class SimController(Controller):
    """bumble virtual controller plus the bits listed in the module docstring."""

    def __init__(self, name, link: PacedLink, public_address, is_peripheral: bool):
        super().__init__(name, link=link, public_address=public_address)
        self.is_peripheral = is_peripheral
        self.ll_tx_octets = 27
        self.ll_rx_octets = 27
        # A typical phone controller: 251-octet LE ACL buffers, 8 of them.
        self.le_acl_data_packet_length = 251
        self.total_num_le_acl_data_packets = 8
        self._next_host_delivery = 0.0

    # Controller -> host: ~0.2 ms transport latency, order preserved.
    def send_hci_packet(self, packet) -> None:
        if not self.host:
            return
        loop = asyncio.get_running_loop()
        data = bytes(packet)
        t = max(loop.time() + 0.0002 + len(data) * 1e-6, self._next_host_delivery + 0.00002)
        self._next_host_delivery = t
        loop.call_at(t, self.host.on_packet, data)

    # Host -> controller ACL: NOCP once the packet went over the air.
    def on_hci_acl_data_packet(self, packet: hci.HCI_AclDataPacket) -> None:
        connection = self.find_connection_by_handle(packet.connection_handle)
        if connection is None:
            return
        connection.assembler.feed_packet(packet)
        loop = asyncio.get_running_loop()
        link: PacedLink = self.link
        t = link.last_air_time.get(id(self), loop.time())
        t = max(t, loop.time()) + 0.0003
        handle = connection.handle

        def completed():
            self.send_hci_packet(
                hci.HCI_Number_Of_Completed_Packets_Event(
                    connection_handles=[handle], num_completed_packets=[1]
                )
            )

        loop.call_at(t, completed)

    # Link -> host: each LL data PDU becomes one ACL fragment (start or continuation).
    def on_link_ll_data(self, sender_address, piece: bytes, first: bool) -> None:
        connection = self.le_connections.get(sender_address)
        if connection is None:
            return
        pb = 0x02 if first else 0x01
        self.send_hci_packet(hci.HCI_AclDataPacket(connection.handle, pb, 0, len(piece), piece))

    # Whole PDU from the link (not used by PacedLink): split in LL-sized fragments.
    def on_link_acl_data(self, sender_address, transport, data: bytes) -> None:
        connection = self.le_connections.get(sender_address)
        if connection is None:
            return
        size = self.ll_rx_octets
        for i in range(0, len(data), size):
            pb = 0x02 if i == 0 else 0x01
            chunk = data[i : i + size]
            self.send_hci_packet(hci.HCI_AclDataPacket(connection.handle, pb, 0, len(chunk), chunk))

    # LE Set Data Length (Vol 4 Part E 7.8.33) -> LE Data Length Change on both sides.
    def on_hci_le_set_data_length_command(self, command: hci.HCI_LE_Set_Data_Length_Command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            return hci.HCI_StatusAndConnectionHandleReturnParameters(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                connection_handle=command.connection_handle,
            )
        peer = self.link.find_le_controller(connection.peer_address)
        octets = min(command.tx_octets, 251)
        loop = asyncio.get_running_loop()
        # LL_LENGTH_REQ / LL_LENGTH_RSP take about two connection events.
        t = loop.time() + 2 * self.link.interval

        def changed():
            for ctl, conn in ((self, connection), (peer, None)):
                if ctl is None:
                    continue
                ctl.ll_tx_octets = octets
                ctl.ll_rx_octets = octets
                if conn is None:
                    conn = next(iter(ctl.le_connections.values()), None)
                    if conn is None:
                        continue
                time_us = (octets + 14) * 8
                ctl.send_hci_packet(
                    hci.HCI_LE_Data_Length_Change_Event(
                        connection_handle=conn.handle,
                        max_tx_octets=octets,
                        max_tx_time=time_us,
                        max_rx_octets=octets,
                        max_rx_time=time_us,
                    )
                )

        loop.call_at(t, changed)
        return hci.HCI_StatusAndConnectionHandleReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=command.connection_handle
        )


class DelayedSink:
    """Host -> controller transport with a small, order-preserving latency."""

    def __init__(self, sink):
        self.sink = sink
        self.next_t = 0.0

    def on_packet(self, packet: bytes) -> None:
        loop = asyncio.get_running_loop()
        t = max(loop.time() + 0.0001 + len(packet) * 1e-6, self.next_t + 0.00001)
        self.next_t = t
        loop.call_at(t, self.sink.on_packet, packet)


# ---------------------------------------------------------------------------
# The rig

# Seconds after EPOCH at which the next Rig's capture starts (set by generate.py).
START_OFFSET = 0.0

PHONE_ADDRESS = "F4:5C:89:A1:B2:C3"  # the phone's public address
PHONE_RANDOM = "5E:3A:11:22:33:44"  # non-resolvable private address used to connect


class Rig:
    """Phone (central, recorded) + device (peripheral) on a paced local link."""

    def __init__(
        self,
        loop: VirtualTimeLoop,
        snoop_out: BinaryIO,
        device_name: str,
        device_address: str,
        interval_ms: float = 15.0,
        per_event: int = 4,
        start_offset_s: float | None = None,
        eatt: bool = False,
        link_class: type[PacedLink] | None = None,
        controller_class: type[SimController] | None = None,
    ):
        # The diagnosis Samples pass the classes of simfaults.py (a real controller's failure events); the others
        # keep these, so that they regenerate byte for byte.
        link_class = link_class or PacedLink
        controller_class = controller_class or SimController
        self.loop = loop
        self.interval_ms = interval_ms
        self.link = link_class(interval_ms=interval_ms, per_event=per_event)
        self.phone_ctl = controller_class("phone-ctl", self.link, PHONE_ADDRESS, is_peripheral=False)
        self.device_ctl = controller_class("device-ctl", self.link, device_address, is_peripheral=True)
        if start_offset_s is None:
            start_offset_s = START_OFFSET
        self.snooper = VirtualBtSnooper(snoop_out, loop, start_offset_s)

        phone_host = Host(self.phone_ctl, DelayedSink(self.phone_ctl))
        phone_host.snooper = self.snooper
        device_host = Host(self.device_ctl, DelayedSink(self.device_ctl))

        self.phone = Device(
            host=phone_host,
            config=DeviceConfiguration(name="Pixel 8", address=hci.Address(PHONE_RANDOM)),
        )
        self.device = Device(
            host=device_host,
            config=DeviceConfiguration(
                name=device_name,
                address=hci.Address(device_address),
                advertising_interval_min=100,
                advertising_interval_max=100,
                # GATT server on enhanced ATT bearers too (L2CAP PSM 0x0027) and the EATT bit in
                # Server Supported Features (Core Spec Vol 3, Part G, 7.4).
                eatt_enabled=eatt,
            ),
        )
        self.phone_conn = None
        self.device_conn = None

    async def connect(self):
        await self.phone.power_on()
        await self.device.power_on()
        fut = self.loop.create_future()
        self.device.once("connection", fut.set_result)
        await self.device.start_advertising(auto_restart=False)
        await asyncio.sleep(0.35)  # the user opens the app
        prefs = ConnectionParametersPreferences(
            connection_interval_min=self.interval_ms,
            connection_interval_max=self.interval_ms,
            max_latency=0,
            supervision_timeout=5000,
        )
        self.phone_conn = await self.phone.connect(
            self.device.random_address,
            connection_parameters_preferences={hci.Phy.LE_1M: prefs},
        )
        self.device_conn = await fut
        # Timing of the link starts with the connection.
        self.link.anchor = self.loop.time()
        return self.phone_conn

    async def disconnect(self):
        await asyncio.sleep(0.2)
        await self.phone_conn.disconnect()
        await asyncio.sleep(0.05)


def run(coro_factory):
    """Run ``coro_factory(loop)`` on a fresh virtual-time loop."""
    loop = VirtualTimeLoop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(coro_factory(loop))
    finally:
        loop.close()
        asyncio.set_event_loop(None)


async def discover_all(connection):
    """What a phone app does after connecting: discover every service,
    characteristic and descriptor. Returns the bumble Peer."""
    from bumble.device import Peer

    peer = Peer(connection)
    await peer.discover_all()
    return peer


def find_char(peer, uuid):
    chars = peer.get_characteristics_by_uuid(uuid)
    if not chars:
        raise LookupError(f"characteristic {uuid} not discovered")
    return chars[0]


def cccd_handle(char_proxy) -> int | None:
    for d in getattr(char_proxy, "descriptors", []):
        if d.type == 0x2902 or str(d.type).upper().startswith("00002902") or "2902" in str(d.type):
            return d.handle
    return None
