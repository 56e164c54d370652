import BLECore

/// One column of an output, declared once: its JSON key, its CSV header, and its text header, width and cell.
///
/// An output's columns are one array (``ColumnTable``) from which its JSON objects, its CSV header and rows and its text
/// table follow, in the array's order; a column missing from a format has nil there (a JSON-only object, a CSV-only
/// flattening, a text-only summary). `ColumnTableTests` holds every table against its JSON Schema in `schemas/`, so a
/// column added here and forgotten there (or the reverse) fails a test. Adding a column to an output is one entry.
public struct Column<Row>: Sendable {
    /// The JSON key (nil: not in the JSON objects).
    public var key: String?
    /// The CSV header (nil: not in the CSV).
    public var csv: String?
    /// How the text table shows it (nil: not in the text table).
    public var text: TextColumn<Row>?
    /// The value JSON and CSV write.
    let value: @Sendable (Row) -> Cell
    /// CSV's own spelling where it differs from JSON's (hex handles, ISO 8601 times).
    let csvText: (@Sendable (Row) -> String)?

    public init(
        _ key: String?, csv: String? = nil, text: TextColumn<Row>? = nil, csvText: (@Sendable (Row) -> String)? = nil,
        value: @escaping @Sendable (Row) -> Cell
    ) {
        self.key = key
        self.csv = csv
        self.text = text
        self.csvText = csvText
        self.value = value
    }

    /// A column that is only in the text table.
    public static func textOnly(_ text: TextColumn<Row>) -> Column {
        Column(nil, text: text) { _ in .text(nil) }
    }

    /// This column with CSV's own spelling of its value (a hex handle, an ISO 8601 time…).
    public func csvText(_ text: @escaping @Sendable (Row) -> String) -> Column {
        Column(key, csv: csv, text: self.text, csvText: text, value: value)
    }

    /// This column with another text form (a text table that needs a setting of the run, such as the time style).
    public func withText(_ text: TextColumn<Row>?) -> Column {
        Column(key, csv: csv, text: text, csvText: csvText, value: value)
    }

    /// This column under another JSON key (the same field in a nested object that names it shorter: `tx` in a PHY
    /// change).
    public func renamed(_ key: String?) -> Column {
        Column(key, csv: csv, text: text, csvText: csvText, value: value)
    }

    /// The same column read from a larger row: one declaration of a field (a link's interval) shared by every table
    /// whose row holds one (a throughput period, an OTA session's link, a connection).
    public func lifted<Outer>(_ part: @escaping @Sendable (Outer) -> Row) -> Column<Outer> {
        let value = self.value
        let liftedText: TextColumn<Outer>? = text.map { $0.lifted(part) }
        var liftedCSV: (@Sendable (Outer) -> String)? = nil
        if let csvText = self.csvText { liftedCSV = { csvText(part($0)) } }
        return Column<Outer>(key, csv: csv, text: liftedText, csvText: liftedCSV) { value(part($0)) }
    }

    /// The same column read from a row that may not hold the part (a stream without a main period): null there.
    public func lifted<Outer>(optional part: @escaping @Sendable (Outer) -> Row?) -> Column<Outer> {
        let value = self.value
        let textCell = text?.cell
        var liftedText: TextColumn<Outer>? = nil
        if let t = text, let textCell {
            let alignment: TextColumn<Outer>.Alignment = t.alignment == .left ? .left : .right
            liftedText = TextColumn<Outer>(t.title, width: t.width, alignment, gap: t.gap) { part($0).map(textCell) ?? "-" }
        }
        var liftedCSV: (@Sendable (Outer) -> String)? = nil
        if let csvText = self.csvText { liftedCSV = { part($0).map(csvText) ?? "" } }
        return Column<Outer>(key, csv: csv, text: liftedText, csvText: liftedCSV) { part($0).map(value) ?? .null }
    }

    /// The value as JSON and CSV write it.
    public func cell(_ row: Row) -> Cell { value(row) }

    /// The text table's spelling of the value (nil: the column is not in the text table).
    public func textCell(_ row: Row) -> String? { text?.cell(row) }
}

extension Array {
    /// Each column read from a larger row (``Column/lifted(_:)``).
    public func lifted<Row, Outer>(_ part: @escaping @Sendable (Outer) -> Row) -> [Column<Outer>] where Element == Column<Row> {
        map { $0.lifted(part) }
    }
}

/// A column of a text table: header, width, alignment and the cell's text (with its unit).
public struct TextColumn<Row>: Sendable {
    public enum Alignment: Sendable { case left, right }
    public var title: String
    public var width: Int
    public var alignment: Alignment
    /// Spaces before the column (none before the first).
    public var gap: Int
    let cell: @Sendable (Row) -> String
    /// The padded cell with its colors (nil: not colored): it gets the padded text, the row and the terminal.
    let paint: (@Sendable (String, Row, Terminal) -> String)?

    public init(
        _ title: String, width: Int, _ alignment: Alignment = .left, gap: Int = 1,
        paint: (@Sendable (String, Row, Terminal) -> String)? = nil, cell: @escaping @Sendable (Row) -> String
    ) {
        self.title = title
        self.width = width
        self.alignment = alignment
        self.gap = gap
        self.paint = paint
        self.cell = cell
    }

