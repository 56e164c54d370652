import BLECore

/// Whether an HFP exchange shows a call: a RING, ATA, ATD, AT+BLDN or AT+CHUP (``HFPSession/callEvents``), or a +CIEV
/// change of the call, callsetup or callheld indicator (HFP 1.9, 4.10–4.16 and 4.34.2). An audio connection (codec
/// connection and eSCO) is set up without a call too: BTstack's gateway examples open one on a key press (the corpus's
/// HFP gateway logs: +BCS then eSCO, no RING, no call indicator, no ATA). Without one of these, "call" is assumed.
extension HFPSession {
    public var showsACall: Bool {
        !callEvents.isEmpty || indicatorChanges.contains { Self.callIndicators.contains($0.name.lowercased()) }
    }

    /// The +CIND names of the call state indicators (HFP 1.9, 4.34.2: "call", "callsetup", "callheld"; some gateways
    /// spell the second "call_setup").
    static let callIndicators: Set<String> = ["call", "callsetup", "call_setup", "callheld"]
}

extension Evidence {
    /// Some HFP exchange of the capture shows a call (``HFPSession/showsACall``).
    var hfpShowsACall: Bool { connections.contains { $0.profiles?.hfp?.showsACall == true } }
    /// Some HFP exchange was decoded (whether a call shows can be told).
    var hfpDecoded: Bool { connections.contains { $0.profiles?.hfp != nil } }
}
