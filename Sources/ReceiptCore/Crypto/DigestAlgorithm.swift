/// The digests receipts are signed with.
enum DigestAlgorithm: Sendable {
    case sha1, sha256

    var name: String { self == .sha1 ? "SHA-1" : "SHA-256" }
}
