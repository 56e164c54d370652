"""Diagnosis Sample: the peripheral lost the bond (encryption fails with 0x06 PIN or Key Missing).

Connection 1: the phone pairs with a smart lock (LE Secure Connections, Just Works, bonding), reads the lock state on
the encrypted link and disconnects. The lock is then reset to factory settings: its bond store is wiped (its bumble
key store emptied). Connection 2, 3 s later: the phone, still bonded, starts encryption with the stored LTK (LE Enable
Encryption 0x2019, the same key as in connection 1); the lock's host has no key and answers its controller's LE Long
Term Key Request with a Negative Reply, the lock's controller rejects LL_ENC_REQ (LL_REJECT_EXT_IND 0x06), and the
phone's controller reports Encryption Change with status 0x06 PIN or Key Missing (bumble's own controllers do all of
this). The phone gives up: HCI Disconnect (0x05 Authentication Failure), Disconnection Complete 0x16.
Rules SEC-01 (this log) and SEC-02 (the lock's side, listed in the truth file from its HCI traffic).
"""

from __future__ import annotations

import asyncio

from bumble import hci
from bumble.gatt import Characteristic, Service
from bumble.keys import MemoryKeyStore
from bumble.pairing import PairingConfig

import diagkit
import sim
import simfaults

DEVICE_ADDRESS = "D9:5B:02:3E:71:A4"
SERVICE = "5A1E0001-6C0C-4F3B-9A41-3D2B6E8F0A11"
LOCK_STATE = "5A1E0002-6C0C-4F3B-9A41-3D2B6E8F0A11"
PAIRING_SEED = 0xB0_4D
LOCKED = b"\x01"


async def run(loop, out):
    rig = simfaults.rig(loop, out, "SmartLock", DEVICE_ADDRESS, interval_ms=30.0)
    state = Characteristic(LOCK_STATE, Characteristic.Properties.READ,
                           Characteristic.READABLE | Characteristic.READ_REQUIRES_ENCRYPTION, LOCKED)
    rig.device.add_service(Service(SERVICE, [state]))
    lock_side = diagkit.HostTap(loop)
    rig.device.host.snooper = lock_side
    # A random static address is the lock's identity (Identity Address Information, type random).
    rig.device.pairing_config_factory = lambda _c: PairingConfig(identity_address_type=PairingConfig.AddressType.RANDOM)
    restore = diagkit.reproducible_pairing(PAIRING_SEED, rig.phone, rig.device)
    try:
        conn1 = await rig.connect()
        await conn1.pair()
        peer = await sim.discover_all(conn1)
        proxy = sim.find_char(peer, LOCK_STATE)
        assert bytes(await proxy.read_value()) == LOCKED
        await rig.disconnect()
        await asyncio.sleep(0.5)

        # Factory reset of the lock: its bonds are gone; the phone still holds its keys.
        rig.device.keystore = MemoryKeyStore()
        await asyncio.sleep(2.5)
        connected = loop.create_future()
        rig.device.once("connection", connected.set_result)
        await rig.device.start_advertising(auto_restart=False)
        await asyncio.sleep(0.3)
        conn2 = await _connect(rig, loop)
        await connected
        try:
            await conn2.encrypt()
            raise AssertionError("encryption should fail: the lock lost the bond")
        except hci.HCI_Error as error:
            failure = error.error_code
        await asyncio.sleep(0.1)
        await conn2.disconnect(reason=hci.HCI_ErrorCode.AUTHENTICATION_FAILURE_ERROR)
        await asyncio.sleep(0.1)
    finally:
        restore()
    phone_keys = await rig.phone.keystore.get(str(rig.device.random_address))
    return {
        "description": "A bonded phone reconnects to a smart lock that was reset to factory settings: LE Enable "
                       "Encryption with the stored LTK fails with Encryption Change 0x06 (PIN or Key Missing), and the "
                       "phone disconnects",
        "service_uuid": SERVICE, "lock_state_uuid": LOCK_STATE, "lock_state_value_handle": proxy.handle,
        "pairing": {"method": "LE Secure Connections, Just Works, bonding", "seed": f"0x{PAIRING_SEED:04x}"},
        "stored_ltk_hex": phone_keys.ltk.value.hex(),
        "encryption_failure_code": int(failure),
        "connection_handles": [conn1.handle, conn2.handle],
        "peripheral_side": {
            "note": "the lock's own HCI traffic (not in this capture; virtual seconds from the capture's start)",
            "le_long_term_key_request_events_s": lock_side.find(0x04, 0x3E, 0x05),
            "long_term_key_request_reply_commands_s": lock_side.find(0x01, 0x201A),
            "long_term_key_request_negative_reply_commands_s": lock_side.find(0x01, 0x201B),
        },
    }


