/// The receipt's certificate bag (through the verifier's cache) and which of its
/// certificates the SignerInfo names.
struct SignedReceipt {
    let bag: Result<CertificateBag, ReceiptError>
    let signer: Result<(info: SignerInfo, index: Int), ReceiptError>

    static func read(_ receipt: Receipt, cache: ChainCache) -> SignedReceipt {
        let encoded = receipt.storage.encoded
        let ranges = receipt.container.certificateRanges(in: encoded)
        let bag = Result { () throws(ReceiptError) -> CertificateBag in
            guard let first = ranges.first, let last = ranges.last else { return try CertificateBag([], ranges: []) }
            do throws(ReceiptError) {
                return try cache.bag(UnsafeBufferPointer(rebasing: encoded[first.lowerBound..<last.upperBound]), ranges: ranges)
            } catch {
                throw error.asVerdict(.badCertificate, "a certificate in the receipt")
            }
        }
        let signer = Result { () throws(ReceiptError) -> (info: SignerInfo, index: Int) in
            let info: SignerInfo
            do throws(ReceiptError) {
                info = try SignerInfo.read(encoded, signerInfos: receipt.container.signerInfos)
            } catch {
                throw error.asVerdict(.malformedSignature, "SignerInfo")
            }
            guard let index = try bag.get().index(issuer: UnsafeBufferPointer(rebasing: encoded[info.issuer]),
                                                  serialNumber: UnsafeBufferPointer(rebasing: encoded[info.serialNumber])) else {
                throw ReceiptError(.signerNotFound, "no certificate in the receipt matches the SignerInfo's issuer and serial")
            }
            return (info, index)
        }
        return SignedReceipt(bag: bag, signer: signer)
    }

    func signerCertificate() throws(ReceiptError) -> (SignerInfo, X509Certificate) {
        let (info, index) = try signer.get()
        return (info, try bag.get().certificates[index])
    }
}
