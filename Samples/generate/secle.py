"""Security Samples (LE): how a link was secured, and what is weak (docs/security.md, issue 45).

``sec-legacy-short-key``: a bathroom scale with no display or keyboard (NoInputNoOutput) that supports only LE legacy
pairing and offers a Maximum Encryption Key Size of 7 bytes. The phone (KeyboardDisplay) asks for MITM protection,
Secure Connections and bonding. The result (Core Vol 3, Part H, 2.3.5.1): LE legacy (the scale does not set SC), Just
Works (NoInputNoOutput), so MITM is asked and not achieved, and a 7-byte key (the smaller maximum, 3.5.1). The link
encrypts with the STK, the scale distributes its LTK (EncKey) with EDIV and Rand, the phone reads the weight. The phone
disconnects, reconnects 2 s later and encrypts with the stored LTK (LE Enable Encryption with the distributed EDIV and
Rand): the second link's key size is the bond's, 7 bytes. Rules SEC-08 (7 bytes: warning), SEC-10, SEC-13.

``sec-sc-debug-key``: a door sensor in a development build pairs with LE Secure Connections using the specification's
debug P-256 key pair (Vol 3, Part H, 2.3.5.6.1): its Pairing Public Key is the published debug key. Just Works,
bonding, 16-byte keys. Rule SEC-11 (error); no legacy finding.
"""

from __future__ import annotations

import asyncio

from bumble import crypto, hci, smp
from bumble.gatt import Characteristic, Service
from bumble.pairing import PairingConfig, PairingDelegate

import diagkit
import sim
import simfaults

SERVICE = "5EC00001-6C0C-4F3B-9A41-3D2B6E8F0A11"
VALUE = "5EC00002-6C0C-4F3B-9A41-3D2B6E8F0A11"
# The debug private key of Core Vol 3, Part H, 2.3.5.6.1 (most significant octet first).
DEBUG_PRIVATE_KEY = bytes.fromhex("3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd")
DEBUG_PUBLIC_X = bytes.fromhex("20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6")


class Scale(PairingDelegate):
    """No display, no keyboard; 7-byte keys at most."""

    def __init__(self):
        super().__init__(io_capability=PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT, maximum_encryption_key_size=7)


class Phone(PairingDelegate):
    def __init__(self):
        super().__init__(io_capability=PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT)

    async def confirm(self, auto: bool = False) -> bool:
        return True


async def reconnect(rig, loop):
    connected = loop.create_future()
    rig.device.once("connection", connected.set_result)
    await rig.device.start_advertising(auto_restart=False)
    await asyncio.sleep(0.3)
    rig.phone_conn = await rig.phone.connect(
        rig.device.random_address,
        connection_parameters_preferences={hci.Phy.LE_1M: sim.ConnectionParametersPreferences(
            connection_interval_min=30.0, connection_interval_max=30.0, max_latency=0, supervision_timeout=5000)})
    rig.link.anchor = loop.time()
    await connected
    return rig.phone_conn


def realistic_diversifiers():
    """bumble 0.0.236 distributes a legacy LTK with EDIV 0 and Rand 0; real stacks draw both (Vol 3, Part H, 2.4.2.3),
    and a key named by zeros is what an STK or a Secure Connections LTK is. Fixed values per side, put back by the
    returned function."""
    saved, saved_lookup = smp.Session.__init__, smp.Session.get_long_term_key

    def init(self, *args, **kwargs):
        saved(self, *args, **kwargs)
        self.ltk_ediv = 0x1E07 if self.is_initiator else 0x3A5C
        self.ltk_rand = bytes.fromhex("8877665544332211" if self.is_initiator else "0f1e2d3c4b5a6978")

    def lookup(self, rand: bytes, ediv: int):
        # During legacy pairing the STK is named by EDIV and Rand zero (2.4.4.1), not by the LTK's.
        if not self.sc and not self.completed:
            return self.stk if rand == bytes(8) and ediv == 0 else None
        return self.ltk

    smp.Session.__init__, smp.Session.get_long_term_key = init, lookup

    def restore():
        smp.Session.__init__, smp.Session.get_long_term_key = saved, saved_lookup

    return restore


