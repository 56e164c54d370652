#!/usr/bin/env python3
"""diagnosis_truth.py: what went wrong in each capture, read by tshark, never by blescope.

Usage: scripts/diagnosis_truth.py [--base-name] CAPTURE|DIR...
Directories are walked recursively; a file in one is read when its first bytes are a btsnoop, pcap,
pcapng or gzip header or its name ends in .pklg. Python 3 standard library only; needs `tshark`
(4.0.17 here). scripts/diagnosis_truth_selftest.py checks the classes no real capture shows.

Output: one JSON object per capture per line, events sorted by frame (then class):
  {"file": PATH, "tshark": "4.0.17", "records": N, "events": [
     {"class": CLASS, "frame": N, "severity": "critical|error|warning|info",
      ...class fields...}, ...]}
`records` is the number of frames tshark read. `--base-name` writes `file` as the base name (the
committed Tests/Truth/diagnosis/*.jsonl). A file tshark cannot read gives {"file": PATH, "error":
"..."} and exit status 1 at the end; a file tshark reads only in part (cut short) also carries
"tshark_error". Codes, handles and opcodes are integers, times are seconds, a missing fact is null.
`adapter` (Linux monitor datalink only) keeps the handles of several controllers apart; air
captures carry `access_address` and `direction` "c2p"/"p2c": tshark's, or where tshark shows
"Unknown" (LT 256/PPI carry no direction) "c2p" for a PDU that opens a connection event, else
null. Opening an event (Core Vol 6, Part B, 4.5.1: the central transmits first in each connection
event, then the two alternate T_IFS = 150 us apart): the PDU starts more than 3 ms after the
previous packet on its access address (longer than T_IFS + the longest LE 1M/2M packet, 2.12 ms),
or is the first after the connect request; Coded PHY (longer packets) is not handled, nor a
capture's air frames from the first whose timestamp goes backwards on (their direction stays null;
the frames before keep a consistent clock).

Classes and fields (frame = the frame of the event named):
  connection-failed   LE (Enhanced v1/v2) Connection Complete, status != 0: status, peer (null when
                      absent or all zero), create_frame (last LE (Extended) Create Connection not
                      ended by a complete or a failed Command Status), cancel_frame (LE Create
                      Connection Cancel after it), cancel_seconds (create to cancel),
                      attempt_seconds (create to complete), removed (devices the host removed
                      from the filter accept list within 1 s after, before the next create; absent
                      when none), removed_added_seconds (the one device removed: its add to the
                      cancel), benign (see SEVERITY).
  establishment-failed  Disconnection Complete reason 0x3E: handle, connect_frame.
  disconnection       every Disconnection Complete: handle, status, reason, local_command_frame
                      (HCI Disconnect for the handle since it opened), local_reason, connect_frame,
                      seconds_since_connect, quality_report_frame (last link-quality BQR for the
                      handle since it opened). Air: LL_TERMINATE_IND, reason = its error code; a
                      c2p terminate is the central's own command (local_command_frame = frame).
  command-error       Command Status/Complete status != 0: opcode (as in the event), status,
                      command_frame. Vendor and new opcodes tshark leaves undecoded: status = first
                      return byte. Qualcomm answers an unknown vendor command with opcode 0xFFFF:
                      that answers the oldest waiting vendor (OGF 0x3F) command.
  command-unanswered  a command never answered (Command Status/Complete for its opcode) while the
                      capture, or the HCI Reset that flushed it, runs on 2 s or more: opcode.
                      Skipped: 0x0C35 (never answered by design), OGFs the spec does not define
                      (PacketLogger logs host-internal OGF 0x3D records). A late answer (> 2 s) is
                      not an event; it is noted on stderr. A status 0x01 (Unknown HCI
                      Command), or 0x11/0x12 on a vendor command (OGF 0x3F or the 0xFFFF answer),
                      is the host probing the controller: info, benign "capability probing".
  encryption-error / encryption-started  Encryption Change v1 0x08 and v2 0x59, status != 0 / 0:
                      handle, status / handle, enabled.
  ltk-negative-reply  command 0x201B: handle.
  pairing-failed      SMP Pairing Failed: reason, direction (sent/received; c2p/p2c on air),
                      handle (connection handle; null on air).
  att-error           ATT Error Response: request_opcode, handle (attribute), error, discovery_end
  cccd-write-command  Write Command (0x52) to a descriptor tshark names Client Characteristic Configuration
                      (0x2902, known from the discovery in the capture): handle, honoured_frame (the
                      first notification or indication on its characteristic, handle - 1, after it: the
                      server honoured the write; info), value
                      (0x0A answering 0x04/0x06/0x08/0x10; 0x10 answering 0x10), direction, connection_handle.
  conn-update-rejected  L2CAP LE Connection Parameter Update Response result != 0 (result,
                      handle, direction), LE Connection Update Complete status != 0 (status,
                      handle), command 0x2021 (reason, handle).
  phy-update-failed   LE PHY Update Complete status != 0: status, handle.
  hardware-error      event 0x10: code.       data-buffer-overflow   event 0x1A: link_type.
  authenticated-payload-timeout  event 0x57: handle.
  quality-report      Android BQR (event 0xFF, first parameter 0x58): report_id, handle, rssi (dBm,
                      signed) from the raw bytes: id, packet type, handle u16, role, tx power s8,
                      rssi s8, ... (AOSP HCI requirements; bumble vendor/android/hci.py). Energy
                      Monitor 0x06 and RF Stats 0x09 have another layout with no handle or RSSI
                      (AOSP BluetoothQualityReport parses them from offset 1; bumble wrongly parses
                      0x09 as link quality): handle and rssi are null.
  hci-reset           command 0x0C03: open_links (links opened in the capture, not closed, on its
                      adapter: the Reset drops them; 0 is benign "no open link").
  page-timeout        BR/EDR Connection Complete (0x03) status 0x04, folded per device: frame = the
                      first, peer, count, last_frame, frames, create_frame (last Create Connection
                      0x0405 to the peer before the first).
  bredr-connection-failed  Connection Complete (0x03) / Synchronous Connection Complete (0x2C)
                      status != 0 and != 0x04: status, peer, link_type (ACL/SCO/eSCO), create_frame.
                      0x02/0x16 (this host cancelled) benign "host cancel".
  bredr-auth-failed   Simple Pairing Complete (0x36) or Authentication Complete (0x06) status != 0:
                      source, status, peer, handle, pairing ("ssp"/"legacy"/null), the chain since the
                      peer's last Link Key Request (0x17): link_key_request_frame, link_key_answer
                      ("reply" 0x040B / "negative-reply" 0x040C), link_key_answer_frame,
                      pin_code_request_frame (0x16), io_capability_request/response_frame (0x31/
                      0x32), user_confirmation/passkey_request_frame (0x33/0x34), and
                      authentication_complete_frame: the Authentication Complete failing within 2 s
                      of a failed Simple Pairing Complete of the peer is the same failure, folded.
  link-key-missing    Authentication Complete 0x06 PIN or Key Missing, or 0x05 with no pairing
                      (IO capabilities, PIN code) since the host's link key answer (a key refused or
                      none given): the same fields but the pairing ones. Also a BR/EDR Disconnection
                      Complete 0x05/0x06 after a link key answer with no pairing and no failed
                      Authentication Complete just before it (source disconnection-complete).
  timestamp-step-back a record stamped earlier than the one before it: step_seconds; under 10 ms is
                      benign "clock jitter".
  cis-failed          LE CIS Established v1 (0x19) / v2 (0x2A) status != 0: status, handle (the CIS).
  big-failed / big-sync-failed  LE Create BIG Complete (0x1B) / LE BIG Sync Established (0x1D)
                      status != 0: status, big_handle.
  big-sync-lost       LE BIG Sync Lost (0x1E): big_handle, reason (0x16: the host terminated it).
  ll-reject           air: LL_REJECT_IND / LL_REJECT_EXT_IND: reason, rejected_opcode (null for
                      LL_REJECT_IND), direction, redone_frame: for a collision (0x23, 0x2A; Vol 6,
                      Part B, 5.3) the later PDU on the link that completes the rejected procedure
                      (LL_LENGTH_RSP for LL_LENGTH_REQ, ...): benign "procedure redone".
  ll-control-malformed  air: an LL control PDU whose Length is not 1 + the CtrData size of its
                      opcode (Core v5.4 Vol 6, Part B, 2.4.2.1-2.4.2.37; +4 allowed for a MIC left
                      on a decrypted PDU): opcode, length, expected_length, direction. It is not the
                      PDU its opcode names, so no ll-reject or disconnection is made of it (tshark
                      reads an over-long LL_REJECT_EXT_IND's first two octets as a reject).
  smp-timeout         an SMP pairing whose Security Manager Timer ran out (Core Vol 3, Part H,
                      3.4): each side's timer starts at a Pairing Request sent or received and
                      restarts when the side sends an SMP command; 30 s on either timer before the
                      pairing completes is a failed pairing. Complete (Part H 2.1, 3.6.1): the link
                      is encrypted (HCI Encryption Change on; air: the peripheral's
                      LL_START_ENC_RSP, Vol 6, Part B, 5.1.3.1) and every key PDU the Pairing
                      Response's Key Distribution fields ask for was sent (EncKey 2, ignored under
                      Secure Connections; IdKey 2; SignKey 1). Pairing Failed ends it (its own
                      class). frame = the Pairing Request; silent_side (the side whose timer ran
                      out; null when both last restarted at the same PDU), last_frame (its last
                      SMP command), silent_seconds (from there to next_frame, the next fact on the
                      link, or to the end of the capture), handle or access_address. A PDU whose
                      sender the capture does not say restarts both timers (a time-out may be
                      missed, none invented).
  pairing-unfinished  a pairing neither complete, failed nor timed out when: the link ended
                      (end "ended": Disconnection Complete, LL_TERMINATE_IND, HCI Reset),
                      a new connect request reused the access address ("connected-again"),
                      the link turned encrypted beyond what the truth can read ("unreadable"), a
                      new Pairing Request restarted it ("restarted"), the capture's clock went
                      backwards ("clock-backwards": no timer can be measured), or the capture
                      ended within 30 s ("capture-end"): end, end_frame, handle or access_address.
How: pass 1 `tshark -T fields` over every frame (ACL, L2CAP, ATT, SMP, link layer); pass 2
`tshark -Y "bthci_cmd || bthci_evt" -T json -x`: tshark's fields plus the raw command/event bytes,
decoded here where tshark 4.0 shows "Unknown" (0x59, LE Meta 0x29, 0xFF, vendor Command Complete)
and compared with tshark's field where both exist (a difference is printed on stderr as "tshark
disagrees"; none on the captures below). PPI captures with user DLT 147 (crackle, Ubertooth) are
decoded as btle through Wireshark's DLT_USER preference. Air frames tshark can only dissect as
nonsense are skipped and counted on stderr: a bad CRC (nRF flag, RF header flag, tshark's check),
and encrypted PDUs not decrypted (nRF encrypted without MIC OK; LT 256/251/PPI: every non-empty
PDU after LL_START_ENC_REQ, unless the first is a 1-byte LL_START_ENC_RSP - decrypted offline - or
the RF header says decrypted). A CONNECT_IND / AUX_CONNECT_REQ starts its access address's air state
over (SweynTooth's tester reuses one access address for every connection).

Real examples (tshark 4.0.17; S = ../shared/captures, C = the public corpus (corpus/README.md, extracted by corpus/fetch.sh);
* = checked by hand against `tshark -V` or the raw bytes against the spec layout):
  connection-failed   critical S android-btsnoop_pixel8-pongbot-...log.last #5875* (0x02, cancel
                      30.0 s after create #5862*, cancel #5872*); info "host cancel" same #204,
                      "background connect restarted" same #1074 (212.7 s); critical C
                      android-btsnoop_blueprobe-unisoc-echo-auto-...-12.log #17599* (cancel 0.05 s
                      after the create #17592* re-issued after LE Set Random Address #17589*;
                      04:da:28:4d:cd:62 added #17028* 30.0 s before the cancel, removed #17601*).
  establishment-failed  critical S pongbot #5772* (connect #5753*).
  disconnection       critical S pongbot #1558* (0x08); info S pongbot #8007* (0x16 after local
                      Disconnect 0x15 #7986*); error S android-btsnoop-cfa_oppo-...cfa #969 (0x13);
                      air info S lell-rf-lt256-pcapng-named-pcap_whad-gatt-discovery.pcap #175* (c2p
                      0x13), air error C ppi-btle-lt192_crackle-legacy-pairing-decrypted-by-crackle
                      .pcap #713* (0x13, direction unknown), air critical C nrfsniffer-lt272-pcap-
                      named-pcapng_sweyntooth-telink-ll-reject-06-mic-failure-3d.pcapng #172*
                      (0x3D).
  command-error       S oppo cfa #318* (Sniff Subrating 0x0811, 0x1A); S pongbot #104 (vendor
                      0xFC17, 0x01, raw); C android-btsnoop_blefun-18k-att-notify-stream.log #22*
                      (opcode 0xFFFF answering vendor 0xFD53 #21*).
  encryption-started  S pongbot #1115* (v2 0x59, raw 00 4400 01 10); S pklg-ios-le_even-g2-
                      glasses-discovery-indicate.pklg #224* (v2 on iOS; handle 0x45 opened by
                      LE Meta 0x29 #207*, decoded from raw against Core v5.4 7.7.65.10).
  pairing-failed      C android-btsnoop-cfa_robam-appliance-ota-fff0-writecmd.cfa #13108* (0x05,
                      sent); air C nrfsniffer-lt272_sweyntooth-nxp-llid-deadlock.pcap #29* (0x08,
                      p2c).
  att-error           error S pcapng-lt201-h4phdr_airbily-smartwatch.pcapng #243* (Write Request,
                      0x01, sent); info (discovery end) S android-btsnoop_horizon74-...log #582*.
  conn-update-rejected  C android-btsnooz-cut_mi-watch-lite-qcom-ble-acl-10b.btsnoop #488*
                      (0x2021, 0x3B); C android-btsnoop_bk300-conn-update-complete-err-20.log
                      #400* (LE Connection Update Complete 0x20). No real L2CAP result != 0.
  quality-report      warning S pongbot #1555* (0x02 approach LSTO, handle 0x43, -64 dBm), #5768*
                      (-127 dBm on a link that never came up); info S oppo cfa #6* (0x01, -53 dBm),
                      S pongbot #1455 (0x06 energy monitor), #1556 (0x09 RF stats).
  hci-reset           S pongbot #1*.
  ll-reject           error S nrfsniffer-lt272_surplife-led-ll-fragmentation.pcapng #10762*
                      (LL_REJECT_EXT_IND, LL_LENGTH_REQ, 0x2A); critical C nrfsniffer-lt272-pcap-
                      named-pcapng_sweyntooth-telink-invalid-ctrl-pdu-enc-loop.pcapng #402*
                      (LL_REJECT_IND 0x06).
  smp-timeout         error C android-btsnoop_lightctl-2h-le-att-empty-appearance.log #48019*
                      (LESC numeric comparison: the phone sent nothing after its Pairing Random
                      #48057 for 30.7 s, the next Pairing Request #48427), #50200*.
  ll-control-malformed  C nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-cypress-psoc6-llid-crash-
                      pairing-loop.pcapng #1990* (LL_REJECT_EXT_IND, Length 21 for 3).
  page-timeout        warning S pongbot #367* (d8:80:3c:e8:72:69, 199 times to #7876, create #197),
                      #399* (30:95:e3:b8:69:8c, 30 times).
  bredr-auth-failed   error C android-btsnoop_novax-escooter-supervision-timeout-08.log #2807* (Simple
                      Pairing Complete 0x05 after Link Key Request #2685, Negative Reply #2764).
  bredr-connection-failed  warning C android-btsnoop-cfa_zabbits-bredr-conn-accept-timeout-10.cfa
                      #187* (0x10).
  benign              capability probing S pongbot #104 (vendor 0xFC17, 0x01); procedure redone S
                      Surplife #10762* (LL_LENGTH_REQ rejected 0x2A, LL_LENGTH_RSP #10789*); clock
                      jitter C novax #2662 (37 us).
  No real capture shows: link-key-missing, command-unanswered, encryption-error, ltk-negative-reply,
  phy-update-failed, hardware-error, data-buffer-overflow, authenticated-payload-timeout (the
  self-test covers them, and LE Connection Update / L2CAP rejections, with spec-layout bytes).
"""

