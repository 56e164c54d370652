import BLEProtocols
import Testing

/// The association model of Core Spec Vol 3, Part H, 2.3.5.1, against Table 2.8 typed out cell by cell (responder
/// rows, initiator columns) and the OOB and MITM rules before it.
@Suite struct SMPAssociationModelTests {
    typealias M = SMPAssociationModel.Method

    static func features(_ io: UInt8, oob: Bool = false, mitm: Bool = true, sc: Bool, bonding: Bool = true) -> SMPPairingParameters {
        var auth: SMPAuthReq = bonding ? [.bonding] : []
        if mitm { auth.insert(.mitm) }
        if sc { auth.insert(.secureConnections) }
        return SMPPairingParameters(
            ioCapability: SMPIOCapability(rawValue: io), oobDataFlag: oob ? 1 : 0, authReq: auth, initiatorKeyDistribution: [.encKey],
            responderKeyDistribution: [.encKey])
    }

    /// Table 2.8 (legacy / Secure Connections where they differ), rows the responder: DisplayOnly, DisplayYesNo,
    /// KeyboardOnly, NoInputNoOutput, KeyboardDisplay; columns the initiator in the same order.
    static let legacy: [[M]] = [
        [.justWorks, .justWorks, .passkeyEntry, .justWorks, .passkeyEntry],
        [.justWorks, .justWorks, .passkeyEntry, .justWorks, .passkeyEntry],
        [.passkeyEntry, .passkeyEntry, .passkeyEntry, .justWorks, .passkeyEntry],
        [.justWorks, .justWorks, .justWorks, .justWorks, .justWorks],
        [.passkeyEntry, .passkeyEntry, .passkeyEntry, .justWorks, .passkeyEntry],
    ]
    static let secure: [[M]] = [
        [.justWorks, .justWorks, .passkeyEntry, .justWorks, .passkeyEntry],
        [.justWorks, .numericComparison, .passkeyEntry, .justWorks, .numericComparison],
        [.passkeyEntry, .passkeyEntry, .passkeyEntry, .justWorks, .passkeyEntry],
        [.justWorks, .justWorks, .justWorks, .justWorks, .justWorks],
        [.passkeyEntry, .numericComparison, .passkeyEntry, .justWorks, .numericComparison],
    ]

    @Test(arguments: [false, true])
    func everyCellOfTable2_8(_ sc: Bool) throws {
        for r in 0..<5 {
            for i in 0..<5 {
                let m = try #require(
                    SMPAssociationModel(
                        initiator: Self.features(UInt8(i), sc: sc), responder: Self.features(UInt8(r), mitm: false, sc: sc)))
                #expect(m.method == (sc ? Self.secure : Self.legacy)[r][i], "initiator \(i), responder \(r)")
                #expect(m.secureConnections == sc && m.bonding)
            }
        }
    }

    /// Table 2.8's Passkey Entry cells name who shows the passkey ("Initiator displays, responder inputs"…), typed out
    /// (rows the responder, columns the initiator, as above; "I" initiator shows, "R" responder shows, "-" both type,
    /// "." not Passkey Entry). Bumble's `PAIRING_METHODS` gives the same cells (its display flags per side).
    static let passkeyShownBy: [String: [String]] = [
        "legacy": ["..R.R", "..R.R", "II-.I", ".....", "IIR.I"],
        "secure": ["..R.R", "..R..", "II-.I", ".....", "I.R.."],
    ]

    @Test(arguments: [false, true])
    func passkeyEntryCellsSayWhoShowsThePasskey(_ sc: Bool) throws {
        let table = Self.passkeyShownBy[sc ? "secure" : "legacy"]!
        for r in 0..<5 {
            let row = Array(table[r])
            for i in 0..<5 {
                let m = try #require(
                    SMPAssociationModel(
                        initiator: Self.features(UInt8(i), sc: sc), responder: Self.features(UInt8(r), mitm: false, sc: sc)))
                let expected: SMPAssociationModel.PasskeyDisplay? =
                    switch row[i] {
                    case "I": .initiator
                    case "R": .responder
                    case "-": .neither
                    default: nil
                    }
                #expect(m.passkeyDisplay == expected, "initiator \(i), responder \(r)")
                #expect((m.method == .passkeyEntry) == (expected != nil))
            }
        }
    }

    @Test func oobMitmScAndBondingRules() throws {
        let kd: UInt8 = 4, yn: UInt8 = 1
        // Legacy: OOB only when both have OOB data; one alone falls back to the IO capabilities.
        let bothOOB = SMPAssociationModel(
            initiator: Self.features(kd, oob: true, sc: false), responder: Self.features(yn, oob: true, sc: false))
        #expect(bothOOB?.method == .outOfBand)
        let oneOOB = SMPAssociationModel(initiator: Self.features(kd, oob: true, sc: false), responder: Self.features(yn, sc: false))
        #expect(oneOOB?.method == .passkeyEntry)
        // Secure Connections: OOB when either has it; SC only when both ask for it.
        let scOneOOB = SMPAssociationModel(initiator: Self.features(kd, sc: true), responder: Self.features(yn, oob: true, sc: true))
        #expect(scOneOOB?.method == .outOfBand && scOneOOB?.secureConnections == true)
        let halfSC = SMPAssociationModel(initiator: Self.features(kd, sc: true), responder: Self.features(yn, sc: false))
        #expect(halfSC?.secureConnections == false && halfSC?.method == .passkeyEntry)
        // Neither sets MITM: Just Works whatever the IO capabilities.
        let noMITM = SMPAssociationModel(
            initiator: Self.features(kd, mitm: false, sc: true), responder: Self.features(kd, mitm: false, sc: true))
        #expect(noMITM?.method == .justWorks)
        // Bonding only when both ask for it; a reserved IO capability leaves the method unknown.
        let oneBonds = SMPAssociationModel(initiator: Self.features(kd, sc: true), responder: Self.features(kd, sc: true, bonding: false))
        #expect(oneBonds?.bonding == false)
        #expect(oneBonds?.description == "LE Secure Connections, Numeric Comparison, no bonding")
        #expect(SMPAssociationModel(initiator: Self.features(7, sc: true), responder: Self.features(kd, sc: true)) == nil)
    }
}
