@testable import ReceiptCore
import Foundation
import Testing

/// Hardening 3: every real receipt verifies only in the forms its signer writes (App Store: one;
/// Xcode: two, which differ in SignerInfo.signatureAlgorithm), and the fingerprint, not the bytes,
/// names the signed content across every spelling.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct SpellingTests {
    static let appStoreFiles = Fixtures.receiptFiles.filter { !$0.contains("xcode") && !$0.contains("storeKitTest") }
    static let xcodeFiles = Fixtures.receiptFiles.filter { $0.contains("xcode") || $0.contains("storeKitTest") }

    static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    static let sha1WithRSA: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05]
    static let sha256WithRSA: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]

    func verdict(_ bytes: [UInt8], trust: TrustOptions = .appleRoot) throws -> VerificationResult {
        try ReceiptVerifier(trust: trust).verify(encoded: bytes)
    }

    /// The bytes with the SignerInfo's signatureAlgorithm OID (the last RSA OID in the
    /// receipt: SignerInfo comes last) replaced by one of the same length.
    func respelt(_ bytes: [UInt8], from old: [UInt8], to new: [UInt8]) -> [UInt8]? {
        let starts = (0...(bytes.count - old.count)).filter { Array(bytes[$0..<$0 + old.count]) == old }
        guard let last = starts.last else { return nil }
        var changed = bytes
        changed.replaceSubrange(last..<last + old.count, with: new)
        return changed
    }

    @Test(arguments: appStoreFiles)
    func anAppStoreReceiptVerifiesOnlyWithRSAEncryptionAsItsSignatureAlgorithm(file: String) throws {
        let original = try Fixtures.bytes("receipts/" + file)
        #expect(try verdict(original).isValid)
        for named in [Self.sha1WithRSA, Self.sha256WithRSA] {
            let twin = try #require(respelt(original, from: Self.rsaEncryption, to: named))
            let result = try verdict(twin)
            #expect(!result.isValid, "\(file) verified with its signatureAlgorithm re-spelt")
            // The matching digest is NOT_CANONICAL; the other does not even match the digest.
            #expect([.notCanonical, .unsupportedDigest].contains(result.status), "\(file): \(result.json())")
        }
    }

    @Test(arguments: appStoreFiles)
    func anAppStoreReceiptVerifiesOnlyWithItsCertificatesInPathOrder(file: String) throws {
        var parts = SignedDataParts(try Fixtures.bytes("receipts/" + file))
        #expect(parts.certificates.count == 3)
        for order in [[2, 1, 0], [1, 0, 2], [0, 2, 1]] {
            let original = parts.certificates
            parts.certificates = order.map { original[$0] }
            let result = try verdict(parts.bytes)
            #expect(result.status == .notCanonical, "\(file) \(order): \(result.json())")
            parts.certificates = original
        }
        #expect(try verdict(parts.bytes).isValid)
    }

    @Test(arguments: xcodeFiles)
    func anXcodeReceiptHasTwoFormsAndOneFingerprint(file: String) throws {
        let original = try Fixtures.bytes("receipts/" + file)
        let genuine = try verdict(original, trust: .xcodeStoreKit)
        #expect(genuine.isValid, "\(genuine.json())")
        // Xcode writes rsaEncryption or sha256WithRSAEncryption (both are among the fixtures).
        let twins = [(Self.rsaEncryption, Self.sha256WithRSA), (Self.rsaEncryption, Self.sha1WithRSA),
                     (Self.sha256WithRSA, Self.rsaEncryption)].compactMap { respelt(original, from: $0.0, to: $0.1) }
        let verifying = try twins.map { try verdict($0, trust: .xcodeStoreKit) }.filter(\.isValid)
        #expect(verifying.count == 1, "\(file): exactly one other spelling of signatureAlgorithm verifies")
        #expect(verifying.allSatisfy { $0.fingerprint == genuine.fingerprint })
    }

    @Test(arguments: Fixtures.receiptFiles)
    func theFingerprintIsTheSHA256OfThePayloadInEveryForm(file: String) throws {
        let der = try Fixtures.bytes("receipts/" + file)
        let receipt = try Receipt.parse(der)
        let payload = Array(receipt.storage.payload)
        #expect(receipt.fingerprint == Digest.sha256(payload))
        #expect(receipt.fingerprint.count == ContentFingerprint.byteCount)
        let base64 = Array(der.withUnsafeBufferPointer { Base64.encode($0) }.utf8)
        #expect(try Receipt.parse(base64).fingerprint == receipt.fingerprint)
        let verified = try ReceiptVerifier(trust: [.appleRoot, .xcodeStoreKit]).verify(encoded: base64)
        #expect(verified.fingerprint == receipt.fingerprint)
        // From DER the verdict-only parse borrows the bytes, and a SHA-1 receipt's fingerprint
        // is hashed only when asked (FingerprintSource): still the same value, after the call.
        let fromDER = try ReceiptVerifier(trust: [.appleRoot, .xcodeStoreKit]).verify(encoded: der)
        #expect(fromDER.fingerprint == receipt.fingerprint)
        #expect(verified.json().contains("\"fingerprint\":\"\(ContentFingerprint.hex(receipt.fingerprint))\""))
    }

    @Test func chainDetailsOfReceiptsAndJWSNameTheInstantAlike() throws {
        let receipt = try verdict(try Fixtures.bytes("receipts/tp__receipt-production.der"))
        let detail = try #require(receipt.outcome(of: .chain)).detail
        #expect(detail.hasSuffix(" at 2024-02-23T17:27:16Z"), "\(detail)")
        guard JWSFixtures.available else { return }
        let (_, jws) = try ReceiptVerifier().verify(jws: try JWSFixtures.bytes("apple/spb__12_transaction.jws"))
        let jwsDetail = try #require(jws.outcome(of: .chain)).detail
        #expect(jwsDetail.range(of: #" at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$"#, options: .regularExpression) != nil, "\(jwsDetail)")
    }
}
