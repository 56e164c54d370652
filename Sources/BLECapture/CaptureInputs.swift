import BLECore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The inputs of a command that takes captures: files, directories (every regular file below them,
/// recursively, hidden ones skipped, sorted) and glob patterns (for lists too long for the shell:
/// `blescope info 'logs/**/*.log'`-style patterns are expanded with glob(3), one level of `*` per path
/// component).
public struct CaptureInputs {
    public var files: [String] = []
    /// Arguments that named nothing (printed as failures).
    public var missing: [String] = []
    /// True when the result may name several files (a directory, a glob or several arguments):
    /// the per-file forms of the output are used even if only one file was found.
    public var isBatch = false
    /// The files named as arguments themselves (not found in a directory or by a pattern): one of them that is not a
    /// capture is an error, where a file found in a folder is skipped (``separateNonCaptures()``).
    public var named: Set<String> = []
    /// Files found in a directory or by a pattern that are not captures (``separateNonCaptures()``), in input order.
    public var skipped: [(path: String, reason: String)] = []

    public init(_ arguments: [String]) {
        isBatch = arguments.count > 1
        for argument in arguments {
            if Self.isDirectory(argument) {
                isBatch = true
                files += Self.walk(argument)
            } else if Self.exists(argument) || !argument.contains(where: { "*?[".contains($0) }) {
                files.append(argument)  // a missing plain path fails when it is opened
                named.insert(argument)
            } else {
                isBatch = true
                let matches = Self.expandGlob(argument)
                if matches.isEmpty { missing.append(argument) }
                for m in matches { if Self.isDirectory(m) { files += Self.walk(m) } else { files.append(m) } }
            }
        }
    }

    /// Moves the files found in directories or by patterns that are not captures (README.md, a script, an empty file:
    /// ``CaptureOpenError/isNotACapture``) from ``files`` to ``skipped``. Each is opened to look at its first bytes,
    /// several at once; a file named as an argument stays, so that opening it fails and says why.
    public mutating func separateNonCaptures(jobs: Int = 1) {
        let candidates = files.indices.filter { !named.contains(files[$0]) }
        guard !candidates.isEmpty else { return }
        let reasons = Locked([String?](repeating: nil, count: candidates.count))
        let paths = files
        DispatchQueue.concurrentPerform(iterations: min(max(1, jobs), candidates.count)) { worker in
            for k in stride(from: worker, to: candidates.count, by: max(1, jobs)) {
                let path = paths[candidates[k]]
                if let error = CaptureFile.openError(path: path), error.isNotACapture {
                    reasons.withLock { $0[k] = error.message }
                }
            }
        }
        let found = reasons.withLock { $0 }
        var drop = Set<Int>()
        for (k, reason) in found.enumerated() {
            guard let reason else { continue }
            drop.insert(candidates[k])
            skipped.append((files[candidates[k]], reason))
        }
        files = files.indices.filter { !drop.contains($0) }.map { files[$0] }
    }

    /// Drops the inputs that are the file at `path` (same device and inode), e.g. a report written into the
    /// directory it reports on, which a second run would otherwise read as a capture.
    public mutating func exclude(sameFileAs path: String) {
        var target = stat()
        guard stat(path, &target) == 0 else { return }
        files.removeAll { file in
            var st = stat()
            return stat(file, &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino
        }
    }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    public static func isRegular(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// Regular files below `directory`, sorted by path (byte order), hidden entries skipped.
    public static func walk(_ directory: String) -> [String] {
        var out: [String] = []
        var pending = [directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory]
        var visited = 0
        while let dir = pending.popLast() {
            visited += 1
            if visited > 1_000_000 { break }  // a cycle of bind mounts; symlinked directories are not followed
            guard let d = opendir(dir) else { continue }
            while let entry = readdir(d) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name.hasPrefix(".") { continue }
                let path = dir + "/" + name
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                let mode = st.st_mode & S_IFMT
                if mode == S_IFDIR {
                    pending.append(path)
                } else if mode == S_IFREG || (mode == S_IFLNK && isRegular(path)) {
                    out.append(path)
                }
            }
            closedir(d)
        }
        return out.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    public static func expandGlob(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard glob(pattern, 0, nil, &g) == 0 else { return [] }
        var out: [String] = []
        for i in 0..<Int(g.gl_pathc) {
            if let p = g.gl_pathv[i] { out.append(String(cString: p)) }
        }
        return out
    }
}
