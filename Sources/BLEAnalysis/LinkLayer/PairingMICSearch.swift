import BLECore
import BLESecurity

/// What a second encrypted PDU said about a key found by the MIC search (``LinkKeySource/legacyPairingMIC``).
public enum LLKeyConfirmation: Hashable, Sendable, CustomStringConvertible {
    /// No encrypted PDU after the one searched against yet: the next one confirms the key or sends the search on.
    case pending
    /// The link ended with no encrypted PDU after the one searched against.
    case noSecondPDU
    /// The MIC of that frame checks too.
    case confirmed(frame: Int)
    /// An earlier TK checked the first PDU's MIC by chance and failed `frame`; the search went on and this TK checks
    /// both. The first PDU (`wrongFrame`) had been decoded with the wrong key.
    case confirmedAfterFalseMatch(frame: Int, falseTK: UInt32, wrongFrame: Int)
    /// `frame` failed its MIC with this key and no later TK checks both PDUs: kept, unconfirmed.
    case contradicted(frame: Int)

    public var description: String {
        switch self {
        case .pending: "; the next encrypted PDU confirms it or sends the search on"
        case .noSecondPDU: "; no encrypted PDU followed to confirm it"
        case .confirmed(let frame): "; confirmed by the MIC of frame \(frame)"
        case let .confirmedAfterFalseMatch(frame, tk, wrong):
            "; confirmed by the MIC of frame \(frame), after TK \(tk) had checked frame \(wrong)'s MIC by chance (frame \(wrong) was decoded with that wrong key)"
        case .contradicted(let frame): "; frame \(frame) fails its MIC with this key and no other TK checks both"
        }
    }
}

/// Why c1 could not check the TKs of a legacy pairing, so that the MIC of the first encrypted PDU did.
public enum LLMICSearchCause: Hashable, Sendable, CustomStringConvertible {
    /// The capture joined the connection after its CONNECT_IND: the addresses (and their types) c1 needs are unknown.
    case noConnectInd
    /// A pairing PDU c1 needs is not in the capture: its name (Pairing Request, Pairing Response, Pairing Confirm).
    case missing(String)

    public var description: String {
        switch self {
        case .noConnectInd: "the capture has no CONNECT_IND"
        case .missing(let pdu): "the capture has no \(pdu)"
        }
    }
}

/// Why a pairing seen on an encrypted link gave no key: said in the `ll.encrypted-no-key` finding.
public enum LLKeySearchNote: Hashable, Sendable, CustomStringConvertible {
    /// c1 impossible (`cause`): every TK was tried against the MIC of `checkedFrame` and none checks.
    case noTKChecksTheMIC(pairingFrame: Int, checkedFrame: Int, cause: LLMICSearchCause)
    /// The capture's MIC-search budget ran out: `tried` of the 1,000,000 TKs were tried.
    case budgetSpent(pairingFrame: Int, tried: Int, budget: Int, earlierPairings: [Int], cause: LLMICSearchCause)
    /// With the addresses, no TK gives the Pairing Confirm values (c1).
    case noTKMatchesTheConfirm(pairingFrame: Int)
    /// LE Secure Connections: the LTK comes from ECDH, so there is no TK to search.
    case secureConnections(pairingFrame: Int, addressesKnown: Bool, debugKey: Bool)
    /// A Pairing Random of either side is not in the capture.
    case pairingIncomplete(pairingFrame: Int)
    /// The Pairing Request and Response chose out-of-band data: a 128-bit TK no search finds, so none was run.
    case outOfBand(pairingFrame: Int)
    /// The Pairing Request and Response chose Just Works, so the TK is 0, and TK 0 does not give the Pairing Confirm
    /// values (`checkedFrame` nil) or an STK whose MIC checks at `checkedFrame`; no passkey was tried.
    case justWorksTKFails(pairingFrame: Int, checkedFrame: Int?)
    /// With the addresses, c1 checked only `tried` TKs: the capture's c1 budget ran out.
    case c1BudgetSpent(pairingFrame: Int, tried: Int, budget: Int)

