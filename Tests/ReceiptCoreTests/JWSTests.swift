import Foundation
@_spi(ReceiptInternal) @testable import ReceiptCore
import Testing

@Suite(.enabled(if: JWSFixtures.available, JWSFixtures.skipReason))
struct RealJWSTests {
    @Test func everyPayloadDecodesExactlyAsTheIndependentCheckDid() throws {
        let rows = try JWSFixtures.expectations()
        #expect(rows.count == 25)
        for row in rows {
            let bytes = try JWSFixtures.bytes(JWSFixtures.path(of: row))
            guard let expected = row["payload"] as? [String: Any] else {
                #expect(throws: ReceiptError.self) { try SignedPayload.decode(bytes) }
                #expect((try? SignedPayload.decode(bytes)) == nil)
                do { _ = try SignedPayload.decode(bytes) } catch { #expect(error.status == .notAnObject) }
                continue
            }
            let payload = try SignedPayload.decode(bytes)
            let decoded = try JSONSerialization.jsonObject(with: Data(payload.payloadBytes)) as! NSDictionary
            #expect(decoded == expected as NSDictionary, "\(row["file"]!)")
            let signed = (row["signed_ms"] as! NSNumber).doubleValue
            #expect(payload.signingDate == Int64(signed.rounded(.down)), "\(row["file"]!)")
            #expect(payload.certificateChain.count == row["x5c"] as? Int)
        }
    }

    @Test func everyAppleJWSVerifiesInSandboxAndNotInProduction() throws {
        let sandbox = ReceiptVerifier(policy: VerificationPolicy(environment: .sandbox))
        let production = ReceiptVerifier(policy: VerificationPolicy(environment: .production))
        for row in try JWSFixtures.expectations() where row["x5c"] as? Int == 3 && row["payload"] is [String: Any] {
            let bytes = try JWSFixtures.bytes(JWSFixtures.path(of: row))
            let (payload, result) = try sandbox.verify(jws: bytes)
            #expect(result.isValid, "\(row["file"]!): \(result.json())")
            #expect(result.anchor == "Apple Root CA - G3")
            #expect(production.verify(jws: payload).status == .environmentMismatch)
            // Warm: the chain comes from the cache and the verdict is the same.
            #expect(sandbox.verify(jws: payload).isValid)
        }
    }

    @Test func kindsAreToldFromTheMembers() throws {
        let kinds = try ["apple/spb__02_transaction.jws", "apple/spb__03_renewalInfo.jws",
                         "apple/spb__01_notification_DID_RENEW.jws", "xcode/asl-swift__xcode-signed-app-transaction.jws"]
            .map { try SignedPayload.decode(try JWSFixtures.bytes($0)).kind }
        #expect(kinds == [.transaction, .renewalInfo, .notification, .appTransaction])
    }

    @Test func xcodeJWSNeedsItsCertificateAsAnAnchor() throws {
        let anchor = try TrustAnchor(try JWSFixtures.bytes("certs/StoreKitTestingInXcode-2023-10-19.pem"))
        for file in ["asl-swift__xcode-signed-app-transaction.jws", "asl-swift__xcode-signed-renewal-info.jws",
                     "asl-swift__xcode-signed-transaction.jws"] {
            let bytes = try JWSFixtures.bytes("xcode/" + file)
            #expect(try ReceiptVerifier().verify(jws: bytes).result.status == .chainUntrusted)
            // The receipts' Xcode pin is not a JWS anchor.
            #expect(try ReceiptVerifier(trust: [.appleRoot, .xcodeStoreKit]).verify(jws: bytes).result.status == .chainUntrusted)
            let result = try ReceiptVerifier(anchors: [anchor], policy: VerificationPolicy(environment: .xcode)).verify(jws: bytes).result
            #expect(result.isValid, "\(file): \(result.json())")
        }
    }

    @Test func appleRootG3IsNotAReceiptAnchor() throws {
        // A receipt whose bag carried G3 would find no receipt pin: G3 signs JWS only.
        #expect(PinnedAnchor.enabled(by: .appleRoot, for: .receipt) == [.appleRoot])
        #expect(PinnedAnchor.enabled(by: .appleRoot, for: .jws) == [.appleRootG3])
        #expect(PinnedAnchor.enabled(by: [], for: .jws).isEmpty)
        let g3 = try JWSFixtures.bytes("certs/AppleRootCA-G3.pem")
        let der = try X509Certificate(derOrPEM: g3).der
        #expect(Digest.sha256(der) == PinnedAnchor.appleRootG3.sha256)
    }

    @Test func withoutAppleRootNothingIsTrusted() throws {
        let bytes = try JWSFixtures.bytes("apple/spb__02_transaction.jws")
        let result = try ReceiptVerifier(trust: []).verify(jws: bytes).result
        #expect(result.status == .chainUntrusted)
        #expect(result.outcome(of: .chain)?.detail.contains("not enabled") == true)
    }
}

struct JSONReaderTests {
    private func parse(_ text: String, _ limits: JSONLimits = .signedData) throws(ReceiptError) -> JSONValue {
        try Array(text.utf8).withUnsafeBufferPointer { (bytes) throws(ReceiptError) in try JSONValue.parse(bytes, limits: limits) }
    }