import json
import os
import subprocess
import sys

from diagnosis_truth_air import FIELDS as AIR_FIELDS, air_link_ends
from diagnosis_truth_bredr import procedures_redone, timestamp_steps
from diagnosis_truth_events import Truth, number
from diagnosis_truth_security import SEVERITY as SECURITY_SEVERITY, security_events

# Severity table: (class, condition, severity, catalogue rule ids in ../shared/diagnosis-rules.md).
# The first row whose class matches and whose condition holds gives the severity.
REMOTE_REASONS = {0x13, 0x14, 0x15, 0x05, 0x1A, 0x23, 0x2A}
ALARMING_BQR = {0x02, 0x03, 0x04, 0x05, 0x07, 0x08}  # HH-05 ids; 0x01/0x06/0x09 are periodic stats
SEVERITY = [
    # A 0x02 complete follows the host's LE Create Connection Cancel. Android cancels itself when
    # its 30 s direct-connect timer fires (CE-01, AOSP DIRECT_CONNECT_TIMEOUT); a cancel well
    # before it is the app's or the stack's choice, and one long after it restarts a background
    # (accept-list) connect that has no timer: neither is a failure the user saw.
    # Android's timer runs from the device's add to the accept list, across the creates the stack
    # re-issues meanwhile (an address rotation: LE Set Random Address between two attempts); on
    # expiry it cancels and removes that one device (AOSP le_impl.h, on_create_connection_timeout).
    ("connection-failed", lambda e: e["status"] == 0x02 and e["cancel_frame"] is not None
     and 25 <= (e.get("removed_added_seconds") or 0) <= 35, "critical",
     "CE-01 (the one device removed after the cancel was added 25-35 s before it)"),
    ("connection-failed", lambda e: e["status"] == 0x02 and e["cancel_frame"] is not None
     and (e["cancel_seconds"] is None or e["cancel_seconds"] < 25), "info",
     "CE-01 benign (section 5): host cancel well before 30 s, or create not in the capture",
     "host cancel"),
    ("connection-failed", lambda e: e["status"] == 0x02 and e["cancel_frame"] is not None
     and e["cancel_seconds"] > 35, "info",
     "CE-01 benign: host restarted a background connect long after any 30 s timer",
     "background connect restarted"),
    ("connection-failed", None, "critical", "CE-01 (cancel 25-35 s after create; other status)"),
    ("establishment-failed", None, "critical", "CE-02"),
    ("disconnection", lambda e: e["reason"] == 0x08, "critical", "DC-01"),
    # 0x22 after this side's own Disconnect: the procedure that timed out is the termination the peer never
    # acknowledged (LL_TERMINATE_IND, Vol 6, Part B, 5.1.6); the link this side closed is closed.
    ("disconnection", lambda e: e["reason"] == 0x22 and e["local_command_frame"] is not None, "info",
     "DC-04 benign: the termination this side asked for was never acknowledged", "termination unacknowledged"),
    ("disconnection", lambda e: e["reason"] == 0x22, "critical", "DC-04"),
    ("disconnection", lambda e: e["reason"] == 0x28, "critical", "DC-05"),
    ("disconnection", lambda e: e["reason"] == 0x3D, "critical", "DC-07"),
    ("disconnection", lambda e: e["reason"] in REMOTE_REASONS and e["local_command_frame"] is None,
     "error", "DC-02 / CE-04 (0x13-0x15, 0x05, 0x1A) / DC-06 (0x23, 0x2A)"),
    ("disconnection", lambda e: e["reason"] == 0x16 and e["local_command_frame"] is not None
     and e["local_reason"] in (0x13, 0x15), "info", "DC-03 benign: user or power off"),
    ("disconnection", lambda e: e["reason"] == 0x16 and e["local_command_frame"] is not None,
     "warning", "DC-03"),
    ("disconnection", None, "info", "DC-* context (0x3E is carried by establishment-failed)"),
    ("encryption-error", lambda e: e["status"] in (0x05, 0x06), "critical", "SEC-01 (BR/EDR: BR-05)"),
    ("encryption-error", None, "error", "SEC-01 family (hcidoc LongTermKeyMismatch: any status)"),
    ("pairing-failed", None, "critical", "SEC-03"),
    ("smp-timeout", None, "error", "SEC-04 (the SMP timer ran out: the pairing failed)"),
    ("pairing-unfinished", None, "info",
     "SEC-04 context: the link ended, or the capture ended or turned unreadable, first"),
    ("hardware-error", None, "critical", "HH-02"),
    ("command-unanswered", None, "critical", "HH-01"),
    # A command the controller does not know (0x01), or a vendor command (OGF 0x3F, or the 0xFFFF Qualcomm answers
    # with) refused as unsupported (0x11) or with parameters it does not take (0x12): the host probing what the
    # controller supports (Android's stack sends its vendor commands to every controller). Nothing was lost.
    ("command-error", lambda e: e["status"] == 0x01 or (e["opcode"] >> 10 == 0x3F and e["status"] in (0x11, 0x12)),
     "info", "HH-04 benign: the host probing the controller's capabilities", "capability probing"),
    ("command-error", None, "error", "HH-04 (catalogue: W) / CE-03 / CE-05 / LP-04"),
    ("ll-reject", lambda e: e["rejected_opcode"] in (0x03, None) and e["reason"] in (0x05, 0x06),
     "critical", "SEC-01 (air: LL_ENC_REQ rejected, key missing)"),
    # A collision (0x23/0x2A, Vol 6, Part B, 5.3) whose procedure was run again and completed on the same link.
    ("ll-reject", lambda e: e["redone_frame"] is not None, "info",
     "LP-05 / DC-06 benign: the procedure was redone and completed", "procedure redone"),
    ("ll-reject", None, "error", "LP-05 / DC-06 (air analogue of command-error)"),
    ("att-error", lambda e: e["discovery_end"], "info", "GATT-08 suppressed: end of discovery"),
    ("att-error", None, "error", "GATT-08 / SEC-05 / GATT-04 / GATT-06"),
    ("ltk-negative-reply", None, "error", "SEC-02 (catalogue: C)"),
    ("cccd-write-command", lambda e: e["honoured_frame"] is not None, "info",
     "GATT-03 info: the server honoured it (a notification or indication on its characteristic followed)"),
    ("cccd-write-command", None, "error", "GATT-03 (a CCCD written without response)"),
    ("phy-update-failed", None, "error", "LP-04"),
    ("data-buffer-overflow", None, "error", "TP-02"),
    ("conn-update-rejected", None, "warning", "LP-01"),
    ("quality-report", lambda e: e["report_id"] in ALARMING_BQR, "warning", "HH-05"),
    ("authenticated-payload-timeout", None, "warning", "SEC-07"),
    ("quality-report", None, "info", "HH-05 context (monitor, energy, RF stats)"),
    ("encryption-started", None, "info", "DC-07 / SEC context"),
    ("cis-failed", None, "error", "LA-01"),
    ("big-failed", None, "error", "LA-01"),
    ("big-sync-failed", None, "error", "LA-01"),
    ("big-sync-lost", lambda e: e["reason"] == 0x16, "info", "LA-05 benign: the host ended the sync"),
    ("big-sync-lost", None, "error", "LA-05 / LA-04"),
    ("hci-reset", lambda e: e["open_links"] > 0, "error",
     "HH-03 (links opened in the capture were up: the Reset dropped them)"),
    ("hci-reset", None, "info", "HH-03 benign: no link open", "no open link"),
    # BR/EDR (blescope's BR-01..BR-05; not in the catalogue). A page nobody answers costs nothing the user asked
    # for by itself (Android pages bonded devices in the background); a refused key or pairing leaves the link
    # unauthenticated: the profile the user wanted does not come up.
    ("page-timeout", None, "warning", "BR-01 (folded per device)"),
    ("bredr-connection-failed", lambda e: e["status"] in (0x02, 0x16), "info",
     "BR-02 benign: this host cancelled the connection", "host cancel"),
    ("bredr-connection-failed", lambda e: e["status"] in (0x05, 0x06), "error", "BR-04 (key refused or missing)"),
    ("bredr-connection-failed", None, "warning", "BR-02"),
    ("bredr-auth-failed", None, "error", "BR-03"),
    ("link-key-missing", None, "error", "BR-04"),
    # Records out of time order: under 10 ms is clock jitter between the HCI transport and the logger; more is a
    # merged or rotated log, still not missing data (CQ-04 names gaps, not order).
    ("timestamp-step-back", lambda e: e["step_seconds"] < 0.010, "info", "CQ-04 benign: clock jitter",
     "clock jitter"),
    ("timestamp-step-back", None, "warning", "CQ-04 (records out of time order)"),
    ("ll-control-malformed", None, "info", "not a procedure: the PDU is invalid (ll.control-malformed)"),
    # Air links the capture shows no end of, ended from what it shows after them (diagnosis_truth_air.py).
    ("air-link-not-established", None, "error", "DC-10 (air: no packet after the connect request)"),
    ("air-link-left", None, "error", "DC-10 (air: the peripheral advertising before the next event)"),
    ("air-link-ended-unseen", None, "warning", "DC-10 (air: no terminate in the capture)"),
    ("air-link-unfollowed", None, "info", "DC-10 context: the sniffer stopped following the link"),
    ("air-link-end-encrypted", None, "info", "DC-10 context: its end may be in PDUs tshark cannot decrypt"),
] + SECURITY_SEVERITY  # how links were secured (diagnosis_truth_security.py)