class LegacyShortKey:
    DEVICE_ADDRESS = "C6:2A:91:5E:07:3B"
    PAIRING_SEED = 0x5EC8

    @staticmethod
    async def run(loop, out):
        rig = simfaults.rig(loop, out, "BodyScale", LegacyShortKey.DEVICE_ADDRESS, interval_ms=30.0)
        weight = Characteristic(VALUE, Characteristic.Properties.READ,
                                Characteristic.READABLE | Characteristic.READ_REQUIRES_ENCRYPTION, b"\x2c\x1b")
        rig.device.add_service(Service(SERVICE, [weight]))
        rig.device.pairing_config_factory = lambda _c: PairingConfig(
            sc=False, mitm=False, bonding=True, delegate=Scale(),
            identity_address_type=PairingConfig.AddressType.RANDOM)
        rig.phone.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True, delegate=Phone())
        restore = diagkit.reproducible_pairing(LegacyShortKey.PAIRING_SEED, rig.phone, rig.device)
        restore_diversifiers = realistic_diversifiers()
        seen_by_scale = []
        rig.device.on("connection", lambda c: seen_by_scale.append(str(c.peer_address)))
        try:
            conn1 = await rig.connect()
            await conn1.pair()
            peer = await sim.discover_all(conn1)
            proxy = sim.find_char(peer, VALUE)
            first = bytes(await proxy.read_value())
            await rig.disconnect()
            # The scale keeps the bond under the address the phone connects from (bumble files it under the phone's
            # identity address, which a reconnection from the same random address does not name), and answers the
            # LTK request with the key it distributed itself (the one Central Identification named, Vol 3, Part H,
            # 2.4.2.3): bumble 0.0.236's peripheral looks up ltk_peripheral, the key the central distributed.
            for _name, keys in await rig.device.keystore.get_all():
                keys.ltk_peripheral = keys.ltk_central
                await rig.device.keystore.update(seen_by_scale[0], keys)
            await asyncio.sleep(2.0)
            conn2 = await reconnect(rig, loop)
            await conn2.encrypt()
            second = bytes(await sim.find_char(await sim.discover_all(conn2), VALUE).read_value())
            await asyncio.sleep(0.3)
            await rig.disconnect()
        finally:
            restore()
            restore_diversifiers()
        keys = await rig.phone.keystore.get(str(rig.device.random_address))
        return {
            "description": "LE legacy Just Works pairing with a 7-byte key (the scale's maximum) although the phone asked "
                           "for MITM protection; the reconnection encrypts with the stored LTK, 7 bytes again",
            "service_uuid": SERVICE, "value_uuid": VALUE, "reads": [first.hex(), second.hex()],
            "stored_ltk_ediv": keys.ltk_peripheral.ediv, "stored_ltk_rand": keys.ltk_peripheral.rand.hex(),
            "seed": f"0x{LegacyShortKey.PAIRING_SEED:04x}",
        }

    @staticmethod
    def locate_capture(truth, data: bytes):
        log = diagkit.Log(data)
        (request, _s, req), = log.smp(0x01)
        (response, _s2, rsp), = log.smp(0x02)
        enables = log.commands(0x2019)
        changes = [r for r in log.events(0x08) if r.params[0] == 0]
        ediv = [int.from_bytes(e.params[10:12], "little") for e in enables]
        rand = [int.from_bytes(e.params[2:10], "little") for e in enables]
        ltk_info = log.smp(0x06)
        central_id = log.smp(0x07)
        spans = diagkit.connection_spans(log)
        truth["pairing"] = {
            "request_frame": request, "response_frame": response,
            "request": {"io_capability": req[1], "auth_req": req[3], "max_encryption_key_size": req[4]},
            "response": {"io_capability": rsp[1], "auth_req": rsp[3], "max_encryption_key_size": rsp[4]},
            "procedure": "LE legacy", "model": "Just Works", "mitm_requested": True, "bonding": True, "key_size": 7,
            "encryption_information_frame": ltk_info[0][0], "central_identification_frame": central_id[0][0],
        }
        truth["sessions"] = [
            {"enable_encryption_frame": enables[i].frame, "ediv": ediv[i], "rand": f"0x{rand[i]:016x}",
             "encryption_change_frame": changes[i].frame, "key_size": 7,
             "key_size_source": "inferred from the pairing" if i == 0 else "inferred from the bond's pairing"}
            for i in range(2)]
        truth["connections"] = spans
        truth["diagnosis"] = {
            "rules": ["SEC-08", "SEC-10", "SEC-13"],
            "findings": [
                diagkit.finding("SEC-08", "W", response, [changes[0].frame], "a 7-byte key (the scale's maximum)"),
                diagkit.finding("SEC-10", "W", request, [response], "LE legacy Just Works: the TK is 0"),
                diagkit.finding("SEC-13", "I", response, [request], "MITM asked by the phone, Just Works used; the data did not need it"),
            ],
            "not_flagged": [
                diagkit.quiet("the stored legacy LTK named by its EDIV and Rand (non-zero, as legacy keys are)",
                              [enables[1].frame], ["SEC-12"]),
                diagkit.quiet("7 bytes on both links: no downgrade", [changes[1].frame], ["SEC-09"]),
                diagkit.quiet("no debug key", [request], ["SEC-11"]),
            ],
        }


