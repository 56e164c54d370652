#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns command-line inputs into capture paths: files as given, directories expanded.
public enum CaptureInputs {
    /// What could not be expanded (a missing path, an unreadable directory).
    public struct Problem: Error, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    /// Files named, directories expanded to their regular files (sorted; hidden files skipped;
    /// `recursive` descends into subdirectories). Missing inputs are returned as problems; the rest
    /// are still expanded.
    public static func expand(_ inputs: [String], recursive: Bool = false) -> (paths: [String], problems: [Problem]) {
        var paths: [String] = []
        var problems: [Problem] = []
        for input in inputs {
            var st = stat()
            guard stat(input, &st) == 0 else {
                problems.append(Problem(path: input, message: "no such file or directory"))
                continue
            }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                guard let entries = list(input) else {
                    problems.append(Problem(path: input, message: "cannot list the directory"))
                    continue
                }
                for path in entries {
                    var s2 = stat()
                    guard stat(path, &s2) == 0 else { continue }
                    switch s2.st_mode & S_IFMT {
                    case S_IFREG: paths.append(path)
                    case S_IFDIR where recursive:
                        let (inner, innerProblems) = expand([path], recursive: true)
                        paths += inner
                        problems += innerProblems
                    default: break
                    }
                }
            } else {
                paths.append(input)
            }
        }
        return (paths, problems)
    }

    static func list(_ directory: String) -> [String]? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard !name.hasPrefix(".") else { continue }
            names.append(directory.hasSuffix("/") ? directory + name : directory + "/" + name)
        }
        return names.sorted()
    }
}
