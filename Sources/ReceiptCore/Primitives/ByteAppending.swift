extension Array where Element == UInt8 {
    /// Appends exactly `count` bytes that `write` fills in place: fixed-width text
    /// (dates, base64) goes straight into JSON being written, with no String made.
    mutating func append(count: Int, writing write: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        let start = self.count
        append(contentsOf: repeatElement(0, count: count))
        withUnsafeMutableBufferPointer { write(UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }
}
