/// The receipt's SignerInfo, its certificate bag (from the verifier's cache, or
/// checked and decoded anew) and which certificate of the bag signed.
struct SignedReceipt {
    let bag: Result<CertificateBag, ReceiptError>
    let signer: Result<(info: SignerInfo, index: Int), ReceiptError>

    static func read(_ receipt: Receipt, cache: ChainCache) -> SignedReceipt {
        let encoded = receipt.storage.encoded
        let info = Result { () throws(ReceiptError) -> SignerInfo in
            do throws(ReceiptError) {
                return try SignerInfo.read(encoded, signerInfos: receipt.container.signerInfos)
            } catch {
                throw error.asVerdict(.malformedSignature, "SignerInfo")
            }
        }
        let bag = Result { () throws(ReceiptError) -> CertificateBag in
            do throws(ReceiptError) {
                let limit = ParseLimits.maxCertificates
                guard let whole = try receipt.container.certificateSpan(in: encoded, limit: limit) else {
                    return CertificateBag.empty
                }
                let span = UnsafeBufferPointer(rebasing: encoded[whole])
                if let known = cache.bag(matching: span) { return known }
                let ranges = try receipt.container.certificateRanges(in: encoded, limit: limit)
                return try CertificateBag.decode(span, ranges: ranges.map { ($0.lowerBound - whole.lowerBound)..<($0.upperBound - whole.lowerBound) },
                                                 signer: try info.get(), signerBytes: encoded,
                                                 maxDepth: receipt.container.maxDepth, known: cache.known)
            } catch {
                throw error.asVerdict(.badCertificate, "a certificate in the receipt")
            }
        }
        let signer = Result { () throws(ReceiptError) -> (info: SignerInfo, index: Int) in
            let signerInfo = try info.get()
            guard let index = try bag.get().index(issuer: UnsafeBufferPointer(rebasing: encoded[signerInfo.issuer]),
                                                  serialNumber: UnsafeBufferPointer(rebasing: encoded[signerInfo.serialNumber])) else {
                throw CertificateBag.signerNotFound
            }
            return (signerInfo, index)
        }
        return SignedReceipt(bag: bag, signer: signer)
    }

    func signerCertificate() throws(ReceiptError) -> (SignerInfo, X509Certificate, fingerprint: [UInt8], key: RSAPublicKey?) {
        let (info, index) = try signer.get()
        let bag = try bag.get()
        return (info, bag.certificates[index], bag.fingerprints[index], try bag.rsaKey(at: index))
    }
}
