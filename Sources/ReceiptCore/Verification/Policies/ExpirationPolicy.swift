extension VerificationStep {
    public static let expiration = VerificationStep(rawValue: "expiration")
}

/// docs/FORMAT.md §3 step 6: a VPP receipt's expiration_date (21) is after "now" (the
/// current time, or the instant the caller set).
struct ExpirationPolicy: ReceiptPolicy {
    var step: VerificationStep { .expiration }

    func outcome(in context: VerificationContext) -> StepOutcome {
        guard let expires = context.claims.expirationDate else { return .skipped("no expiration_date (21): not a VPP receipt") }
        return checked { () throws(ReceiptError) in
            guard context.nowMilliseconds < expires.millisecondsSince1970 else {
                throw ReceiptError(.receiptExpired, "expiration_date \(RFC3339Format.utc(expires.millisecondsSince1970)) is past")
            }
            return context.detail("expires \(RFC3339Format.utc(expires.millisecondsSince1970))")
        }
    }
}
