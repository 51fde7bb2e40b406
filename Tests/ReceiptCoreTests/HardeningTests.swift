@testable import ReceiptCore
import Testing

/// The attacks of the second hardening round, each on a real Apple receipt: none
/// may verify, and none may cost more than a genuine receipt.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct EnvelopeAttackTests {
    static let file = "receipts/tp__receipt-production.der"

    func verdict(_ bytes: [UInt8], _ verifier: ReceiptVerifier = ReceiptVerifier()) throws -> VerificationResult {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try verifier.verify(encoded: buffer) }
    }

    func parts() throws -> SignedDataParts { SignedDataParts(try Fixtures.bytes(Self.file)) }

    @Test func theGenuineReceiptSurvivesTheRoundTripAndVerifies() throws {
        let original = try Fixtures.bytes(Self.file)
        #expect(try parts().bytes == original)
        #expect(try verdict(original).isValid)
    }

    /// Each change leaves the payload and its signature intact; only the envelope differs.
    @Test(arguments: ["version 99", "no digest algorithms", "md5 digest algorithm", "junk digest algorithm",
                      "two digest algorithms", "crls", "junk after the signature", "unsigned attributes",
                      "digest algorithm without NULL", "signer version 3"])
    func everyEnvelopeMutationIsRefused(mutation: String) throws {
        var receipt = try parts()
        let digest = receipt.signer[2]
        switch mutation {
        case "version 99": receipt.fields[0] = .primitive(0x02, [99])
        case "no digest algorithms": receipt.fields[1].children = []
        case "md5 digest algorithm":
            receipt.fields[1].children = [.constructed(0x30, [.primitive(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x05]),
                                                              .primitive(0x05, [])])]
        case "junk digest algorithm": receipt.fields[1].children = [.primitive(0x02, [7])]
        case "two digest algorithms": receipt.fields[1].children = [digest, digest]
        case "crls": receipt.fields.insert(.constructed(0xA1, [.primitive(0x05, [])]), at: 4)
        case "junk after the signature": receipt.signer.append(.primitive(0x05, []))
        case "unsigned attributes": receipt.signer.append(.constructed(0xA1, []))
        case "digest algorithm without NULL":
            receipt.signer[2].children.removeLast()
            receipt.fields[1].children = [receipt.signer[2]]
        case "signer version 3": receipt.signer[0] = .primitive(0x02, [3])
        default: Issue.record("unknown mutation \(mutation)")
        }
        let result = try verdict(receipt.bytes)
        #expect(!result.isValid, "\(mutation) verified")
        #expect(result.status == .notCanonical, "\(mutation): \(result.json())")
    }

    @Test func longFormLengthsAreRefused() throws {
        var bytes = try Fixtures.bytes(Self.file)
        // ContentInfo's length 82 hi lo written as 84 00 00 hi lo: the same value, not minimal.
        #expect(bytes[1] == 0x82)
        bytes.replaceSubrange(1..<4, with: [0x84, 0, 0, bytes[2], bytes[3]])
        let result = try verdict(bytes)
        #expect(result.status == .notCanonical, "\(result.json())")
        #expect(try Receipt.parse(bytes).bundleID != nil, "parsing stays lenient")
    }

    @Test func aDuplicateCertificateIsRefused() throws {
        var receipt = try parts()
        receipt.certificates.append(receipt.certificates[0])
        #expect(try verdict(receipt.bytes).status == .duplicateCertificate)
        receipt.certificates.append(contentsOf: Array(repeating: receipt.certificates[0], count: 4))
        #expect(try verdict(receipt.bytes).status == .duplicateCertificate)
    }

    @Test func moreCertificatesThanTheLimitAreRefusedUnread() throws {
        var receipt = try parts()
        // Not even certificates: they are counted, never looked at.
        let genuine = receipt.certificates.count
        receipt.certificates += (genuine...ParseLimits.maxCertificates).map { .constructed(0x30, [.primitive(0x02, [UInt8($0)])]) }
        let result = try verdict(receipt.bytes)
        #expect(result.status == .tooManyCertificates, "\(result.json())")
        #expect(receipt.certificates.count == ParseLimits.maxCertificates + 1)
        receipt.certificates.removeLast()  // exactly the limit: counted, then refused for what they are
        let atLimit = try verdict(receipt.bytes)
        #expect(atLimit.status == .badCertificate, "\(atLimit.json())")
    }

    /// A certificate off the signer's path is refused by names, before any decoding;
    /// and since only validated bags enter the cache, no number of refused bags
    /// evicts the genuine one.
    @Test func strayCertificatesNeitherVerifyNorEvictTheCache() throws {
        let genuine = try Fixtures.bytes(Self.file)
        let verifier = ReceiptVerifier()
        #expect(try verdict(genuine, verifier).isValid)
        var receipt = try parts()
        let leaf = receipt.certificates[0]
        for serial in 0..<(ChainCache.maxEntries + 8) {
            var stray = leaf
            stray.children[0].children[1] = .primitive(0x02, [0x01, UInt8(serial)])  // another serial: other bytes
            receipt.certificates = Array(receipt.certificates.prefix(3)) + [stray]
            let result = try verdict(receipt.bytes, verifier)
            #expect(result.status == .unexpectedCertificates, "\(result.json())")
        }
        let span = try parts().certificates.flatMap(\.encoded)
        #expect(span.withUnsafeBufferPointer { verifier.cache.bag(matching: $0) } != nil, "the genuine bag was evicted")
    }
}

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct EnvironmentPolicyTests {
    @Test(arguments: Fixtures.receiptFiles)
    func eachReceiptVerifiesOnlyInItsOwnEnvironment(file: String) throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/" + file))
        for environment in ReceiptEnvironment.allCases {
            let result = ReceiptVerifier(trust: [.appleRoot, .xcodeStoreKit],
                                         policy: VerificationPolicy(environment: environment)).verify(receipt)
            let matches = environment.receiptTypes.contains(receipt.receiptType ?? "")
            #expect(result.isValid == matches, "\(file) under \(environment): \(result.json())")
            #expect(result.outcome(of: .environment)?.status == (matches ? .ok : .environmentMismatch))
        }
        let any = ReceiptVerifier(trust: [.appleRoot, .xcodeStoreKit]).verify(receipt)
        #expect(any.outcome(of: .environment)?.name == "skipped")
    }
}

