extension VerificationStep {
    public static let bundleID = VerificationStep(rawValue: "bundle_id")
    public static let applicationVersion = VerificationStep(rawValue: "application_version")
    public static let deviceHash = VerificationStep(rawValue: "device_hash")
}

/// docs/FORMAT.md §3 step 3: the bundle id, byte for byte, when the caller gave one.
struct BundleIDPolicy: CommonPolicy {
    var step: VerificationStep { .bundleID }

    func judge(_ context: some PolicyContext) -> StepOutcome {
        let expected = context.settings.expectedBundleIDs
        guard context.claims.carriesBundleID || expected.isEmpty else {
            return .skipped("this kind of document names no bundle id")
        }
        return sameText(context.claims.bundleID, oneOf: expected, "bundle_id", .bundleMismatch,
                        unset: "no expected bundle id was given", in: context)
    }
}

/// docs/FORMAT.md §3 step 4: the application version, byte for byte, when the caller gave one.
struct ApplicationVersionPolicy: CommonPolicy {
    var step: VerificationStep { .applicationVersion }

    func judge(_ context: some PolicyContext) -> StepOutcome {
        guard context.claims.carriesApplicationVersion || context.settings.applicationVersion == nil else {
            return .skipped("this kind of document carries no application version")
        }
        return sameText(context.claims.applicationVersion, oneOf: context.settings.applicationVersion.map { [$0] } ?? [],
                        "application_version",
                        .versionMismatch, unset: "no expected application version was given", in: context)
    }
}

/// docs/FORMAT.md §3 step 5: SHA-1(device identifier ‖ opaque value ‖ bundle_id's raw value)
/// equals attribute 5, when the caller gave a device identifier.
struct DeviceHashPolicy: ReceiptPolicy {
    var step: VerificationStep { .deviceHash }

    func outcome(in context: VerificationContext) -> StepOutcome {
        guard let identifier = context.settings.deviceIdentifier else { return .skipped("no device identifier was given") }
        let receipt = context.receipt
        return checked { () throws(ReceiptError) in
            guard let opaque = receipt.opaqueValue, let bundle = receipt.bundleIDRawValue, let expected = receipt.sha1Hash else {
                throw ReceiptError(.deviceMismatch, "the receipt lacks the opaque value (4), bundle_id (2) or hash (5)")
            }
            guard Digest.sha1(identifier + opaque + bundle) == expected else {
                throw ReceiptError(.deviceMismatch, "SHA-1 over the \(identifier.count)-byte device identifier does not match attribute 5")
            }
            return context.detail("SHA-1 over the \(identifier.count)-byte device identifier matches")
        }
    }
}

/// Byte-for-byte UTF-8 equality: Unicode equivalence would let a different bundle id pass.
/// Passes when `actual` is one of `expected`, byte for byte; skipped when nothing is expected
/// (and then `actual`, a string made from the payload, is never made).
private func sameText(_ actual: @autoclosure () -> String?, oneOf expected: [String], _ name: String, _ status: ReceiptStatus,
                      unset: String, in context: some PolicyContext) -> StepOutcome {
    guard !expected.isEmpty else { return .skipped(unset) }
    return checked { () throws(ReceiptError) in
        let actual = actual()
        guard let actual, expected.contains(where: { $0.utf8.elementsEqual(actual.utf8) }) else {
            throw ReceiptError(status, "\(name) is \(quoted(actual)), expected \(expected.map(quoted).joined(separator: " or "))")
        }
        return context.detail(quoted(actual))
    }
}

func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "absent" }
