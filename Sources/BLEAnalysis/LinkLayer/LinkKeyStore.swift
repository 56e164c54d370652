import BLECore
import BLEProtocols
import BLESecurity

/// Keys the user gives the analysis: `--ltk`, a key file, or what a phone's HCI log revealed.
public struct LinkKeyMaterial: Hashable, Sendable {
    public var linkKeys: [LinkKey]
    public var identityKeys: [IdentityKey]
    public init(linkKeys: [LinkKey] = [], identityKeys: [IdentityKey] = []) {
        self.linkKeys = linkKeys
        self.identityKeys = identityKeys
    }
    public var isEmpty: Bool { linkKeys.isEmpty && identityKeys.isEmpty }
    public static func + (a: LinkKeyMaterial, b: LinkKeyMaterial) -> LinkKeyMaterial {
        LinkKeyMaterial(linkKeys: a.linkKeys + b.linkKeys, identityKeys: a.identityKeys + b.identityKeys)
    }
}

/// What one LE pairing exchanged in the clear, collected from SMP on one connection
/// (Core Spec Vol 3, Part H, 3.5 and 3.6): enough to find the STK of a legacy pairing or, when a side used
/// the debug key pair, the LTK of an LE Secure Connections pairing.
struct PairingTranscript {
    /// Pairing Request and Response, 7 octets each with the opcode.
    var request: [UInt8]?
    var response: [UInt8]?
    /// Index 0 central (initiator) → peripheral, 1 the other way.
    var confirm: [[UInt8]?] = [nil, nil]
    var random: [[UInt8]?] = [nil, nil]
    var publicKeyX: [[UInt8]?] = [nil, nil]
    var publicKeyY: [[UInt8]?] = [nil, nil]
    var dhKeyCheck: [[UInt8]?] = [nil, nil]
    /// Frame of the PDU that completed what the key needs.
    var lastFrame = 0
    /// Derived once (nil inside: tried and not found).
    var derived: LinkKey??
    /// What c1 said, once tried (addresses known, a legacy pairing with its PDUs).
    var c1: LegacyC1Outcome?

    var isSecureConnections: Bool {
        guard let request, let response, request.count >= 4, response.count >= 4 else { return false }
        return request[3] & 0x08 != 0 && response[3] & 0x08 != 0
    }
}

/// The keys an analysis knows, and what it learns as it goes: STKs of legacy pairings it sees, LTKs of
/// LE Secure Connections pairings made with the debug key, keys distributed in SMP once their link is
/// decrypted, and keys a phone's HCI log hands its controller. A class shared by the analyzer (which sees
/// SMP and HCI) and its link-layer tracker (which asks for keys when a link starts encryption).
final class LinkKeyStore {
    private(set) var keys: [LinkKey]
    private(set) var identities: [IdentityKey]
    private var transcripts: [UInt16: PairingTranscript] = [:]
    /// Per connection handle: keys distributed on it, waiting for the Central Identification that says
    /// which EDIV/Rand select them (index 0 sent by the central, 1 by the peripheral).
    private var pendingLTK: [UInt16: [(ltk: [UInt8], frame: Int)?]] = [:]
    private var pendingIRK: [UInt16: [(irk: [UInt8], frame: Int)?]] = [:]
    /// Phone logs: LE Long Term Key Request events waiting for their reply (handle → EDIV, Rand).
    private var ltkRequests: [UInt16: (ediv: UInt16, rand: UInt64)] = [:]
    var phoneLogPath: String?
    /// TK candidates the MIC searches of this capture may try in all, what is left of them, and the Pairing Random
    /// frames of the pairings searched so far (named when the budget runs out).
    let micSearchLimit: Int
    var micSearchBudget: Int
    var micSearchedPairings: [Int] = []
    /// TK candidates c1 may try against the Pairing Confirm values in this capture, a budget of its own of the same
    /// size: a fuzzed capture can repeat a pairing's Randoms on many links, each a search of 10^6 TKs.
    var c1SearchBudget: Int

    init(_ material: LinkKeyMaterial, micSearchLimit: Int = AnalyzerOptions.defaultMaxKeySearchCandidates) {
        keys = material.linkKeys
        identities = material.identityKeys
        self.micSearchLimit = micSearchLimit
        micSearchBudget = micSearchLimit
        c1SearchBudget = micSearchLimit
    }

    var material: LinkKeyMaterial { LinkKeyMaterial(linkKeys: keys, identityKeys: identities) }

    func add(_ key: LinkKey) {
        guard !keys.contains(where: { $0.ltk == key.ltk && $0.ediv == key.ediv && $0.rand == key.rand }) else { return }
        if keys.count < 4096 { keys.append(key) }
    }

