/// The receipt's certificates and its signer, decoded once per verification.
struct SignedReceipt {
    let certificates: Result<[X509Certificate], ReceiptError>
    let signer: Result<(SignerInfo, X509Certificate), ReceiptError>

    static func read(_ receipt: Receipt) -> SignedReceipt {
        let container = receipt.container
        let certificates = Result { () throws(ReceiptError) in
            try container.certificates.map { (range) throws(ReceiptError) in
                try X509Certificate(der: Array(receipt.storage.encoded[range]))
            }
        }
        let signer = Result { () throws(ReceiptError) -> (SignerInfo, X509Certificate) in
            try receipt.withEncoded { (bytes) throws(ReceiptError) in
                let signerInfo = try SignerInfo.read(bytes, signerInfos: container.signerInfos)
                let issuer = bytes[signerInfo.issuer]
                let serial = bytes[signerInfo.serialNumber]
                for (index, range) in container.certificates.enumerated() {
                    let info = try CertificateInfo(Array(bytes[range]))
                    if info.encoded[info.issuer].elementsEqual(issuer) && info.encoded[info.serialNumber].elementsEqual(serial) {
                        return (signerInfo, try certificates.get()[index])
                    }
                }
                throw ReceiptError(.signerNotFound, "no certificate in the receipt matches the SignerInfo's issuer and serial")
            }
        }
        return SignedReceipt(certificates: certificates, signer: signer)
    }
}

extension Receipt {
    func withEncoded<R>(_ body: (UnsafeBufferPointer<UInt8>) throws(ReceiptError) -> R) throws(ReceiptError) -> R {
        try body(UnsafeBufferPointer(storage.encoded))
    }
}