    /// The same text column read from a larger row.
    public func lifted<Outer>(_ part: @escaping @Sendable (Outer) -> Row) -> TextColumn<Outer> {
        let cell = self.cell
        var liftedPaint: (@Sendable (String, Outer, Terminal) -> String)? = nil
        if let paint = self.paint { liftedPaint = { text, row, t in paint(text, part(row), t) } }
        let outerAlignment: TextColumn<Outer>.Alignment = alignment == .left ? .left : .right
        return TextColumn<Outer>(title, width: width, outerAlignment, gap: gap, paint: liftedPaint) { cell(part($0)) }
    }

    func pad(_ s: String) -> String {
        alignment == .left ? s.padding(to: width) : s.leftPadding(to: width)
    }
}

/// A value as JSON and CSV write it.
public enum Cell {
    case int(Int?)
    case int64(Int64?)
    case double(Double?, decimals: Int)
    case text(String?)
    case bool(Bool?)
    /// Seconds since the Unix epoch with µs in JSON, ISO 8601 in CSV.
    case time(Timestamp?)
    /// A JSON value written by the closure under the key it is given (an object, an array, or null); no CSV form.
    case json((inout JSONWriter, String) -> Void)
    /// No value: JSON null, an empty CSV field (a field read from a part the row does not hold).
    case null

    @_optimize(speed)
    func write(_ key: String, to w: inout JSONWriter) {
        switch self {
        case .int(let v): w.field(key, v)
        case .int64(let v): w.field(key, v)
        case .double(let v, let decimals): w.field(key, v, decimals: decimals)
        case .text(let v): w.field(key, v)
        case .bool(let v): w.field(key, v)
        case .time(let v): w.field(key, v)
        case .json(let write): write(&w, key)
        case .null: w.fieldNull(key)
        }
    }

    var csv: String {
        switch self {
        case .int(let v): v.map { String($0) } ?? ""
        case .int64(let v): v.map { String($0) } ?? ""
        case .double(let v, let decimals): v.map { String(fractionDigits: decimals, $0) } ?? ""
        case .text(let v): v.map(csvField) ?? ""
        case .bool(let v): v.map { $0 ? "true" : "false" } ?? ""
        case .time(let v): v?.iso8601 ?? ""
        case .json, .null: ""
        }
    }
}

/// The columns of one output, in order: JSON keys, CSV and text follow from it.
public struct ColumnTable<Row>: Sendable {
    public let columns: [Column<Row>]
    /// The columns in the CSV, found once (a CSV row is rendered per event).
    private let csvColumns: [Column<Row>]

    public init(_ columns: [Column<Row>]) {
        self.columns = columns
        csvColumns = columns.filter { $0.csv != nil }
        textColumns = columns.compactMap(\.text)
    }

    /// The JSON keys, in order.
    public var keys: [String] { columns.compactMap(\.key) }

    /// The CSV header line (with its newline).
    public var csvHeader: String { columns.compactMap(\.csv).joined(separator: ",") + "\n" }

    /// One CSV row (with its newline).
    public func csvLine(_ row: Row) -> String {
        csvColumns.map { c in c.csvText.map { csvField($0(row)) } ?? c.value(row).csv }.joined(separator: ",") + "\n"
    }

    /// The row's JSON fields, into the object the caller has begun.
    public func writeFields(_ row: Row, to w: inout JSONWriter, except: Set<String> = []) {
        for c in columns {
            guard let key = c.key, !except.contains(key) else { continue }
            c.value(row).write(key, to: &w)
        }
    }

    /// The row's scalar fields: every JSON column whose value is not an object or array, under its JSON key, and every
    /// CSV-only column (a flattening) under its CSV name. The flat form of a row (`export --tables`).
    public func writeFlatFields(_ row: Row, to w: inout JSONWriter) {
        for c in columns {
            guard let name = c.key ?? c.csv else { continue }
            let value = c.value(row)
            if case .json = value { continue }
            value.write(name, to: &w)
        }
    }

    /// The text table's header line (no newline), each title padded to its column.
    public var textHeader: String {
        joined(textColumns.map { ($0, $0.pad($0.title)) }).trimmingTrailingSpaces
    }

    /// One text row (no newline).
    public func textLine(_ row: Row) -> String {
        joined(textColumns.map { ($0, $0.pad($0.cell(row))) }).trimmingTrailingSpaces
    }

    /// One text row with each column's colors (no newline; trailing spaces kept, as a colored cell may end in them).
    public func textLine(_ row: Row, terminal: Terminal) -> String {
        joined(
            textColumns.map { c in
                let padded = c.pad(c.cell(row))
                return (c, c.paint.map { $0(padded, row, terminal) } ?? padded)
            })
    }

    /// Where each text column starts, counted in characters from the line's start.
    public var textOffsets: [Int] {
        var offsets: [Int] = []
        var at = 0
        for (i, c) in textColumns.enumerated() {
            if i > 0 { at += c.gap }
            offsets.append(at)
            at += c.width
        }
        return offsets
    }

    private func joined(_ cells: [(TextColumn<Row>, String)]) -> String {
        var line = ""
        for (i, (column, text)) in cells.enumerated() {
            if i > 0 { line += String(repeating: " ", count: column.gap) }
            line += text
        }
        return line
    }

    /// Columns of the text table, in order (found once: a text line is rendered per event).
    public let textColumns: [TextColumn<Row>]
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
