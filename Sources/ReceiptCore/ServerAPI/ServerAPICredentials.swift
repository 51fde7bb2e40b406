/// What App Store Connect gives a server for the App Store Server API: the in-app
/// purchase key (PKCS #8 P-256 PEM), its key id, the team's issuer id, and the app's
/// bundle id. Checked when made, so that a wrong key or an empty id fails at start-up,
/// not at the first request. The issuer id may be left out only by a server that
/// signs nothing but original promotional offers (which do not name it).
public struct ServerAPICredentials: Sendable {
    /// How the key id and issuer id are checked before any token is made.
    public enum IDForm: Sendable {
        /// As App Store Connect issues them: a key id of 10 characters (A-Z, 0-9), an issuer
        /// id a UUID. libreceipt's own clients (C, `libreceipt.api`, the CLI, Swift).
        case appStoreConnect
        /// Whatever only Apple's server can judge (Apple's libraries take `keyId` and
        /// `issuerId`, and Apple answers 401), as long as it is safe to carry in a token:
        /// the drop-ins of Apple's libraries. `IDForm.headerSafe` says what is refused.
        case headerSafe
    }

    public let keyID: String
    public let issuerID: String?
    public let bundleID: String
    let signingKey: ES256PrivateKey

    public init(privateKeyPEM: [UInt8], keyID: String, issuerID: String?, bundleID: String,
                idForm: IDForm = .appStoreConnect) throws(ReceiptError) {
        for (value, name) in [(keyID, "key id"), (issuerID, "issuer id"), (bundleID, "bundle id")] {
            if let value { try IDForm.requireHeaderSafe(value, name) }
        }
        if idForm == .appStoreConnect { try IDForm.requireAppStoreConnect(keyID: keyID, issuerID: issuerID) }
        signingKey = try ES256PrivateKey(pem: privateKeyPEM)
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// The issuer id, which every JWT this library signs names (`iss`).
    func requiredIssuerID() throws(ReceiptError) -> String {
        guard let issuerID else {
            throw ReceiptError(.invalidArgument, "no issuer id was given; App Store Server API tokens and signed "
                               + "requests name it (App Store Connect, Users and Access, Integrations)")
        }
        return issuerID
    }

    /// A compact JWS of `claims`, header `alg: ES256`, `kid`, `typ: JWT`, signed with the key.
    func signJWT(_ claims: [UInt8]) throws(ReceiptError) -> String {
        var header = JSONWriter()
        header.beginObject()
        header.string("alg", "ES256")
        header.string("kid", keyID)
        header.string("typ", "JWT")
        header.endObject()
        let signingInput = Base64URL.encode(header.bytes) + "." + Base64URL.encode(claims)
        return signingInput + "." + Base64URL.encode(try signingKey.sign(Array(signingInput.utf8)))
    }
}

extension ServerAPICredentials.IDForm {
    /// The longest id either form takes, in characters (Unicode scalars).
    public static let maxIDLength = 64

    /// Every id, in either form, is checked before any token is made: one that would leak a secret
    /// or break a header (the PEM passed as the key id by a mix-up, a line break, a pasted
    /// paragraph) never travels in a token. Refused: empty, whitespace or a control character
    /// anywhere, PEM armour (`-----`), more than `maxIDLength` characters.
    static func requireHeaderSafe(_ value: String, _ name: String) throws(ReceiptError) {
        let scalars = value.unicodeScalars
        guard scalars.contains(where: { !$0.properties.isWhitespace }) else {
            throw ReceiptError(.invalidArgument, "the \(name) is empty")
        }
        if scalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            throw ReceiptError(.invalidArgument, "the \(name) holds whitespace or a control character")
        }
        if value.contains("-----") {
            throw ReceiptError(.invalidArgument, "the \(name) holds PEM armour (-----): is it the key?")
        }
        guard scalars.count <= maxIDLength else {
            throw ReceiptError(.invalidArgument, "the \(name) is longer than \(maxIDLength) characters "
                               + "(\(scalars.count))")
        }
    }

    static func requireAppStoreConnect(keyID: String, issuerID: String?) throws(ReceiptError) {
        guard keyID.utf8.count == 10, keyID.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else {
            throw ReceiptError(.invalidArgument, "the key id must be App Store Connect's 10 characters (A-Z, 0-9); "
                               + "got \(keyID.utf8.count) characters")
        }
        if let issuerID, !UUIDText.isWellFormed(issuerID) {
            throw ReceiptError(.invalidArgument, "the issuer id must be App Store Connect's UUID "
                               + "(8-4-4-4-12 hexadecimal digits); got \(issuerID.utf8.count) characters")
        }
    }
}
