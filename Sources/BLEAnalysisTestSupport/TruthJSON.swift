import Foundation

/// Numbers and lists read from a truth file's JSON (`Samples/*.truth.json`).
package enum TruthJSON {
    package static func int(_ v: Any?) -> Int? { (v as? NSNumber)?.intValue }
    package static func ints(_ v: Any?) -> [Int] { (v as? [Any])?.compactMap(int) ?? [] }
    package static func list(_ v: Any?) -> [[String: Any]] { v as? [[String: Any]] ?? [] }
}