    private func status(_ text: String, _ limits: JSONLimits = .signedData) -> ReceiptStatus? {
        do { _ = try parse(text, limits); return nil } catch { return error.status }
    }

    @Test func repeatedNamesAreRefusedEvenWhenSpelledApart() {
        #expect(status(#"{"a":1,"a":2}"#) == .duplicateMember)
        #expect(status(#"{"bundleId":1,"\u0062undleId":2}"#) == .duplicateMember)
        #expect(status(#"{"a":{"b":1},"b":2}"#) == nil)
    }

    @Test func boundsAreNamed() {
        let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)
        #expect(status(deep) == .nestingTooDeep)
        #expect(status(String(deep.dropFirst().dropLast())) == nil)  // 16 levels: the limit itself
        let many = "[" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]"
        #expect(status(many) == .limitExceeded)
        #expect(status("[" + Array(repeating: "0", count: 9_998).joined(separator: ",") + "]") == nil)
    }

    @Test func textIsStrict() {
        #expect(status("{\"a\":\"\u{FF}\"}".replacingOccurrences(of: "\u{FF}", with: "é")) == nil)
        let invalid: [UInt8] = Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(throws: ReceiptError(.badUTF8, at: 6, "the JSON text is not valid UTF-8")) {
            try invalid.withUnsafeBufferPointer { (bytes) throws(ReceiptError) in _ = try JSONValue.parse(bytes, limits: .signedData) }
        }
        #expect(status(#"{"a":"\u+123"}"#) == .badJSON)
        #expect(status(#"{"a":01}"#) == .badJSON)
        #expect(status(#"{"a":1} x"#) == .badJSON)
        #expect(status(#"{"a":"\ud800"}"#) == .badJSON)
        #expect(try! parse(#"{"a":"\ud83d\ude00 \n"}"#)["a"]?.stringValue == "😀 \n")
    }

    @Test func epochMillisecondsCutFractionsTowardThePast() {
        #expect(JSONValue.number("1697679936711.0747").epochMilliseconds == 1_697_679_936_711)
        #expect(JSONValue.number("-62135769600000").epochMilliseconds == -62_135_769_600_000)
        #expect(JSONValue.number("-1.5").epochMilliseconds == -2)
        #expect(JSONValue.number("-1.0").epochMilliseconds == -1)
        #expect(JSONValue.number("1e3").epochMilliseconds == nil)
        #expect(JSONValue.string("1").epochMilliseconds == nil)
        #expect(JSONValue.number("99999999999999999999").epochMilliseconds == nil)
    }
}

