import BLEAnalysis

/// Every diagnosis rule, one row each (the rule's own file declares its code, with its severity, explanation, fold
/// and traits, and says what it reads and says). Adding a rule: one file under `Rules/<group>/` and one row here;
/// `docs/diagnosis.md` is generated from this table (`scripts/gen-diagnosis-docs.sh`, checked by
/// `DiagnosisRuleTableTests`).
///
/// BLEAnalysis reads the table as ``DiagnosisRules/all`` without importing this module: it declares this function by
/// its symbol's name, and the linker binds it here. So BLEReports, which names the rules only through
/// `DiagnosisRules`, does not wait for this module, and the two build side by side (docs/performance.md#build-time).
/// A program that links BLEAnalysis' diagnosis without this module fails to link (undefined `blescope_diagnosisRules`).
@_silgen_name("blescope_diagnosisRules")
public func diagnosisRuleTable() -> [any DiagnosisRule.Type] {
    [
        // Capture quality (evaluated first: they qualify the others)
        CQ01StartedMidConnection.self,
        CQ02PayloadsCut.self,
        CQ03EndsTooSoon.self,
        CQ04TimelineBreak.self,
        CQ05AirCaptureBlind.self,
        // Connection establishment
        CE01ConnectGaveUp.self,
        CE02FailedToEstablish.self,
        CE03CreateRefused.self,
        CE04PeerRefusedCentral.self,
        CE05RemoteFeaturesFailed.self,
        // Disconnection
        DC01SupervisionTimeout.self,
        DC02PeerEndedLink.self,
        DC03ThisSideEndedLink.self,
        DC04ProcedureTimeout.self,
        DC05InstantPassed.self,
        DC06ProcedureCollision.self,
        DC07MICFailure.self,
        DC08DataNeverLeft.self,
        DC09Flapping.self,
        // Security
        SEC01BondLostOnPeripheral.self,
        SEC02NoKeyForCentral.self,
        SEC03PairingFailed.self,
        SEC04PairingStalled.self,
        SEC05InsufficientSecurity.self,
        SEC06KeySizeTooShort.self,
        SEC07AuthenticatedPayloadTimeout.self,
        SEC08KeySizeBelowFull.self,
        SEC09KeySizeDowngrade.self,
        SEC10LegacyPairingCrackable.self,
        SEC11DebugKey.self,
        SEC12NonZeroDiversifier.self,
        SEC13MITMNotAchieved.self,
        SEC14SameKeyDifferentPeers.self,
        SEC15BondNeverEncrypted.self,
        SEC16PairingEveryConnection.self,
        SEC17KeySizeOutOfRange.self,
        SEC18DHKeyCheckSkipped.self,
        SEC19InvalidPublicKey.self,
        SEC20ZeroIdentityKey.self,
        SEC21FixedEncryptionRandom.self,
        SEC22UserStepAnsweredByHost.self,
        // ATT and GATT
        GATT01RequestTimedOut.self,
        GATT02ProtocolViolation.self,
        GATT03NotificationsNotEnabled.self,
        GATT04SubscriptionRefused.self,
        GATT05SubscribedButSilent.self,
        GATT06StaleHandles.self,
        GATT07SmallMTU.self,
        GATT08ErrorResponse.self,
        // Throughput and flow control
        TP01ControllerStalled.self,
        TP02BufferOverflow.self,
        TP03ParameterLimited.self,
        TP04AppPaced.self,
        TP05CreditChannelStalled.self,
        // Link parameters
        LP01ParameterRequestRejected.self,
        LP02ShortSupervisionTimeout.self,
        LP03ParameterPingPong.self,
        LP04PHYUpdateFailed.self,
        LP05ProcedureUnsupported.self,
        LP06RadioInterference.self,
        // Controller and host health
        HH01CommandTimeout.self,
        HH02HardwareError.self,
        HH03StackRestarted.self,
        HH04CommandErrors.self,
        HH05QualityWarning.self,
        HH06HandleDisagreement.self,
        HH07SeveralControllers.self,
        // LE Audio
        LA01IsochronousSetupFailed.self,
        LA02ASEOperationRefused.self,
        LA03AudioStreamLossy.self,
        LA04AudioStreamStopped.self,
        LA05BIGSyncLost.self,
        LA06LEAudioChoppy.self,
        // BR/EDR
        BR01PageTimeout.self,
        BR02ConnectionFailed.self,
        BR03PairingFailed.self,
        BR04LinkKeyMissing.self,
        BR05EncryptionFailed.self,
        BR06RoleOrSniffRefused.self,
        BR07A2DPStreamStalled.self,
        BR08AVDTPRejected.self,
        BR09SynchronousSetupFailed.self,
        BR10HFPConnectionFailed.self,
        BR11HFPCodecFallback.self,
        BR12RenegotiationLoop.self,
        BR13ChannelRefused.self,
        // Air captures: the ends the capture does not show
        DC10AirLinkEndUnseen.self,
        // Link-layer compliance (air captures)
        LL01ProcedureLoop.self,
        LL02InvalidChannelMap.self,
        LL03ParameterOutOfRange.self,
        LL04ReservedLLID.self,
        LL05LengthOverflow.self,
        LL06ControlPDUSize.self,
        // Scenarios: the capture's shape as a whole (read by the rules above through `Evidence.scenarios`)
        SC01UnknownFirmwareUpdate.self,
        SC02FuzzingRun.self,
    ]
}
