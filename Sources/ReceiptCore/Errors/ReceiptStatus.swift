/// Every outcome the library reports. The raw values are the C ABI's
/// `receipt_status_t` constants and never change meaning once released.
///
/// Ranges: 0 success; 1–89 the caller's mistakes; 90–99 the environment (out
/// of memory); 100–199 input that is not a
/// usable receipt (or anchor); 200–299 verification verdicts: the receipt is
/// readable but must not be believed.
public enum ReceiptStatus: Int32, Sendable, CaseIterable {
    case ok = 0

    case nullArgument = 1
    case invalidArgument = 2
    case absent = 3
    case wrongFieldKind = 4
    case indexOutOfRange = 5
    case unknownField = 6
    case noMemory = 90

    case emptyInput = 100
    case inputTooLarge = 101
    case badBase64 = 102
    case legacyReceipt = 103
    case unsupportedFormat = 104
    case notAReceipt = 105
    case notAJWS = 106
    case badBase64URL = 107
    case truncated = 110
    case lengthOverflow = 111
    case nestingTooDeep = 112
    case unexpectedTag = 113
    case badEncoding = 114
    case trailingData = 115
    case notSignedData = 120
    case notDataContent = 121
    case missingContent = 122
    case badAttribute = 130
    case badUTF8 = 131
    case integerOverflow = 132
    case badDate = 133
    case duplicateAttribute = 134
    case limitExceeded = 140
    case badAnchor = 141
    case badJSON = 142
    case duplicateMember = 143
    case notAnObject = 144
    case badField = 145
    case wrongPayloadKind = 146
    case unsignedMember = 147
    case notWhatWasAsked = 148

    case signatureInvalid = 200
    case unsupportedDigest = 201
    case unsupportedSignature = 202
    case signerNotFound = 203
    case chainUntrusted = 204
    case chainNotValidAtCreation = 205
    case unexpectedCertificates = 206
    case missingIntermediateMarker = 207
    case missingLeafMarker = 208
    case noCreationDate = 209
    case bundleMismatch = 210
    case versionMismatch = 211
    case deviceMismatch = 212
    case receiptExpired = 213
    case environmentMismatch = 214
    case notCanonical = 215
    case duplicateCertificate = 216
    case tooManyCertificates = 217
    case appAppleIDMismatch = 218
    case badCertificate = 220
    case cryptoFailure = 221
    case malformedSignature = 222
    case algorithmRefused = 223
    case criticalUnsupported = 224
    case certificateCount = 225
    case badSignatureEncoding = 226
    case nestedUnreadable = 227
    case keyRefused = 228
    case notASigningCertificate = 229
    case revoked = 230
    case revocationUnknown = 231
    case badOCSPResponse = 232
    case noCertificates = 233

    /// The C constant's name, e.g. `RECEIPT_E_TRUNCATED`; stable, for logs and the CLI.
    public var name: String { staticName.description }
    /// A fixed one-line description; the per-call detail says where and why.
    public var message: String { staticMessage.description }

    /// The same, in static NUL-terminated storage that C callers may keep forever.
    public var staticName: StaticString { entry.name }
    public var staticMessage: StaticString { entry.message }