struct Base64URLTests {
    private func decode(_ text: String) throws(ReceiptError) -> [UInt8] {
        try Array(text.utf8).withUnsafeBufferPointer { (bytes) throws(ReceiptError) in try Base64URL.decode(bytes, offset: 0) }
    }

    @Test func roundTripsEveryLength() throws {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            #expect(try decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test func oneSpellingOnly() {
        #expect(throws: ReceiptError.self) { try decode("e30=") }      // padding
        #expect(throws: ReceiptError.self) { try decode("e3+/") }      // the standard alphabet
        #expect(throws: ReceiptError.self) { try decode("e30 ") }      // whitespace
        #expect(throws: ReceiptError.self) { try decode("e") }         // 4n+1 characters
        #expect(throws: ReceiptError.self) { try decode("e31") }       // spare bits set
        #expect((try? decode("e30")) == Array("{}".utf8))
    }
}

struct SignedPayloadTests {
    private func token(header: String = #"{"alg":"ES256"}"#, _ payload: String) -> [UInt8] {
        Array((Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".").utf8)
    }

    @Test func documentedMembersAreTyped() {
        #expect(throws: ReceiptError.self) { try SignedPayload.decode(token(#"{"transactionId":"1","quantity":"1"}"#)) }
        #expect(throws: ReceiptError.self) { try SignedPayload.decode(token(#"{"notificationType":"X","data":{"appAppleId":"7"}}"#)) }
        #expect(throws: ReceiptError.self) { try SignedPayload.decode(token(header: #"{"alg":1}"#, "{}")) }
        #expect(throws: ReceiptError.self) { try SignedPayload.decode(token(header: #"{"x5c":["a",1]}"#, "{}")) }
        let kept = try? SignedPayload.decode(token(#"{"transactionId":"1","offerType":42,"newThing":{"x":[]}}"#))
        #expect(kept?.integer("offerType") == 42)
        #expect(kept?.payload.member(atPath: "newThing.x") == .array([]))
    }

    /// Paths split at each '.', empty names kept (a name may be empty in JSON), and one name
    /// without a dot taken whole, however it reads ("é", "items[]").
    @Test func memberPathsSplitAtEachDot() throws {
        #expect(MemberPath("a").components == ["a"])
        #expect(MemberPath("").components == [""])
        #expect(MemberPath("data.bundleId").components == ["data", "bundleId"])
        #expect(MemberPath("a..b.").components == ["a", "", "b", ""])
        #expect(MemberPath("é.ü").components == ["é", "ü"])
        #expect(MemberPath("items[].price").eachElement && MemberPath("items[]").eachElement)
        #expect(!MemberPath("items.price").eachElement)
        let payload = try SignedPayload.decode(token(#"{"":{"a":1},"x":{"":{"y":2}},"p.q":3}"#)).payload
        #expect(payload.member(atPath: ".a") == .number("1"))
        #expect(payload.member(atPath: "x..y") == .number("2"))
        #expect(payload.member(atPath: "p.q") == nil && payload["p.q"] == .number("3"))
    }

    @Test func notificationsNameTheirAppInTheirObjects() throws {
        let summary = try SignedPayload.decode(token(#"{"notificationType":"RENEWAL_EXTENSION","signedDate":5,"#
                                                     + #""summary":{"bundleId":"b","environment":"Production","appAppleId":9}}"#))
        #expect(summary.bundleID == "b" && summary.environmentName == "Production" && summary.appAppleID == 9)
        #expect(summary.signingDate == 5)
    }

    @Test func aJWSWithoutAnyCertificateFailsClosed() throws {
        let result = ReceiptVerifier().verify(jws: try SignedPayload.decode(token(#"{"transactionId":"1","signedDate":1}"#)))
        #expect(result.outcome(of: .header)?.status == .noCertificates)
        #expect(result.outcome(of: .signature)?.status == .noCertificates)
        #expect(result.outcome(of: .chain)?.status == .noCertificates)
        #expect(!result.isValid)
    }
}

// Serialized: theProcessKeepsABoundedNumberOfTables fills the process's tables to evict, which would
// take away the table another test of this suite has just had built and asks for again.
@Suite(.serialized, .enabled(if: JWSFixtures.available, JWSFixtures.skipReason))
struct PrecomputedES256Tests {
    /// The table-based check (shim_es256_key_verify) against OpenSSL's
    /// ECDSA_do_verify: the same answer for the genuine signature, every single-bit
    /// change of it, of the signed bytes, and r or s at 0, n-1, n and 2^256-1.
    @Test func agreesWithOpenSSLOnEveryMutation() throws {
        let n = hexBytes("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")!
        let nMinusOne = hexBytes("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632550")!
        for file in ["apple/spb__02_transaction.jws", "apple/hound__01_transaction.jws"] {
            let payload = try SignedPayload.decode(try JWSFixtures.bytes(file))
            let verifier = ReceiptVerifier()
            let bag = try verifier.certificateBag(of: payload)
            let leaf = bag.certificates[0]
            let key = try #require(ES256Key(leaf))
            let jws = payload.jws, signature = payload.signature
            func agree(_ signature: [UInt8], _ message: [UInt8]) -> Bool? {
                let digest = Digest.sha256(message)
                let plain = Result { () throws(ReceiptError) in try ES256Signature.verify(signature, digest: digest, certificate: leaf) }
                let fast = Result { () throws(ReceiptError) in
                    try ES256Signature.verify(signature, digest: digest, certificate: leaf, precomputed: key)
                }
                let same = (try? plain.get()) != nil ? (try? fast.get()) != nil : (try? fast.get()) == nil
                return same ? (try? plain.get()) != nil : nil
            }
            let message = Array(Array(jws.token.utf8)[jws.signingInput])
            #expect(agree(signature, message) == true)
            for bit in 0..<(64 * 8) {
                var changed = signature
                changed[bit / 8] ^= 1 << (bit % 8)
                #expect(agree(changed, message) == false, "signature bit \(bit)")
            }
            for bit in stride(from: 0, to: message.count * 8, by: 97) {
                var changed = message
                changed[bit / 8] ^= 1 << (bit % 8)
                #expect(agree(signature, changed) == false, "message bit \(bit)")
            }
            let r = Array(signature[0..<32]), s = Array(signature[32...])
            for edge in [[UInt8](repeating: 0, count: 32), nMinusOne, n, [UInt8](repeating: 0xFF, count: 32)] {
                #expect(agree(edge + s, message) == false)
                #expect(agree(r + edge, message) == false)
            }
        }
    }

    @Test func theTableIsBuiltOnTheSecondCheckOfACachedBagAndSharedByItsKey() throws {
        let bytes = try JWSFixtures.bytes("apple/spb__02_transaction.jws")
        let verifier = ReceiptVerifier()
        for _ in 0..<3 { #expect(try verifier.verify(jws: bytes).result.isValid) }
        let bag = try verifier.certificateBag(of: try SignedPayload.decode(bytes))
        let key = try #require(bag.precomputedLeafKey())
        // A bag decoded afresh with the same leaf key finds the process's table on its first check
        // (ES256KeyTables): a verifier made for each request does not build it again.
        let fresh = try CertificateBag.decode(chain: bag.certificates.map(\.der), key: [1], known: [])
        #expect(fresh.precomputedLeafKey() === key)
        #expect(ES256KeyTables.shared(for: bag.certificates[0]) === key)
        // A key whose table no one built finds none: the intermediate's (P-384, never a JWS signer).
        #expect(ES256KeyTables.shared(for: bag.certificates[1]) == nil)
    }

    /// At most `maxEntries` tables, the least recently used given up first, whatever the keys.
    @Test func theProcessKeepsABoundedNumberOfTables() throws {
        let directory = try ServerAPITokenTests.scratch()
        var leaves: [X509Certificate] = []
        for index in 0...ES256KeyTables.maxEntries {
            try ServerAPITokenTests.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                             "-nodes", "-keyout", "k\(index).pem", "-out", "c\(index).der",
                                             "-outform", "DER", "-subj", "/CN=leaf \(index)", "-days", "1"], in: directory)
            leaves.append(try X509Certificate(der: [UInt8](try Data(contentsOf: directory.appendingPathComponent("c\(index).der")))))
        }
        let first = try #require(ES256KeyTables.built(for: leaves[0]))
        #expect(ES256KeyTables.built(for: leaves[0]) === first)
        for leaf in leaves.dropFirst() { #expect(ES256KeyTables.built(for: leaf) != nil) }
        #expect(ES256KeyTables.count <= ES256KeyTables.maxEntries)
        #expect(ES256KeyTables.shared(for: leaves[0]) == nil)
        #expect(ES256KeyTables.shared(for: leaves[ES256KeyTables.maxEntries]) != nil)
    }

    /// A chain validated by one verifier serves another that chose the same anchor for it, and only that.
    @Test func validatedChainsAreSharedByAnchor() throws {
        let bytes = try JWSFixtures.bytes("apple/spb__03_renewalInfo.jws")
        let payload = try SignedPayload.decode(bytes)
        let first = ReceiptVerifier(policy: VerificationPolicy(environment: .sandbox))
        #expect(first.verify(jws: payload).isValid)
        let fresh = ReceiptVerifier(policy: VerificationPolicy(environment: .sandbox))
        #expect(try fresh.certificateBag(of: payload) === (try first.certificateBag(of: payload)))
        let result = fresh.verify(jws: payload)
        #expect(result.isValid && result.anchor == "Apple Root CA - G3")
        // The same root added as an anchor (as Apple's SignedDataVerifier takes it) is another anchor.
        let root = try SignedPayload.decode(bytes)
        let rootDER = try fresh.certificateBag(of: root).certificates[2].der
        let added = ReceiptVerifier(trust: [], anchors: [try TrustAnchor(rootDER)],
                                    policy: VerificationPolicy(environment: .sandbox))
        let addedResult = added.verify(jws: payload)
        #expect(addedResult.isValid && addedResult.anchor?.hasPrefix("added anchor") == true)
        // A verifier that trusts neither finds no chain, shared or not.
        let none = ReceiptVerifier(trust: [], policy: VerificationPolicy(environment: .sandbox))
        #expect(none.verify(jws: payload).status == .chainUntrusted)
    }
}

@Suite(.enabled(if: JWSFixtures.available, JWSFixtures.skipReason))
struct AppleRefusalTests {
    /// A production verifier of another app's Apple id, on a sandbox notification of the app: the
    /// environment fails first, then the app's Apple id. Apple's verifier reaches the app's
    /// identifiers first, and counts the app's Apple id among them in production only.
    @Test func theStatusIsTheOneApplesVerifierReachesFirst() throws {
        let bytes = try JWSFixtures.bytes("apple/spb__01_notification_DID_RENEW.jws")
        let verifier = ReceiptVerifier(policy: VerificationPolicy(bundleID: "com.loki-project.loki-messenger",
                                                                  environment: .production, appAppleID: 1))
        let result = try verifier.verify(jws: bytes).result
        #expect(result.status == .environmentMismatch)
        let names = result.steps.map(\.step)
        let production = AppleVerificationStatus.refusal(of: result, production: true)
        #expect(production.status == .INVALID_APP_IDENTIFIER && production.step == names.firstIndex(of: .appAppleID))
        let sandbox = AppleVerificationStatus.refusal(of: result, production: false)
        #expect(sandbox.status == .INVALID_ENVIRONMENT && sandbox.step == names.firstIndex(of: .environment))
        let valid = try ReceiptVerifier(policy: VerificationPolicy(environment: .sandbox)).verify(jws: bytes).result
        let passed = AppleVerificationStatus.refusal(of: valid, production: true)
        #expect(passed.status == .OK && passed.step == nil)
    }
}
