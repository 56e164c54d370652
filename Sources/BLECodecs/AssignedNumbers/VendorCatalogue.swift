import BLECore

/// Hand-written catalogue of vendor UUIDs that matter for transfers and firmware updates.
///
/// Every UUID was checked against public sources: the bluetooth-numbers database (Nordic UART,
/// Secure/legacy DFU, MCUmgr SMP, TI OAD, Apple ANCS/AMS), Silicon Labs' published OTA service
/// definition (AN1086 / EFR Connect), Espressif's `ble_ota` component README (0x8018, 0x8020–0x8023),
/// Apple's "BTLE Central Peripheral Transfer" sample (E20A39F4/08590F7E), Apple's ANCS and AMS
/// specifications, and public Continuity research (D0611E78/8667556C).
public enum VendorCatalogue {
    public struct Entry: Hashable, Sendable {
        public var uuid: BluetoothUUID
        public var name: String
        /// `service` or `characteristic`.
        public var kind: String
        /// Who defines it: `Nordic`, `Apple`, …
        public var vendor: String
    }

    public static func entry(for uuid: BluetoothUUID) -> Entry? { byUUID[uuid] }

    public static let all: [Entry] = {
        func e(_ text: String, _ name: String, _ kind: String, _ vendor: String) -> Entry? {
            BluetoothUUID(text).map { Entry(uuid: $0, name: name, kind: kind, vendor: vendor) }
        }
        let list: [Entry?] = [
            e("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "Nordic UART Service", "service", "Nordic"),
            e("6E400002-B5A3-F393-E0A9-E50E24DCCA9E", "Nordic UART RX", "characteristic", "Nordic"),
            e("6E400003-B5A3-F393-E0A9-E50E24DCCA9E", "Nordic UART TX", "characteristic", "Nordic"),
            e("FE59", "Nordic Secure DFU Service", "service", "Nordic"),
            e("8EC90001-F315-4F60-9FB8-838830DAEA50", "Secure DFU Control Point", "characteristic", "Nordic"),
            e("8EC90002-F315-4F60-9FB8-838830DAEA50", "Secure DFU Packet", "characteristic", "Nordic"),
            e("8EC90003-F315-4F60-9FB8-838830DAEA50", "Buttonless DFU (without bonds)", "characteristic", "Nordic"),
            e("8EC90004-F315-4F60-9FB8-838830DAEA50", "Buttonless DFU (with bonds)", "characteristic", "Nordic"),
            e("00001530-1212-EFDE-1523-785FEABCD123", "Nordic Legacy DFU Service", "service", "Nordic"),
            e("00001531-1212-EFDE-1523-785FEABCD123", "Legacy DFU Control Point", "characteristic", "Nordic"),
            e("00001532-1212-EFDE-1523-785FEABCD123", "Legacy DFU Packet", "characteristic", "Nordic"),
            e("00001534-1212-EFDE-1523-785FEABCD123", "Legacy DFU Version", "characteristic", "Nordic"),
            e("8D53DC1D-1DB7-4CD3-868B-8A527460AA84", "MCUmgr SMP Service", "service", "Zephyr/MCUmgr"),
            e("DA2E7828-FBCE-4E01-AE9E-261174997C48", "MCUmgr SMP Characteristic", "characteristic", "Zephyr/MCUmgr"),
            e("1D14D6EE-FD63-4FA1-BFA4-8F47B42119F0", "Silicon Labs OTA Service", "service", "Silicon Labs"),
            e("F7BF3564-FB6D-4E53-88A4-5E37E0326063", "Silicon Labs OTA Control", "characteristic", "Silicon Labs"),
            e("984227F3-34FC-4045-A5D0-2C581F81A153", "Silicon Labs OTA Data", "characteristic", "Silicon Labs"),
            e("F000FFC0-0451-4000-B000-000000000000", "TI OAD Service", "service", "Texas Instruments"),
            e("F000FFC1-0451-4000-B000-000000000000", "TI OAD Image Identify", "characteristic", "Texas Instruments"),
            e("F000FFC2-0451-4000-B000-000000000000", "TI OAD Image Block", "characteristic", "Texas Instruments"),
            e("F000FFC5-0451-4000-B000-000000000000", "TI OAD Control", "characteristic", "Texas Instruments"),
            e("8018", "Espressif BLE OTA Service", "service", "Espressif"),
            e("8020", "Espressif OTA Firmware (RECV_FW)", "characteristic", "Espressif"),
            e("8021", "Espressif OTA Progress", "characteristic", "Espressif"),
            e("8022", "Espressif OTA Command", "characteristic", "Espressif"),
            e("8023", "Espressif OTA Customer Data", "characteristic", "Espressif"),
            e("E20A39F4-73F5-4BC4-A12F-17D1AD07A961", "Apple BTLE Transfer Service", "service", "Apple"),
            e("08590F7E-DB05-467E-8757-72F6FAEB13D4", "Apple BTLE Transfer Characteristic", "characteristic", "Apple"),
            e("7905F431-B5CE-4E99-A40F-4B1E122D00D0", "Apple Notification Center Service (ANCS)", "service", "Apple"),
            e("9FBF120D-6301-42D9-8C58-25E699A21DBD", "ANCS Notification Source", "characteristic", "Apple"),
            e("69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9", "ANCS Control Point", "characteristic", "Apple"),
            e("22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB", "ANCS Data Source", "characteristic", "Apple"),
            e("89D3502B-0F36-433A-8EF4-C502AD55F8DC", "Apple Media Service (AMS)", "service", "Apple"),
            e("9B3C81D8-57B1-4A8A-B8DF-0E56F7CA51C2", "AMS Remote Command", "characteristic", "Apple"),
            e("2F7CABCE-808D-411F-9A0C-BB92BA96C102", "AMS Entity Update", "characteristic", "Apple"),
            e("C6B2F38C-23AB-46D8-A6AB-A3A870BBD5D7", "AMS Entity Attribute", "characteristic", "Apple"),
            e("D0611E78-BBB4-4591-A5F8-487910AE4366", "Apple Continuity Service", "service", "Apple"),
            e("8667556C-9A37-4C91-84ED-54EE27D90049", "Apple Continuity Characteristic", "characteristic", "Apple"),
        ]
        return list.compactMap { $0 }
    }()

    static let byUUID: [BluetoothUUID: Entry] = Dictionary(all.map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })
}
