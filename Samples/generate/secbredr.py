"""Security Sample (BR/EDR): a headset's bond keeps its link key, and its second session runs with a 7-byte key.

The phone pairs with a headset by Secure Simple Pairing: both sides have a display and a yes/no button and ask for
MITM protection with general bonding, so the model is Numeric Comparison (Core Vol 3, Part C, 5.2.2.6); Link Key
Notification gives the new key. The phone encrypts the link (Set Connection Encryption, Encryption Change) and asks
its key size (Read Encryption Key Size, Vol 4, Part E, 7.5.7): 16 bytes. It disconnects. 3 s later it pages the
headset again: the controller asks for the stored key (Link Key Request), the host gives it (Link Key Request Reply),
encryption comes on, and Read Encryption Key Size answers **7 bytes**: the same bond now runs with the smallest key
the specification allows, the shape of a KNOB / BLUFFS key-size downgrade (CVE-2019-9506). The phone disconnects.

bumble 0.0.236 drives the BR/EDR link and Simple Pairing; its controller does not implement Read Encryption Key Size,
so this Sample's controller answers it with the key size of each session (16, then 7). Rules SEC-08 (7 bytes,
warning) and SEC-09 (error); SEC-13, SEC-11 and SEC-22 stay quiet (an authenticated key, no debug key, and the
phone's user confirmed the six digits 2.5 s after the User Confirmation Request: a person, not the host).
"""

from __future__ import annotations

import asyncio

from bumble import hci
from bumble.core import PhysicalTransport
from bumble.pairing import PairingConfig, PairingDelegate

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "00:1B:DC:5A:71:C4"  # the headset's BR/EDR public address
KEY_SIZES = [16, 7]  # what the phone's controller answers to Read Encryption Key Size, session by session


class KeySizeController(simfaults.FaultController):
    """The phone's controller, answering Read Encryption Key Size (7.5.7) with each session's key size."""

    key_sizes: list[int] = []

    # Set Connection Encryption (7.1.16): Command Status, then (after the LMP exchange, 20 ms) Encryption Change on
    # both sides: AES-CCM (Encryption_Enabled 2, 7.7.8), as a Secure Connections link key (P-256) gives it.
    def on_hci_set_connection_encryption_command(self, command):
        connection = self.find_classic_connection_by_handle(command.connection_handle)
        if connection is None:
            return super().on_hci_set_connection_encryption_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        peer = self.link.find_classic_controller(connection.peer_address)
        peer_connection = peer.classic_connections.get(self.public_address) if peer else None

        def changed():
            for ctl, conn in ((self, connection), (peer, peer_connection)):
                if conn is not None:
                    ctl.send_hci_packet(hci.HCI_Encryption_Change_Event(
                        status=hci.HCI_ErrorCode.SUCCESS, connection_handle=conn.handle,
                        encryption_enabled=2 if command.encryption_enable else 0))

        asyncio.get_running_loop().call_later(0.02, changed)
        return None

    def on_hci_read_encryption_key_size_command(self, command):
        size = KeySizeController.key_sizes.pop(0) if KeySizeController.key_sizes else 16
        return hci.HCI_Read_Encryption_Key_Size_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=command.connection_handle, key_size=size)


class Confirming(PairingDelegate):
    """A side with a display and a yes/no button whose user confirms the six digits."""

    def __init__(self):
        super().__init__(io_capability=PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT)
        self.shown: list[int] = []

    async def compare_numbers(self, number: int, digits: int) -> bool:
        self.shown.append(number)
        await asyncio.sleep(2.5)  # a person reads both screens and presses yes; a host that answers at once is SEC-22
        return True

    async def confirm(self, auto: bool = False) -> bool:
        return True


async def session(rig, loop, first: bool):
    """Page the headset, authenticate (pairing the first time), encrypt, read the key size, disconnect."""
    conn = await rig.phone.connect(
        hci.Address(DEVICE_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS), transport=PhysicalTransport.BR_EDR)
    ended = loop.create_future()
    conn.on("disconnection", ended.set_result)
    await rig.phone.authenticate(conn)
    await conn.encrypt()
    size = await rig.phone.send_command(hci.HCI_Read_Encryption_Key_Size_Command(connection_handle=conn.handle))
    await asyncio.sleep(0.5)  # a little audio setup would go here
    await conn.disconnect()
    await ended
    return conn.handle, size.return_parameters.key_size