async def _connect(rig, loop):
    rig.phone_conn = await rig.phone.connect(
        rig.device.random_address,
        connection_parameters_preferences={hci.Phy.LE_1M: sim.ConnectionParametersPreferences(
            connection_interval_min=30.0, connection_interval_max=30.0, max_latency=0, supervision_timeout=5000)})
    rig.link.anchor = loop.time()
    return rig.phone_conn


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)
    enables = log.commands(0x2019)
    assert len(enables) == 2, enables
    ltks = [e.params[12:28].hex() for e in enables]  # the LTK: 16 octets after the handle, Rand and EDIV, as sent
    changes = log.events(0x08)
    assert [c.params[0] for c in changes] == [0x00, 0x06], [c.params.hex() for c in changes]
    good, failed = changes
    status = log.status_of(enables[1])
    disconnect = log.commands(0x0406)[-1]
    spans = diagkit.connection_spans(log)
    smp = log.smp()
    truth["pairing"].update({
        "pairing_request_frame": log.smp(0x01)[0][0], "pairing_response_frame": log.smp(0x02)[0][0],
        "smp_pdus": len(smp), "enable_encryption_frame": enables[0].frame, "encryption_change_frame": good.frame})
    truth["reconnection"] = {
        "enable_encryption_frame": enables[1].frame, "command_status_frame": status.frame,
        "command_status": diagkit.status_field(status), "ltk_hex": ltks[1], "same_ltk_as_pairing": ltks[0] == ltks[1],
        "encryption_change": {"frame": failed.frame, "status": failed.params[0],
                              "status_name": diagkit.HCI_ERRORS[failed.params[0]], "encryption_enabled": failed.params[3]},
        "disconnect_frame": disconnect.frame, "disconnect_reason": disconnect.params[2],
        "end": spans[1]["end"]}
    assert ltks[1] == truth["stored_ltk_hex"], (ltks, truth["stored_ltk_hex"])
    truth["connections"] = spans
    first_end = spans[0]["end"]["frame"]
    truth["diagnosis"] = {
        "rules": ["SEC-01"],
        "findings": [diagkit.finding(
            "SEC-01", "C", failed.frame, [enables[1].frame, status.frame, disconnect.frame, spans[1]["end"]["frame"]],
            f"LE Enable Encryption with the stored LTK (#{enables[1].frame}) failed: Encryption Change 0x06 PIN or Key "
            f"Missing (#{failed.frame}); the lock no longer has the bond, and the phone disconnected "
            f"(#{disconnect.frame}, reason 0x05)")],
        "not_flagged": [
            diagkit.quiet("the first connection: pairing, encryption 0x00, an encrypted read, the app's disconnect",
                          [truth["pairing"]["pairing_request_frame"], enables[0].frame, good.frame, first_end],
                          ["SEC-01", "SEC-03", "SEC-04", "DC-02", "DC-03"]),
            diagkit.quiet("0x0A Attribute Not Found ending discovery", diagkit.discovery_end_errors(log), ["GATT-08"]),
        ],
        "elsewhere": [{"rule": "SEC-02", "what": "the lock's host answered LE Long Term Key Request with a Negative "
                       "Reply (its own log, not this one: see peripheral_side)"}],
    }
