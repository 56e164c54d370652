import BLECore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// All codecs the analyzer knows: the SIG built-ins and the YAML specs loaded at run time.
///
/// Loaded specs are tried first, in load order (a user's spec may override a SIG codec); then the
/// built-in codec for the context's attribute UUID. Loading is thread-safe; decoding takes a
/// snapshot and runs without locks held.
public final class CodecRegistry: Sendable {
    private final class Snapshot: Sendable {
        let specs: [DeclarativeCodec]
        init(_ specs: [DeclarativeCodec]) { self.specs = specs }
    }

    private let state: Locked<Snapshot>
    /// Whether the SIG built-ins are consulted.
    public let builtins: Bool

    public init(builtins: Bool = true) {
        self.builtins = builtins
        state = Locked(Snapshot([]))
    }

    /// The built-in SIG codecs.
    public static var builtinCodecs: [SIGCodec] { SIGCodec.all }

    /// The loaded specs, in load order (``loadedSpecs``).
    var specsSnapshot: [DeclarativeCodec] { state.withLock { $0.specs } }

    /// Compiles a spec from text and adds it. A spec with the name of a loaded one replaces it.
    @discardableResult
    public func load(specText: String, file: String? = nil) throws(CodecSpecError) -> CodecSpecSummary {
        let codec = try CodecSpecCompiler.compile(yaml: specText, file: file)
        state.withLock { snapshot in
            snapshot = Snapshot(snapshot.specs.filter { $0.name != codec.name } + [codec])
        }
        return codec.summary
    }

    /// Reads, compiles and adds one YAML spec file.
    @discardableResult
    public func load(specFile path: String) throws(CodecSpecError) -> CodecSpecSummary {
        try load(specText: try CodecRegistry.read(path), file: path)
    }

    /// Loads every `*.yaml` / `*.yml` file of a directory and of the directories below it (hidden ones skipped), in
    /// path order: a directory's own files, then each subdirectory's in name order. A spec with the name of one
    /// loaded before replaces it. Stops at the first bad spec, whose error names its file.
    @discardableResult
    public func load(directory: String) throws(CodecSpecError) -> [CodecSpecSummary] {
        var out: [CodecSpecSummary] = []
        for file in try CodecRegistry.specFiles(in: directory) { out.append(try load(specFile: file)) }
        return out
    }

    /// The spec files of `directory` and below, in the order ``load(directory:)`` reads them.
    static func specFiles(in directory: String, depth: Int = 0) throws(CodecSpecError) -> [String] {
        guard let dir = opendir(directory) else {
            throw CodecSpecError(file: directory, path: "", message: "cannot list directory: \(String(cString: strerror(errno)))")
        }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        closedir(dir)
        var files: [String] = [], folders: [String] = []
        for n in names.sorted() {
            let path = directory.hasSuffix("/") ? directory + n : directory + "/" + n
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR {
                folders.append(path)
            } else if n.hasSuffix(".yaml") || n.hasSuffix(".yml") {
                files.append(path)
            }
        }
        // A link back up would loop forever; 32 levels is more than any tree of specs.
        guard depth < 32 else { return files }
        for folder in folders { files += try specFiles(in: folder, depth: depth + 1) }
        return files
    }

    /// Compiles a spec without adding it (for `blescope codecs check`).
    public static func check(specFile path: String) throws(CodecSpecError) -> CodecSpecSummary {
        try CodecSpecCompiler.compile(yaml: try read(path), file: path).summary
    }

    static func read(_ path: String) throws(CodecSpecError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CodecSpecError(file: path, path: "", message: "cannot read file")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw CodecSpecError(file: path, path: "", message: "not UTF-8 text") }
        return text
    }

    /// Summaries of the loaded specs, in load order.
    public var specs: [CodecSpecSummary] { state.withLock { $0.specs.map(\.summary) } }

    /// The loaded specs that have decoded no value yet, in load order (after a run: the ones that matched nothing).
    public var specsThatDecodedNothing: [CodecSpecSummary] {
        state.withLock { $0.specs.filter { !$0.hasDecoded }.map(\.summary) }
    }

    /// The loaded spec with this codec name.
    public func spec(named name: String) -> DeclarativeCodec? { state.withLock { $0.specs.first { $0.name == name } } }

    /// Whether any codec could decode values of the attribute in `context` (its service,
    /// characteristic and handle): callers cache this per attribute and skip ``decode(_:context:)``
    /// for attributes no codec knows.
    public func mayDecode(_ context: CodecContext) -> Bool {
        if builtins, let uuid = context.characteristic, SIGCodec.codec(for: uuid) != nil { return true }
        let snapshot = state.withLock { $0 }
        return snapshot.specs.contains { $0.mayApply(context) }
    }

    /// Decodes with the first loaded spec that applies, else the built-in codec for the attribute UUID; nil when none applies.
    public func decode(_ bytes: UnsafeRawBufferPointer, context: CodecContext) -> DecodedValue? {
        let snapshot = state.withLock { $0 }
        for spec in snapshot.specs where spec.applies(bytes, context: context) {
            spec.markUsed()
            return spec.decodeUnconditionally(bytes, context: context)
        }
        if builtins, let uuid = context.characteristic, let codec = SIGCodec.codec(for: uuid) {
            return codec.decode(bytes, in: context)
        }
        return nil
    }

    public func decode(_ bytes: [UInt8], context: CodecContext) -> DecodedValue? {
        bytes.withUnsafeBytes { decode($0, context: context) }
    }
}