    // MARK: SMP

    /// Records one SMP PDU of connection `handle` (`centralToPeripheral` as the link says).
    ///
    /// The addresses are autoclosures: only a Central Identification needs one, and the connection keeps them as text,
    /// so parsing both on every SMP PDU showed in the decode of an air capture full of SMP
    /// (docs/performance.md#link-key-store).
    func smp(
        _ pdu: SMPPDU, raw: UnsafeRawBufferPointer, handle: UInt16, centralToPeripheral: Bool, frame: Int,
        central: @autoclosure () -> UInt64?, peripheral: @autoclosure () -> UInt64?
    ) {
        let side = centralToPeripheral ? 0 : 1
        switch pdu {
        case .pairingRequest:
            transcripts[handle] = PairingTranscript(request: Array(raw.prefix(7)), lastFrame: frame)
        case .pairingResponse:
            transcripts[handle, default: PairingTranscript()].response = Array(raw.prefix(7))
        // The spec fixes who speaks first (Vol 3, Part H, 2.3.5.5 and 2.3.5.6): the initiator's confirm, random,
        // public key and DHKey check come before the responder's. The order is what places them: air captures
        // without a direction in their pseudo-header (LT 251/256, PPI) can only guess it.
        case .pairingConfirm(let v):
            transcripts[handle, default: PairingTranscript()].confirm.fillRound(v)
        case .pairingRandom(let v):
            transcripts[handle, default: PairingTranscript()].random.fillRound(v)
            transcripts[handle]?.lastFrame = frame
            transcripts[handle]?.derived = nil
            transcripts[handle]?.c1 = nil
        case let .pairingPublicKey(x, y):
            transcripts[handle, default: PairingTranscript()].publicKeyX.fill(x)
            transcripts[handle, default: PairingTranscript()].publicKeyY.fill(y)
        case .pairingDHKeyCheck(let v):
            transcripts[handle, default: PairingTranscript()].dhKeyCheck.fill(v)
        case .encryptionInformation(let ltk):
            var p = pendingLTK[handle] ?? [nil, nil]
            p[side] = (ltk, frame)
            pendingLTK[handle] = p
        case let .centralIdentification(ediv, rand):
            if let pending = pendingLTK[handle]?[side] {
                // The distributor's LTK: the other side selects it with this EDIV/Rand in a later LL_ENC_REQ.
                add(
                    LinkKey(
                        ltk: pending.ltk, ediv: ediv, rand: rand, address: centralToPeripheral ? central() : peripheral(),
                        source: distributedSource(pending.frame)))
                pendingLTK[handle]?[side] = nil
            }
        case .identityInformation(let irk):
            var p = pendingIRK[handle] ?? [nil, nil]
            p[side] = (irk, frame)
            pendingIRK[handle] = p
        case let .identityAddressInformation(type, address):
            if let pending = pendingIRK[handle]?[side] {
                let identity = LLDeviceAddress(address.value, isRandom: type != 0)
                if !identities.contains(where: { $0.irk == pending.irk }) {
                    identities.append(IdentityKey(irk: pending.irk, identity: identity, source: distributedSource(pending.frame)))
                }
                pendingIRK[handle]?[side] = nil
            }
        default:
            break
        }
    }

    /// A connection ended: keys distributed without their Central Identification are still usable by address.
    func connectionEnded(handle: UInt16, central: UInt64?, peripheral: UInt64?) {
        if let pending = pendingLTK.removeValue(forKey: handle) {
            for (side, p) in pending.enumerated() {
                guard let p else { continue }
                // LE Secure Connections distributes no EDIV/Rand: the LTK is selected with EDIV 0, Rand 0.
                add(LinkKey(ltk: p.ltk, ediv: 0, rand: 0, address: side == 0 ? central : peripheral, source: distributedSource(p.frame)))
            }
        }
        pendingIRK.removeValue(forKey: handle)
        transcripts.removeValue(forKey: handle)
    }

    /// Keys distributed in SMP: learned from this capture, or from the phone log being read for `--keys-from`.
    private func distributedSource(_ frame: Int) -> LinkKeySource {
        phoneLogPath.map { .phoneLog(path: $0, frame: frame) } ?? .distributed(frame: frame)
    }

    // MARK: HCI (phone logs)

    /// LE Enable Encryption: the phone is central and hands its controller the key (Core Spec Vol 4, Part E, 7.8.24).
    func hciEnableEncryption(_ p: LEEnableEncryption, peer: UInt64?, frame: Int) {
        add(
            LinkKey(
                ltk: p.longTermKey, ediv: p.encryptedDiversifier, rand: p.randomNumber, address: peer,
                source: .phoneLog(path: phoneLogPath ?? "HCI log", frame: frame)))
    }

