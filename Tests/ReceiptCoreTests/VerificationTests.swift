@_spi(ReceiptInternal) import ReceiptCore
import Testing

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct RealReceiptVerificationTests {
    static let xcodeFiles: Set = ["asl__xcode-app-receipt-empty.der", "kvitto__storeKitTestReceipt.der",
                                  "tp__receipt-xcode-with-purchases.der", "tp__receipt-xcode.der"]

    @Test(arguments: Fixtures.receiptFiles)
    func everyRealReceiptVerifiesUnderItsOwnAnchorOnly(file: String) throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/" + file))
        let policy = VerificationPolicy(bundleID: receipt.bundleID, applicationVersion: receipt.applicationVersion)
        let apple = ReceiptVerifier(policy: policy).verify(receipt)
        let xcode = ReceiptVerifier(trust: .xcodeStoreKit, policy: policy).verify(receipt)
        if Self.xcodeFiles.contains(file) {
            #expect(apple.status == .chainUntrusted)
            #expect(xcode.isValid, "\(xcode.json())")
            #expect(xcode.outcome(of: .leafMarker)?.name == "skipped")
        } else {
            #expect(apple.isValid, "\(apple.json())")
            #expect(apple.anchor == "Apple Inc. Root CA")
            #expect(xcode.status == .chainUntrusted)
        }
    }

    /// The verdict from bytes skips typing the purchases, and nothing else.
    @Test(arguments: Fixtures.receiptFiles)
    func theVerdictFromBytesIsTheVerdictOfTheParsedReceipt(file: String) throws {
        let bytes = try Fixtures.bytes("receipts/" + file)
        let receipt = try Receipt.parse(bytes)
        for trust in [TrustOptions.appleRoot, .xcodeStoreKit] {
            let verifier = ReceiptVerifier(trust: trust, policy: VerificationPolicy(bundleID: "com.example.other"))
            let parsed = verifier.verify(receipt)
            let fromBytes = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
                try verifier.verify(encoded: buffer)
            }
            #expect(fromBytes.json() == parsed.json())
            #expect(fromBytes.status == .bundleMismatch || fromBytes.status == .chainUntrusted)
        }
    }

    /// A caller that keeps only the verdict (`details: false`, C `receipt_verify_bytes`
    /// without a result) gets the same steps, outcomes and failures; only the details
    /// that each verdict would write for steps that pass go unwritten (the markers'
    /// come with the cached chain, written once).
    @Test(arguments: Fixtures.receiptFiles)
    func aVerdictWithoutDetailsIsTheSameVerdict(file: String) throws {
        let bytes = try Fixtures.bytes("receipts/" + file)
        let receipt = try Receipt.parse(bytes)
        let policies = [VerificationPolicy(bundleID: receipt.bundleID, applicationVersion: receipt.applicationVersion),
                        VerificationPolicy(bundleID: "com.example.other", applicationVersion: "0")]
        for trust in [TrustOptions.appleRoot, .xcodeStoreKit] {
            for policy in policies {
                let verifier = ReceiptVerifier(trust: trust, policy: policy)
                let full = verifier.verify(receipt)
                let bare = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
                    try verifier.verify(encoded: buffer, details: false)
                }
                #expect(bare.status == full.status)
                #expect(bare.firstFailure == full.firstFailure)
                #expect(bare.steps.map(\.step) == full.steps.map(\.step))
                #expect(bare.steps.map(\.outcome.name) == full.steps.map(\.outcome.name))
                for (plain, detailed) in zip(bare.steps, full.steps) {
                    if case .failed = detailed.outcome { #expect(plain.outcome == detailed.outcome) }
                    if case .passed = plain.outcome, [.signature, .chain, .bundleID, .applicationVersion].contains(plain.step) {
                        #expect(plain.outcome.detail.isEmpty, "\(plain.step.rawValue)")
                    }
                }
                if full.isValid { #expect(!(full.outcome(of: .signature)?.detail.isEmpty ?? true)) }
            }
        }
    }

    @Test(arguments: [("arv__hannes_mac_mindnode_receipt.der", "6c4008b5945e"),
                      ("arv__mindnode_mac_sha256_receipt.der", "f8ffc21e9182")])
    func knownDevicesMatchAndOthersDoNot(file: String, device: String) throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/" + file))
        var identifier = try #require(hexBytes(device))
        #expect(ReceiptVerifier(policy: VerificationPolicy(deviceIdentifier: identifier)).verify(receipt).isValid)
        identifier[0] ^= 0x80
        let wrong = ReceiptVerifier(policy: VerificationPolicy(deviceIdentifier: identifier)).verify(receipt)
        #expect(wrong.status == .deviceMismatch)
        #expect(wrong.outcome(of: .signature)?.name == "passed")
    }

    @Test func everyFailingStepIsReportedNotJustTheFirst() throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/rc__receiptsample1.der"))
        let policy = VerificationPolicy(bundleID: "com.other", applicationVersion: "5", deviceIdentifier: [1, 2, 3, 4, 5, 6])
        let result = ReceiptVerifier(policy: policy).verify(receipt)
        #expect(result.status == .bundleMismatch)
        #expect(result.steps.map(\.outcome.name) == ["passed", "passed", "passed", "passed", "failed", "failed",
                                                     "failed", "skipped", "skipped", "skipped"])
        #expect(result.outcome(of: .revocation) == .skipped(
            "receipts are out of the revocation step's scope: it checks StoreKit 2 (JWS) App Store chains"))
    }
}

struct VerifierArgumentTests {
    @Test func trustFlagsAndDeviceLengthsAreChecked() {
        #expect(throws: ReceiptError.self) { try TrustOptions(checkedRawValue: 4) }
        #expect((try? TrustOptions(checkedRawValue: 3)) == [.appleRoot, .xcodeStoreKit])
        #expect(throws: ReceiptError.self) { try VerificationPolicy.checkedDeviceIdentifier([]) }
        #expect(throws: ReceiptError.self) { try VerificationPolicy.checkedDeviceIdentifier(Array(repeating: 0, count: 65)) }
    }

    @Test func anchorsMustBeCertificates() {
        do {
            _ = try TrustAnchor(Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8))
            Issue.record("a broken PEM block was accepted")
        } catch {
            #expect(error.status == .badAnchor)
        }
    }

    @Test func theVerdictFromBytesSkipsPurchasesButNeverPassesThem() throws {
        let brokenPurchase = DER.attribute(17, DER.set([DER.attribute(1703, DER.integer(7))]))  // an INTEGER id
        let bytes = DER.receipt(attributes: DER.validAppAttributes + [brokenPurchase])
        #expect(throws: ReceiptError.self) { try Receipt.parse(bytes) }
        let result = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
            try ReceiptVerifier().verify(encoded: buffer)
        }
        #expect(result.status == .signerNotFound)  // unsigned: never valid, typed purchases or not
        do {
            _ = try Array("not a receipt".utf8).withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
                try ReceiptVerifier().verify(encoded: buffer)
            }
            Issue.record("text was verified")
        } catch {
            #expect(error.status == .notAReceipt || error.status == .badBase64)
        }
    }

    @Test func anUnsignedReceiptFailsClosed() throws {
        let receipt = try Receipt.parse(DER.receipt(attributes: DER.validAppAttributes))
        let result = ReceiptVerifier().verify(receipt)
        #expect(result.status == .signerNotFound)
        #expect(result.outcome(of: .chain)?.status == .signerNotFound)
        #expect(result.outcome(of: .leafMarker)?.name == "skipped")
    }
}
