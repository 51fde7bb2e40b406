/// SPEC §3 steps 3–6: what the receipt says about the app, the device and VPP
/// expiry, against the caller's policy.
struct PolicyChecks {
    let policy: VerificationPolicy
    let receipt: Receipt

    func steps(now: Int64) -> [(VerificationStep, StepOutcome)] {
        [(.bundleID, bundle()), (.applicationVersion, version()), (.deviceHash, device()), (.expiration, expiration(now)),
         (.environment, environment())]
    }

    /// Fails closed: a receipt without a receipt_type (0), or of a type neither
    /// environment has (Xcode), matches no required environment.
    private func environment() -> StepOutcome {
        guard let required = policy.environment else { return .skipped("no environment was required") }
        return outcome { () throws(ReceiptError) in
            guard ReceiptEnvironment(receiptType: receipt.receiptType) == required else {
                throw ReceiptError(.environmentMismatch, "receipt_type is \(quoted(receipt.receiptType)); "
                                   + "\(required.rawValue) requires \(required.receiptTypes.joined(separator: " or "))")
            }
            return quoted(receipt.receiptType)
        }
    }

    private func bundle() -> StepOutcome {
        sameText(receipt.bundleID, policy.bundleID, "bundle_id", .bundleMismatch, unset: "no expected bundle id was given")
    }

    private func version() -> StepOutcome {
        sameText(receipt.applicationVersion, policy.applicationVersion, "application_version", .versionMismatch,
                 unset: "no expected application version was given")
    }

    /// Byte-for-byte UTF-8 equality: Unicode equivalence would let a different bundle id pass.
    private func sameText(_ actual: String?, _ expected: String?, _ name: String, _ status: ReceiptStatus,
                          unset: String) -> StepOutcome {
        guard let expected else { return .skipped(unset) }
        return outcome { () throws(ReceiptError) in
            guard let actual, Array(actual.utf8) == Array(expected.utf8) else {
                throw ReceiptError(status, "\(name) is \(quoted(actual)), expected \(quoted(expected))")
            }
            return quoted(actual)
        }
    }

    /// SHA-1(device identifier ‖ opaque value ‖ bundle_id's raw value) = attribute 5.
    private func device() -> StepOutcome {
        guard let identifier = policy.deviceIdentifier else { return .skipped("no device identifier was given") }
        return outcome { () throws(ReceiptError) in
            guard let opaque = receipt.opaqueValue, let bundle = receipt.bundleIDRawValue, let expected = receipt.sha1Hash else {
                throw ReceiptError(.deviceMismatch, "the receipt lacks the opaque value (4), bundle_id (2) or hash (5)")
            }
            guard Digest.sha1(identifier + opaque + bundle) == expected else {
                throw ReceiptError(.deviceMismatch, "SHA-1 over the \(identifier.count)-byte device identifier does not match attribute 5")
            }
            return "SHA-1 over the \(identifier.count)-byte device identifier matches"
        }
    }

    private func expiration(_ now: Int64) -> StepOutcome {
        guard let expires = receipt.expirationDate else { return .skipped("no expiration_date (21): not a VPP receipt") }
        return outcome { () throws(ReceiptError) in
            guard now < expires.millisecondsSince1970 else {
                throw ReceiptError(.receiptExpired, "expiration_date \(expires.text) is past")
            }
            return "expires \(expires.text)"
        }
    }

    private func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "absent" }
}