class DebugKey:
    DEVICE_ADDRESS = "D4:18:6C:2F:90:E5"
    PAIRING_SEED = 0x5EC9

    @staticmethod
    async def run(loop, out):
        rig = simfaults.rig(loop, out, "DoorSensor-dev", DebugKey.DEVICE_ADDRESS, interval_ms=30.0)
        state = Characteristic(VALUE, Characteristic.Properties.READ,
                               Characteristic.READABLE | Characteristic.READ_REQUIRES_ENCRYPTION, b"\x00")
        rig.device.add_service(Service(SERVICE, [state]))
        rig.device.pairing_config_factory = lambda _c: PairingConfig(
            sc=True, mitm=False, bonding=True, identity_address_type=PairingConfig.AddressType.RANDOM)
        rig.phone.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=False, bonding=True)
        restore = diagkit.reproducible_pairing(DebugKey.PAIRING_SEED, rig.phone, rig.device)
        # The sensor's development build: Secure Connections debug mode, the published key pair.
        rig.device.smp_manager._ecc_key = crypto.EccKey.from_private_key_bytes(DEBUG_PRIVATE_KEY)
        assert rig.device.smp_manager.ecc_key.x == DEBUG_PUBLIC_X
        try:
            conn = await rig.connect()
            await conn.pair()
            peer = await sim.discover_all(conn)
            value = bytes(await sim.find_char(peer, VALUE).read_value())
            await asyncio.sleep(0.3)
            await rig.disconnect()
        finally:
            restore()
        return {
            "description": "LE Secure Connections Just Works pairing in which the sensor sends the specification's debug "
                           "public key (Secure Connections debug mode left on)",
            "service_uuid": SERVICE, "value_uuid": VALUE, "read": value.hex(), "seed": f"0x{DebugKey.PAIRING_SEED:04x}",
            "debug_public_key_x": DEBUG_PUBLIC_X.hex(),
        }

    @staticmethod
    def locate_capture(truth, data: bytes):
        log = diagkit.Log(data)
        (request, _s, req), = log.smp(0x01)
        (response, _s2, rsp), = log.smp(0x02)
        keys = log.smp(0x0C)
        debug = [f for f, sent, p in keys if not sent and p[1:33][::-1] == DEBUG_PUBLIC_X]
        assert len(debug) == 1, keys
        changes = [r for r in log.events(0x08) if r.params[0] == 0]
        truth["pairing"] = {
            "request_frame": request, "response_frame": response, "public_key_frames": [f for f, _s, _p in keys],
            "debug_public_key_frame": debug[0], "procedure": "LE Secure Connections", "model": "Just Works",
            "bonding": True, "key_size": min(req[4], rsp[4]), "encryption_change_frame": changes[0].frame,
        }
        truth["connections"] = diagkit.connection_spans(log)
        truth["diagnosis"] = {
            "rules": ["SEC-11"],
            "findings": [diagkit.finding("SEC-11", "E", debug[0], [request], "the sensor's Pairing Public Key is the debug key")],
            "not_flagged": [
                diagkit.quiet("LE Secure Connections is not passively crackable", [request], ["SEC-10"]),
                diagkit.quiet("the link encrypts with EDIV and Rand zero", [changes[0].frame], ["SEC-12", "SEC-18"]),
                diagkit.quiet("16-byte keys", [changes[0].frame], ["SEC-08"]),
            ],
        }
