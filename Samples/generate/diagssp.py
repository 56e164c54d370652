"""Diagnosis Sample (BR/EDR): Secure Simple Pairing fails after the phone finds it has no link key.

The phone had paired with a car kit; its bond was removed on the phone (the car kit still holds its own). The phone
pages the car kit (Create Connection, Connection Complete), asks its name, and asks for authentication (Authentication
Requested). Its controller asks the host for the stored key (Link Key Request, Core Vol 4, Part E, 7.7.23); the host
has none: Link Key Request Negative Reply. Simple Pairing starts: IO Capability Request, the phone's IO Capability
Request Reply (display + yes/no, general bonding with MITM), the car kit's IO Capability Response (display + yes/no):
numeric comparison (Vol 3, Part C, 5.2.2.6); User Confirmation Request with the six digits. The car kit's host
refuses to pair outside its pairing menu (its User Confirmation Request Negative Reply), so the phone's controller
reports Simple Pairing Complete 0x05 Authentication Failure and Authentication Complete 0x05. The phone then closes
the link (Disconnect 0x05 Authentication Failure, as Android's security manager does; Disconnection Complete 0x16).

bumble 0.0.236 drives the BR/EDR link and Simple Pairing over its LMP model (controller.py); simfaults adds the Link
Key Request its controller leaves out, LMP timing, and 0x16 for this side's Disconnect. Rule BR-03 (error).
"""

from __future__ import annotations

import asyncio

from bumble import hci
from bumble.core import PhysicalTransport
from bumble.pairing import PairingConfig, PairingDelegate

import diagkit
import simfaults

DEVICE_ADDRESS = "00:1B:DC:4F:62:A8"  # a BR/EDR public address (the car kit's)
CAR_REFUSES_AFTER_S = 0.8


class CarKit(PairingDelegate):
    """The car kit's host: a display and a yes/no button; it refuses pairing outside its pairing menu."""

    def __init__(self):
        super().__init__(io_capability=PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT)
        self.asked: list[int] = []

    async def compare_numbers(self, number: int, digits: int) -> bool:
        self.asked.append(number)
        await asyncio.sleep(CAR_REFUSES_AFTER_S)
        return False


class PhoneUser(PairingDelegate):
    """The phone shows the pairing dialog; the user is still reading the digits when the pairing fails."""

    def __init__(self, loop):
        super().__init__(io_capability=PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT)
        self.shown: list[int] = []
        self.answer = loop.create_future()  # never set: the dialog is dismissed by the failure

    async def compare_numbers(self, number: int, digits: int) -> bool:
        self.shown.append(number)
        return await self.answer


async def run(loop, out):
    rig = simfaults.rig(loop, out, "CarKit 7", DEVICE_ADDRESS, interval_ms=30.0)
    car, user = CarKit(), PhoneUser(loop)
    rig.device.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True, delegate=car)
    rig.phone.pairing_config_factory = lambda _c: PairingConfig(sc=True, mitm=True, bonding=True, delegate=user)
    for device in (rig.phone, rig.device):
        device.classic_enabled = True
    rig.device.connectable = True
    await rig.phone.power_on()
    await rig.device.power_on()
    await asyncio.sleep(0.4)  # the user picks the car kit in the Bluetooth settings
    conn = await rig.phone.connect(hci.Address(DEVICE_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS), transport=PhysicalTransport.BR_EDR)
    name = await rig.phone.request_remote_name(conn)
    ended = loop.create_future()
    conn.on("disconnection", ended.set_result)
    try:
        await rig.phone.authenticate(conn)
        raise AssertionError("the pairing should fail")
    except hci.HCI_Error as error:
        failure = error.error_code
    await asyncio.sleep(0.3)
    await conn.disconnect(reason=hci.HCI_ErrorCode.AUTHENTICATION_FAILURE_ERROR)
    reason = await ended
    await asyncio.sleep(0.2)
    assert failure == hci.HCI_ErrorCode.AUTHENTICATION_FAILURE_ERROR and len(car.asked) == 1, (failure, car.asked)
    return {
        "description": "BR/EDR: the phone has no link key for the car kit (Link Key Request Negative Reply); Secure "
                       "Simple Pairing (numeric comparison) follows and the car kit refuses it: Simple Pairing "
                       "Complete and Authentication Complete 0x05; the phone disconnects",
        "remote_name": name, "numeric_value": car.asked[0], "shown_on_the_phone": user.shown,
        "authentication_status": failure, "disconnection_reason_reported": int(reason),
    }


