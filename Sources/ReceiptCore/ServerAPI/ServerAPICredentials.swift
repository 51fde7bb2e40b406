/// What App Store Connect gives a server for the App Store Server API: the in-app
/// purchase key (PKCS #8 P-256 PEM), its key id, the team's issuer id, and the app's
/// bundle id. Checked when made, so that a wrong key or an empty id fails at start-up,
/// not at the first request.
public struct ServerAPICredentials: Sendable {
    public let keyID: String
    public let issuerID: String
    public let bundleID: String
    let signingKey: ES256PrivateKey

    public init(privateKeyPEM: [UInt8], keyID: String, issuerID: String, bundleID: String) throws(ReceiptError) {
        for (value, name) in [(keyID, "key id"), (issuerID, "issuer id"), (bundleID, "bundle id")]
        where value.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            throw ReceiptError(.invalidArgument, "the \(name) is empty")
        }
        signingKey = try ES256PrivateKey(pem: privateKeyPEM)
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
    }
}
