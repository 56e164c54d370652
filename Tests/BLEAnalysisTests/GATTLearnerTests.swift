import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The GATT learner fed discovery responses (with the request each answers), Service Changed indications and CCCD
/// writes. Expected databases are the values the tests put in the PDUs, laid out as Core Spec Vol 3, Part G, 3.1–3.3
/// says (characteristic declaration: properties, value handle, UUID; include: start, end, optional 16-bit UUID).
@Suite struct GATTLearnerTests {
    static let heartRate = BluetoothUUID(uuid16: 0x180D)
    static let measurement = BluetoothUUID(uuid16: 0x2A37)

    /// The request `pdu` as the transaction machine keeps it.
    static func request(_ pdu: ATTPDU, frame: Int = 1) -> ATTTransaction {
        pdu.bytes.withUnsafeBytes {
            ATTTransaction(request: pdu, opcode: pdu.opcode, payload: $0, frame: frame, timestamp: Timestamp(microseconds: 0))
        }
    }

    static func typeRequest(_ type: UInt16, group: Bool = false) -> ATTTransaction {
        let r = ATTTypeRequest(range: .init(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: type))
        return request(group ? .readByGroupTypeRequest(r) : .readByTypeRequest(r))
    }

    static func learn(_ pdu: ATTPDU, _ request: ATTTransaction?, frame: Int = 2, into db: inout GATTDatabase) throws
        -> GATTLearner.Output?
    {
        GATTLearner.feed(.init(pdu: try ATTPDU(bytes: pdu.bytes), request: request, frame: frame), into: &db)
    }

    /// A database with the Heart Rate service (0x0010–0x001F) and its measurement (declaration 0x0011, value 0x0012, notify).
    static func heartRateDatabase() throws -> GATTDatabase {
        var db = GATTDatabase()
        _ = try learn(
            .readByGroupTypeResponse([.init(start: 0x0010, end: 0x001F, value: [0x0D, 0x18])]), typeRequest(0x2800, group: true),
            into: &db)
        _ = try learn(.readByTypeResponse([.init(handle: 0x0011, value: [0x10, 0x12, 0x00, 0x37, 0x2A])]), typeRequest(0x2803), into: &db)
        return db
    }

    @Test func primaryServicesFromReadByGroupType() throws {
        var db = GATTDatabase()
        let out = try Self.learn(
            .readByGroupTypeResponse([
                .init(start: 0x0001, end: 0x0005, value: [0x00, 0x18]), .init(start: 0x0010, end: 0x001F, value: [0x0D, 0x18]),
            ]), Self.typeRequest(0x2800, group: true), frame: 7, into: &db)
        #expect(out == .discovered)
        #expect(db.services.map(\.uuid) == [BluetoothUUID(uuid16: 0x1800), Self.heartRate])
        #expect(db.services.map(\.startHandle) == [0x0001, 0x0010] && db.services.map(\.endHandle) == [0x0005, 0x001F])
        #expect(db.services.allSatisfy { $0.isPrimary && $0.discoveredAt == 7 })
    }

    @Test func secondaryServicesAreNotPrimary() throws {
        var db = GATTDatabase()
        _ = try Self.learn(
            .readByGroupTypeResponse([.init(start: 0x0030, end: 0x0033, value: [0x0F, 0x18])]), Self.typeRequest(0x2801, group: true),
            into: &db)
        #expect(db.services.map(\.isPrimary) == [false])
    }

    @Test func servicesByUUIDFromFindByTypeValue() throws {
        var db = GATTDatabase()
        let asked = Self.request(.findByTypeValueRequest(.init(range: .init(start: 1, end: 0xFFFF), type: 0x2800, value: [0x0D, 0x18])))
        #expect(try Self.learn(.findByTypeValueResponse([.init(start: 0x0010, end: 0x001F)]), asked, into: &db) == .discovered)
        #expect(db.services.map(\.uuid) == [Self.heartRate] && db.services.first?.isPrimary == true)
    }

