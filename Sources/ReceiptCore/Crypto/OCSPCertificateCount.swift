extension OCSP {
    /// Whether `answer` carries more than `limit` certificates, found by walking
    /// element headers only (RFC 6960: OCSPResponse → responseBytes → the
    /// BasicOCSPResponse in its OCTET STRING → certs [0]).
    ///
    /// Why before OpenSSL: `d2i_OCSP_RESPONSE` decodes every certificate of the
    /// answer before anyone can count them, so 2,000 look-alike certificates in
    /// 860 KiB cost half a second of decoding just to be refused. This walk costs a
    /// few instructions per certificate. An answer whose shape this walk does not
    /// recognise (not successful, no basic response) is left to OpenSSL, which says
    /// what is wrong; a length that runs past its element is refused here.
    static func carriesMoreCertificates(than limit: Int, answer: [UInt8]) throws(ReceiptError) -> Bool {
        var result: Result<Bool, ReceiptError> = .success(false)
        answer.withUnsafeBufferPointer { bytes in
            do throws(ReceiptError) {
                result = .success(try certificates(in: bytes, countedUpTo: limit + 1) > limit)
            } catch {
                result = .failure(ReceiptError(.badOCSPResponse, "the OCSP answer is not a DER OCSPResponse: \(error.detail)"))
            }
        }
        return try result.get()
    }

    /// The number of certificates in the answer's certs, counting stops at `cap`.
    private static func certificates(in bytes: UnsafeBufferPointer<UInt8>, countedUpTo cap: Int) throws(ReceiptError) -> Int {
        let sequence: UInt8 = 0x30, octetString: UInt8 = 0x04, explicitZero: UInt8 = 0xA0
        var top = BERReader(bytes: bytes, range: 0..<bytes.count, maxDepth: 8)
        let response = try top.next(expecting: sequence, "OCSPResponse")
        var members = top.children(of: response)
        _ = try members.next(expecting: 0x0A, "responseStatus")
        guard let responseBytes = try members.next(), responseBytes.tag == explicitZero else { return 0 }
        var wrapper = members.children(of: responseBytes)
        var typed = wrapper.children(of: try wrapper.next(expecting: sequence, "ResponseBytes"))
        _ = try typed.next(expecting: 0x06, "responseType")
        let inner = try typed.next(expecting: octetString, "response")
        var octets = typed.children(of: inner)
        guard let basic = try octets.next(), basic.tag == sequence else { return 0 }
        var fields = octets.children(of: basic)
        for _ in 0..<3 { guard try fields.next() != nil else { return 0 } } // tbsResponseData, algorithm, signature
        guard let certs = try fields.next(), certs.tag == explicitZero else { return 0 }
        var list = fields.children(of: certs)
        guard let sequenceOf = try list.next(), sequenceOf.tag == sequence else { return 0 }
        var certificates = list.children(of: sequenceOf)
        var count = 0
        while count < cap, try certificates.next() != nil { count += 1 }
        return count
    }
}