    /// LE Long Term Key Request event: the phone is peripheral; its reply carries the key.
    func hciLTKRequest(handle: UInt16, ediv: UInt16, rand: UInt64) {
        if ltkRequests.count < 4096 || ltkRequests[handle] != nil { ltkRequests[handle] = (ediv, rand) }
    }

    func hciLTKReply(handle: UInt16, ltk: [UInt8], peer: UInt64?, frame: Int) {
        let request = ltkRequests.removeValue(forKey: handle)
        add(
            LinkKey(
                ltk: ltk, ediv: request?.ediv, rand: request?.rand, address: peer,
                source: .phoneLog(path: phoneLogPath ?? "HCI log", frame: frame)))
    }

    // MARK: Asking for keys

    /// The keys worth trying when connection `handle` starts encryption with (`ediv`, `rand`), best first:
    /// the pairing just seen on it (EDIV and Rand 0), keys selected by this EDIV/Rand, keys of either device,
    /// then every other key (a bare `--ltk`).
    func candidates(handle: UInt16, ediv: UInt16, rand: UInt64, central: LLDeviceAddress?, peripheral: LLDeviceAddress?) -> [LinkKey] {
        var out: [LinkKey] = []
        if ediv == 0 && rand == 0, let derived = derive(handle: handle, central: central, peripheral: peripheral) { out.append(derived) }
        var addresses = Set<UInt64>()
        for a in [central?.value, peripheral?.value].compactMap({ $0 }) {
            addresses.insert(a)
            for id in identity(of: a) { addresses.insert(id.value) }
        }
        out += keys.filter { $0.ediv == ediv && $0.rand == rand && ($0.address == nil || addresses.contains($0.address!)) }
        out += keys.filter { $0.ediv == ediv && $0.rand == rand && $0.address != nil && !addresses.contains($0.address!) }
        out += keys.filter { k in k.address.map(addresses.contains) == true && !(k.ediv == ediv && k.rand == rand) }
        out += keys.filter { $0.address == nil && $0.ediv == nil }
        var seen = Set<[UInt8]>()
        return out.filter { seen.insert($0.ltk).inserted }
    }

    /// What the pairing seen on connection `handle` left for a key search, nil when none was seen (or it ended).
    func pairing(onLink handle: UInt16) -> PairingOnLink? {
        guard let t = transcripts[handle] else { return nil }
        if t.isSecureConnections || t.publicKeyX[0] != nil {
            let debug = (0..<2).contains { i in
                t.publicKeyX[i].map { x in t.publicKeyY[i].map { SecureConnections.isDebugPublicKey(x: x, y: $0) } ?? false } ?? false
            }
            return .secureConnections(frame: t.lastFrame, debugKey: debug)
        }
        guard let mrand = t.random[0].flatMap(Key128.init(wire:)), let srand = t.random[1].flatMap(Key128.init(wire:)) else {
            return .incomplete(frame: t.lastFrame)
        }
        let missing =
            t.request == nil ? "Pairing Request" : t.response == nil ? "Pairing Response" : t.confirm[0] == nil ? "Pairing Confirm" : nil
        return .legacy(
            mrand: mrand, srand: srand, missingForC1: missing, c1: t.c1, space: LegacyTKSpace(request: t.request, response: t.response),
            frame: t.lastFrame)
    }

    /// The identity an address resolves to with a known IRK (Core Spec Vol 3, Part H, 2.2.2), or none.
    func identity(of address: UInt64) -> [LLDeviceAddress] {
        IdentityResolver.resolve(address, identities).map { [$0] } ?? []
    }

