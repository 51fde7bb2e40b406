/// The wrappers people hand over in place of signed data, recognised so that the
/// error says what to do instead of which byte broke base64: a notification or
/// realtime request body, a verifyReceipt request, an App Store Server API answer,
/// an `Authorization` header value, a value still in its quotes. Asked only once a
/// decode has met something no receipt or JWS starts with (`{`, `"`, `Bearer `), so
/// genuine input pays one comparison; a `{` costs a scan of the input, as its parse would.
enum InputShape {
    /// What `input` (its surrounding whitespace trimmed) is instead, and what to pass; nil when it is none of these.
    static func mistake(in input: UnsafeBufferPointer<UInt8>) -> String? {
        guard let first = input.first, let last = input.last else { return nil }
        switch first {
        case UInt8(ascii: "\""):
            guard last == UInt8(ascii: "\""), input.count >= 2 else { return nil }
            return "the value is still in its quotes (a JSON string): remove the quotes"
        case UInt8(ascii: "B"), UInt8(ascii: "b"):
            guard startsCaseInsensitively(input, with: "bearer ") else { return nil }
            return "an Authorization header's value: remove \"Bearer \" and pass the token after it"
        case UInt8(ascii: "{"):
            if contains(input, "\"signedPayload\"") {
                return "an App Store Server Notifications (or realtime request) body: pass its signedPayload member"
            }
            if contains(input, "\"receipt-data\"") {
                return "a verifyReceipt request: POST it to /verifyReceipt (receipt serve), or pass its receipt-data member"
            }
            for member in ["\"signedTransactionInfo\"", "\"signedTransactions\"", "\"signedRenewalInfo\""] where contains(input, member) {
                return "an App Store Server API answer: pass one of its signed members (\(member.dropFirst().dropLast()), …)"
            }
            return nil
        default:
            return nil
        }
    }

    private static func startsCaseInsensitively(_ input: UnsafeBufferPointer<UInt8>, with prefix: String) -> Bool {
        let wanted = Array(prefix.utf8)
        guard input.count >= wanted.count else { return false }
        return zip(input, wanted).allSatisfy { byte, letter in byte | 0x20 == letter | 0x20 }
    }

    private static func contains(_ input: UnsafeBufferPointer<UInt8>, _ needle: String) -> Bool {
        let bytes = Array(needle.utf8)
        guard input.count >= bytes.count else { return false }
        for offset in 0...(input.count - bytes.count) where input[offset] == bytes[0] {
            if bytes.indices.allSatisfy({ input[offset + $0] == bytes[$0] }) { return true }
        }
        return false
    }
}
