import Foundation
@testable import ReceiptCore
import Testing

/// `SignedPayload.decodeVerifiedBefore`: a store's row read with its payload alone.
/// It must read as a full decode reads, and believe nothing a full decode would refuse.
struct StoredJWSDecodeTests {
    private func segment(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    private let transaction = #"{"transactionId":"11","originalTransactionId":"10","signedDate":1700000000000,"#
        + #""productId":"p.monthly","bundleId":"b","environment":"Sandbox"}"#

    @Test func thePayloadReadsAsAFullDecodeReadsIt() throws {
        let token = segment(#"{"alg":"ES256","x5c":["AA==","AA==","AA=="]}"#) + "." + segment(transaction) + ".c2ln"
        let alone = try SignedPayload.decodeVerifiedBefore(token, as: .transaction)
        let full = try SignedPayload.decode(token, as: .transaction)
        #expect(!alone.isDecodedInFull && full.isDecodedInFull)
        #expect(alone.payload == full.payload && alone.payloadBytes == full.payloadBytes && alone.kind == .transaction)
        #expect(alone.compactSerialization == token && alone.fingerprint == full.fingerprint)
        // Whitespace around the token is cut, as `decode` cuts it.
        let padded = try SignedPayload.decodeVerifiedBefore(" \n" + token + "\r\n", as: .transaction)
        #expect(padded.compactSerialization == token && padded.fingerprint == full.fingerprint)
        #expect(alone.transactionID == "11" && alone.originalTransactionID == "10" && alone.signingDate == 1_700_000_000_000)
        // The header members decode the header when asked.
        #expect(alone.header == full.header && alone.headerText == full.headerText)
        #expect(alone.algorithm == "ES256" && alone.certificateChain == ["AA==", "AA==", "AA=="])
        #expect(alone.signature == full.signature && alone.signature == Array("sig".utf8))
        #expect(SignedPayloadJSON.render(alone) == SignedPayloadJSON.render(full))
    }

    @Test func aPayloadIsRefusedAsAFullDecodeRefusesIt() {
        let payloads = ["[1]", "{", #"{"a":1,"a":2}"#, #"{"notificationType":"TEST"}"#, "null"]
        for payload in payloads {
            let token = segment(#"{"alg":"ES256"}"#) + "." + segment(payload) + ".c2ln"
            let full = Result { () throws(ReceiptError) in try SignedPayload.decode(token, as: .transaction) }
            let alone = Result { () throws(ReceiptError) in try SignedPayload.decodeVerifiedBefore(token, as: .transaction) }
            guard case .failure(let expected) = full, case .failure(let got) = alone else {
                Issue.record("\(payload) was not refused both ways")
                continue
            }
            #expect(got.status == expected.status && got.detail == expected.detail, "\(payload)")
        }
        for token in ["", "a.b", "a.b.c.d", ".\(segment("{}")).", "eyJ.." ] {
            let full = Result { () throws(ReceiptError) in try SignedPayload.decode(token) }
            let alone = Result { () throws(ReceiptError) in try SignedPayload.decodeVerifiedBefore(token) }
            #expect(full.error?.status != nil && alone.error?.status == full.error?.status, "\(token)")
        }
    }

    /// A row edited by hand: its payload decodes, its header or signature does not. It
    /// reads as an empty header, and its verdict fails at every step with the error a
    /// full decode gives; the full decode refuses it.
    @Test func aHeaderOrSignatureThatDoesNotDecodeFailsEveryStep() throws {
        let badHeader = "e!!." + segment(transaction) + ".c2ln"
        let headerNotJSON = segment("x5c") + "." + segment(transaction) + ".c2ln"
        let badSignature = segment(#"{"alg":"ES256"}"#) + "." + segment(transaction) + ".c2l"
        for token in [badHeader, headerNotJSON, badSignature] {
            let refusal = try #require(Result { () throws(ReceiptError) in try SignedPayload.decode(token) }.error)
            let alone = try SignedPayload.decodeVerifiedBefore(token)
            #expect(alone.transactionID == "11")
            #expect(alone.headerText == "" && alone.header == .object([:]) && alone.certificateChain.isEmpty)
            #expect(alone.signature.isEmpty && alone.algorithm == nil)
            let result = ReceiptVerifier().verify(jws: alone)
            #expect(!result.isValid && result.status == refusal.status && result.anchor == nil, "\(token)")
            #expect(result.steps.count == ReceiptVerifier.jwsPolicies.count)
            #expect(result.steps.allSatisfy { $0.outcome == .failed(refusal) }, "\(token)")
        }
    }

    /// A member of another type than documented is not checked again when read (it was,
    /// when the row was verified): it reads nil. Judged, it is refused as `decode` refuses it.
    @Test func aMistypedMemberReadsNilAndIsRefusedWhenJudged() throws {
        let token = segment(#"{"alg":"ES256"}"#) + "." + segment(#"{"transactionId":"1","quantity":"1","signedDate":5}"#) + ".c2ln"
        let refusal = try #require(Result { () throws(ReceiptError) in try SignedPayload.decode(token) }.error)
        #expect(refusal.status == .badField)
        let alone = try SignedPayload.decodeVerifiedBefore(token, as: .transaction)
        #expect(alone.integer("quantity") == nil && alone.transactionID == "1" && alone.signingDate == 5)
        let result = ReceiptVerifier().verify(jws: alone)
        #expect(result.firstFailure == refusal)
        #expect(result.steps.allSatisfy { $0.outcome == .failed(refusal) })
    }

    /// A header that decodes but is mistyped is refused as a full decode refuses it.
    @Test func aMistypedHeaderIsJudgedAsAFullDecodeJudgesIt() throws {
        let token = segment(#"{"alg":1}"#) + "." + segment(transaction) + ".c2ln"
        let refusal = try #require(Result { () throws(ReceiptError) in try SignedPayload.decode(token) }.error)
        #expect(refusal.status == .badField)
        let result = ReceiptVerifier().verify(jws: try SignedPayload.decodeVerifiedBefore(token))
        #expect(result.status == .badField && result.firstFailure == refusal)
    }
}

@Suite(.enabled(if: JWSFixtures.available, JWSFixtures.skipReason))
struct StoredRealJWSDecodeTests {
    /// Every real Apple JWS: the same verdict, step by step, decoded alone as in full.
    @Test func everyRealJWSIsJudgedTheSameDecodedEitherWay() throws {
        let sandbox = ReceiptVerifier(policy: VerificationPolicy(environment: .sandbox))
        var judged = 0
        for row in try JWSFixtures.expectations() where row["payload"] is [String: Any] {
            let token = String(decoding: try JWSFixtures.bytes(JWSFixtures.path(of: row)), as: UTF8.self)
            let full = sandbox.verify(jws: try SignedPayload.decode(token))
            let alone = sandbox.verify(jws: try SignedPayload.decodeVerifiedBefore(token))
            #expect(alone.steps == full.steps && alone.anchor == full.anchor && alone.fingerprint == full.fingerprint,
                    "\(row["file"]!)")
            judged += 1
        }
        #expect(judged >= 20)
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// StoredPayloadCache: a stored token decoded once, never another token's payload for it, and bounded.
@Suite(.serialized) struct StoredPayloadCacheTests {
    private func token(_ payload: String, signature: String = "c2ln") -> String {
        Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + signature
    }

    private func transaction(_ id: Int) -> String {
        #"{"transactionId":"\#(id)","originalTransactionId":"10","signedDate":1700000000000,"bundleId":"b"}"#
    }

    @Test func aTokenIsDecodedOnceAndNeverAnswersForAnother() throws {
        let first = token(transaction(900_001), signature: "Zmlyc3Q")
        let decoded = try #require(StoredPayloadCache.decoded(first))
        #expect(StoredPayloadCache.decoded(first) === decoded)
        #expect(decoded.transactionID == "900001")
        // The same signature on another payload (a forged row): its own payload, not the first's.
        let other = try #require(StoredPayloadCache.decoded(token(transaction(900_002), signature: "Zmlyc3Q")))
        #expect(other.transactionID == "900002" && other !== decoded)
        #expect(StoredPayloadCache.decoded("not a token") == nil)
    }

    @Test func theCacheIsBounded() {
        for id in 0..<(StoredPayloadCache.capacity + 10) {
            _ = StoredPayloadCache.decoded(token(transaction(910_000 + id), signature: "c\(id)"))
        }
        #expect(StoredPayloadCache.count <= StoredPayloadCache.capacity)
    }
}