CAPTURE_MAGICS = (b"btsnoop\0", b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1",
                  b"\xa1\xb2\x3c\x4d", b"\x0a\x0d\x0d\x0a", b"\x1f\x8b")
ACL_FIELDS = [
    "frame.number", "frame.time_epoch", "frame.p2p_dir", "hci_h4.direction", "packetlogger.type",
    "hci_mon.opcode", "hci_mon.adapter_id", "bthci_acl.chandle", "btl2cap.cmd_code",
    "btl2cap.move_result", "btatt.opcode", "btatt.req_opcode_in_error", "btatt.handle",
    "btatt.error_code", "btsmp.opcode", "btsmp.reason", "btle.access_address",
    "btle.control_opcode", "btle.control.error_code", "btle.control.reject_opcode",
    "_ws.col.Source", "nordic_ble.direction", "nordic_ble.crcok", "nordic_ble.encrypted",
    "nordic_ble.micok", "btle_rf.flags.crc_checked", "btle_rf.flags.crc_valid",
    "btle_rf.flags.decrypted", "btle.crc.incorrect", "btle.data_header.llid",
    "btle.data_header.length", "btatt.uuid16",
    "frame.protocols", "btsmp.sc_flag", "btsmp.initiator_key_distribution",
    "btsmp.responder_key_distribution", "btle.link_layer_data.access_address",
] + AIR_FIELDS


