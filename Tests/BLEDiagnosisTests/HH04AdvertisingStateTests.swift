import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// HH-04 on refusals the advertising state or a finished name request explains (issue 48), each found on a real log:
/// Android's new address for an enabled non-connectable set (`android-btsnoop_lightctl-2h-…`, frame 35705, set 3
/// enabled at 34866), LE Set Random Address while scanning (`android-btsnoop_mabip-amuza-…`, 14158 after 14155),
/// periodic advertising turned off while off (nexxtender 1153 after the Reset at 1; linux-inquiry 861, the set removed
/// at 862), and a name request's cancel after the request completed (qcom msp 22507 after 22504). Each is info with the
/// frame that set the state; the same refusal in a state that does not explain it stays a warning.
extension DiagnosisRuleTests {
    @Suite struct HH04AdvertisingState {
        static let address: [UInt8] = [0x9A, 0x48, 0xCD, 0xAC, 0x1C, 0x52]

        static func accepted(_ b: CaptureBuilder, _ op: HCICommand, _ parameters: [UInt8]) -> CaptureBuilder {
            b.command(HCIBuild.command(op, parameters: parameters)).event(HCIBuild.commandComplete(op))
        }
        static func extendedEnable(_ b: CaptureBuilder, _ on: Bool, set: UInt8) -> CaptureBuilder {
            accepted(b, .leSetExtendedAdvertisingEnable, [on ? 1 : 0, 1, set, 0, 0, 0])
        }
        static func refusedAddress(_ b: CaptureBuilder, set: UInt8) -> CaptureBuilder {
            b.commandRefusedByComplete(.leSetAdvertisingSetRandomAddress, parameters: [set] + address, status: .commandDisallowed)
        }
        static func refusedPeriodicDisable(_ b: CaptureBuilder, set: UInt8) -> CaptureBuilder {
            b.commandRefusedByComplete(.leSetPeriodicAdvertisingEnable, parameters: [0, set], status: .commandDisallowed)
        }
        static func hh04(_ b: CaptureBuilder) throws -> Diagnosis { try #require(try RuleTest.diagnose(b).of("HH-04").first) }

        @Test func aNewAddressForAnEnabledSetIsRefusedAndTheSetKeepsItsAddress() throws {
            let enabled = CaptureBuilder().nextFrame
            let b = Self.extendedEnable(CaptureBuilder(), true, set: 3)
            let refused = b.nextFrame + 1
            let d = try Self.hh04(Self.refusedAddress(b, set: 3))
            #expect(d.severity == .info && d.frame == refused)
            #expect(
                d.causes.first?.hasPrefix("advertising set 3 was enabled (frame \(enabled)): the controller refuses a new address") == true)
            #expect(d.causes.first?.contains("7.8.52") == true)
        }

        @Test func nearMissANewAddressRefusedForASetDisabledOrNotEnabledStaysAWarning() throws {
            // Set 3 enabled then disabled; set 1 enabled while set 3's address is refused.
            let disabled = Self.extendedEnable(Self.extendedEnable(CaptureBuilder(), true, set: 3), false, set: 3)
            let other = Self.extendedEnable(CaptureBuilder(), true, set: 1)
            for b in [disabled, other] {
                let d = try Self.hh04(Self.refusedAddress(b, set: 3))
                #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
            }
        }

        /// Android's LE Get Vendor Capabilities names the platform (AOSP `gd/hci/controller.cc`).
        static var android: CaptureBuilder { CaptureBuilder().vendorCommand(HCICommand(ogf: 0x3F, ocf: 0x153)) }
        static func addressRefusal(_ b: CaptureBuilder) throws -> Diagnosis {
            try #require(try RuleTest.diagnose(b).of("HH-04").first { $0.headline.hasPrefix("LE Set Advertising Set Random Address") })
        }

        /// `android-btsnoop_lightctl-midlink-…-adv-set-addr-0c.log` (tshark): set 3's new address refused 0x0C at 7546
        /// with no enable, disable or Reset of set 3 before it in the log; the host disables sets 0, 3, 4, 5 at 17292.
        /// AOSP rotates only enabled sets' addresses (`le_advertising_manager.cc`), so set 3 was enabled before the log.
        @Test func androidsRotationOfASetEnabledBeforeTheLogIsTheControllersAnswer() throws {
            let b = Self.refusedAddress(Self.android, set: 3)
            let refused = b.nextFrame - 1
            let disabled = b.nextFrame
            let d = try Self.addressRefusal(Self.extendedEnable(b, false, set: 3))
            #expect(d.severity == .info && d.frame == refused)
            #expect(d.causes.first?.hasPrefix("Android gives each advertising set it has enabled a new address on a timer") == true)
            #expect(
                d.causes.first?.contains(
                    "set 3 was enabled before the log began, the host disabling it at frame \(disabled) with no enable of it between")
                    == true)
            #expect(d.causes.first?.contains("7.8.52") == true)
        }

