internal import COpenSSL

/// An OpenSSL X509 owned by Swift, with the DER it was decoded from. Immutable
/// once made; OpenSSL allows concurrent reads of one X509.
final class X509Certificate: @unchecked Sendable {
    let pointer: OpaquePointer
    let der: [UInt8]

    init(der: [UInt8]) throws(ReceiptError) {
        var decoded: OpaquePointer?
        let consumed: Int = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            decoded = d2i_X509(nil, &cursor, buffer.count)
            guard let cursor, let start = buffer.baseAddress else { return 0 }
            return cursor - start
        }
        guard let decoded else {
            throw ReceiptError(.badCertificate, "a certificate of \(der.count) bytes cannot be decoded\(OpenSSLErrors.reason())")
        }
        guard consumed == der.count else {
            X509_free(decoded)
            throw ReceiptError(.badCertificate, "\(der.count - consumed) bytes follow a certificate's encoding")
        }
        pointer = decoded
        self.der = der
        subject = X509Certificate.subject(of: decoded)
    }

    /// Reads one certificate given as DER or as PEM text.
    convenience init(derOrPEM bytes: [UInt8]) throws(ReceiptError) {
        guard bytes.first != BERTag.sequence else {
            try self.init(der: bytes)
            return
        }
        let der: [UInt8]? = bytes.withUnsafeBytes { raw -> [UInt8]? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return nil }
            defer { X509_free(certificate) }
            var output: UnsafeMutablePointer<UInt8>?
            let length = i2d_X509(certificate, &output)
            guard length > 0, let output else { return nil }
            defer { CRYPTO_free(output, #fileID, #line) }
            return Array(UnsafeBufferPointer(start: output, count: Int(length)))
        }
        guard let der else {
            throw ReceiptError(.badAnchor, "neither a DER certificate nor a PEM 'BEGIN CERTIFICATE' block\(OpenSSLErrors.reason())")
        }
        try self.init(der: der)
    }

    deinit { X509_free(pointer) }


    /// The subject in OpenSSL's one-line form, for details that name a certificate.
    let subject: String

    /// Whether this certificate names the same subject with the same public key as
    /// `other`: a re-issue of it (a root renewed with new dates keeps both), so that
    /// what `other` signed, this one's key signed.
    func isReissue(of other: X509Certificate) -> Bool {
        defer { OpenSSLErrors.clear() }
        guard let mine = X509_get0_pubkey(pointer), let theirs = X509_get0_pubkey(other.pointer) else { return false }
        return X509_NAME_cmp(X509_get_subject_name(pointer), X509_get_subject_name(other.pointer)) == 0
            && EVP_PKEY_eq(mine, theirs) == 1
    }

    static func subject(of certificate: OpaquePointer) -> String {
        guard let name = X509_get_subject_name(certificate),
              let line = X509_NAME_oneline(name, nil, 0) else { return "(unnamed)" }
        defer { CRYPTO_free(line, #fileID, #line) }
        return String(cString: line)
    }
}

enum OpenSSLErrors {
    /// OpenSSL queues errors per thread; drop ours so callers that also use OpenSSL
    /// do not find them later.
    static func clear() { ERR_clear_error() }

    /// OpenSSL's own reason for the failure just seen ("; OpenSSL: ..."), taken off
    /// its queue, which is then cleared; empty when it queued none.
    static func reason() -> String {
        let code = ERR_peek_last_error()
        defer { ERR_clear_error() }
        guard code != 0 else { return "" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return "; OpenSSL: " + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