    /// The key a pairing seen on `handle` produced: the STK of a legacy pairing (TK found by search) or the
    /// LTK of an LE Secure Connections pairing where a side used the debug key pair.
    private func derive(handle: UInt16, central: LLDeviceAddress?, peripheral: LLDeviceAddress?) -> LinkKey? {
        guard var t = transcripts[handle] else { return nil }
        if let done = t.derived { return done }
        var result: LinkKey?
        if let central, let peripheral {
            let initiator = PairingAddress(central.bytes, isRandom: central.isRandom)
            let responder = PairingAddress(peripheral.bytes, isRandom: peripheral.isRandom)
            if t.isSecureConnections {
                result = Self.secureConnectionsDebugKey(t, initiator: initiator, responder: responder)
            } else if let request = t.request, let response = t.response, let mconfirm = t.confirm[0].flatMap(Key128.init(wire:)),
                let mrand = t.random[0].flatMap(Key128.init(wire:)), let srand = t.random[1].flatMap(Key128.init(wire:))
            {
                let exchange = LegacyPairingExchange(
                    pairingRequest: request, pairingResponse: response, initiator: initiator,
                    responder: responder, mrand: mrand, srand: srand, mconfirm: mconfirm,
                    sconfirm: t.confirm[1].flatMap(Key128.init(wire:)))
                let space = LegacyTKSpace(request: request, response: response)
                // TK 0 is tried even when the budget is spent (as by the MIC search): one candidate.
                let limit = min(space.candidates, max(1, c1SearchBudget))
                let (found, tried) = LegacyPairingCracker.search(exchange, limit: limit)
                c1SearchBudget = max(0, c1SearchBudget - tried)
                if let found {
                    result = LinkKey(
                        ltk: found.stk.bytes, ediv: 0, rand: 0, source: .legacyPairing(passkey: found.passkey ?? 0, frame: t.lastFrame))
                }
                t.c1 = found != nil ? .found : limit < space.candidates ? .budgetSpent(tried: tried) : .noMatch(space)
            }
        }
        t.derived = .some(result)
        transcripts[handle] = t
        return result
    }

    private static func secureConnectionsDebugKey(_ t: PairingTranscript, initiator: PairingAddress, responder: PairingAddress) -> LinkKey?
    {
        guard let request = t.request, let response = t.response, request.count == 7, response.count == 7,
            let xa = t.publicKeyX[0], let ya = t.publicKeyY[0], let xb = t.publicKeyX[1], let yb = t.publicKeyY[1],
            let na = t.random[0].flatMap(Key128.init(wire:)), let nb = t.random[1].flatMap(Key128.init(wire:))
        else { return nil }
        let exchange = SecureConnectionsExchange(
            pairingRequest: request, pairingResponse: response, initiator: initiator, responder: responder,
            initiatorPublicKeyX: xa, initiatorPublicKeyY: ya, responderPublicKeyX: xb,
            responderPublicKeyY: yb, na: na, nb: nb,
            ea: t.dhKeyCheck[0].flatMap(Key128.init(wire:)), eb: t.dhKeyCheck[1].flatMap(Key128.init(wire:)))
        // Just Works / Numeric Comparison use ra = rb = 0; with a passkey the checks fail and the LTK is still right
        // (the MIC of the first encrypted PDU decides), so the checks only inform.
        guard let keys = SecureConnections.deriveWithDebugKey(exchange) else { return nil }
        return LinkKey(ltk: keys.ltk.bytes, ediv: 0, rand: 0, source: .secureConnectionsDebugKey(frame: t.lastFrame))
    }

}

/// A pairing as a key search sees it (``LinkKeyStore/pairing(onLink:)``): the frame is the last Pairing Random's.
enum PairingOnLink {
    /// `missingForC1`: the PDU c1 needs that the capture lacks (Pairing Request, Response or the central's Confirm),
    /// nil when c1 can check a TK given the addresses; `c1`: what c1 said, once tried; `space`: the TKs the association
    /// model allows.
    case legacy(mrand: Key128, srand: Key128, missingForC1: String?, c1: LegacyC1Outcome?, space: LegacyTKSpace, frame: Int)
    /// `debugKey`: a side's Pairing Public Key is the specification's debug key.
    case secureConnections(frame: Int, debugKey: Bool)
    /// A Pairing Random of either side is missing.
    case incomplete(frame: Int)
}

extension Array where Element == [UInt8]? {
    /// The initiator's slot if empty, else the responder's (later values are not kept).
    mutating func fill(_ value: [UInt8]) {
        if self[0] == nil { self[0] = value } else if self[1] == nil { self[1] = value }
    }

    /// As ``fill(_:)``, except that a value after both slots are full begins a new round: LE Secure Connections Passkey
    /// Entry repeats the Pairing Confirm and Random exchange 20 times, and f5 takes the last round's Na and Nb
    /// (Core Vol 3, Part H, 2.3.5.6.3 and 2.3.5.6.5). Keeping the first round's made a debug-key LTK that decrypts
    /// nothing (the bsniffhub passkey 725522 capture: round 20's Randoms at 489/492). Other methods have one round.
    mutating func fillRound(_ value: [UInt8]) {
        if self[0] != nil && self[1] != nil { self = [value, nil] } else { fill(value) }
    }
}

extension LLDeviceAddress {
    /// The 6 octets as the air carries them (least significant first): its encoder's output.
    var bytes: [UInt8] {
        var w = ByteWriter(capacity: 6)
        encode(into: &w)
        return w.bytes
    }
}