def severity_of(event):
    for cls, condition, severity, _rule, *benign in SEVERITY:
        if cls == event["class"] and (condition is None or condition(event)):
            if benign:
                event["benign"] = benign[0]
            return severity
    raise ValueError("no severity row for " + event["class"])


def tshark_version():
    out = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout
    return out.split("\n")[0].split("(Wireshark) ")[-1].split(" ")[0]


# crackle and Ubertooth write LE link-layer packets as PPI with user DLT 147; tshark decodes them
# once that DLT is mapped to btle (Wireshark's DLT_USER preference).
TSHARK = ["tshark", "-n", "-o", 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""']


def run_tshark(args):
    proc = subprocess.run(TSHARK + args, capture_output=True)
    errors = [line for line in proc.stderr.decode(errors="replace").splitlines()
              if line and "Running as user" not in line]
    return proc.returncode, proc.stdout, "\n".join(errors)


def field_rows(path):
    """One dict per frame: the ACL, L2CAP, ATT, SMP and link-layer facts."""
    args = ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
            "-E", "aggregator=,", "-E", "quote=n"]
    for name in ACL_FIELDS:
        args += ["-e", name]
    code, out, err = run_tshark(args)
    rows = []
    for line in out.decode(errors="replace").splitlines():
        cells = line.split("\t")
        rows.append({name: (cells[i] if i < len(cells) and cells[i] != "" else None)
                     for i, name in enumerate(ACL_FIELDS)})
    return code, rows, err