struct TimeTextTests {
    @Test func rfc3339OffsetsAreTheSameInstant() {
        let utc = ReceiptDateText.epochMilliseconds("2024-01-01T00:00:00Z")
        #expect(utc == 1_704_067_200_000)
        #expect(ReceiptDateText.epochMilliseconds("2024-01-01T01:00:00+01:00") == utc)
        #expect(ReceiptDateText.epochMilliseconds("2023-12-31T19:30:00-04:30") == utc)
        #expect(ReceiptDateText.epochMilliseconds("2024-01-01t00:00:00z") == utc)
        #expect(ReceiptDateText.epochMilliseconds("2024-01-01T01:00:00+0100") == utc)
        #expect(ReceiptDateText.epochMilliseconds("2024-01-01T00:00:00.250+00:00") == utc! + 250)
        for bad in ["2024-01-01T00:00:00", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00+1:00", "2024-01-01T00:00:00+01:0"] {
            #expect(ReceiptDateText.epochMilliseconds(bad) == nil, "\(bad)")
        }
    }
}

struct ChunkedPayloadTests {
    /// The payload as a constructed OCTET STRING of `chunk`-byte pieces.
    static func chunked(_ payload: [UInt8], chunk: Int) -> [UInt8] {
        let pieces = stride(from: 0, to: payload.count, by: chunk).flatMap {
            DER.tlv(0x04, Array(payload[$0..<min($0 + chunk, payload.count)]))
        }
        let content = DER.tlv(0x30, DER.dataOID + DER.tlv(0xA0, DER.tlv(0x24, pieces)))
        return DER.tlv(0x30, DER.signedDataOID + DER.tlv(0xA0, DER.tlv(0x30, DER.integer(1) + DER.set([]) + content
                                                                          + DER.set([]))))
    }

    @Test func chunksJoinToThePayload() throws {
        let payload = DER.set(DER.validAppAttributes)
        let receipt = try Receipt.parse(Self.chunked(payload, chunk: 3))
        #expect(receipt.bundleID == "com.example.app")
        #expect(receipt.receiptCreationDate?.text == "2024-01-02T03:04:05Z")
    }

    @Test func moreChunksThanTheLimitAreRefused() {
        var limits = ParseLimits()
        limits.maxPayloadChunks = 16
        let payload = DER.set(DER.validAppAttributes)
        let bytes = Self.chunked(payload, chunk: (payload.count + 15) / 16)
        #expect((try? Receipt.parse(bytes, limits: limits)) != nil)
        do {
            _ = try Receipt.parse(Self.chunked(payload, chunk: payload.count / 17), limits: limits)
            Issue.record("17 chunks were joined under a limit of 16")
        } catch {
            #expect(error.status == .limitExceeded)
        }
    }
}

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct XcodeSubscriptionEntitlementTests {
    /// Xcode writes no product type (1707); an expiry date (1708) makes a purchase a
    /// subscription, active inside its period and expired after it.
    @Test func anXcodeSubscriptionIsActiveInsideItsPeriod() throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/tp__receipt-xcode-with-purchases.der"))
        let verdict = ReceiptVerifier(trust: .xcodeStoreKit).verify(receipt)
        #expect(verdict.isValid)
        #expect(receipt.purchases.first?.productType == nil)
        let inside = ReceiptDateText.epochMilliseconds("2023-11-01T00:00:00Z")!
        let during = try Entitlements.of(receipt, verified: verdict, at: inside)
        #expect(during.purchases.first?.kind == .autoRenewable)
        #expect(during.activeProductIDs.contains("pass.premium"))
        #expect(during.subscriptions.first?.isActive == true)
        let after = try Entitlements.of(receipt, verified: verdict, at: ReceiptDateText.epochMilliseconds("2023-12-01T00:00:00Z")!)
        #expect(!after.activeProductIDs.contains("pass.premium"))
        #expect(after.purchases.first?.inactiveReason == .expired)
    }
}

struct ArrayOverloadTests {
    @Test func theVerdictFromAnArrayIsTheVerdictFromItsBuffer() throws {
        let bytes = DER.receipt(attributes: DER.validAppAttributes)
        let fromArray = try ReceiptVerifier().verify(encoded: bytes)
        let fromBuffer = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
            try ReceiptVerifier().verify(encoded: buffer)
        }
        #expect(fromArray.json() == fromBuffer.json())
        #expect(fromArray.status == .signerNotFound)
    }
}
