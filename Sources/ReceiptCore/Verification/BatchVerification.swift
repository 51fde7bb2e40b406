/// Many receipts verified in one call, for a data lake's rows (Spark, Arrow): each
/// input parsed in full and judged by one verifier at its own creation date, the
/// parsed receipts kept so that their strings can be borrowed until the batch goes.
/// An input that is not a receipt (garbage, empty, absent) is a row with its status,
/// never a failure of the batch.
public final class BatchVerification: Sendable {
    public struct Row: Sendable {
        /// `.ok`, a verdict (200–299), or why the input is not a receipt (100–199);
        /// `.nullArgument` for an absent input.
        public let status: ReceiptStatus
        /// The parsed receipt, even when it did not verify; nil when unreadable.
        public let receipt: Receipt?
        public var isValid: Bool { status == .ok }
    }

    public let rows: [Row]

    /// Every row's purchases, in row order: (row index, purchase index within it).
    public var purchaseCount: Int { rows.reduce(0) { $0 + ($1.receipt?.purchaseCount ?? 0) } }

    /// `inputs[i]` nil is an absent row (a null cell).
    public init(_ inputs: [UnsafeBufferPointer<UInt8>?], verifier: ReceiptVerifier, limits: ParseLimits = .default) {
        rows = inputs.map { input in
            guard let input else { return Row(status: .nullArgument, receipt: nil) }
            do throws(ReceiptError) {
                let receipt = try Receipt.parse(input, limits: limits)
                return Row(status: verifier.verify(receipt).status, receipt: receipt)
            } catch {
                return Row(status: error.status, receipt: nil)
            }
        }
    }
}