def collect(pairs):
    """JSON object hook keeping repeated keys (tshark JSON repeats a field's key)."""
    result = {}
    for key, value in pairs:
        result.setdefault(key, []).append(value)
    return result


def flatten(tree, into):
    for key, values in tree.items():
        for value in values:
            if isinstance(value, dict):
                flatten(value, into)
            elif not key.endswith("_raw") and isinstance(value, str):
                into.setdefault(key, []).append(value)
    return into


def hci_packets(path):
    """HCI commands and events: tshark's decoded fields plus the raw command/event bytes."""
    args = ["-r", path, "-Y", "bthci_cmd || bthci_evt", "-T", "json", "-x",
            "-j", "frame hci_mon bthci_cmd bthci_evt"]
    proc = subprocess.Popen(TSHARK + args, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    chunk = []
    for line in proc.stdout:
        text = line.decode(errors="replace").rstrip("\n")
        if text == "  {":
            chunk = [text]
        elif chunk:
            chunk.append(text)
            if text in ("  }", "  },"):
                layers = json.loads("\n".join(chunk).rstrip(","), object_pairs_hook=collect)
                chunk = []
                yield packet_from_layers(layers["_source"][0]["layers"][0])
    proc.wait()


def packet_from_layers(layers):
    fields = flatten({k: v for k, v in layers.items() if not k.endswith("_raw")}, {})
    kind = "evt" if "bthci_evt_raw" in layers else "cmd"
    raw = bytes.fromhex(layers["bthci_%s_raw" % kind][0][0]) if "bthci_%s_raw" % kind in layers \
        else b""
    first = {k: v[0] for k, v in fields.items()}
    return {"frame": int(first["frame.number"]), "time": float(first["frame.time_epoch"]),
            "kind": kind, "raw": raw, "fields": first, "all": fields,
            "adapter": number(first.get("hci_mon.adapter_id"))}


def analyse(path, version, shown_name):
    code, rows, error = field_rows(path)
    if not rows:
        return {"file": shown_name, "error": error or "tshark read no records (exit %d)" % code}
    truth = Truth(severity_of)
    for packet in hci_packets(path):
        (truth.event if packet["kind"] == "evt" else truth.command)(packet)
    truth.finish_commands(max(float(r["frame.time_epoch"]) for r in rows))
    end_time = max(float(r["frame.time_epoch"]) for r in rows)
    air = [(int(r["frame.number"]), float(r["frame.time_epoch"])) for r in rows if r["btle.access_address"]]
    truth.air_clock_breaks_at = next((f for (_, a), (f, b) in zip(air, air[1:]) if b < a), None)
    for row in rows:
        truth.acl_row(row)
    truth.classic.finish()
    procedures_redone(truth.events, truth.controls, severity_of)
    timestamp_steps(rows, truth.emit)
    truth.finish_pairings(end_time)
    air_link_ends(rows, truth.emit, end_time)
    security_events(TSHARK, path, truth.emit)
    truth.events.sort(key=lambda e: (e["frame"], e["class"]))
    for note in truth.notes:
        print("%s: %s" % (shown_name, note), file=sys.stderr)
    if any(truth.skipped.values()):
        print("%s: air frames skipped: %d bad CRC, %d encrypted and not decrypted"
              % (shown_name, truth.skipped["bad_crc"], truth.skipped["encrypted"]), file=sys.stderr)
    result = {"file": shown_name, "tshark": version, "records": len(rows), "events": truth.events}
    if code != 0 or error:
        result["tshark_error"] = error or "exit %d" % code
    return result


def looks_like_capture(path):
    if path.endswith(".pklg"):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError:
        return False
    return any(head.startswith(magic) for magic in CAPTURE_MAGICS)


def field_number(text):
    """A `-T fields` cell as a number: its first value (tshark prints 0x.. or decimal), None when empty or not one."""
    if not text:
        return None
    try:
        return int(text.split(",")[0], 0)
    except ValueError:
        return None


def field_numbers(text):
    """Every value of an aggregated `-T fields` cell that is a number."""
    out = []
    for value in (text or "").split(","):
        try:
            out.append(int(value, 0))
        except ValueError:
            pass
    return out


def tshark_fields(path, fields):
    """One tshark pass (TSHARK) of `fields` over the capture, every occurrence of a field joined by commas: a dict per
    record, an empty cell None."""
    args = TSHARK + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in fields:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True).stdout.decode(errors="replace")
    for line in out.splitlines():
        cells = line.split("\t")
        yield {f: (cells[i] if i < len(cells) and cells[i] else None) for i, f in enumerate(fields)}