    public var description: String {
        switch self {
        case let .noTKMatchesTheConfirm(frame):
            return
                "no TK (0 for Just Works, passkeys 000001-999999) gives the Pairing Confirm values of the LE legacy pairing at frame \(frame): an out-of-band TK"
        case let .noTKChecksTheMIC(frame, checked, cause):
            return "\(cause), so the TK of the LE legacy pairing at frame \(frame) was checked against the MIC of frame \(checked)"
                + " (the first encrypted PDU): no TK (0 for Just Works, passkeys 000001-999999) gives an STK whose MIC checks there"
                + " — an out-of-band TK, or the capture missed that direction's first encrypted PDU"
        case let .budgetSpent(frame, tried, budget, earlier, cause):
            let spentOn = earlier.isEmpty ? "" : ", spent on the pairings at frames " + earlier.map(String.init).joined(separator: ", ")
            return "\(cause) and the TK of the LE legacy pairing at frame \(frame) was checked against the MIC"
                + " for \(tried) of the 1000000 TKs only: the MIC search stops after \(budget) TKs per capture\(spentOn);"
                + " pass the STK with --ltk"
        case let .secureConnections(frame, addressesKnown, debugKey):
            return
                "the pairing at frame \(frame) is LE Secure Connections: its LTK comes from an ECDH key exchange, so there is no TK to search or check against a MIC; "
                + (addressesKnown && debugKey
                    ? "a side used the debug key pair, yet the key derived from it does not decrypt these PDUs (a key changed since the pairing, or the capturer altered them)"
                    : addressesKnown
                        ? "only a pairing with the debug key pair can be derived, and neither side used it"
                        : "a pairing with the debug key pair could be derived, but that needs both addresses from the CONNECT_IND, which the capture does not have")
        case let .pairingIncomplete(frame):
            return "the LE legacy pairing at frame \(frame) is not whole in the capture (a Pairing Random is missing): no STK to search"
        case let .outOfBand(frame):
            return "the LE legacy pairing at frame \(frame) used out-of-band data (both Pairing Request and Response say so): its TK is"
                + " 128 bits from outside the link, so no TK was searched; pass the STK with --ltk"
        case let .justWorksTKFails(frame, checked):
            let check = checked.map { "an STK whose MIC checks at frame \($0)" } ?? "its Pairing Confirm values"
            return "the LE legacy pairing at frame \(frame) is Just Works (its Pairing Request and Response), so its TK is 0,"
                + " and TK 0 does not give \(check): a pairing PDU is damaged or from another pairing; no passkey was tried"
        case let .c1BudgetSpent(frame, tried, budget):
            return "the TK of the LE legacy pairing at frame \(frame) was checked against its Pairing Confirm values for \(tried)"
                + " of the 1000000 TKs only: c1 stops after \(budget) TKs per capture; pass the STK with --ltk"
        }
    }
}

/// A key the MIC search found, waiting for the next encrypted PDU to confirm it (or to send the search on).
struct LLMICSearchProgress {
    var search: LegacyPairingMICSearch
    /// The first encrypted PDU, once per direction tried.
    var pdus: [SealedLLPDU]
    var firstFrame: Int
    var pairingFrame: Int
    var cause: LLMICSearchCause
    var winner: UInt32
    /// The TKs the pairing's association model allows (``LegacyTKSpace/candidates``): where a resumed search ends.
    var candidates: Int
}

extension LinkKeySource {
    /// The same source with what a second PDU said; other sources unchanged.
    func confirmed(_ confirmation: LLKeyConfirmation) -> LinkKeySource {
        guard case let .legacyPairingMIC(passkey, frame, checked, cause, _) = self else { return self }
        return .legacyPairingMIC(passkey: passkey, frame: frame, checkedFrame: checked, cause: cause, confirmation: confirmation)
    }
}

