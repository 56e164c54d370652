"""Audio Sample (BR/EDR): a hands-free call, codec negotiation and its eSCO link; or (`hfp-esco-fails`) the eSCO link
that the headset refuses.

The phone (the audio gateway) pages the headset; the headset finds the phone's Handsfree Audio Gateway record (SDP,
RFCOMM channel 3) and opens RFCOMM to the phone's hands-free gateway channel
and brings the service level connection up (HFP 1.9, 4.2: AT+BRSF, AT+BAC=1,2 offering CVSD and mSBC, AT+CIND=? and ?,
AT+CMER; no three-way calling, so no AT+CHLD). A call comes in: the phone sets the call indicators (+CIEV), selects mSBC (+BCS: 2, confirmed by
AT+BCS=2, 4.11.3) and sets up the call's audio: Enhanced Setup Synchronous Connection with mSBC on the air (T2
parameters, HFP 1.9, 5.7.7). In `hfp-call` the headset accepts: Synchronous Connection Complete, eSCO on its own
handle, transparent air mode; after 1 s of call the phone removes the eSCO link (its own Disconnect, 4.14) and the
call ends; the ACL stays up and is closed later. In `hfp-esco-fails` the headset's link manager refuses the eSCO
request (0x1A Unsupported Remote Feature): Synchronous Connection Complete 0x1A, and the call has no audio on the
headset; the phone hangs up.

bumble 0.0.236 runs HFP (AgProtocol, HfProtocol) over RFCOMM on both hosts; its controller sets up the eSCO link over
its LMP model. classickit paces the ACL data and gives the eSCO link the timing a controller reports (7.5 ms interval,
60-octet packets, transparent air mode for mSBC), which bumble's model leaves at zero. BR-09 fires on the failure
(critical: no retry); nothing fires on the call.
"""

from __future__ import annotations

import asyncio

from bumble import hci, hfp, rfcomm
from bumble.core import PhysicalTransport

import classickit
import diagkit

DEVICE_ADDRESS = "00:1B:66:E1:4C:71"  # the headset's BR/EDR public address
CHANNEL = 3  # the phone's hands-free gateway RFCOMM server channel


def ag_configuration() -> hfp.AgConfiguration:
    return hfp.AgConfiguration(
        supported_ag_features=[hfp.AgFeature.CODEC_NEGOTIATION,
                               hfp.AgFeature.ENHANCED_CALL_STATUS, hfp.AgFeature.EXTENDED_ERROR_RESULT_CODES],
        supported_ag_indicators=[hfp.AgIndicatorState.call(), hfp.AgIndicatorState.callsetup(), hfp.AgIndicatorState.service(),
                                 hfp.AgIndicatorState.signal(), hfp.AgIndicatorState.roam(), hfp.AgIndicatorState.battchg(),
                                 hfp.AgIndicatorState.callheld()],
        supported_hf_indicators=[],
        supported_ag_call_hold_operations=[hfp.CallHoldOperation.RELEASE_ALL_HELD_CALLS,
                                           hfp.CallHoldOperation.RELEASE_ALL_ACTIVE_CALLS, hfp.CallHoldOperation.HOLD_ALL_ACTIVE_CALLS],
        supported_audio_codecs=[hfp.AudioCodec.CVSD, hfp.AudioCodec.MSBC],
    )


def hf_configuration() -> hfp.HfConfiguration:
    return hfp.HfConfiguration(
        supported_hf_features=[hfp.HfFeature.CODEC_NEGOTIATION,
                               hfp.HfFeature.ENHANCED_CALL_STATUS, hfp.HfFeature.REMOTE_VOLUME_CONTROL],
        supported_hf_indicators=[],
        supported_audio_codecs=[hfp.AudioCodec.CVSD, hfp.AudioCodec.MSBC],
    )