    /// The one table of names and messages. receipt.h and the Python binding read
    /// the names through the C ABI; a test checks that the header agrees.
    private var entry: (name: StaticString, message: StaticString) {
        switch self {
        case .ok: ("RECEIPT_OK", "success")
        case .nullArgument: ("RECEIPT_E_NULL_ARGUMENT", "a required argument was NULL")
        case .invalidArgument: ("RECEIPT_E_INVALID_ARGUMENT", "an argument was out of its allowed range")
        case .absent: ("RECEIPT_E_ABSENT", "the field is not present in this receipt")
        case .wrongFieldKind: ("RECEIPT_E_WRONG_FIELD_KIND", "the field does not hold a value of the requested kind")
        case .indexOutOfRange: ("RECEIPT_E_INDEX_OUT_OF_RANGE", "the index is past the end of the list")
        case .unknownField: ("RECEIPT_E_UNKNOWN_FIELD", "no such field identifier")
        case .noMemory: ("RECEIPT_E_NO_MEMORY", "memory could not be allocated; nothing was accepted")
        case .emptyInput: ("RECEIPT_E_EMPTY_INPUT", "the input is empty or only whitespace")
        case .inputTooLarge: ("RECEIPT_E_INPUT_TOO_LARGE", "the input is larger than the configured limit")
        case .badBase64: ("RECEIPT_E_BAD_BASE64", "the input is text but not valid base64")
        case .legacyReceipt: ("RECEIPT_E_LEGACY_RECEIPT", "the input is a legacy iOS 6 transaction receipt, not an app receipt")
        case .unsupportedFormat: ("RECEIPT_E_UNSUPPORTED_FORMAT", "the input is a known format that is not an app receipt (JWS, PEM)")
        case .notAReceipt: ("RECEIPT_E_NOT_A_RECEIPT", "the input is neither a DER/BER receipt nor base64 text")
        case .notAJWS: ("RECEIPT_E_NOT_A_JWS", "the input is not a compact JWS: three non-empty segments joined by two dots")
        case .badBase64URL: ("RECEIPT_E_BAD_BASE64URL", "a JWS segment is not unpadded base64url")
        case .truncated: ("RECEIPT_E_TRUNCATED", "the input ends inside an element")
        case .lengthOverflow: ("RECEIPT_E_LENGTH_OVERFLOW", "an element's length does not fit in what encloses it")
        case .nestingTooDeep: ("RECEIPT_E_NESTING_TOO_DEEP", "elements are nested deeper than the limit")
        case .unexpectedTag: ("RECEIPT_E_UNEXPECTED_TAG", "an element has a tag the receipt grammar does not allow there")
        case .badEncoding: ("RECEIPT_E_BAD_ENCODING", "an element is not valid BER/DER")
        case .trailingData: ("RECEIPT_E_TRAILING_DATA", "bytes follow the end of the receipt")
        case .notSignedData: ("RECEIPT_E_NOT_SIGNED_DATA", "the outer content type is not PKCS #7 signedData")
        case .notDataContent: ("RECEIPT_E_NOT_DATA_CONTENT", "the signed content type is not PKCS #7 data")
        case .missingContent: ("RECEIPT_E_MISSING_CONTENT", "the signed data carries no payload")
        case .badAttribute: ("RECEIPT_E_BAD_ATTRIBUTE", "a receipt attribute is malformed")
        case .badUTF8: ("RECEIPT_E_BAD_UTF8", "a string (a UTF8String, or JSON text) is not valid UTF-8")
        case .integerOverflow: ("RECEIPT_E_INTEGER_OVERFLOW", "an INTEGER does not fit in 64 bits")
        case .badDate: ("RECEIPT_E_BAD_DATE", "a date is in no known form")
        case .duplicateAttribute: ("RECEIPT_E_DUPLICATE_ATTRIBUTE", "a known attribute occurs twice")
        case .limitExceeded: ("RECEIPT_E_LIMIT_EXCEEDED", "a parse limit (attributes, string length, payload chunks) was exceeded")
        case .badAnchor: ("RECEIPT_E_BAD_ANCHOR", "a trust anchor is not a readable DER or PEM certificate")
        case .badJSON: ("RECEIPT_E_BAD_JSON", "a JSON document (catalog, App Store response, JWS header or payload) is malformed")
        case .duplicateMember: ("RECEIPT_E_DUPLICATE_MEMBER", "a JSON object names the same member twice")
        case .notAnObject: ("RECEIPT_E_NOT_AN_OBJECT", "a JWS header or payload is not a JSON object (null, a number, an array, ...)")
        case .badField: ("RECEIPT_E_BAD_FIELD", "a documented JWS header or payload member has the wrong JSON type")
        case .wrongPayloadKind: ("RECEIPT_E_WRONG_PAYLOAD_KIND", "the JWS carries another kind of payload than its place calls for")
        case .unsignedMember: ("RECEIPT_E_UNSIGNED_MEMBER", "an answer carries, unsigned, a member by the name libreceipt gives verified payloads")
        case .notWhatWasAsked: ("RECEIPT_E_NOT_WHAT_WAS_ASKED", "a signed answer is about another transaction than the one asked for")
        case .signatureInvalid: ("RECEIPT_E_SIGNATURE_INVALID", "the signature (PKCS #7, or JWS ES256) does not verify over what it signs")
        case .unsupportedDigest: ("RECEIPT_E_UNSUPPORTED_DIGEST", "the digest or signature algorithm is not RSA with SHA-1 or SHA-256")
        case .unsupportedSignature: ("RECEIPT_E_UNSUPPORTED_SIGNATURE", "the signature is not in the shape receipts use (one signer, no signed attributes)")
        case .signerNotFound: ("RECEIPT_E_SIGNER_NOT_FOUND", "the signing certificate is not in the receipt")
        case .chainUntrusted: ("RECEIPT_E_CHAIN_UNTRUSTED", "the certificate chain does not lead to a trusted anchor")
        case .chainNotValidAtCreation: ("RECEIPT_E_CHAIN_NOT_VALID_AT_CREATION", "a certificate in the chain was not valid at the receipt creation date")
        case .unexpectedCertificates: ("RECEIPT_E_UNEXPECTED_CERTIFICATES", "the receipt carries certificates outside the verified chain")
        case .missingIntermediateMarker: ("RECEIPT_E_MISSING_INTERMEDIATE_MARKER", "the intermediate lacks Apple's marker OID 1.2.840.113635.100.6.2.1")
        case .missingLeafMarker: ("RECEIPT_E_MISSING_LEAF_MARKER", "the signing certificate lacks Apple's marker OID 1.2.840.113635.100.6.11.1")
        case .noCreationDate: ("RECEIPT_E_NO_CREATION_DATE", "no creation or signing date (and no caller-given time for a JWS) to evaluate the chain at")
        case .bundleMismatch: ("RECEIPT_E_BUNDLE_MISMATCH", "the bundle id is not the expected one")
        case .versionMismatch: ("RECEIPT_E_VERSION_MISMATCH", "the application version is not the expected one")
        case .deviceMismatch: ("RECEIPT_E_DEVICE_MISMATCH", "the device hash does not match the device identifier")
        case .receiptExpired: ("RECEIPT_E_RECEIPT_EXPIRED", "the receipt's expiration date (VPP) has passed")
        case .environmentMismatch: ("RECEIPT_E_ENVIRONMENT_MISMATCH", "the receipt is from another environment than the one required")
        case .notCanonical: ("RECEIPT_E_NOT_CANONICAL", "the signed envelope is not in the one form Apple writes")
        case .duplicateCertificate: ("RECEIPT_E_DUPLICATE_CERTIFICATE", "the receipt carries the same certificate twice")
        case .tooManyCertificates: ("RECEIPT_E_TOO_MANY_CERTIFICATES", "the receipt carries more certificates than any genuine receipt")
        case .appAppleIDMismatch: ("RECEIPT_E_APP_APPLE_ID_MISMATCH", "the app's Apple id is not the expected one, or a production payload's was not configured")
        case .badCertificate: ("RECEIPT_E_BAD_CERTIFICATE", "a certificate in the receipt cannot be decoded")
        case .cryptoFailure: ("RECEIPT_E_CRYPTO_FAILURE", "the crypto library failed; nothing was accepted")
        case .malformedSignature: ("RECEIPT_E_MALFORMED_SIGNATURE", "the SignerInfo is not well-formed")
        case .algorithmRefused: ("RECEIPT_E_ALGORITHM_REFUSED", "the JWS header's alg is not ES256 (none, HS256, RS256, ... are refused)")
        case .criticalUnsupported: ("RECEIPT_E_CRITICAL_UNSUPPORTED", "the JWS header marks as critical a parameter this library does not implement")
        case .certificateCount: ("RECEIPT_E_CERTIFICATE_COUNT", "the JWS x5c holds neither 3 certificates (App Store) nor 1 (Xcode)")
        case .badSignatureEncoding: ("RECEIPT_E_BAD_SIGNATURE_ENCODING", "the JWS signature is not 64 bytes of r||s (ES256); DER and other lengths are refused")
        case .nestedUnreadable: ("RECEIPT_E_NESTED_UNREADABLE", "a JWS nested in a notification is not a readable JWS, or nests another notification")
        case .keyRefused: ("RECEIPT_E_KEY_REFUSED", "the signing key is of a size or public exponent Apple never uses; refused before any arithmetic")
        case .notASigningCertificate: ("RECEIPT_E_NOT_A_SIGNING_CERTIFICATE", "the signing certificate is a CA, or its key usage does not allow digital signatures")
        case .revoked: ("RECEIPT_E_REVOKED", "a certificate of the chain is revoked (OCSP)")
        case .revocationUnknown: ("RECEIPT_E_REVOCATION_UNKNOWN", "no fresh OCSP answer for a certificate of the chain, and revocation is hard")
        case .badOCSPResponse: ("RECEIPT_E_BAD_OCSP_RESPONSE", "an OCSP answer is malformed, unsigned, mis-signed, stale, from the future or for another certificate")
        case .noCertificates: ("RECEIPT_E_NO_CERTIFICATES", "the JWS header carries no x5c: nothing says who signed it")
        }
    }
}

/// A failure with its place: `offset` is a byte offset into the decoded input
/// (after base64) where the problem was found, when there is one.
public struct ReceiptError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: ReceiptStatus
    public let offset: Int?
    public let detail: String

    public init(_ status: ReceiptStatus, at offset: Int? = nil, _ detail: String) {
        self.status = status
        self.offset = offset
        self.detail = detail
    }

    /// The same place and detail under a verification status: a structure that only
    /// verification reads (a SignerInfo, a certificate) is a reason not to believe the
    /// receipt, reported in the 200–299 range like every verdict.
    func asVerdict(_ status: ReceiptStatus, _ what: String) -> ReceiptError {
        (200..<300).contains(self.status.rawValue) ? self : ReceiptError(status, at: offset, "\(what): \(detail)")
    }

    /// A refusal that the same input may pass later (no fresh OCSP answer yet, revocation
    /// hard): a server answers it 503, so that its sender tries again, where every other is 400.
    public var canSucceedLater: Bool { status == .revocationUnknown }

    public var description: String {
        if let offset { return "\(status.name): \(detail) (at byte \(offset))" }
        return "\(status.name): \(detail)"
    }
}
