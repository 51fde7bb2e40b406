/// The signed members inside a verified payload (a notification's
/// `data.signedTransactionInfo`), decoded beside them. An answer's own members
/// are read through Apple's model instead (ServerAPIAnswerReader); inside a
/// payload every byte is signed, so the rule is by name: every string, or array
/// of strings, under a name `signed` + capital letter is a JWS of the kind its
/// name says, verified by the caller's verifier. Its payload is added beside it
/// under the name without `signed`, in snake case (`transactions`,
/// `transaction_info`, `renewal_info`, `payload`, `app_transaction_info`).
/// Numbers such as `signedDate` are not JWS and are left alone.
enum SignedMembers {
    /// The kind of payload a member of this name carries (Apple's names), nil when the name says none.
    static func payloadKind(of name: String) -> SignedPayloadKind? {
        switch name {
        case "signedTransactions", "signedTransactionInfo": .transaction
        case "signedRenewalInfo": .renewalInfo
        case "signedPayload": .notification
        case "signedAppTransactionInfo": .appTransaction
        default: nil
        }
    }

    /// Deeper than any answer Apple sends (a notification inside a history page
    /// inside an answer); deeper input is refused, not followed.
    static let maxDepth = 12

    static func verify(_ value: JSONValue, verifier: ReceiptVerifier, path: String,
                       depth: Int = 0) throws(ReceiptError) -> JSONValue {
        guard depth <= maxDepth else { throw ReceiptError(.nestingTooDeep, "\(path): nested deeper than \(maxDepth)") }
        switch value {
        case .array(let items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                out.append(try verify(item, verifier: verifier, path: "\(path)[\(index)]", depth: depth + 1))
            }
            return .array(out)
        case .object(let members):
            var out = members
            for name in members.keys.sorted() {
                let memberPath = path.isEmpty ? name : "\(path).\(name)"
                let member = members[name]!
                guard let decodedName = decodedName(of: name), member.stringValue != nil || member.arrayValue != nil else {
                    out[name] = try verify(member, verifier: verifier, path: memberPath, depth: depth + 1)
                    continue
                }
                guard members[decodedName] == nil else {
                    throw ReceiptError(.duplicateMember, "\(memberPath): the answer already has a member \(quoted(decodedName))")
                }
                out[decodedName] = try payloads(of: member, kind: payloadKind(of: name), verifier: verifier, path: memberPath, depth: depth)
            }
            return .object(out)
        default:
            return value
        }
    }

    /// `signedTransactionInfo` → `transaction_info`; nil for a name that is not `signed` + capital.
    static func decodedName(of name: String) -> String? {
        let bytes = Array(name.utf8)
        guard bytes.count > 6, bytes.starts(with: Array("signed".utf8)), (0x41...0x5A).contains(bytes[6]) else { return nil }
        var snake: [UInt8] = []
        for (index, byte) in bytes[6...].enumerated() {
            if (0x41...0x5A).contains(byte) {
                if index > 0 { snake.append(UInt8(ascii: "_")) }
                snake.append(byte + 0x20)
            } else {
                snake.append(byte)
            }
        }
        return String(decoding: snake, as: UTF8.self)
    }

    /// The verified payload of one JWS, or an array of them.
    private static func payloads(of member: JSONValue, kind: SignedPayloadKind?, verifier: ReceiptVerifier, path: String,
                                 depth: Int) throws(ReceiptError) -> JSONValue {
        if let items = member.arrayValue {
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                guard let token = item.stringValue else {
                    throw ReceiptError(.badField, "\(path)[\(index)] is \(item.kindName), not a JWS")
                }
                out.append(try payload(of: token, kind: kind, verifier: verifier, path: "\(path)[\(index)]", depth: depth))
            }
            return .array(out)
        }
        return try payload(of: member.stringValue!, kind: kind, verifier: verifier, path: path, depth: depth)
    }

    private static func payload(of token: String, kind: SignedPayloadKind?, verifier: ReceiptVerifier, path: String,
                                depth: Int) throws(ReceiptError) -> JSONValue {
        let payload = try verifiedPayload(of: token, kind: kind, verifier: verifier, path: path)
        return try verify(payload, verifier: verifier, path: path, depth: depth + 1)
    }

    /// The payload of `token` when it reads as a JWS of `kind` (nil: any) and verifies; else an error naming `path`.
    static func verifiedPayload(of token: String, kind: SignedPayloadKind?, verifier: ReceiptVerifier,
                                path: String) throws(ReceiptError) -> JSONValue {
        let decoded: (payload: SignedPayload, result: VerificationResult)
        do throws(ReceiptError) {
            decoded = try verifier.verify(jws: token, as: kind)
        } catch {
            throw ReceiptError(error.status, at: error.offset, "\(path) is not a readable JWS: \(error.detail)")
        }
        if let failure = decoded.result.firstFailure {
            throw ReceiptError(failure.status, at: failure.offset, "\(path) failed verification: \(failure.detail)")
        }
        return decoded.payload.payload
    }
}
