/// A stored row checked against its JWS, for `receipt audit`: the JWS verified again (the
/// verifier's pinned anchors at the time of signing, then its policy), and each column the
/// JWS gives compared with the column held. A store's columns are derived from the JWS when
/// a row is accepted (StoredFacts); a column that differs was changed after, by hand or by
/// something other than the writes, and no figure should be read from it.
public enum StoredRowCheck {
    /// What a row's check found.
    public enum Finding: Error, Equatable, CustomStringConvertible {
        /// The JWS is not readable, or is no payload of the row's kind.
        case unreadable(String)
        /// The JWS is readable and its verdict is not valid: the first failing step.
        case unverified(step: String, status: String, detail: String)
        /// A column holds another value than the verified JWS gives.
        case column(name: String, held: StoredFact, signed: StoredFact)

        public var description: String {
            switch self {
            case .unreadable(let detail): "its JWS is unreadable: \(StoredRowCheck.printable(detail))"
            case .unverified(let step, let status, let detail):
                "its JWS does not verify: \(step) failed, \(status): \(StoredRowCheck.printable(detail))"
            case .column(let name, let held, let signed): "\(name) holds \(Self.text(held)), its JWS gives \(Self.text(signed))"
            }
        }

        private static func text(_ fact: StoredFact) -> String {
            switch fact {
            case .text(let value): "'" + StoredRowCheck.printable(value) + "'"
            case .integer(let value): String(value)
            case .null: "NULL"
            }
        }
    }

    /// `text` on one line with no terminal control: each control character (C0, DEL, C1) as `\u{XX}`.
    /// What a store holds is printed through it, so that no value can forge a line of the report.
    public static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The payload of `jws` when it decodes as `kind` and its verdict is valid; else what failed.
    public static func verified(_ jws: StoredFact, as kind: SignedPayloadKind,
                                by verifier: ReceiptVerifier) -> Result<SignedPayload, Finding> {
        guard case .text(let token) = jws else { return .failure(.unreadable("the jws column holds no text")) }
        let payload: SignedPayload, verdict: VerificationResult
        do throws(ReceiptError) {
            (payload, verdict) = try verifier.verify(jws: token, as: kind)
        } catch {
            return .failure(.unreadable("\(error.status.name): \(error.detail)"))
        }
        guard verdict.isValid else {
            let failed = verdict.steps.first { $0.outcome.name == "failed" }
            return .failure(.unverified(step: failed?.step.rawValue ?? "verdict", status: verdict.status.name,
                                        detail: verdict.firstFailure?.detail ?? ""))
        }
        return .success(payload)
    }

    /// The columns (`names`) whose `held` values differ from the `signed` ones, in order; a nil
    /// signed value is a column the JWS does not give (compared never).
    public static func differences(names: [String], held: [StoredFact], signed: [StoredFact?]) -> [Finding] {
        precondition(names.count == held.count && names.count == signed.count, "one value a column")
        return names.indices.compactMap { index in
            guard let expected = signed[index], expected != held[index] else { return nil }
            return .column(name: names[index], held: held[index], signed: expected)
        }
    }
}
