/// What a rule's finding means for someone who has not met the case, and what to do about it: `blescope diagnose
/// --explain RULE` prints it with the rule's table row, and `docs/diagnosis.md` has one section per rule made from it
/// (`diagnose --explain all --markdown`, checked by `DiagnosisDocsTests`).
public struct RuleExplanation: Hashable, Sendable {
    /// What happened, in plain words, and why it matters.
    public var meaning: String
    /// What to look at or change next.
    public var advice: String
}

extension DiagnosisRules {
    /// The explanation of the rule `id` (every rule of ``all`` has one: `DiagnosisDocsTests` checks it).
    public static func explanation(_ id: String) -> RuleExplanation? { explanations[id] ?? audioExplanations[id] }

    static let explanations: [String: RuleExplanation] = [
        "BR-01": .init(
            meaning:
                "The phone paged a Classic (BR/EDR) device — a headset, a car kit, a speaker — and it never answered: it was off, out of range, or not connectable. The host usually retries in the background, so one device can fail hundreds of times.",
            advice:
                "Usually harmless background reconnection to a paired device that is not around; if the user expected that device to connect, check it is powered, in range and in pairing or connectable mode."
        ),
        "BR-02": .init(
            meaning:
                "A Classic (BR/EDR) connection attempt failed for a reason other than a page timeout: the status code says which (authentication, a limit reached, refused by the peer, cancelled by this side).",
            advice:
                "Read the status: 0x05/0x06 point at the bond (see BR-04), 0x0D–0x0F at the peer refusing, 0x16 at this side cancelling."),
        "BR-03": .init(
            meaning:
                "A Classic pairing (Secure Simple Pairing, or a legacy PIN) ran and failed: the user rejected or mistyped, the devices' IO capabilities could not agree, or the pairing timed out.",
            advice:
                "Read the chain the finding cites (Link Key Request, IO capabilities, Simple Pairing Complete): retry the pairing with both devices in pairing mode and the user confirming on both sides."
        ),
        "BR-04": .init(
            meaning:
                "A Classic link could not be authenticated with the stored link key: this side had no key for the device (negative reply), or the device refused the key it had (it forgot the bond, e.g. after a reset).",
            advice:
                "Remove the device from the phone's paired list and pair again; if it happens after every reset of the device, the device does not keep its bonds."
        ),
        "BR-05": .init(
            meaning:
                "Starting encryption on a Classic link failed: the link stays unencrypted, and profiles that need security will not start.",
            advice: "Read the status; with 0x05/0x06 the bond is broken (see BR-04): pair again."),
        "BR-06": .init(
            meaning:
                "The peer or the controller refused a role switch or a power-saving mode (sniff) on a Classic link. The link goes on in its current role and mode; this only matters when a link loss follows.",
            advice: "Nothing to do unless the link was lost right after; then look at the peer's link policy and the controller's logs."),
        "CQ-01": .init(
            meaning:
                "The capture began while a connection was already up: its parameters, MTU and pairing were set before the first record, so they are assumed, not seen.",
            advice: "Start the capture (Android: turn the HCI snoop log on, then toggle Bluetooth) before the devices connect."),
        "CQ-02": .init(
            meaning:
                "The capturer kept only the first bytes of some packets (Android's filtered snoop log, btsnooz): values and long PDUs cannot be decoded whole.",
            advice: "Take an unfiltered log (Android: Developer options ▸ Enable Bluetooth HCI snoop log ▸ Enabled, not Filtered)."),
        "CQ-03": .init(
            meaning:
                "The capture stops before something it shows had an outcome: a command without its answer, a request without its response, a connection attempt still running.",
            advice: "Let the capture run a few seconds past the failure before stopping it."),
        "CQ-04": .init(
            meaning:
                "Time in the log jumps backwards or leaves a long gap, or the capturer says it dropped records: what happened in the break is unknown.",
            advice: "Read the findings near the break with care; capture again with enough buffer, or to a file rather than memory."),
        "CQ-05": .init(
            meaning:
                "An over-the-air sniffer missed what it needs: the connection's start (CONNECT_IND), the key of an encrypted link, or advertising packets (bad CRC).",
            advice: "Start the sniffer before the devices connect, give it the key (--ltk, --keys-from) and keep it close to both devices."),
        "CE-01": .init(
            meaning:
                "The phone tried to connect for about 30 s, never reached the device and gave up (on Android the app sees GATT error 133).",
            advice:
                "Check the device is advertising and connectable at that moment and in range; retry with a fresh scan rather than a stored address."
        ),
        "CE-02": .init(
            meaning:
                "The connection request was sent but the peripheral never answered on the first connection events, so the link was never established (0x3E).",
            advice:
                "Usually radio range or interference, or a peripheral that stopped advertising just then: retry, move closer, check the peripheral's advertising interval."
        ),
        "CE-03": .init(
            meaning:
                "The controller refused the command that starts a connection (busy with another attempt, bad parameters, or too many links).",
            advice: "Read the status code: serialize connection attempts and check the parameters the app passes."),
        "CE-04": .init(
            meaning:
                "The peripheral ended the link within two seconds of it coming up, before anything but an MTU exchange: it rejected this central.",
            advice: "Look at the peripheral's connection policy: a whitelist, a bond it expects, or a limit on connections."),
        "CE-05": .init(
            meaning:
                "Reading the peer's link-layer features failed, so the stack cannot know which procedures (data length, 2M PHY) the peer supports.",
            advice: "Usually harmless once; repeated, it points at an unstable link or a peer firmware bug."),
        "DC-01": .init(
            meaning:
                "No packet came from the peer for the whole supervision timeout, so the link was declared lost: out of range, blocked, or the peer stopped (reset, crash, brown-out).",
            advice: "Check range and the peer's power and logs at that time; a longer supervision timeout tolerates short fades."),
        "DC-02": .init(
            meaning: "The other device closed the connection; the finding names the failure just before it, which is usually why.",
            advice: "Fix the failure cited (ATT error, pairing failure); otherwise read the peer's logs for why it disconnected."),
        "DC-03": .init(
            meaning:
                "This device closed the link itself, after something failed (an unanswered request, a pairing failure), or Bluetooth was turned off.",
            advice: "Look at the failure cited before the disconnection: the stack or app closed the link because of it."),
        "DC-04": .init(
            meaning:
                "A link-layer procedure (encryption start, parameter request) was not answered within 40 s, so the link was dropped (0x22).",
            advice:
                "The host did not reply to the controller's request (often a missing LTK reply): check the host stack's handling of that event."
        ),
        "DC-05": .init(
            meaning:
                "A connection or PHY update named a future connection event (its instant) that had already passed when the peer received it, so the link broke (0x28).",
            advice: "A timing bug or a lossy link: updates need enough events of margin; check the peripheral's firmware."),
        "DC-06": .init(
            meaning: "Both sides started link-layer procedures at the same time and the controllers could not resolve it (0x23/0x2A).",
            advice: "Avoid starting parameter, PHY or data-length updates from both sides at once (delay one side's request)."),
        "DC-07": .init(
            meaning:
                "An encrypted packet failed its integrity check (MIC), so the link was dropped: the two sides did not use the same key.",
            advice: "Remove the bond on both devices and pair again; check how the firmware stores and selects keys."),
        "DC-08": .init(
            meaning:
                "The link ended while data sent to the controller had not been sent over the air for seconds: the link was stalled before it dropped.",
            advice: "Look at what stalled the link (peer not acknowledging, interference) and at the controller's flow control."),
        "DC-09": .init(
            meaning:
                "The same peer connected and disconnected three or more times within minutes: the link keeps failing and the app keeps retrying.",
            advice: "Fix the first disconnection's cause; add back-off to the reconnection logic."),
        "DC-10": .init(
            meaning:
                "An air capture shows no end of the link: it went silent for longer than its supervision timeout while the capture went on. What the capture shows after (the peripheral advertising again, and how soon) says whether it was never established, the peripheral left it, or the sniffer only stopped following it.",
            advice:
                "If the peripheral left within one connection interval, look at the last PDU it received (a crash or reset on it); if the sniffer only lost the link, capture again closer to the devices."
        ),
        "SEC-01": .init(
            meaning:
                "The central tried to encrypt with its stored key and the peripheral said it has no such key: the peripheral forgot the bond (reset, reflashed, or paired with another phone).",
            advice: "Remove the device from the phone's Bluetooth settings and pair again; firmware should keep bonds across updates."),
        "SEC-02": .init(
            meaning:
                "The central asked to encrypt with a key this device (peripheral) does not have: it lost the bond or never had one with that central.",
            advice: "Pair again; check that bonds are stored and looked up with the right identity address."),
        "SEC-03": .init(
            meaning:
                "Pairing was aborted by one side with a reason code (for example, the IO capabilities cannot give the security asked, or a confirm value did not match).",
            advice: "Read the reason given: align the security requirements with the devices' IO capabilities, check the passkey entry."),
        "SEC-04": .init(
            meaning:
                "Pairing started but neither finished nor failed: one side stopped answering (a prompt nobody accepted, a stack waiting for the user).",
            advice: "Check for a pairing dialog on the phone and for the peer's handling of the pairing request."),
        "SEC-05": .init(
            meaning:
                "An attribute asked for more security (encryption or authentication) than the link had; the finding says whether pairing followed and fixed it.",
            advice: "Pair or encrypt before accessing that attribute, or lower its permission if it does not need protection."),
        "SEC-06": .init(
            meaning: "The key negotiated is shorter than the attribute or the peer accepts.",
            advice: "Negotiate a 16-byte key (set the maximum key size in the pairing request)."),
        "SEC-07": .init(
            meaning: "No authenticated packet arrived within the authenticated payload timeout on an encrypted link.",
            advice: "Usually a sign of a weak link; a link with little traffic needs a longer timeout or keep-alive traffic."),
        "GATT-01": .init(
            meaning:
                "An ATT request got no response within 30 s: the ATT bearer is dead from then on (no other request may be sent) until the link is reconnected.",
            advice: "Find why the peer did not answer (busy, crashed, waiting on something): the peer's firmware must answer every request."
        ),
        "GATT-02": .init(
            meaning:
                "A request was sent while the previous one still waited for its response (ATT allows one at a time), or a response came with no request.",
            advice: "Queue GATT operations in the app: wait for each callback before the next request."),
        "GATT-03": .init(
            meaning:
                "Notifications were expected but never properly turned on: the CCCD was written the wrong way, with the wrong value, or not at all.",
            advice: "Write 0x0001 (notify) or 0x0002 (indicate) to the characteristic's CCCD (0x2902) with a Write Request."),
        "GATT-04": .init(
            meaning: "The peer refused the write that turns notifications or indications on.",
            advice: "Read the error: often encryption is needed first (pair), or the characteristic does not support that mode."),
        "GATT-05": .init(
            meaning: "Notifications were turned on and accepted, but nothing came for at least 30 s while the link was up.",
            advice: "Check that the peer has data to send and sends it on that characteristic (its firmware, its state)."),
        "GATT-06": .init(
            meaning:
                "The app used handles from an old discovery that no longer match the peer's database (after a firmware update or a change of services).",
            advice: "Rediscover services after a Service Changed indication or a firmware update; clear the GATT cache."),
        "GATT-07": .init(
            meaning: "ATT_MTU stayed at its default 23 bytes, so each value carries at most 20 bytes while the traffic needs more.",
            advice: "Request a larger MTU (Android requestMtu(247); iOS negotiates it) right after connecting."),
        "GATT-08": .init(
            meaning: "The peer answered a request with an ATT error (the finding names the request, the handle and the error).",
            advice: "Read the error code: a wrong handle, a value of the wrong length, or an operation the attribute does not allow."),
        "TP-01": .init(
            meaning:
                "Data handed to the controller was not sent for more than 5 s: the controller's buffers stayed full (the link was not moving data).",
            advice: "Look at the link at that time (peer not acknowledging, interference, a long connection interval)."),
        "TP-02": .init(
            meaning: "The host sent more data than the controller had buffers for: data was lost.",
            advice: "The host stack must respect the controller's buffer count (Number Of Completed Packets flow control)."),
        "TP-03": .init(
            meaning:
                "A data stream ran near the ceiling its link parameters allow (MTU, data length, PHY, interval): better parameters would at least double it.",
            advice: "Negotiate a larger MTU and data length, 2M PHY and a shorter connection interval where both devices support them."),
        "TP-04": .init(
            meaning: "A data stream ran well below what its link could carry: the app sent data more slowly than the radio allowed.",
            advice: "Nothing to fix in the link; if more speed is needed, look at how the app queues its data."),
        "TP-05": .init(
            meaning:
                "An L2CAP credit-based channel was refused, or a sender waited more than 5 s for credits: the receiver stopped granting them.",
            advice: "Check the receiver returns credits as it consumes data, and the channel's PSM and security."),
        "LP-01": .init(
            meaning: "A request to change the connection parameters (interval, latency, timeout) was rejected.",
            advice: "Request parameters within what the other side accepts (iOS publishes its limits)."),
        "LP-02": .init(
            meaning: "The supervision timeout is too short for the connection interval and latency: a few missed events lose the link.",
            advice: "Use a supervision timeout well above (1 + latency) × interval × 2; a few seconds is usual."),
        "LP-03": .init(
            meaning:
                "The connection parameters switched back and forth between two settings: the two sides (or two apps) want different ones.",
            advice: "Decide which side sets the parameters and stop the other from requesting its own."),
        "LP-04": .init(
            meaning: "Changing the PHY (1M, 2M, Coded) failed, or the link was lost right after a PHY change.",
            advice: "Check both sides support the PHY asked; keep 1M if the peer is unreliable on 2M."),
        "LP-05": .init(
            meaning: "The peer does not support a link-layer procedure this side asked for (parameter update, data length, PHY).",
            advice: "Check the peer's features before asking; fall back to what it supports."),
        "LP-06": .init(
            meaning:
                "More than a tenth of the link-layer packets the sniffer saw failed their CRC: the radio environment is noisy (or the sniffer is far away).",
            advice: "Move the sniffer closer; look for Wi-Fi or other 2.4 GHz sources near the devices."),
        "HH-01": .init(
            meaning: "The controller did not answer an HCI command within 2 s: the controller or its transport is hung.",
            advice: "Check the controller's firmware and the transport (UART flow control); a reset usually follows."),
        "HH-02": .init(
            meaning: "The controller reported a hardware error: it is in trouble and is usually reset next.",
            advice: "Report the error code to the chip vendor; check power supply and firmware version."),
        "HH-03": .init(
            meaning: "The host reset the controller while connections were up, so every link was dropped without a disconnection.",
            advice: "Find why the stack restarted (a crash, a timeout before it)."),
        "HH-04": .init(
            meaning: "The controller refused HCI commands (the finding groups them by command and status).",
            advice: "Read the status codes: a command not allowed in that state, unknown to the controller, or with bad parameters."),
        "HH-05": .init(
            meaning:
                "The controller sent a Bluetooth Quality Report warning about the link (near supervision timeout, choppy audio, a failed connection).",
            advice: "Read the RSSI and counters the report gives: usually range or interference."),
        "HH-06": .init(
            meaning:
                "Data used a connection handle that had been closed or never opened: host and controller disagree about which links exist.",
            advice: "A host stack bug, or records missing from the capture: check for gaps near it."),
        "HH-07": .init(
            meaning: "The capture holds records from more than one controller (for example a built-in and a USB adapter).",
            advice: "Make sure you read the controller the device used; filter by controller index."),
        "LA-01": .init(
            meaning: "Setting up an LE Audio stream (a CIS, or a broadcast BIG or its sync) failed with a status code.",
            advice: "Read the status: parameters the controller does not support, or no resources for another stream."),
        "LA-02": .init(
            meaning: "The audio device refused an operation on one of its audio stream endpoints (configure, enable, start).",
            advice: "Read the response and reason codes: usually a codec configuration it does not support."),
        "LA-03": .init(
            meaning: "Audio packets were lost or flagged lost on a stream: what was heard had gaps.",
            advice: "Check range and interference; more retransmissions or a longer latency trade delay for robustness."),
        "LA-04": .init(
            meaning: "An audio stream stopped carrying packets well before its link ended.",
            advice: "Look at what happened at the last packet: the source stopped, or the link failed."),
        "LA-05": .init(
            meaning: "A receiver lost its synchronization to a broadcast audio stream.",
            advice: "Usually range or the broadcaster stopping; check the reason code."),
        "LA-06": .init(
            meaning: "The controller reported choppy LE Audio while a stream was running, and packets were lost around it.",
            advice: "Check range and interference; Wi-Fi coexistence is a common cause."),
    ]
}
