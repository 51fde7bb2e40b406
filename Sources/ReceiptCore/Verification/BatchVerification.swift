/// Many receipts and StoreKit 2 JWS verified in one call, for a data lake's rows
/// (Spark, Arrow): each input parsed in full and judged by one verifier at its own
/// signing date, the parsed receipts and decoded JWS kept so that their strings can be
/// borrowed until the batch goes. An input that is neither (garbage, empty, absent)
/// is a row with its status, never a failure of the batch.
public final class BatchVerification: Sendable {
    public struct Row: Sendable {
        /// `.ok`, a verdict (200–299), or why the input cannot be read (100–199);
        /// `.nullArgument` for an absent input.
        public let status: ReceiptStatus
        /// The parsed receipt, even when it did not verify; nil for a JWS or when unreadable.
        public let receipt: Receipt?
        /// The decoded JWS (told from a receipt by its dots), even when it did not
        /// verify; nil for a receipt or when unreadable.
        public let signedPayload: SignedPayload?
        /// The signed transaction the row's one purchase comes from: the JWS itself, or
        /// the one a notification carries (`SignedPayload.carriedTransaction`).
        public let signedTransaction: SignedPayload?
        let fingerprintSource: FingerprintSource?
        /// The signed content's fingerprint (ContentFingerprint); nil when unreadable.
        public var fingerprint: [UInt8]? { fingerprintSource?.value }
        public var isValid: Bool { status == .ok }

        /// The purchases the row holds: a receipt's in-app entries; one for a signed transaction.
        public var purchaseCount: Int { receipt?.purchaseCount ?? (signedTransaction == nil ? 0 : 1) }

        static func unreadable(_ status: ReceiptStatus) -> Row {
            Row(status: status, receipt: nil, signedPayload: nil, signedTransaction: nil, fingerprintSource: nil)
        }
    }

    public let rows: [Row]

    /// Every row's purchases together.
    public var purchaseCount: Int { rows.reduce(0) { $0 + $1.purchaseCount } }

    /// `inputs[i]` nil is an absent row (a null cell).
    public init(_ inputs: [UnsafeBufferPointer<UInt8>?], verifier: ReceiptVerifier, limits: ParseLimits = .default) {
        rows = inputs.map { input in
            guard let input else { return Row.unreadable(.nullArgument) }
            do throws(ReceiptError) {
                if InputForm.looksLikeJWS(input) {
                    let payload = try SignedPayload.decode(input, limits: limits)
                    let result = verifier.verify(jws: payload)
                    return Row(status: result.status, receipt: nil, signedPayload: payload,
                               signedTransaction: payload.carriedTransaction(limits: limits), fingerprintSource: result.fingerprintSource)
                }
                let receipt = try Receipt.parse(input, limits: limits)
                let result = verifier.verify(receipt, details: false)
                return Row(status: result.status, receipt: receipt, signedPayload: nil, signedTransaction: nil,
                           fingerprintSource: result.fingerprintSource)
            } catch {
                return Row.unreadable(error.status)
            }
        }
    }
}