EVENTS = {0x03: "Connection Complete", 0x06: "Authentication Complete", 0x17: "Link Key Request",
          0x31: "IO Capability Request", 0x32: "IO Capability Response", 0x33: "User Confirmation Request",
          0x36: "Simple Pairing Complete", 0x05: "Disconnection Complete"}
COMMANDS = {0x0405: "Create Connection", 0x0411: "Authentication Requested", 0x040C: "Link Key Request Negative Reply",
            0x042B: "IO Capability Request Reply", 0x0406: "Disconnect"}


def locate_capture(truth, data: bytes):
    log = diagkit.Log(data)

    def one_event(code):
        found = log.events(code)
        assert len(found) == 1, (code, found)
        return found[0]

    def one_command(opcode):
        found = log.commands(opcode)
        assert len(found) == 1, (opcode, found)
        return found[0]

    complete = one_event(0x03)
    handle = int.from_bytes(complete.params[1:3], "little")
    assert complete.params[0] == 0 and complete.params[9] == 0x01  # success, ACL
    chain = {name: one_command(op).frame for op, name in COMMANDS.items()}
    chain.update({name: one_event(code).frame for code, name in EVENTS.items()})
    ssp, auth, end = one_event(0x36), one_event(0x06), one_event(0x05)
    assert ssp.params[0] == 0x05 and auth.params[0] == 0x05 and end.params[3] == 0x16
    io_response = one_event(0x32)
    order = [chain[k] for k in ("Create Connection", "Connection Complete", "Authentication Requested",
                                "Link Key Request", "Link Key Request Negative Reply", "IO Capability Request",
                                "IO Capability Request Reply", "IO Capability Response", "User Confirmation Request",
                                "Simple Pairing Complete", "Authentication Complete", "Disconnect",
                                "Disconnection Complete")]
    assert order == sorted(order), order
    disconnect = one_command(0x0406)
    truth["connection"] = {"create_frame": chain["Create Connection"], "complete_frame": complete.frame,
                           "connection_handle": handle, "peer_address": DEVICE_ADDRESS, "link_type": "ACL"}
    truth["pairing"] = {"frames": chain, "peer_io_capability": io_response.params[6],
                        "simple_pairing_complete": {"frame": ssp.frame, "status": ssp.params[0],
                                                    "status_name": diagkit.HCI_ERRORS[ssp.params[0]]},
                        "authentication_complete": {"frame": auth.frame, "status": auth.params[0],
                                                    "connection_handle": int.from_bytes(auth.params[1:3], "little")}}
    truth["teardown"] = {"disconnect_frame": disconnect.frame, "disconnect_reason": disconnect.params[2],
                         "end": diagkit.disconnection(end)}
    cited = [chain[k] for k in ("Link Key Request", "Link Key Request Negative Reply", "IO Capability Request",
                                "IO Capability Response")]
    truth["diagnosis"] = {
        "rules": ["BR-03"],
        "findings": [
            diagkit.finding("BR-03", "E", ssp.frame, cited,
                            f"Secure Simple Pairing with {DEVICE_ADDRESS} failed (0x05 Authentication Failure at "
                            f"#{ssp.frame}, Authentication Complete 0x05 at #{auth.frame}) after this side said it had "
                            f"no link key (Link Key Request #{chain['Link Key Request']}, Negative Reply "
                            f"#{chain['Link Key Request Negative Reply']}); IO capabilities #{chain['IO Capability Request']}"
                            f"-#{chain['IO Capability Response']}"),
        ],
        "deciding_frame_note": "BR-03's deciding frame is the Simple Pairing Complete; the Authentication Complete that "
                               "follows is the same failure (one finding, not a second one under BR-04)",
        "not_flagged": [
            diagkit.quiet("the Authentication Complete 0x05 of the same failed pairing: no missing-bond finding "
                          "(a pairing was attempted)", [auth.frame], ["BR-04"]),
            diagkit.quiet("this side's own Disconnect after the failure", [end.frame], ["DC-02", "DC-01", "DC-04"]),
        ],
    }
