extension VerificationStep {
    public static let header = VerificationStep(rawValue: "header")
    public static let appAppleID = VerificationStep(rawValue: "app_apple_id")
    public static let nested = VerificationStep(rawValue: "nested")
}

/// The JWS header, before any key is used: `alg` exactly ES256 (never `none`, an
/// HMAC keyed with a public key, or RSA), no `crit` parameter (this library
/// implements no extension a signer could make critical), and `x5c` of 3
/// certificates (App Store) or 1 (Xcode's StoreKit testing).
struct JWSHeaderPolicy: JWSPolicy {
    var step: VerificationStep { .header }

    func outcome(in context: JWSContext) -> StepOutcome {
        checked { () throws(ReceiptError) in
            let payload = context.payload
            guard let algorithm = payload.algorithm else {
                throw ReceiptError(.algorithmRefused, "the header has no alg; only ES256 is accepted")
            }
            guard algorithm == "ES256" else {
                throw ReceiptError(.algorithmRefused, "alg is \(quoted(algorithm)); only ES256 is accepted")
            }
            if let critical = payload.criticalParameters {
                throw ReceiptError(.criticalUnsupported, "crit names \(critical.map { quoted($0) }.joined(separator: ", ")), "
                                   + "which this library does not implement")
            }
            let count = payload.certificateChain.count
            guard count > 0 else { throw ReceiptError(.noCertificates, "the header has no x5c: nothing says who signed it") }
            guard count == 3 || count == 1 else {
                throw ReceiptError(.certificateCount, "x5c holds \(count) certificates: the App Store sends 3 "
                                   + "(leaf, WWDR G6, Apple Root CA - G3), Xcode 1")
            }
            return "ES256, x5c of \(count)"
        }
    }
}

/// ES256 by `x5c[0]` over the ASCII `header.payload`, whose SHA-256 is the fingerprint.
struct JWSSignaturePolicy: JWSPolicy {
    var step: VerificationStep { .signature }

    func outcome(in context: JWSContext) -> StepOutcome {
        checked { () throws(ReceiptError) in
            let bag = try context.bag.get()
            try ES256Signature.verify(context.payload.signature, digest: context.fingerprint,
                                      certificate: bag.certificates[0], precomputed: bag.precomputedLeafKey())
            return "ES256 by \(bag.certificates[0].subject)"
        }
    }
}

/// The app's Apple id, where the payload names one (notifications and
/// AppTransactions). Apple's verifiers require it in production, so a production
/// payload that names one fails unless the caller said which to expect.
struct AppAppleIDPolicy: JWSPolicy {
    var step: VerificationStep { .appAppleID }

    func outcome(in context: JWSContext) -> StepOutcome {
        let payload = context.payload
        let expected = context.settings.appAppleID
        guard !payload.kind.paths.appAppleID.isEmpty else {
            return .skipped("a \(payload.kind.rawValue) names no app Apple id")
        }
        let production = payload.environmentName == ReceiptEnvironment.production.signedName
        guard let expected else {
            guard production else { return .skipped("no expected app Apple id was given (required in production only)") }
            return .failed(ReceiptError(.appAppleIDMismatch, "a production \(payload.kind.rawValue) must be checked "
                                        + "against the app's Apple id, and none was given"))
        }
        return checked { () throws(ReceiptError) in
            guard let actual = payload.appAppleID, actual == expected else {
                throw ReceiptError(.appAppleIDMismatch, "appAppleId is \(payload.appAppleID.map(String.init) ?? "absent"), expected \(expected)")
            }
            return "\(actual)"
        }
    }
}

/// A notification's signed members (`data.signedTransactionInfo`,
/// `data.signedRenewalInfo`, `appData.signedAppTransactionInfo`), each verified
/// by the same verifier at its own signing date; the first failure fails the
/// step. A nested JWS may not nest further.
struct NestedJWSPolicy: JWSPolicy {
    var step: VerificationStep { .nested }

    func outcome(in context: JWSContext) -> StepOutcome {
        let present = context.payload.kind.paths.nestedJWS.compactMap { path, kind in
            context.payload.payload.member(at: path)?.stringValue.map { (path, $0, kind) }
        }
        guard !present.isEmpty else { return .skipped("no nested JWS") }
        return checked { () throws(ReceiptError) in
            for (path, token, kind) in present {
                do throws(ReceiptError) {
                    let nested: SignedPayload
                    do throws(ReceiptError) {
                        nested = try SignedPayload.decode(token, as: kind)
                    } catch let error where error.status == .wrongPayloadKind {
                        throw error
                    } catch {
                        throw error.asVerdict(.nestedUnreadable, "not a readable JWS")
                    }
                    guard nested.kind != .notification, context.depth == 0 else {
                        throw ReceiptError(.nestedUnreadable, "a \(nested.kind.rawValue) cannot be nested here")
                    }
                    let result = context.verifier.verify(jws: nested, depth: context.depth + 1)
                    if let failure = result.firstFailure { throw failure }
                } catch {
                    throw ReceiptError(error.status, at: error.offset, "\(path): \(error.detail)")
                }
            }
            return present.map(\.0.description).joined(separator: " and ") + " verified"
        }
    }
}