    @Test func characteristicsAndIncludesFromReadByType() throws {
        let db = try Self.heartRateDatabase()
        let c = try #require(db.characteristics.first)
        #expect(c.declarationHandle == 0x0011 && c.valueHandle == 0x0012 && c.uuid == Self.measurement)
        #expect(c.properties == .notify)
        var withInclude = db
        // Include declaration: included service 0x0030–0x0033, Battery 0x180F.
        let out = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0013, value: [0x30, 0x00, 0x33, 0x00, 0x0F, 0x18])]), Self.typeRequest(0x2802),
            into: &withInclude)
        #expect(out == .discovered)
        #expect(
            withInclude.includes == [.init(handle: 0x0013, startHandle: 0x0030, endHandle: 0x0033, uuid: BluetoothUUID(uuid16: 0x180F))])
    }

    /// An include declares the included service's range and 16-bit type (Part G, 3.2), so the service is in the database
    /// and its characteristics belong to it (the Redmi K70 log: VCS's include at 1399 names VOCS 0x0301–0x0343, whose
    /// Volume Offset State 0x0312 is discovered at 1462; tshark files the same characteristics under ASCS). A primary
    /// discovery of the same start keeps its own entry; an include of a 128-bit service (no UUID in the declaration)
    /// adds none.
    @Test func includedServiceJoinsTheDatabase() throws {
        var db = try Self.heartRateDatabase()
        _ = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0013, value: [0x30, 0x00, 0x33, 0x00, 0x45, 0x18])]), Self.typeRequest(0x2802),
            frame: 1399,
            into: &db)
        _ = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0014, value: [0x40, 0x00, 0x43, 0x00])]), Self.typeRequest(0x2802), into: &db)
        _ = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0031, value: [0x12, 0x32, 0x00, 0x80, 0x2B])]), Self.typeRequest(0x2803), into: &db)
        let vocs = try #require(db.services.first { $0.startHandle == 0x0030 })
        #expect(vocs.endHandle == 0x0033 && vocs.uuid == BluetoothUUID(uuid16: 0x1845) && !vocs.isPrimary && vocs.discoveredAt == 1399)
        #expect(db.service(containing: 0x0032)?.uuid == BluetoothUUID(uuid16: 0x1845))
        #expect(db.services.count == 2 && db.service(containing: 0x0041) == nil)

        var primaryFirst = try Self.heartRateDatabase()
        _ = try Self.learn(
            .readByGroupTypeResponse([.init(start: 0x0030, end: 0x0033, value: [0x0F, 0x18])]), Self.typeRequest(0x2800, group: true),
            frame: 5, into: &primaryFirst)
        _ = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0013, value: [0x30, 0x00, 0x33, 0x00, 0x0F, 0x18])]), Self.typeRequest(0x2802), frame: 9,
            into: &primaryFirst)
        #expect(primaryFirst.services.filter { $0.startHandle == 0x0030 }.map { [$0.isPrimary ? 1 : 0, $0.discoveredAt] } == [[1, 5]])
    }

    @Test func descriptorTypesFromFindInformation() throws {
        var db = try Self.heartRateDatabase()
        let info = ATTFindInformationResponse(format: 1, entries: [.init(handle: 0x0013, uuid: BluetoothUUID(uuid16: 0x2902))])
        #expect(
            try Self.learn(.findInformationResponse(info), Self.request(.findInformationRequest(.init(start: 0x13, end: 0x1F))), into: &db)
                == .discovered)
        #expect(db.attributeTypes[0x0013] == BluetoothUUID(uuid16: 0x2902))
    }

    /// Read By Type of a characteristic UUID reads values: nothing is learnt, the items are values of that type.
    @Test func readByTypeOfAValueTypeTeachesNothing() throws {
        var db = GATTDatabase()
        let out = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0003, value: Array("Strap".utf8))]), Self.typeRequest(0x2A00), into: &db)
        #expect(out == .values(type: BluetoothUUID(uuid16: 0x2A00)))
        #expect(db.isEmpty)
    }

    /// Without its request a Read By Type response could be declarations or values: it teaches nothing. A declaration
    /// whose UUID is 1 byte (item of 4 bytes) is skipped.
    @Test func whatCannotBeReadIsLeftAlone() throws {
        var db = GATTDatabase()
        #expect(try Self.learn(.readByTypeResponse([.init(handle: 0x0011, value: [0x10, 0x12, 0x00, 0x37, 0x2A])]), nil, into: &db) == nil)
        #expect(
            try Self.learn(
                .readByTypeResponse([.init(handle: 0x0011, value: [0x10, 0x12, 0x00, 0x37])]), Self.typeRequest(0x2803), into: &db)
                == .discovered)
        #expect(db.isEmpty)
    }

    /// Service Changed (Part G, 7.1): the range it indicates is forgotten, its own characteristic kept.
    @Test func serviceChangedForgetsItsRange() throws {
        var db = try Self.heartRateDatabase()
        // Generic Attribute service 0x0001–0x0004, Service Changed 0x2A05 (declaration 0x0002, value 0x0003, indicate).
        _ = try Self.learn(
            .readByGroupTypeResponse([.init(start: 0x0001, end: 0x0004, value: [0x01, 0x18])]), Self.typeRequest(0x2800, group: true),
            into: &db)
        _ = try Self.learn(
            .readByTypeResponse([.init(handle: 0x0002, value: [0x20, 0x03, 0x00, 0x05, 0x2A])]), Self.typeRequest(0x2803), into: &db)
        let out = try Self.learn(.handleValueIndication(handle: 0x0003, value: [0x10, 0x00, 0xFF, 0xFF]), nil, into: &db)
        #expect(out == .serviceChanged(start: 0x0010, end: 0xFFFF))
        #expect(db.services.map(\.startHandle) == [0x0001])
        #expect(db.characteristics.map(\.valueHandle) == [0x0003])
        // Any other indication teaches nothing.
        #expect(try Self.learn(.handleValueIndication(handle: 0x0012, value: [0x10, 0x00, 0xFF, 0xFF]), nil, into: &db) == nil)
    }

    /// CCCD bits (Part G, 3.3.3.3): bit 0 notifications, bit 1 indications.
    @Test func cccdWrites() throws {
        var db = try Self.heartRateDatabase()
        // Not discovered: the handle after the value of a notifying characteristic is taken for its CCCD.
        #expect(GATTLearner.cccdWrite(handle: 0x0013, 0x01, 0x00, in: db)?.note == "  (CCCD: notifications on)")
        #expect(GATTLearner.cccdWrite(handle: 0x0012, 0x01, 0x00, in: db) == nil)
        let info = ATTFindInformationResponse(format: 1, entries: [.init(handle: 0x0014, uuid: BluetoothUUID(uuid16: 0x2902))])
        _ = try Self.learn(.findInformationResponse(info), nil, into: &db)
        let write = try #require(GATTLearner.cccdWrite(handle: 0x0014, 0x02, 0x00, in: db))
        #expect(!write.notifications && write.indications)
        #expect(write.note == "  (CCCD: notifications off, indications on)")
        // A handle Find Information named otherwise is no CCCD, wherever it lies.
        let other = ATTFindInformationResponse(format: 1, entries: [.init(handle: 0x0013, uuid: BluetoothUUID(uuid16: 0x2901))])
        _ = try Self.learn(.findInformationResponse(other), nil, into: &db)
        #expect(GATTLearner.cccdWrite(handle: 0x0013, 0x01, 0x00, in: db) == nil)
    }
}
