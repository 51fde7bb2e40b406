/// The parts of an X.509 certificate that verification reads in Swift: who issued
/// it and its serial (to find the PKCS #7 signer), and which extensions and
/// certificate policies it carries (for Apple's marker OIDs). Located by byte
/// ranges within the certificate's own encoding.
struct CertificateInfo {
    let encoded: [UInt8]
    let issuer: Range<Int>
    let serialNumber: Range<Int>
    let subject: Range<Int>
    let extensionOIDs: [[UInt8]]
    let policyOIDs: [[UInt8]]

    init(_ encoded: [UInt8]) throws(ReceiptError) {
        self.encoded = encoded
        (issuer, serialNumber, subject, extensionOIDs, policyOIDs) = try encoded.withUnsafeBufferPointer {
            (bytes) throws(ReceiptError) in try CertificateInfo.read(bytes)
        }
    }

    var issuerBytes: ArraySlice<UInt8> { encoded[issuer] }
    var subjectBytes: ArraySlice<UInt8> { encoded[subject] }
    var isSelfIssued: Bool { issuerBytes == subjectBytes }

    func carries(_ oid: [UInt8]) -> Bool {
        extensionOIDs.contains(oid) || policyOIDs.contains(oid)
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) throws(ReceiptError)
        -> (Range<Int>, Range<Int>, Range<Int>, [[UInt8]], [[UInt8]]) {
        var top = BERReader(bytes: bytes, range: 0..<bytes.count, maxDepth: 16)
        let certificate = try top.next(expecting: BERTag.sequence, "Certificate")
        var parts = top.children(of: certificate)
        let tbs = try parts.next(expecting: BERTag.sequence, "TBSCertificate")
        var fields = parts.children(of: tbs)
        guard var serial = try fields.next() else {
            throw ReceiptError(.truncated, at: tbs.start, "TBSCertificate is empty")
        }
        if serial.tag == BERTag.contextConstructed0 {  // [0] EXPLICIT version
            serial = try fields.next(expecting: BERTag.integer, "serialNumber")
        } else if serial.tag != BERTag.integer {
            throw ReceiptError(.unexpectedTag, at: serial.start, "serialNumber: expected INTEGER")
        }
        _ = try fields.next(expecting: BERTag.sequence, "signature")
        let issuer = try fields.next(expecting: BERTag.sequence, "issuer")
        _ = try fields.next(expecting: BERTag.sequence, "validity")
        let subject = try fields.next(expecting: BERTag.sequence, "subject")
        _ = try fields.next(expecting: BERTag.sequence, "subjectPublicKeyInfo")
        var extensionOIDs: [[UInt8]] = []
        var policyOIDs: [[UInt8]] = []
        while let optional = try fields.next() {
            guard optional.tag == 0xA3 else { continue }  // [1], [2] unique identifiers
            var wrapper = fields.children(of: optional)
            let list = try wrapper.next(expecting: BERTag.sequence, "extensions")
            var extensions = wrapper.children(of: list)
            while let element = try extensions.next() {
                var extensionParts = extensions.children(of: element)
                let oid = try extensionParts.next(expecting: BERTag.objectIdentifier, "extnID")
                let oidBytes = Array(bytes[oid.contentRange])
                extensionOIDs.append(oidBytes)
                guard oidBytes == ObjectIdentifiers.certificatePolicies else { continue }
                var value = try extensionParts.next()
                if value?.tag == 0x01 { value = try extensionParts.next() }  // critical BOOLEAN
                guard let octets = value, octets.tag == BERTag.octetString else { continue }
                policyOIDs += try readPolicies(bytes, octets.contentRange)
            }
        }
        return (issuer.encodedRange, serial.encodedRange, subject.encodedRange, extensionOIDs, policyOIDs)
    }

    private static func readPolicies(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(ReceiptError) -> [[UInt8]] {
        var reader = BERReader(bytes: bytes, range: range, maxDepth: 8)
        let sequence = try reader.next(expecting: BERTag.sequence, "certificatePolicies")
        var policies = reader.children(of: sequence)
        var oids: [[UInt8]] = []
        while let information = try policies.next() {
            var parts = policies.children(of: information)
            oids.append(Array(bytes[try parts.next(expecting: BERTag.objectIdentifier, "policyIdentifier").contentRange]))
        }
        return oids
    }
}
