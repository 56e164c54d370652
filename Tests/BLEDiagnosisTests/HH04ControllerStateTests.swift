import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// HH-04 on a refusal the controller's state prescribes (issue 48): LE Set Scan Parameters while scanning is on (Core
/// Spec Vol 4, Part E, 7.8.10; BTstack's WinUSB log, frame 246 of
/// `pklg-btstack-be_tangxinlou-winusb-csr8510-le-central-gatt-idle-30s-read-by-type-handle-0.pklg`), and LE Set Scan
/// Enable turning scanning off while it is off already (macOS bluetoothd's second disable, frame 111 of
/// `pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg`) are info, with the state that
/// explains them; the same refusals in a state that does not explain them stay a warning.
extension DiagnosisRuleTests {
    @Suite struct HH04ControllerState {
        /// LE Set Scan Parameters: active, interval 0x60, window 0x30, public, accept all.
        static let scanParameters: [UInt8] = [1, 0x60, 0, 0x30, 0, 0, 0]

        static func scanEnable(_ b: CaptureBuilder, _ on: Bool) -> CaptureBuilder {
            b.command(HCIBuild.command(.leSetScanEnable, parameters: [on ? 1 : 0, 0])).event(HCIBuild.commandComplete(.leSetScanEnable))
        }

        @Test func scanParametersRefusedWhileScanningIsThePrescribedAnswer() throws {
            var b = CaptureBuilder()
            let enable = b.nextFrame
            b = Self.scanEnable(b, true)
            let refused = b.nextFrame + 1
            b = b.commandRefusedByComplete(.leSetScanParameters, parameters: Self.scanParameters, status: .commandDisallowed)
            let d = try #require(try RuleTest.diagnose(b).of("HH-04").first)
            #expect(d.severity == .info && d.frame == refused)
            #expect(d.causes.first?.hasPrefix("scanning was on (frame \(enable)): the spec has the controller refuse") == true)
            #expect(d.causes.first?.contains("Core Spec Vol 4, Part E, 7.8.10") == true)
        }

        @Test func nearMissScanParametersRefusedOnceScanningStoppedStayAWarning() throws {
            var b = Self.scanEnable(Self.scanEnable(CaptureBuilder(), true), false)
            b = b.commandRefusedByComplete(.leSetScanParameters, parameters: Self.scanParameters, status: .commandDisallowed)
            let d = try #require(try RuleTest.diagnose(b).of("HH-04").first)
            #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
        }

        @Test func aScanDisableRefusedWhileScanningWasOffAlreadyLosesNothing() throws {
            // macOS bluetoothd disables scanning twice; the Broadcom controller refuses the second (frames 166, 168).
            var b = Self.scanEnable(CaptureBuilder().reset(), true)
            let disabled = b.nextFrame
            b = Self.scanEnable(b, false).commandRefusedByComplete(.leSetScanEnable, parameters: [0, 1], status: .commandDisallowed)
            let d = try #require(try RuleTest.diagnose(b).of("HH-04").first)
            #expect(d.severity == .info)
            #expect(d.causes.first?.hasPrefix("scanning was off already (frame \(disabled)): the controller refuses a command") == true)
        }

        @Test func nearMissAScanDisableRefusedWhileScanningIsOnOrUnknownStaysAWarning() throws {
            // Scanning on (frame 1): the disable refused leaves it on, not what the host asked for.
            let on = Self.scanEnable(CaptureBuilder(), true)
            // No reset and no scan enable before: the state is not in the log.
            for b in [on, CaptureBuilder()] {
                let refused = b.commandRefusedByComplete(.leSetScanEnable, parameters: [0, 1], status: .commandDisallowed)
                let d = try #require(try RuleTest.diagnose(refused).of("HH-04").first)
                #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
            }
        }
    }
}
