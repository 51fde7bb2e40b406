extension String {
    /// The String's UTF-8, read where it keeps it (a native String is not copied; walking
    /// `utf8`'s iterator costs dozens of instructions a byte), valid only inside `body`.
    /// Unlike the standard library's mutating `withUTF8`, it can be called on a `let`,
    /// and `body`'s typed error (the core's, or none) passes through as it is.
    func withUTF8Bytes<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var text = self  // a reference to the same storage, which withUTF8 reads in place
        let outcome = text.withUTF8 { bytes in Swift.Result { () throws(Failure) in try body(bytes) } }
        return try outcome.get()
    }
}
