import BLECore
import Testing

@testable import BLECodecs

/// Expected names are the SIG's published names (Assigned Numbers sections 3.4–3.8, 2.6, 2.3; Core Vol 1, Part F).
struct AssignedNumbersTests {
    @Test func sigTables() {
        #expect(AssignedNumbers.serviceName(0x180F) == "Battery Service")
        #expect(AssignedNumbers.serviceName(0x1800) == "Generic Access")
        #expect(AssignedNumbers.characteristicName(0x2A37) == "Heart Rate Measurement")
        #expect(AssignedNumbers.descriptorName(0x2902) == "Client Characteristic Configuration")
        #expect(AssignedNumbers.memberName(0xFEAA) == "Eddystone")
        #expect(AssignedNumbers.companyName(0x004C) == "Apple, Inc.")
        #expect(AssignedNumbers.companyName(0x0059) == "Nordic Semiconductor ASA")
        #expect(AssignedNumbers.appearanceName(0x0341) == "Heart rate belt")
        #expect(AssignedNumbers.appearanceName(0x0340) == "Generic heart rate sensor")
        #expect(AssignedNumbers.appearanceName(0x0345) == "Generic heart rate sensor")  // unknown subcategory → category
        #expect(AssignedNumbers.adTypeName(0xFF) == "Manufacturer specific data")
        #expect(AssignedNumbers.adTypeName(0x09) == "Complete local name")
        #expect(AssignedNumbers.hciErrorName(0x13) == "Remote user terminated connection")
        #expect(AssignedNumbers.hciErrorName(0x3E) == "Connection failed to be established")
        #expect(AssignedNumbers.serviceName(0x0001) == nil)
        #expect(AssignedNumbers.hciErrorName(0xEE) == nil)
    }

    /// The company table's first ID and an unassigned one (SIG Assigned Numbers 7.1: 0x0000 Ericsson AB, nothing at
    /// 0x7000), and a table read from lines out of order, the lines that are not `HEX=name` left out (near misses: no
    /// key, no `=`, a key that is not hex, one too long for 64 bits, an empty line).
    @Test func tableEdges() {
        #expect(AssignedNumbers.companyName(0x0000) == "Ericsson AB")
        #expect(AssignedNumbers.companyName(0x7000) == nil)
        let table = NameTable("0002=Two\n0001=One=1\n=none\nnoequals\nzz=bad\n10000000000000000=long\n\n00FF=Last")
        #expect(table.name(1) == "One=1")
        #expect(table.name(2) == "Two")
        #expect(table.name(0xFF) == "Last")
        #expect(table.name(0) == nil)
        #expect(table.name(3) == nil)
    }

    @Test(arguments: [
        ("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "Nordic UART Service"),
        ("8EC90001-F315-4F60-9FB8-838830DAEA50", "Secure DFU Control Point"),
        ("0000FE59-0000-1000-8000-00805F9B34FB", "Nordic Secure DFU Service"),
        ("00001531-1212-EFDE-1523-785FEABCD123", "Legacy DFU Control Point"),
        ("DA2E7828-FBCE-4E01-AE9E-261174997C48", "MCUmgr SMP Characteristic"),
        ("984227F3-34FC-4045-A5D0-2C581F81A153", "Silicon Labs OTA Data"),
        ("F000FFC2-0451-4000-B000-000000000000", "TI OAD Image Block"),
        ("08590F7E-DB05-467E-8757-72F6FAEB13D4", "Apple BTLE Transfer Characteristic"),
        ("9FBF120D-6301-42D9-8C58-25E699A21DBD", "ANCS Notification Source"),
        ("0x8018", "Espressif BLE OTA Service"),
        ("180D", "Heart Rate"),
        ("2A19", "Battery Level"),
        ("2902", "Client Characteristic Configuration"),
    ])
    func uuidNames(_ text: String, _ name: String) throws {
        let uuid = try #require(BluetoothUUID(text))
        #expect(AssignedNumbers.name(for: uuid) == name)
    }

    @Test func generatedVendorTableAndUnknown() throws {
        // From the generated bluetooth-numbers vendor table, not the hand-written catalogue.
        #expect(
            AssignedNumbers.name(for: try #require(BluetoothUUID("00001523-1212-EFDE-1523-785FEABCD123")))
                == "Nordic LED and Button Service (service)")
        #expect(AssignedNumbers.name(for: try #require(BluetoothUUID("12345678-1234-1234-1234-123456789ABC"))) == nil)
    }
}
