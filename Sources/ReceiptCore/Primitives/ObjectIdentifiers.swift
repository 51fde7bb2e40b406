/// Object identifiers as their DER content octets, so that matching is a byte compare.
enum ObjectIdentifiers {
    static let signedData = encode("1.2.840.113549.1.7.2")
    static let data = encode("1.2.840.113549.1.7.1")
    static let sha1 = encode("1.3.14.3.2.26")
    static let sha256 = encode("2.16.840.1.101.3.4.2.1")
    static let rsaEncryption = encode("1.2.840.113549.1.1.1")
    static let sha1WithRSAEncryption = encode("1.2.840.113549.1.1.5")
    static let sha256WithRSAEncryption = encode("1.2.840.113549.1.1.11")
    static let certificatePolicies = encode("2.5.29.32")
    /// Apple's WWDR intermediate marker (docs/FORMAT.md §3), carried as an extension.
    static let appleIntermediateMarker = encode("1.2.840.113635.100.6.2.1")
    /// Apple's receipt-signing leaf marker (docs/FORMAT.md §3).
    static let appleReceiptSigningMarker = encode("1.2.840.113635.100.6.11.1")

    static func encode(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        var bytes = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var base128 = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                base128.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            bytes += base128
        }
        return bytes
    }
}
