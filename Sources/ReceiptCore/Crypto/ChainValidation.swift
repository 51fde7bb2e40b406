internal import COpenSSL

/// X.509 path validation by OpenSSL, with only the anchors given here: no
/// system store, no default paths. The time is the receipt's creation date.
///
/// SHA-1: OpenSSL 3 refuses SHA-1-signed chains at security level 1 and up, and
/// Apple signed receipt chains with SHA-1 until 2024. So validation runs at
/// security level 0, and this file then enforces, itself, what level 0 lets
/// through: RSA keys of at least 2048 bits and signatures made with SHA-1 or
/// SHA-2 only (never MD5).
enum ChainValidation {
    static let minimumRSABits: Int32 = 2048
    private static let acceptedSignatureNIDs: Set<Int32> = [
        NID_sha1WithRSAEncryption, NID_sha256WithRSAEncryption, NID_sha384WithRSAEncryption,
        NID_sha512WithRSAEncryption, NID_ecdsa_with_SHA256, NID_ecdsa_with_SHA384,
    ]

    /// Returns the validated chain, leaf first, anchor last.
    static func validate(leaf: X509Certificate, untrusted: [X509Certificate], anchors: [X509Certificate],
                         atEpochSeconds time: Int64) throws(ReceiptError) -> [X509Certificate] {
        defer { OpenSSLErrors.clear() }
        guard let store = X509_STORE_new() else { throw ReceiptError(.cryptoFailure, "X509_STORE_new failed\(OpenSSLErrors.reason())") }
        defer { X509_STORE_free(store) }
        for anchor in anchors where X509_STORE_add_cert(store, anchor.pointer) != 1 {
            throw ReceiptError(.cryptoFailure, "X509_STORE_add_cert failed for \(anchor.subject)\(OpenSSLErrors.reason())")
        }
        guard let stack = shim_x509_stack_new() else { throw ReceiptError(.cryptoFailure, "sk_X509_new failed\(OpenSSLErrors.reason())") }
        defer { shim_x509_stack_free(stack) }
        for certificate in untrusted { _ = shim_x509_stack_push(stack, certificate.pointer) }
        guard let context = X509_STORE_CTX_new() else { throw ReceiptError(.cryptoFailure, "X509_STORE_CTX_new failed\(OpenSSLErrors.reason())") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, stack) == 1 else {
            throw ReceiptError(.cryptoFailure, "X509_STORE_CTX_init failed\(OpenSSLErrors.reason())")
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        X509_VERIFY_PARAM_set_auth_level(parameters, 0)

        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let subject = X509_STORE_CTX_get_current_cert(context).map(X509Certificate.subject(of:)) ?? "(unknown)"
            let reason = String(cString: X509_verify_cert_error_string(Int(code)))
            let status: ReceiptStatus = code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID
                ? .chainNotValidAtCreation : .chainUntrusted
            throw ReceiptError(status, "\(reason) (depth \(depth): \(subject))")
        }
        let known = [leaf] + untrusted + anchors
        guard let verified = X509_STORE_CTX_get0_chain(context) else {
            throw ReceiptError(.cryptoFailure, "no chain after a successful verification\(OpenSSLErrors.reason())")
        }
        var chain: [X509Certificate] = []
        for index in 0..<shim_x509_stack_count(verified) {
            let element = shim_x509_stack_at(verified, index)
            guard let match = known.first(where: { $0.pointer == element }) else {
                throw ReceiptError(.cryptoFailure, "the verified chain holds a certificate nobody supplied\(OpenSSLErrors.reason())")
            }
            chain.append(match)
        }
        try enforceStrength(chain)
        try requireSigningCertificate(chain)
        return chain
    }

    /// The signer must be a certificate for signing: its keyUsage present and
    /// allowing digitalSignature (as on every Apple and Xcode signer), and, in a
    /// chain of two or more, not a CA. OpenSSL's path validation checks neither for
    /// the leaf. Only the one-certificate shape, Xcode's StoreKit certificate
    /// trusted as the anchor itself, is a CA that signs.
    private static func requireSigningCertificate(_ chain: [X509Certificate]) throws(ReceiptError) {
        guard let signer = chain.first else { return }
        let usage = X509_get_key_usage(signer.pointer)
        guard usage != UInt32.max, usage & UInt32(KU_DIGITAL_SIGNATURE) != 0 else {
            let what = usage == UInt32.max ? "has no keyUsage" : "has a keyUsage without digitalSignature"
            throw ReceiptError(.notASigningCertificate, "the signer \(signer.subject) \(what)")
        }
        if chain.count > 1, X509_get_extension_flags(signer.pointer) & UInt32(EXFLAG_CA) != 0 {
            throw ReceiptError(.notASigningCertificate, "the signer \(signer.subject) is a CA (basicConstraints CA:TRUE); "
                               + "Apple's signing certificates are not")
        }
    }

    /// The span in which every certificate of the chain is valid, in epoch seconds.
    static func validityWindow(_ chain: [X509Certificate]) -> (notBefore: Int64, notAfter: Int64) {
        var window = (notBefore: Int64.min, notAfter: Int64.max)
        for certificate in chain {
            window.notBefore = max(window.notBefore, epochSeconds(X509_get0_notBefore(certificate.pointer)) ?? Int64.max)
            window.notAfter = min(window.notAfter, epochSeconds(X509_get0_notAfter(certificate.pointer)) ?? Int64.min)
        }
        return window
    }

    /// An ASN1_TIME as epoch seconds; nil (an empty window, so no caching) if unreadable.
    private static func epochSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var broken = tm()
        guard ASN1_TIME_to_tm(time, &broken) == 1 else { return nil }
        return Int64(timegm(&broken))
    }

    private static func enforceStrength(_ chain: [X509Certificate]) throws(ReceiptError) {
        for certificate in chain {
            if let key = X509_get0_pubkey(certificate.pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA,
               EVP_PKEY_get_bits(key) < minimumRSABits {
                throw ReceiptError(.chainUntrusted, "\(certificate.subject) has a \(EVP_PKEY_get_bits(key))-bit RSA key")
            }
            if certificate !== chain.last, !acceptedSignatureNIDs.contains(X509_get_signature_nid(certificate.pointer)) {
                throw ReceiptError(.chainUntrusted, "\(certificate.subject) is signed with a weak or unknown algorithm")
            }
        }
    }
}
