import ArgumentParser
import BLECodecs
import BLEReports

struct Codecs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check and list payload codecs (YAML specs and the SIG built-ins).",
        subcommands: [Check.self, List.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate codec spec files: exit 0 when all compile, 1 with file:line: field: what is wrong otherwise.")

        @Argument(help: "Spec files (YAML).")
        var files: [String]

        func run() throws {
            let out = OutputStream()
            var failed = false
            for file in files {
                do {
                    let summary = try CodecRegistry.check(specFile: file)
                    out.write(
                        "\(file): ok — codec \(summary.name), \(summary.messages.count) message(s)"
                            + (summary.roles.isEmpty ? "" : ", roles \(summary.roles.map(\.rawValue).joined(separator: ", "))") + "\n")
                } catch {
                    out.write("\(error)\n")
                    failed = true
                }
            }
            out.flush()
            if failed { throw Exit.checkFailed }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the codecs loaded: specs given with --codec, then the SIG built-ins.")

        @Option(name: .customLong("codec"), help: "A YAML codec spec, or a directory of them (repeatable).")
        var codecs: [String] = []

        func run() throws {
            let options = try AnalysisOptions.parse(codecs.flatMap { ["--codec", $0] }).analyzerOptions(timeline: false)
            let out = OutputStream()
            let terminal = Terminal.standardOutput
            let specs = options.codecs?.specs ?? []
            out.write(terminal.paint("YAML specs (\(specs.count))", .bold) + "\n")
            for s in specs {
                out.write("  \(s.name)  \(s.appliesTo)\n")
                if let d = s.description { out.write("    \(d)\n") }
                out.write("    messages: \(s.messages.joined(separator: ", "))\n")
                if !s.roles.isEmpty { out.write("    roles: \(s.roles.map(\.rawValue).joined(separator: ", "))\n") }
                if let f = s.file { out.write("    file: \(f)\n") }
            }
            let builtins = CodecRegistry.builtinCodecs
            out.write(terminal.paint("SIG built-ins (\(builtins.count))", .bold) + "\n")
            for c in builtins { out.write("  \(c.name)\n") }
            out.flush()
        }
    }
}
