/// NUL-terminated strings for the C ABI without a copy per string. The arena is
/// a copy of the payload, so a string's text sits at its payload offset, and
/// terminating it overwrites the byte after it. That byte is never text: the TLVs
/// of the typed strings never overlap, and each has a header of at least two bytes
/// before its content, so what follows a string's content is the next element's
/// header or the arena's extra final byte.
struct TextArena {
    /// Nil when strings are read in place, unterminated (a verdict's parse).
    let base: UnsafeMutablePointer<UInt8>?

    /// Terminates the string at `range` of the payload; returns where it is.
    @inline(__always)
    func terminate(_ range: Range<Int>) -> (offset: UInt32, length: UInt32) {
        base?[range.upperBound] = 0
        return (UInt32(truncatingIfNeeded: range.lowerBound), UInt32(truncatingIfNeeded: range.count))
    }
}
