/// What an App Store Server API answer gives a store, as rows: every signed
/// transaction, renewal info and notification in it (transaction history,
/// subscription statuses, notification history, transaction info…), wherever it
/// sits. Made only from a `ServerAPISuccess`, whose signed members all verified
/// (one that did not refused the whole answer), so catch-up stores nothing unverified.
public struct ServerAPIStoreRows: Sendable {
    public private(set) var notifications: [ReceivedNotification] = []
    public private(set) var transactions: [StoredTransaction] = []
    public private(set) var renewalInfos: [StoredRenewalInfo] = []

    public init(_ answer: ServerAPISuccess) throws(ReceiptError) {
        try collect(answer.document, path: "", depth: 0)
    }

    public var count: Int { notifications.count + transactions.count + renewalInfos.count }

    /// The subscriptions the rows are about, in order of first mention.
    public var originalTransactionIDs: [String] {
        var seen = Set<String>()
        let all = notifications.compactMap(\.originalTransactionID) + transactions.map(\.originalTransactionID)
            + renewalInfos.map(\.originalTransactionID)
        return all.filter { seen.insert($0).inserted }
    }

    /// Walks Apple's members; a `signed…` member's decoded payload beside it (which
    /// SignedMembers added) is not walked again: its own signed members come with its row.
    private mutating func collect(_ value: JSONValue, path: String, depth: Int) throws(ReceiptError) {
        guard depth <= SignedMembers.maxDepth else { throw ReceiptError(.nestingTooDeep, "\(path): nested deeper than \(SignedMembers.maxDepth)") }
        switch value {
        case .array(let items):
            for (index, item) in items.enumerated() { try collect(item, path: "\(path)[\(index)]", depth: depth + 1) }
        case .object(let members):
            let decodedNames = Set(members.keys.compactMap(SignedMembers.decodedName(of:)))
            for name in members.keys.sorted() where !decodedNames.contains(name) {
                let memberPath = path.isEmpty ? name : "\(path).\(name)"
                guard SignedMembers.decodedName(of: name) != nil else {
                    try collect(members[name]!, path: memberPath, depth: depth + 1)
                    continue
                }
                let tokens: [(String, String)] = switch members[name]! {
                case .string(let token): [(memberPath, token)]
                case .array(let items): items.enumerated().compactMap { index, item in item.stringValue.map { ("\(memberPath)[\(index)]", $0) } }
                default: []
                }
                for (tokenPath, token) in tokens { try add(token, path: tokenPath) }
            }
        default:
            break
        }
    }

    private mutating func add(_ token: String, path: String) throws(ReceiptError) {
        let payload: SignedPayload
        do throws(ReceiptError) {
            payload = try SignedPayload.decode(token)
        } catch {
            throw ReceiptError(error.status, "\(path): \(error.detail)")
        }
        switch payload.kind {
        case .transaction:
            if let row = StoredTransaction(verified: payload) { transactions.append(row) }
        case .renewalInfo:
            if let row = StoredRenewalInfo(verified: payload) { renewalInfos.append(row) }
        case .notification:
            do throws(ReceiptError) {
                notifications.append(try ReceivedNotification(alreadyVerified: payload))
            } catch {
                throw ReceiptError(error.status, "\(path): \(error.detail)")
            }
        case .appTransaction, .realtimeRequest, .unknown:
            break
        }
    }
}
