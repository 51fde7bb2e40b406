extension String {
    /// `withUTF8` for a body that throws the core's error: the standard library's
    /// rethrows an untyped error. The bytes are the String's own (a native String is
    /// not copied), valid only inside `body`.
    mutating func withUTF8Bytes<Result>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(ReceiptError) -> Result
    ) throws(ReceiptError) -> Result {
        let outcome = withUTF8 { bytes in Swift.Result { () throws(ReceiptError) in try body(bytes) } }
        return try outcome.get()
    }
}