def truth_main(argv, doc, result):
    """The command line of the truth scripts that add classes of their own (diagnosis_truth_extra.py, _security2,
    _audio, _linklayer, _capture, _gatt): `[--base-name] CAPTURE...`, one JSON line `result(path, name)` per capture (a
    file that is no capture is skipped); no capture named: the usage paragraph of the script's `doc`, exit 2."""
    base = "--base-name" in argv
    paths = [a for a in argv if a != "--base-name"]
    if not paths:
        print(doc.split("\n\n")[1], file=sys.stderr)
        return 2
    for path in paths:
        if looks_like_capture(path):
            print(json.dumps(result(path, os.path.basename(path) if base else path), sort_keys=True))
    return 0


def events_main(argv, doc, analyse):
    """truth_main for a script whose `analyse(path)` gives the events: {"file", "events"} per capture."""
    return truth_main(argv, doc, lambda path, name: {"file": name, "events": analyse(path)})


def captures(arguments):
    for argument in arguments:
        if os.path.isdir(argument):
            for root, dirs, files in os.walk(argument):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    path = os.path.join(root, name)
                    if not name.startswith(".") and looks_like_capture(path):
                        yield path
        else:
            yield argument


def main(argv):
    base_name = "--base-name" in argv
    paths = [a for a in argv if a != "--base-name"]
    if not paths:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    version, failed = tshark_version(), False
    for path in captures(paths):
        shown = os.path.basename(path) if base_name else path
        result = analyse(path, version, shown)
        failed = failed or "error" in result
        print(json.dumps(result, separators=(", ", ": ")), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
