/// A StoreKit 2 JWS, decoded: its header, its payload (every member kept, the
/// documented ones checked against their types), which kind of payload it is,
/// and the exact bytes that were signed. Decoding believes nothing: verification
/// (`ReceiptVerifier.verify(jws:)`) decides whether to.
public final class SignedPayload: Sendable {
    let jws: CompactJWS
    public let kind: SignedPayloadKind

    /// The header members this library reads, typed; `x5c` is kept as its base64 strings.
    static let headerFields: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("alg", .string), ("x5c", .stringArray), ("crit", .stringArray), ("kid", .string), ("typ", .string),
    ]

    /// `expected`: the kind the caller's context says it is (a member named
    /// `signedRenewalInfo`, a call that verifies a transaction). A payload whose
    /// members say it is another known kind is refused; one too minimal to tell is
    /// typed and judged as the expected kind (its bundle id and environment then
    /// required where that kind carries them). Nil: the kind is told from the members.
    /// `checkingTypes`: false only for a payload that passed the check when it was
    /// verified (`decodeVerifiedBefore`).
    init(_ jws: CompactJWS, as expected: SignedPayloadKind? = nil, checkingTypes: Bool = true) throws(ReceiptError) {
        for (path, fieldKind) in Self.headerFields {
            guard let value = jws.signed?.header.member(at: path), !SignedPayloadField.conforms(value, to: fieldKind) else { continue }
            throw ReceiptError(.badField, "the JWS header's \(path) is \(value.kindName), not \(fieldKind.rawValue)")
        }
        guard case .object(let members) = jws.payload else {
            throw ReceiptError(.notAnObject, "the JWS payload is not a JSON object")
        }
        let told = SignedPayloadKind(members: members)
        if let expected, expected != .unknown {
            guard told == expected || told == .unknown else {
                throw ReceiptError(.wrongPayloadKind, "the JWS carries a \(told.rawValue), where a \(expected.rawValue) belongs")
            }
            kind = expected
        } else {
            kind = told
        }
        if checkingTypes { try SignedPayloadField.check(jws.payload, as: kind) }
        self.jws = jws
    }

    /// Decodes a compact JWS (surrounding whitespace allowed) without verifying it.
    /// `kind`: the kind the caller expects (see init), or nil to tell it from the members.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>, limits: ParseLimits = .default,
                              as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> SignedPayload {
        try SignedPayload(try CompactJWS.decode(bytes, limits: limits), as: kind)
    }

    public static func decode(_ bytes: [UInt8], limits: ParseLimits = .default,
                              as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> SignedPayload {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try decode(buffer, limits: limits, as: kind) }
    }

    public static func decode(_ token: String, limits: ParseLimits = .default,
                              as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> SignedPayload {
        try token.withUTF8Bytes { (buffer) throws(ReceiptError) in try decode(buffer, limits: limits, as: kind) }
    }

    /// Decodes the payload of a JWS verified before, for reading it again: a store's
    /// row, accepted only after `verify(jws:)` (and so after `decode`'s checks). The
    /// header and signature are split off but not decoded (most of a JWS's bytes, and
    /// about a third of its decoding), and the payload's members are not type-checked
    /// again (a fifth of what is left): a member of another type than documented reads
    /// nil, as through any typed read. The payload must still be a JSON object of the
    /// kind expected, refused as `decode` refuses it. The header members (`header`,
    /// `certificateChain`, …) decode the header again when asked, and `verify(jws:)`
    /// decodes the whole token again, checks included, before it judges: nothing is
    /// judged that a full decode would refuse.
    public static func decodeVerifiedBefore(_ token: String, as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> SignedPayload {
        try SignedPayload(try CompactJWS.decodePayload(token), as: kind, checkingTypes: false)
    }

    /// True when the header and signature were decoded with the payload (not `decodeVerifiedBefore`).
    var isDecodedInFull: Bool { jws.signed != nil }

    /// This payload decoded in full: itself, or, when only its payload was decoded
    /// (`decodeVerifiedBefore`), its token decoded again, header and signature included;
    /// throws what `decode` throws for it.
    func inFull() throws(ReceiptError) -> SignedPayload {
        isDecodedInFull ? self : try SignedPayload.decode(jws.token, as: kind)
    }

    /// The header and signature: as decoded, or decoded now (`inFull`); nil when the
    /// token's header or signature does not decode (a stored row edited by hand).
    var signedParts: CompactJWS.SignedParts? { jws.signed ?? (try? inFull())?.jws.signed }

    /// The whole JWS as given (surrounding whitespace cut): what a store keeps.
    public var compactSerialization: String { jws.token }
    /// The header's JSON, exactly as signed; empty when it does not decode (only a
    /// payload decoded by `decodeVerifiedBefore` can get that far without one).
    public var headerText: String { String(decoding: headerBytes, as: UTF8.self) }
    var headerBytes: [UInt8] { signedParts?.headerBytes ?? [] }
    /// The signature's bytes (ES256: r then s); empty when it does not decode.
    var signature: [UInt8] { signedParts?.signature ?? [] }
    /// The payload's JSON, exactly as signed (a caller's JSON library reads it as Apple wrote it).
    public var payloadText: String { String(decoding: jws.payloadBytes, as: UTF8.self) }
    public var payloadBytes: [UInt8] { jws.payloadBytes }
    /// The header; an empty object when it does not decode (see `headerText`).
    public var header: JSONValue { signedParts?.header ?? .object([:]) }
    public var payload: JSONValue { jws.payload }

    public var algorithm: String? { header["alg"]?.stringValue }
    public var keyID: String? { header["kid"]?.stringValue }
    /// The header's certificate chain as written: base64 DER, leaf first.
    public var certificateChain: [String] { header["x5c"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    public var criticalParameters: [String]? { header["crit"]?.arrayValue?.compactMap(\.stringValue) }

    // Typed reads by dotted path (`data.bundleId`); nil when absent or of another type.
    public func string(_ path: String) -> String? { jws.payload.member(atPath: path)?.stringValue }
    public func integer(_ path: String) -> Int64? {
        guard case .number(let text)? = jws.payload.member(atPath: path) else { return nil }
        return Int64(text)
    }
    /// Epoch milliseconds, fractions of a millisecond cut toward the past.
    public func date(_ path: String) -> Int64? { jws.payload.member(atPath: path)?.epochMilliseconds }
    public func boolean(_ path: String) -> Bool? { jws.payload.member(atPath: path)?.boolValue }

    /// The instant the payload was signed: `signedDate`, or an AppTransaction's
    /// `receiptCreationDate`; nil when it carries none.
    /// The member `signingDate` reads: `signedDate`, or `receiptCreationDate`.
    public var signingDateName: String { kind.paths.signingDate.description }

    public var signingDate: Int64? { jws.payload.member(at: kind.paths.signingDate)?.epochMilliseconds }

    /// A transaction's offer as a receipt states it (is_trial_period,
    /// is_in_intro_offer_period): offerType 1 is an introductory offer, a free trial
    /// when its discount is FREE_TRIAL, a paid introductory price otherwise (payloads
    /// from before offerDiscountType existed name no discount: counted as a price).
    public var introductoryOffer: (isTrialPeriod: Bool, isInIntroOfferPeriod: Bool) {
        let introductory = integer("offerType") == 1
        let freeTrial = string("offerDiscountType") == "FREE_TRIAL"
        return (introductory && freeTrial, introductory && !freeTrial)
    }

    /// The first of `paths` the payload carries as a string or number, as text.
    func firstText(_ paths: [MemberPath]) -> String? {
        for path in paths {
            switch jws.payload.member(at: path) {
            case .string(let text)?, .number(let text)?: return text
            default: continue
            }
        }
        return nil
    }

    public var bundleID: String? { firstText(kind.paths.bundleID) }
    /// An EXTERNAL_PURCHASE_TOKEN notification names no environment; Apple's rule (its
    /// verifier's) takes it from the token: an externalPurchaseId that starts with
    /// `SANDBOX` is the sandbox's, any other production's.
    public var environmentName: String? {
        if let named = firstText(kind.paths.environment) { return named }
        guard kind == .notification, let token = firstText([Self.externalPurchaseID]) else { return nil }
        return token.hasPrefix("SANDBOX") ? "Sandbox" : "Production"
    }

    static let externalPurchaseID: MemberPath = "externalPurchaseToken.externalPurchaseId"
    public var appAppleID: Int64? { firstText(kind.paths.appAppleID).flatMap { Int64($0) } }

    // A transaction's identity, for entitlements and de-duplication.
    public var transactionID: String? { string("transactionId") }
    public var originalTransactionID: String? { string("originalTransactionId") }
    public var productID: String? { string("productId") }
}