extension LLEncryptionState {
    /// A PDU after the one searched against decrypted with the found key: the key is confirmed.
    mutating func confirmMICSearch(frame: Int) {
        guard let progress = micSearch, frame != progress.firstFrame else { return }
        micSearch = nil
        if let source = key?.source { key?.source = source.confirmed(.confirmed(frame: frame)) }
    }
}

extension LinkKeyStore {
    /// Runs `search` with what is left of the budget (at least TK 0 on a first search) and charges what it tried.
    func spendMICSearch(pairingFrame: Int, first: Bool, _ search: (Int) -> LegacyPairingMICSearch.Outcome)
        -> LegacyPairingMICSearch.Outcome
    {
        let outcome = search(first ? max(1, micSearchBudget) : micSearchBudget)
        micSearchBudget = max(0, micSearchBudget - outcome.tried)
        if !micSearchedPairings.contains(pairingFrame) { micSearchedPairings.append(pairingFrame) }
        return outcome
    }
}

extension LinkLayerTracker {
    /// No key decrypts the first encrypted PDU of a link that a pairing seen on it is encrypting (EDIV and Rand 0):
    /// when c1 cannot check a TK (no CONNECT_IND, so no addresses; or a pairing PDU c1 needs is missing), tries the TKs
    /// against this PDU's MIC; otherwise says why the pairing gave no key.
    static func searchPairingByMIC(
        _ c: inout Conn, keys: LinkKeyStore?, header0: UInt8, payload: UnsafeRawBufferPointer, centralToPeripheral: Bool,
        eitherDirection: Bool, frame: Int
    ) {
        guard let keys, c.encryption.ediv == 0, c.encryption.rand == 0, let pairing = keys.pairing(onLink: c.info.handle) else {
            return
        }
        let addressesKnown = c.info.central != nil && c.info.peripheral != nil
        let mrand: Key128, srand: Key128, pairingFrame: Int, cause: LLMICSearchCause, candidates: Int
        switch pairing {
        case .secureConnections(let p, let debugKey):
            c.encryption.searchNote = .secureConnections(pairingFrame: p, addressesKnown: addressesKnown, debugKey: debugKey)
            return
        case .incomplete(let p):
            c.encryption.searchNote = .pairingIncomplete(pairingFrame: p)
            return
        case let .legacy(m, s, missing, c1, space, p):
            if addressesKnown && missing == nil {
                // c1 decided: no TK (a note), or a TK whose STK did not check this PDU (the keys tried say so).
                c.encryption.searchNote = c1.flatMap { c1Note($0, pairingFrame: p, budget: keys.micSearchLimit) }
                return
            }
            if space == .outOfBand {
                c.encryption.searchNote = .outOfBand(pairingFrame: p)
                return
            }
            (mrand, srand, pairingFrame, cause) = (m, s, p, missing.map { addressesKnown ? .missing($0) : .noConnectInd } ?? .noConnectInd)
            candidates = space.candidates
        }
        let e = c.encryption
        let search = LegacyPairingMICSearch(
            mrand: mrand, srand: srand, skdm: wire(e.skdCentral), skds: wire(e.skdPeripheral), ivm: wire(e.ivCentral),
            ivs: wire(e.ivPeripheral))
        // The first encrypted PDU of either side has packet counter 0 in its direction (Core Spec Vol 6, Part E, 2).
        let directions = eitherDirection ? [centralToPeripheral, !centralToPeripheral] : [centralToPeripheral]
        let pdus = directions.map {
            SealedLLPDU(header0: header0, payload: Array(payload), packetCounter: 0, centralToPeripheral: $0)
        }
        let earlier = keys.micSearchedPairings.filter { $0 != pairingFrame }
        let outcome = keys.spendMICSearch(pairingFrame: pairingFrame, first: true) {
            search.search(limit: min($0, candidates), pdus: pdus)
        }
        guard let found = outcome.keys else {
            c.encryption.searchNote =
                outcome.tried < candidates
                ? .budgetSpent(
                    pairingFrame: pairingFrame, tried: outcome.tried, budget: keys.micSearchLimit,
                    earlierPairings: earlier, cause: cause)
                : candidates == 1
                    ? .justWorksTKFails(pairingFrame: pairingFrame, checkedFrame: frame)
                    : .noTKChecksTheMIC(pairingFrame: pairingFrame, checkedFrame: frame, cause: cause)
            return
        }
        c.encryption.cipher = LLCipher(sessionKey: search.sessionKey(found), iv: search.initializationVector)
        c.encryption.key = LinkKey(
            ltk: found.stk.bytes, ediv: 0, rand: 0,
            source: .legacyPairingMIC(
                passkey: found.passkey ?? 0, frame: pairingFrame, checkedFrame: frame, cause: cause, confirmation: .pending))
        c.encryption.micSearch = LLMICSearchProgress(
            search: search, pdus: pdus, firstFrame: frame, pairingFrame: pairingFrame, cause: cause, winner: outcome.candidate,
            candidates: candidates)
    }

