/// The LE Audio numbers the audio profiles' codecs name (Bluetooth Assigned Numbers 2.11, 6.12; ASCS 1.0 5.1–5.8,
/// Table 5.1; BASS 1.0 3.1–3.2). Tables, not code: a value missing here prints as its number.
public enum LEAudioTables {
    /// ASE states (ASCS 4.1, Table 4.2).
    public static let aseStates: [Int64: String] = [
        0: "Idle", 1: "Codec Configured", 2: "QoS Configured", 3: "Enabling", 4: "Streaming", 5: "Disabling", 6: "Releasing",
    ]
    /// ASE Control Point opcodes (ASCS 5, Table 5.1).
    public static let aseOpcodes: [Int64: String] = [
        1: "Config Codec", 2: "Config QoS", 3: "Enable", 4: "Receiver Start Ready", 5: "Disable", 6: "Receiver Stop Ready",
        7: "Update Metadata", 8: "Release",
    ]
    /// ASE Control Point response codes (ASCS 5, Table 5.1).
    public static let aseResponseCodes: [Int64: String] = [
        0x00: "Success", 0x01: "Unsupported Opcode", 0x02: "Invalid Length", 0x03: "Invalid ASE_ID",
        0x04: "Invalid ASE State Machine Transition", 0x05: "Invalid ASE Direction", 0x06: "Unsupported Audio Capabilities",
        0x07: "Unsupported Configuration Parameter Value", 0x08: "Rejected Configuration Parameter Value",
        0x09: "Invalid Configuration Parameter Value", 0x0A: "Unsupported Metadata", 0x0B: "Rejected Metadata",
        0x0C: "Invalid Metadata", 0x0D: "Insufficient Resources", 0x0E: "Unspecified Error",
    ]
    /// ASE Control Point reasons, for the configuration response codes (ASCS 5, Table 5.1).
    public static let aseReasons: [Int64: String] = [
        0x00: "None", 0x01: "Codec_ID", 0x02: "Codec_Specific_Configuration", 0x03: "SDU_Interval", 0x04: "Framing",
        0x05: "PHY", 0x06: "Maximum_SDU_Size", 0x07: "Retransmission_Number", 0x08: "Max_Transport_Latency",
        0x09: "Presentation_Delay", 0x0A: "Invalid_ASE_CIS_Mapping",
    ]
    /// Config Codec Target_Latency (ASCS 5.1).
    public static let targetLatencies: [Int64: String] = [1: "Low Latency", 2: "Balanced", 3: "High Reliability"]
    /// Codec_ID coding formats (Assigned Numbers 2.11).
    public static let codingFormats: [Int64: String] = [
        0x00: "µ-law", 0x01: "A-law", 0x02: "CVSD", 0x03: "Transparent", 0x04: "Linear PCM", 0x05: "mSBC", 0x06: "LC3",
        0x07: "G.729A", 0xFF: "Vendor Specific",
    ]
    /// LC3 Sampling_Frequency configuration values (Assigned Numbers 6.12.5.1), in Hz.
    public static let samplingFrequencies: [Int64: Int64] = [
        0x01: 8000, 0x02: 11025, 0x03: 16000, 0x04: 22050, 0x05: 24000, 0x06: 32000, 0x07: 44100, 0x08: 48000,
        0x09: 88200, 0x0A: 96000, 0x0B: 176400, 0x0C: 192000, 0x0D: 384000,
    ]
    /// Frame_Duration configuration values (6.12.5.2), in µs.
    public static let frameDurations: [Int64: Int64] = [0x00: 7500, 0x01: 10000]
    /// Supported_Sampling_Frequencies bits (6.12.4.1).
    public static let supportedFrequencyBits: [String?] = [
        "8k", "11.025k", "16k", "22.05k", "24k", "32k", "44.1k", "48k", "88.2k", "96k", "176.4k", "192k", "384k",
    ]
    /// Supported_Frame_Durations bits (6.12.4.2).
    public static let supportedDurationBits: [String?] = ["7.5ms", "10ms", nil, nil, "7.5msPreferred", "10msPreferred"]
    /// Context Type bits (Assigned Numbers 6.12.3): Available/Supported Audio Contexts, Preferred/Streaming contexts.
    public static let contextBits: [String?] = [
        "Unspecified", "Conversational", "Media", "Game", "Instructional", "VoiceAssistants", "Live", "SoundEffects",
        "Notifications", "Ringtone", "Alerts", "EmergencyAlarm",
    ]
    /// Audio Location bits (Assigned Numbers 6.12.1).
    public static let locationBits: [String?] = [
        "FrontLeft", "FrontRight", "FrontCenter", "LowFrequencyEffects1", "BackLeft", "BackRight", "FrontLeftOfCenter",
        "FrontRightOfCenter", "BackCenter", "LowFrequencyEffects2", "SideLeft", "SideRight", "TopFrontLeft", "TopFrontRight",
        "TopFrontCenter", "TopCenter", "TopBackLeft", "TopBackRight", "TopSideLeft", "TopSideRight", "TopBackCenter",
        "BottomFrontCenter", "BottomFrontLeft", "BottomFrontRight", "FrontLeftWide", "FrontRightWide", "LeftSurround",
        "RightSurround",
    ]
    /// Codec_Specific_Capabilities LTV types (6.12.4).
    public static let capabilityTypes: [Int64: String] = [
        0x01: "supportedSamplingFrequencies", 0x02: "supportedFrameDurations", 0x03: "supportedAudioChannelCounts",
        0x04: "supportedOctetsPerCodecFrame", 0x05: "supportedMaxCodecFramesPerSDU",
    ]
    /// Codec_Specific_Configuration LTV types (6.12.5).
    public static let configurationTypes: [Int64: String] = [
        0x01: "samplingFrequency", 0x02: "frameDuration", 0x03: "audioChannelAllocation", 0x04: "octetsPerCodecFrame",
        0x05: "codecFrameBlocksPerSDU",
    ]
    /// Metadata LTV types (6.12.6).
    public static let metadataTypes: [Int64: String] = [
        0x01: "preferredAudioContexts", 0x02: "streamingAudioContexts", 0x03: "programInfo", 0x04: "language",
        0x05: "ccidList", 0x06: "parentalRating", 0x07: "programInfoURI", 0x08: "audioActiveState",
        0x09: "broadcastAudioImmediateRenderingFlag", 0x0A: "assistedListeningStream", 0x0B: "broadcastName",
        0xFE: "extendedMetadata", 0xFF: "vendorSpecific",
    ]
    /// BASS control point opcodes (BASS 3.1, Table 3.2).
    public static let bassOpcodes: [Int64: String] = [
        0: "Remote Scan Stopped", 1: "Remote Scan Started", 2: "Add Source", 3: "Modify Source", 4: "Set Broadcast_Code",
        5: "Remove Source",
    ]
    /// PA_Sync parameter of Add/Modify Source (BASS 3.1.1.4).
    public static let paSyncRequests: [Int64: String] = [
        0: "Do not synchronize", 1: "Synchronize (PAST available)", 2: "Synchronize (no PAST)",
    ]
    /// PA_Sync_State of a Broadcast Receive State (BASS 3.2, Table 3.9).
    public static let paSyncStates: [Int64: String] = [
        0: "Not synchronized", 1: "SyncInfo Request", 2: "Synchronized", 3: "Failed to synchronize", 4: "No PAST",
    ]
    /// BIG_Encryption of a Broadcast Receive State (BASS 3.2, Table 3.9).
    public static let bigEncryption: [Int64: String] = [0: "Not encrypted", 1: "Broadcast_Code required", 2: "Decrypting", 3: "Bad_Code"]
    /// Advertiser address types (Core Spec Vol 4, Part E, 7.7.65.14).
    public static let addressTypes: [Int64: String] = [0: "public", 1: "random"]
}