async def run(loop, out):
    KeySizeController.key_sizes = list(KEY_SIZES)
    rig = sim.Rig(loop, out, "Headset 3", DEVICE_ADDRESS, interval_ms=30.0, link_class=simfaults.FaultLink,
                  controller_class=KeySizeController)
    phone_user, headset_user = Confirming(), Confirming()
    rig.device.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True, delegate=headset_user)
    rig.phone.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True, delegate=phone_user)
    for device in (rig.phone, rig.device):
        device.classic_enabled = True
    rig.device.connectable = True
    await rig.phone.power_on()
    await rig.device.power_on()
    await asyncio.sleep(0.4)
    first = await session(rig, loop, True)
    await asyncio.sleep(3.0)
    second = await session(rig, loop, False)
    await asyncio.sleep(0.2)
    return {
        "description": "BR/EDR: Secure Simple Pairing (Numeric Comparison) with a headset, encryption with a 16-byte "
                       "key; the next session of the same bond runs with a 7-byte key (Read Encryption Key Size)",
        "numeric_value": phone_user.shown[0] if phone_user.shown else None,
        "sessions": [{"connection_handle": h, "key_size_reported": k} for h, k in (first, second)],
    }


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    completes = [r for r in log.events(0x03) if r.params[0] == 0]
    changes = [r for r in log.events(0x08) if r.params[0] == 0]
    reads = [r for r in log.events(0x0E) if int.from_bytes(r.params[1:3], "little") == 0x1408]
    notifications = log.events(0x18)
    io_reply = log.commands(0x042B)
    io_response = log.events(0x32)
    link_key_replies = log.commands(0x040B)
    confirms = log.commands(0x042C)
    assert len(confirms) == 1, len(confirms)
    assert len(completes) == 2 and len(changes) == 2 and len(reads) == 2 and len(notifications) == 1, (
        len(completes), len(changes), len(reads), len(notifications))
    sizes = [r.params[6] for r in reads]
    assert sizes == KEY_SIZES, sizes
    truth["pairing"] = {
        "procedure": "Secure Simple Pairing", "model": "Numeric Comparison",
        "io_capability_request_reply_frame": io_reply[0].frame, "local_io_capability": io_reply[0].params[6],
        "local_auth_requirements": io_reply[0].params[8],
        "io_capability_response_frame": io_response[0].frame, "peer_io_capability": io_response[0].params[6],
        "peer_auth_requirements": io_response[0].params[8],
        "link_key_notification_frame": notifications[0].frame, "link_key_type": notifications[0].params[22],
        "user_confirmation_reply_frame": confirms[0].frame,
    }
    truth["sessions"] = [
        {"connection_complete_frame": completes[i].frame, "encryption_change_frame": changes[i].frame,
         "encryption_enabled": changes[i].params[3], "read_encryption_key_size_complete_frame": reads[i].frame,
         "key_size": sizes[i]} for i in range(2)]
    truth["stored_link_key_reply_frames"] = [r.frame for r in link_key_replies]
    truth["diagnosis"] = {
        "rules": ["SEC-08", "SEC-09"],
        "findings": [
            diagkit.finding("SEC-09", "E", reads[1].frame, [reads[0].frame],
                            "the bond's key size went down from 16 to 7 bytes on the second session"),
            diagkit.finding("SEC-08", "W", reads[1].frame, [changes[1].frame], "a 7-byte key on the second session"),
        ],
        "not_flagged": [
            diagkit.quiet("an authenticated key from Numeric Comparison", [notifications[0].frame], ["SEC-13", "SEC-11"]),
            diagkit.quiet("16 bytes on the first session", [reads[0].frame], ["SEC-08"]),
            diagkit.quiet("the phone's user confirmed the number 2.5 s after the request", [confirms[0].frame],
                          ["SEC-22"]),
        ],
    }
