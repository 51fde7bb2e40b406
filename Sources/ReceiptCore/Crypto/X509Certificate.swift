import COpenSSL

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
            OpenSSLErrors.clear()
            throw ReceiptError(.badCertificate, "a certificate of \(der.count) bytes cannot be decoded")
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
            OpenSSLErrors.clear()
            throw ReceiptError(.badAnchor, "neither a DER certificate nor a PEM 'BEGIN CERTIFICATE' block")
        }
        try self.init(der: der)
    }

    deinit { X509_free(pointer) }


    /// The subject in OpenSSL's one-line form, for details that name a certificate.
    let subject: String

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
}
