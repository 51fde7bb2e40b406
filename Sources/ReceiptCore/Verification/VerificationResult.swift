/// The name of one check. Each policy declares its own (see ReceiptPolicy); the
/// name is what the C ABI, the JSON report, Python and the CLI show.
public struct VerificationStep: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}

public enum StepOutcome: Sendable, Equatable {
    case passed(String)
    /// Not asked for by the policy, or meaningless under the anchor used. Never
    /// used for something that was asked and could not be checked: that fails.
    case skipped(String)
    case failed(ReceiptError)

    public var name: String {
        switch self {
        case .passed: "passed"
        case .skipped: "skipped"
        case .failed: "failed"
        }
    }

    public var detail: String {
        switch self {
        case .passed(let detail), .skipped(let detail): detail
        case .failed(let error): error.detail
        }
    }

    public var status: ReceiptStatus {
        if case .failed(let error) = self { return error.status }
        return .ok
    }
}

/// One step of a verification and how it went.
public struct StepResult: Sendable, Equatable {
    public let step: VerificationStep
    public let outcome: StepOutcome

    public init(step: VerificationStep, outcome: StepOutcome) {
        self.step = step
        self.outcome = outcome
    }
}

public struct VerificationResult: Sendable {
    /// Every step, in the order of docs/FORMAT.md §3, each reporting whether or not an earlier one failed.
    public let steps: [StepResult]
    /// The anchor the chain ended at, when it was established.
    public let anchor: String?
    let fingerprintSource: FingerprintSource
    /// SHA-256 of the signed content (ContentFingerprint): the key to de-duplicate
    /// and block replays on, the same for every spelling of one signed object.
    /// Hashed on first use where the verification did not already (FingerprintSource).
    public var fingerprint: [UInt8] { fingerprintSource.value }

    init(steps: [StepResult], anchor: String?, fingerprint: FingerprintSource) {
        self.steps = steps
        self.anchor = anchor
        fingerprintSource = fingerprint
        status = Self.firstFailure(in: steps)?.status ?? .ok
    }

    /// The first failure's status, or `.ok` when nothing failed. Worked out once: a
    /// verdict-only caller reads nothing else.
    public let status: ReceiptStatus
    public var isValid: Bool { status == .ok }
    /// The first failing step's error, nil when nothing failed.
    public var firstFailure: ReceiptError? { Self.firstFailure(in: steps) }

    static func firstFailure(in steps: [StepResult]) -> ReceiptError? {
        for entry in steps { if case .failed(let error) = entry.outcome { return error } }
        return nil
    }

    public func outcome(of step: VerificationStep) -> StepOutcome? {
        steps.first { $0.step == step }?.outcome
    }

    public func json(indent: Int? = nil) -> String {
        var writer = JSONWriter(indent: indent)
        writer.beginObject()
        writeMembers(into: &writer)
        writer.endObject()
        return writer.string
    }

    /// `valid`, `status`, `anchor`, `fingerprint` and `steps`, into an object the caller opened
    /// (the server's verdict adds the payload after them).
    package func writeMembers(into writer: inout JSONWriter) {
        writer.bool("valid", isValid)
        writer.string("status", status.name)
        if let anchor { writer.string("anchor", anchor) } else { writer.null("anchor") }
        writer.string("fingerprint", ContentFingerprint.hex(fingerprint))
        writer.beginArray("steps")
        for entry in steps {
            writer.beginObject()
            writer.string("step", entry.step.rawValue)
            writer.string("outcome", entry.outcome.name)
            writer.string("status", entry.outcome.status.name)
            writer.string("detail", entry.outcome.detail)
            writer.endObject()
        }
        writer.endArray()
    }
}
