internal import COpenSSL

/// OCSP (RFC 6960) through libcrypto, without I/O: the request to send for one
/// certificate, and the check of the answer. The transport is the caller's.
enum OCSP {
    /// Where and what to ask about one certificate.
    struct Query: Sendable {
        /// The responder named by the certificate's Authority Information Access.
        let url: String
        /// The DER OCSPRequest (POST it as application/ocsp-request).
        let request: [UInt8]
        /// The DER CertID the answer must speak of.
        let certificateID: [UInt8]
        /// The nonce the answer must echo, empty when none was sent.
        let nonce: [UInt8]
    }

    /// What a checked answer says of the certificate.
    struct Answer: Sendable, Equatable {
        enum Status: Sendable, Equatable {
            case good
            /// Revoked at this instant (epoch seconds; nil when unreadable), for this CRLReason (-1: none given).
            case revoked(atSeconds: Int64?, reason: Int)
            case unknown
        }

        let status: Status
        let thisUpdate: Int64
        let nextUpdate: Int64?
    }

    /// An answer may be this much ahead of the clock (responders' clocks drift).
    static let clockSkewSeconds: Int64 = 300
    /// An answer without nextUpdate counts for this long after its thisUpdate.
    static let maxAgeWithoutNextUpdateSeconds: Int64 = 86_400
    static let maxURLBytes = 1024

    /// The query for `certificate` issued by `issuer`; nil when the certificate
    /// names no OCSP responder. A nonce is sent only when asked: Apple's responders
    /// follow RFC 5019 and answer from a cache, without echoing one.
    static func query(for certificate: X509Certificate, issuer: X509Certificate, nonce: Bool = false) throws(ReceiptError) -> Query? {
        defer { OpenSSLErrors.clear() }
        var url = [CChar](repeating: 0, count: maxURLBytes)
        guard shim_ocsp_responder_url(certificate.pointer, &url, Int32(maxURLBytes)) == 1 else { return nil }
        var nonceBytes: [UInt8] = []
        if nonce {
            nonceBytes = [UInt8](repeating: 0, count: 16)
            guard RAND_bytes(&nonceBytes, 16) == 1 else { throw ReceiptError(.cryptoFailure, "no random bytes for a nonce") }
        }
        var request: UnsafeMutablePointer<UInt8>?, requestLength: Int32 = 0
        var identifier: UnsafeMutablePointer<UInt8>?, identifierLength: Int32 = 0
        let built = shim_ocsp_request(certificate.pointer, issuer.pointer, nonceBytes, Int32(nonceBytes.count),
                                      &request, &requestLength, &identifier, &identifierLength)
        defer {
            CRYPTO_free(request, #file, #line)
            CRYPTO_free(identifier, #file, #line)
        }
        guard built == 1, let request, let identifier else {
            throw ReceiptError(.cryptoFailure, "an OCSP request for \(certificate.subject) could not be made\(OpenSSLErrors.reason())")
        }
        let text = url.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else { return nil }
        return Query(url: text, request: Array(UnsafeBufferPointer(start: request, count: Int(requestLength))),
                     certificateID: Array(UnsafeBufferPointer(start: identifier, count: Int(identifierLength))),
                     nonce: nonceBytes)
    }

    /// Checks `answer` to `query`: signed by `issuer` or its delegated OCSP signer
    /// (chained to `anchor` through `chain`), for the query's CertID, echoing its
    /// nonce, thisUpdate not in the future, nextUpdate not past. Anything else
    /// throws RECEIPT_E_BAD_OCSP_RESPONSE, never a status.
    static func check(_ answer: [UInt8], for query: Query, issuer: X509Certificate, chain: [X509Certificate],
                      anchor: X509Certificate, nowSeconds: Int64) throws(ReceiptError) -> Answer {
        defer { OpenSSLErrors.clear() }
        guard !answer.isEmpty, answer.count <= 1 << 20 else {
            throw ReceiptError(.badOCSPResponse, "an OCSP answer of \(answer.count) bytes (1 byte to 1 MiB are read)")
        }
        guard try !carriesMoreCertificates(than: Int(SHIM_OCSP_MAX_CERTIFICATES), answer: answer) else {
            throw tooManyCertificates
        }
        guard let stack = shim_x509_stack_new() else { throw ReceiptError(.noMemory, "no memory for a certificate stack") }
        defer { shim_x509_stack_free(stack) }
        for certificate in chain { _ = shim_x509_stack_push(stack, certificate.pointer) }
        var status: Int32 = -1, reason: Int32 = -1
        var revokedAt: Int64 = -1, thisUpdate: Int64 = -1, nextUpdate: Int64 = -1
        let result = shim_ocsp_check(answer, answer.count, query.certificateID, query.certificateID.count, issuer.pointer,
                                     stack, anchor.pointer, nowSeconds, query.nonce, Int32(query.nonce.count),
                                     &status, &reason, &revokedAt, &thisUpdate, &nextUpdate)
        switch Int(result) {
        case Int(SHIM_OCSP_OK): break
        case Int(SHIM_OCSP_MALFORMED): throw bad("is not a DER OCSPResponse")
        case Int(SHIM_OCSP_UNSUCCESSFUL): throw bad("says responseStatus \(reason) (not successful)")
        case Int(SHIM_OCSP_NOT_BASIC): throw bad("holds no BasicOCSPResponse")
        case Int(SHIM_OCSP_BAD_SIGNATURE):
            throw bad("is not signed by \(issuer.subject) or a responder it delegated (OCSP signing)\(OpenSSLErrors.reason())")
        case Int(SHIM_OCSP_NONCE): throw bad("does not echo the nonce sent")
        case Int(SHIM_OCSP_NO_STATUS): throw bad("speaks of another certificate (no SingleResponse for its CertID)")
        case Int(SHIM_OCSP_TOO_MANY_CERTIFICATES): throw tooManyCertificates
        default: throw bad("has an unreadable thisUpdate or nextUpdate")
        }
        guard thisUpdate <= nowSeconds + clockSkewSeconds else {
            throw bad("has thisUpdate \(RFC3339Format.utc(thisUpdate * 1000)), in the future")
        }
        let expires = nextUpdate >= 0 ? nextUpdate : thisUpdate + maxAgeWithoutNextUpdateSeconds
        guard expires >= nowSeconds - clockSkewSeconds else {
            throw bad("is stale: good until \(RFC3339Format.utc(expires * 1000))")
        }
        let certificateStatus: Answer.Status = switch status {
        case Int32(V_OCSP_CERTSTATUS_GOOD): .good
        case Int32(V_OCSP_CERTSTATUS_REVOKED): .revoked(atSeconds: revokedAt >= 0 ? revokedAt : nil, reason: Int(reason))
        default: .unknown
        }
        return Answer(status: certificateStatus, thisUpdate: thisUpdate, nextUpdate: nextUpdate >= 0 ? nextUpdate : nil)
    }

    private static var tooManyCertificates: ReceiptError {
        bad("carries more than \(SHIM_OCSP_MAX_CERTIFICATES) certificates (a responder sends its own and its issuer)")
    }

    private static func bad(_ what: String) -> ReceiptError {
        ReceiptError(.badOCSPResponse, "the OCSP answer \(what)")
    }
}
