#if canImport(Glibc)
import Glibc
#endif

extension VerificationStep {
    public static let signature = VerificationStep(rawValue: "signature")
}

/// The PKCS #7 signature: the signer found in the receipt's certificate bag, the
/// envelope in its canonical form, and RSA over the payload.
struct SignaturePolicy: ReceiptPolicy {
    var step: VerificationStep { .signature }

    func outcome(in context: VerificationContext) -> StepOutcome {
        checked { () throws(ReceiptError) in
            let receipt = context.receipt
            let (signerInfo, signer, fingerprint, key) = try context.signed.signerCertificate()
            try CanonicalForm.check(receipt.storage.encoded, container: receipt.container, signer: signerInfo,
                                    signerFingerprint: fingerprint)
            try SignatureCheck.verify(UnsafeBufferPointer(rebasing: receipt.storage.encoded[signerInfo.signature]),
                                      over: receipt.storage.payload, digest: signerInfo.digest, certificate: signer, key: key,
                                      sha256: context.sha256)
            return context.detail("RSA with \(signerInfo.digest.name) by \(signer.subject)")
        }
    }
}
