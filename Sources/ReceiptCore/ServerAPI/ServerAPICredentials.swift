/// What App Store Connect gives a server for the App Store Server API: the in-app
/// purchase key (PKCS #8 P-256 PEM), its key id, the team's issuer id, and the app's
/// bundle id. Checked when made, so that a wrong key or an empty id fails at start-up,
/// not at the first request. The issuer id may be left out only by a server that
/// signs nothing but original promotional offers (which do not name it).
public struct ServerAPICredentials: Sendable {
    public let keyID: String
    public let issuerID: String?
    public let bundleID: String
    let signingKey: ES256PrivateKey

    public init(privateKeyPEM: [UInt8], keyID: String, issuerID: String?, bundleID: String) throws(ReceiptError) {
        for (value, name) in [(keyID, "key id"), (issuerID ?? "-", "issuer id"), (bundleID, "bundle id")]
        where value.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            throw ReceiptError(.invalidArgument, "the \(name) is empty")
        }
        // Checked before any token is made: a key id or issuer id of the wrong form
        // (the PEM passed as the key id by a mix-up) would travel in every token's header.
        guard keyID.utf8.count == 10, keyID.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else {
            throw ReceiptError(.invalidArgument, "the key id must be App Store Connect's 10 characters (A-Z, 0-9); "
                               + "got \(keyID.utf8.count) characters")
        }
        if let issuerID, !UUIDText.isWellFormed(issuerID) {
            throw ReceiptError(.invalidArgument, "the issuer id must be App Store Connect's UUID "
                               + "(8-4-4-4-12 hexadecimal digits); got \(issuerID.utf8.count) characters")
        }
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
