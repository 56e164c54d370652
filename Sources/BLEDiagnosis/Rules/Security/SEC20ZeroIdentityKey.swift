import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let zeroIdentityKey = FindingCode(
        "SEC-20", layer: .security, severity: .info,
        title: "All-zero identity resolving key (no privacy)",
        explain: .init(
            meaning:
                "A device distributed an Identity Resolving Key of all zeros in a pairing. It gives no key to resolve private addresses with: a resolving list entry with a zero IRK makes the controller expect the device's identity address (Core Spec Vol 6, Part B, 4.7). The device does not use privacy with this peer, so it can be followed by its identity address. Stacks built without privacy send one (Zephyr).",
            advice:
                "Nothing to fix if the product needs no privacy. If it should not be trackable, enable privacy (a real IRK and resolvable private addresses)."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-20: a side of an LE pairing distributed Identity Information with an IRK of all zeros (Core Spec Vol 3, Part H,
/// 3.6.4): it will not use resolvable private addresses with this peer (Vol 6, Part B, 4.7: a zero peer IRK in the
/// resolving list means the identity address is used). A fact about privacy, not a fault: info.
struct SEC20ZeroIdentityKey: DiagnosisRule {
    static let code = FindingCode.zeroIdentityKey
    static let group = RuleGroup.security
    static let evidence = "SMP Identity Information (the IRK) and Identity Address Information of each pairing"
    static let anchor = "Core Spec Vol 6, Part B, 4.7"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.flatMap { c, record in
            record.pairings.compactMap { p -> Diagnosis? in
                let zero = p.identities.filter(\.value.irkIsZero).sorted { $0.value.frame < $1.value.frame }
                guard let first = zero.first?.value else { return nil }
                let sides = zero.map { sender, id in
                    e.side(sender)
                        + (id.address.map { " (identity address \($0), frame \(id.frame))" } ?? " (frame \(id.frame))")
                }
                let who =
                    zero.count == 1
                    ? "\(sides[0]) distributed an all-zero identity resolving key"
                    : "both sides distributed all-zero identity resolving keys: \(sides.joined(separator: " and "))"
                let whom =
                    zero.count == 1
                    ? "it does not use privacy with this peer, and can be followed by its identity address"
                    : "neither uses privacy with the other, and each can be followed by its identity address"
                return Diagnosis(
                    rule: Self.code, severity: severity, frame: first.frame,
                    message: "\(e.linkName(c).capitalizedFirst): in the pairing at frame \(p.frame), \(who); \(whom).",
                    headline: "all-zero IRK with \(e.deviceName(c))",
                    supporting: zero.dropFirst().map { CitedFrame($0.value.frame, "Identity Information") },
                    causes: ["the device's stack is built without privacy", "the device has no IRK of its own"],
                    device: c.peerAddress, connection: c.number,
                    facts: [UsedFact("IRK", "all zeros", .observed(frame: first.frame))],
                    fold: "\(e.deviceName(c))")
            }
        }
    }
}