    /// The note of a c1 search that found no key.
    private static func c1Note(_ c1: LegacyC1Outcome, pairingFrame p: Int, budget: Int) -> LLKeySearchNote? {
        switch c1 {
        case .found: nil
        case .noMatch(.passkeys): .noTKMatchesTheConfirm(pairingFrame: p)
        case .noMatch(.justWorks): .justWorksTKFails(pairingFrame: p, checkedFrame: nil)
        case .noMatch(.outOfBand): .outOfBand(pairingFrame: p)
        case .budgetSpent(let tried): .c1BudgetSpent(pairingFrame: p, tried: tried, budget: budget)
        }
    }

    /// The PDU after the one searched against fails its MIC under the winner: either its MIC checked by chance (odds
    /// 2^-32 per TK tried) or this PDU is damaged. Goes on from the next TK, taking only a TK that checks both PDUs;
    /// true when one does (its key replaces the winner), false when none (the winner stays, marked contradicted).
    static func resumeMICSearch(
        _ c: inout Conn, keys: LinkKeyStore?, header0: UInt8, payload: UnsafeRawBufferPointer, eitherDirection: Bool,
        frame: Int
    ) -> Bool {
        guard let progress = c.encryption.micSearch, let keys else { return false }
        c.encryption.micSearch = nil
        let search = progress.search
        var scratch: [UInt8] = []
        let checksThisPDU = { (found: LegacyPairingKeys) -> Bool in
            let cipher = LLCipher(sessionKey: search.sessionKey(found), iv: search.initializationVector)
            for direction in [true, false] where eitherDirection || direction == progress.pdus[0].centralToPeripheral {
                for counter in 0..<counterSearchWindow
                where cipher.decrypt(
                    header0: header0, payload: payload, packetCounter: counter, centralToPeripheral: direction, into: &scratch)
                {
                    return true
                }
            }
            return false
        }
        let outcome = keys.spendMICSearch(pairingFrame: progress.pairingFrame, first: false) {
            search.search(
                from: progress.winner + 1, limit: min($0, progress.candidates - Int(progress.winner) - 1), pdus: progress.pdus,
                accept: checksThisPDU)
        }
        guard let found = outcome.keys else {
            if let source = c.encryption.key?.source { c.encryption.key?.source = source.confirmed(.contradicted(frame: frame)) }
            return false
        }
        c.encryption.cipher = LLCipher(sessionKey: search.sessionKey(found), iv: search.initializationVector)
        c.encryption.key = LinkKey(
            ltk: found.stk.bytes, ediv: 0, rand: 0,
            source: .legacyPairingMIC(
                passkey: found.passkey ?? 0, frame: progress.pairingFrame, checkedFrame: progress.firstFrame,
                cause: progress.cause,
                confirmation: .confirmedAfterFalseMatch(frame: frame, falseTK: progress.winner, wrongFrame: progress.firstFrame)))
        return true
    }

    /// A field of LL_ENC_REQ/LL_ENC_RSP as the air carried it (little-endian).
    private static func wire<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        var w = ByteWriter()
        w.write(littleEndian: value)
        return w.bytes
    }
}
