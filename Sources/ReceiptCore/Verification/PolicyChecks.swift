/// SPEC §3 steps 3–6: what the receipt says about the app, the device and VPP
/// expiry, against the caller's policy.
struct PolicyChecks {
    let policy: VerificationPolicy
    let receipt: Receipt

    func steps(now: Int64) -> [(VerificationStep, StepOutcome)] {
        [(.bundleID, bundle()), (.applicationVersion, version()), (.deviceHash, device()), (.expiration, expiration(now))]
    }

    private func bundle() -> StepOutcome {
        guard let expected = policy.bundleID else { return .skipped("no expected bundle id was given") }
        return outcome { () throws(ReceiptError) in
            let actual = receipt.bundleID
            guard let actual, Array(actual.utf8) == Array(expected.utf8) else {
                throw ReceiptError(.bundleMismatch, "bundle_id is \(quoted(actual)), expected \(quoted(expected))")
            }
            return quoted(actual)
        }
    }

    private func version() -> StepOutcome {
        guard let expected = policy.applicationVersion else { return .skipped("no expected application version was given") }
        return outcome { () throws(ReceiptError) in
            let actual = receipt.applicationVersion
            guard let actual, Array(actual.utf8) == Array(expected.utf8) else {
                throw ReceiptError(.versionMismatch, "application_version is \(quoted(actual)), expected \(quoted(expected))")
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