        @Test func nearMissAndroidsRefusedAddressForASetTheLogShowsDisabledStaysAWarning() throws {
            // The log shows set 3 disabled (accepted) before the refusal: not the rotation of an enabled set.
            let shownOff = Self.refusedAddress(Self.extendedEnable(Self.android, false, set: 3), set: 3)
            // The same refusal on a log that names no platform: nothing says the set was enabled.
            let unnamed = Self.refusedAddress(CaptureBuilder(), set: 3)
            for b in [shownOff, unnamed] {
                let d = try Self.addressRefusal(b)
                #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
            }
        }

        @Test func aRandomAddressRefusedWhileScanningIsThePrescribedAnswer() throws {
            let scanning = CaptureBuilder().nextFrame
            let b = Self.accepted(CaptureBuilder(), .leSetScanEnable, [1, 0])
                .commandRefusedByComplete(.leSetRandomAddress, parameters: Self.address, status: .commandDisallowed)
            let d = try Self.hh04(b)
            #expect(d.severity == .info)
            #expect(
                d.causes.first?.hasPrefix("scanning was on (frame \(scanning)): the spec has the controller refuse a new random address")
                    == true)
        }

        @Test func nearMissARandomAddressRefusedWithScanningOffStaysAWarning() throws {
            let b = Self.accepted(Self.accepted(CaptureBuilder(), .leSetScanEnable, [1, 0]), .leSetScanEnable, [0, 0])
                .commandRefusedByComplete(.leSetRandomAddress, parameters: Self.address, status: .commandDisallowed)
            #expect(try Self.hh04(b).severity == .warning)
        }

        @Test func periodicAdvertisingTurnedOffWhileOffSinceTheResetLosesNothing() throws {
            let d = try Self.hh04(Self.refusedPeriodicDisable(CaptureBuilder().reset(), set: 0))
            #expect(d.severity == .info)
            #expect(d.causes.first?.hasPrefix("periodic advertising on set 0 was off already (since the Reset at frame 1)") == true)
        }

        @Test func periodicAdvertisingShownOffByTheSetsRemovalRightAfter() throws {
            // No Reset in the log (linux-inquiry): the removal the controller accepts at once shows it was off.
            let refused = Self.refusedPeriodicDisable(CaptureBuilder(), set: 3)
            let removal = refused.nextFrame
            let d = try Self.hh04(Self.accepted(refused, .leRemoveAdvertisingSet, [3]))
            #expect(d.severity == .info)
            #expect(d.causes.first?.hasPrefix("the controller accepted set 3's removal at frame \(removal)") == true)
        }

        @Test func nearMissPeriodicAdvertisingOnOrNotShownOffStaysAWarning() throws {
            // Enabled after the Reset: the refused disable leaves it on. No Reset, the removal refused: not shown off.
            let on = Self.refusedPeriodicDisable(Self.accepted(CaptureBuilder().reset(), .leSetPeriodicAdvertisingEnable, [1, 0]), set: 0)
            let removalRefused = Self.refusedPeriodicDisable(CaptureBuilder(), set: 3)
                .commandRefusedByComplete(.leRemoveAdvertisingSet, parameters: [3], status: .commandDisallowed)
            for b in [on, removalRefused] {
                let d = try #require(try RuleTest.diagnose(b).of("HH-04").first { $0.headline.hasPrefix("LE Set Periodic") })
                #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
            }
        }

        static func nameRequest(_ b: CaptureBuilder) -> CaptureBuilder {
            b.command(HCIBuild.command(.remoteNameRequest, parameters: Self.address + [1, 0, 0, 0]))
                .event(HCIBuild.commandStatus(.remoteNameRequest))
        }
        static func nameComplete(_ b: CaptureBuilder) -> CaptureBuilder {
            b.event(HCIBuild.event(HCIEventCode(0x07), parameters: [0x04] + Self.address + [UInt8](repeating: 0, count: 248)))
        }

        @Test func aNameRequestCancelRefusedAfterTheRequestCompletedHadNothingToCancel() throws {
            let pending = Self.nameRequest(CaptureBuilder())
            let cancel = pending.command(HCIBuild.command(.remoteNameRequestCancel, parameters: Self.address))
            let completed = cancel.nextFrame
            let b = Self.nameComplete(cancel).event(
                HCIBuild.commandComplete(.remoteNameRequestCancel, returnParameters: [0x12] + Self.address))
            let d = try Self.hh04(b)
            #expect(d.severity == .info)
            #expect(d.causes.first == "the name request it cancels had completed (frame \(completed)): nothing was left to cancel")
        }

        @Test func nearMissANameRequestCancelRefusedWhileTheRequestRunsStaysAWarning() throws {
            let b = Self.nameRequest(CaptureBuilder())
                .commandRefusedByComplete(.remoteNameRequestCancel, parameters: Self.address, status: .commandDisallowed)
            #expect(try Self.hh04(b).severity == .warning)
        }
    }
}
