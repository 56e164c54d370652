extension String {
    /// Exactly `length` UTF-16 code units: padded with spaces, or cut (Foundation's `padding(toLength:withPad:startingAt:)`
    /// with a space, which the links chart's text lines were written with; a cut surrogate pair becomes U+FFFD as it did).
    func padding(utf16Length length: Int) -> String {
        let units = utf16.count
        if units < length { return self + String(repeating: " ", count: length - units) }
        if units == length { return self }
        return String(decoding: Array(utf16.prefix(length)), as: UTF16.self)
    }
}