class Scenario:
    def __init__(self, esco_fails: bool):
        self.esco_fails = esco_fails
        self.DEVICE_ADDRESS = DEVICE_ADDRESS

    async def run(self, loop, out):
        rig = classickit.rig(loop, out, "Headset 11", DEVICE_ADDRESS)
        ag_ready = loop.create_future()

        def on_dlc(dlc):
            ag = hfp.AgProtocol(dlc, ag_configuration())
            ag.once("slc_complete", lambda: ag_ready.set_result(ag))
        server = rfcomm.Server(rig.phone)
        server.listen(on_dlc, CHANNEL)
        rig.phone.sdp_service_records = {0x00010001: hfp.make_ag_sdp_records(0x00010001, CHANNEL, ag_configuration())}

        if self.esco_fails:
            rig.phone_ctl.refuse_esco = hci.HCI_ErrorCode.UNSUPPORTED_REMOTE_FEATURE_ERROR

        async def on_sco_request(connection, link_type):
            params = hfp.ESCO_PARAMETERS[hfp.DefaultCodecParameters.ESCO_MSBC_T2]
            await rig.device.send_command(
                hci.HCI_Enhanced_Accept_Synchronous_Connection_Request_Command(bd_addr=connection.peer_address, **params.asdict()))
        rig.device.on("sco_request", lambda c, t: asyncio.ensure_future(on_sco_request(c, t)))

        await rig.phone.power_on()
        await rig.device.power_on()
        await asyncio.sleep(0.4)
        conn = await rig.phone.connect(hci.Address(DEVICE_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS), transport=PhysicalTransport.BR_EDR)
        # The headset finds the phone's link and opens the hands-free channel.
        headset_conn = rig.device.find_connection_by_bd_addr(rig.phone.public_address, transport=PhysicalTransport.BR_EDR)
        found = await hfp.find_ag_sdp_record(headset_conn)
        assert found is not None and found[0] == CHANNEL, found
        mux = await rfcomm.Client(headset_conn).start()
        dlc = await mux.open_dlc(found[0])
        hf = hfp.HfProtocol(dlc, hf_configuration())
        asyncio.ensure_future(hf.run())  # the SLC, then the unsolicited results
        ag = await ag_ready
        await asyncio.sleep(0.5)
        # A call comes in: ringing, answered.
        ag.update_ag_indicator(hfp.AgIndicator.CALL_SETUP, 1)
        await asyncio.sleep(0.3)
        ag.update_ag_indicator(hfp.AgIndicator.CALL, 1)
        ag.update_ag_indicator(hfp.AgIndicator.CALL_SETUP, 0)
        await ag.negotiate_codec(hfp.AudioCodec.MSBC)
        params = hfp.ESCO_PARAMETERS[hfp.DefaultCodecParameters.ESCO_MSBC_T2]
        result = loop.create_future()
        rig.phone.once("sco_connection", lambda link: result.done() or result.set_result(link))
        rig.phone.once("sco_connection_failure", lambda status: result.done() or result.set_result(status))
        await rig.phone.send_command(
            hci.HCI_Enhanced_Setup_Synchronous_Connection_Command(connection_handle=conn.handle, **params.asdict()))
        outcome = await result
        truth = {"description": self.description(), "codec_selected": "mSBC", "available_codecs": ["CVSD", "mSBC"]}
        if isinstance(outcome, int):
            truth["esco_status"] = outcome
            await asyncio.sleep(1.0)
        else:
            truth["esco_status"] = 0
            await asyncio.sleep(1.0)  # the call
            await outcome.disconnect()
        ag.update_ag_indicator(hfp.AgIndicator.CALL, 0)
        await asyncio.sleep(0.5)
        ended = loop.create_future()
        conn.on("disconnection", ended.set_result)
        await conn.disconnect()
        await ended
        await asyncio.sleep(0.1)
        return truth

    def description(self) -> str:
        if self.esco_fails:
            return ("BR/EDR hands-free call: SLC up, mSBC selected, the headset refuses the eSCO link (0x1A Unsupported "
                    "Remote Feature): no audio on the headset")
        return "BR/EDR hands-free call: SLC up, mSBC selected and confirmed, eSCO link (transparent) for 1 s, removed"

    def locate_capture(self, truth, data: bytes):
        log = diagkit.Log(data)
        complete = log.events(0x03)
        assert len(complete) == 1 and complete[0].params[0] == 0, complete
        acl = int.from_bytes(complete[0].params[1:3], "little")
        setup = log.commands(0x043D)
        sync = log.events(0x2C)
        assert len(setup) == 1 and len(sync) == 1, (setup, sync)
        s = sync[0].params
        truth["connection"] = {"complete_frame": complete[0].frame, "connection_handle": acl, "peer_address": DEVICE_ADDRESS}
        truth["esco"] = {"setup_frame": setup[0].frame, "complete_frame": sync[0].frame, "status": s[0],
                         "handle": int.from_bytes(s[1:3], "little") if s[0] == 0 else None, "link_type": s[9], "air_mode": s[16]}
        removals = [e for e in log.events(0x05) if int.from_bytes(e.params[1:3], "little") != acl]
        ends = [e for e in log.events(0x05) if int.from_bytes(e.params[1:3], "little") == acl]
        truth["esco"]["removed_frame"] = removals[0].frame if removals else None
        truth["connection"]["end_frame"] = ends[0].frame
        at = [(f, p) for f, sent, cid, p in log.l2cap if cid not in (0x0001,) and b"+BCS" in p]
        truth["hfp"] = {"bcs_frames": [f for f, _ in at]}
        if self.esco_fails:
            truth["diagnosis"] = {"rules": ["BR-09"], "findings": [diagkit.finding(
                "BR-09", "C", sync[0].frame, [setup[0].frame],
                f"the eSCO link to {DEVICE_ADDRESS} failed (0x1A Unsupported Remote Feature) when mSBC was asked; no retry")]}
        else:
            truth["diagnosis"] = {"rules": [], "findings": [], "not_flagged": [
                diagkit.quiet("the eSCO removal: the call's audio ends, not the link", [truth["esco"]["removed_frame"]], ["DC-01", "DC-02", "BR-09"]),
                diagkit.quiet("mSBC selected and used", truth["hfp"]["bcs_frames"], ["BR-11", "BR-12"])]}


CALL = Scenario(esco_fails=False)
ESCO_FAILS = Scenario(esco_fails=True)
