import Testing
@testable import ReceiptCore

/// StoredRowCheck and FigureComparison: what `receipt audit` finds in a stored row and in two
/// answers of one figure.
struct StoredRowCheckTests {
    private func token(_ json: String) -> String {
        Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(json.utf8)) + "."
    }

    @Test func aRowsColumnsAreNamedInTheOrderOfTheirValues() throws {
        let row = try #require(StoredTransaction(verified: SignedPayload.decode(token(
            #"{"transactionId":"2","originalTransactionId":"1","signedDate":5,"productId":"p","price":4990,"#
            + #""appAccountToken":"0D0E3A5C-8A7F-4C1B-9E2D-3F4A5B6C7D8E"}"#))))
        let values = Dictionary(uniqueKeysWithValues: zip(StoredTransaction.columnNames, row.columnValues))
        #expect(StoredTransaction.columnNames.count == row.columnValues.count)
        #expect(values["transaction_id"] == .text("2") && values["original_transaction_id"] == .text("1"))
        #expect(values["product_id"] == .text("p") && values["signed_date"] == .integer(5) && values["price"] == .integer(4990))
        #expect(values["app_account_token"] == .text("0d0e3a5c-8a7f-4c1b-9e2d-3f4a5b6c7d8e"))
        #expect(values["jws"] == .text(row.jws) && values["expires_date"] == .null)
        let renewal = try #require(StoredRenewalInfo(verified: SignedPayload.decode(token(
            #"{"originalTransactionId":"1","signedDate":6,"autoRenewStatus":1}"#))))
        let renewalValues = Dictionary(uniqueKeysWithValues: zip(StoredRenewalInfo.columnNames, renewal.columnValues))
        #expect(StoredRenewalInfo.columnNames.count == renewal.columnValues.count)
        #expect(renewalValues["original_transaction_id"] == .text("1") && renewalValues["signed_date"] == .integer(6))
        #expect(renewalValues["auto_renew_status"] == .integer(1) && renewalValues["jws"] == .text(renewal.jws))
    }

    @Test func eachColumnThatDiffersIsNamedWithBothValuesAndOnlyThose() {
        let names = ["transaction_id", "price", "currency", "notification_uuid", "expires_date"]
        let held: [StoredFact] = [.text("2"), .integer(5990), .text("EUR"), .text("held only"), .integer(7)]
        let signed: [StoredFact?] = [.text("2"), .integer(4990), .text("EUR"), nil, .null]
        let found = StoredRowCheck.differences(names: names, held: held, signed: signed)
        #expect(found == [.column(name: "price", held: .integer(5990), signed: .integer(4990)),
                          .column(name: "expires_date", held: .integer(7), signed: .null)])
        #expect(found.map(\.description) == ["price holds 5990, its JWS gives 4990", "expires_date holds 7, its JWS gives NULL"])
        #expect(StoredRowCheck.differences(names: names, held: held, signed: held.map { $0 }) == [])
        #expect(StoredRowCheck.Finding.column(name: "currency", held: .text("USD"), signed: .text("EUR")).description
                == "currency holds 'USD', its JWS gives 'EUR'")
        // What a store holds cannot start a line of the report of its own, nor reach the terminal as control.
        #expect(StoredRowCheck.Finding.column(name: "currency", held: .text("X\naudited: 0 differences\u{1B}[2J\u{85}"),
                                              signed: .text("EUR")).description
                == "currency holds 'X\\u{A}audited: 0 differences\\u{1B}[2J\\u{85}', its JWS gives 'EUR'")
        #expect(StoredRowCheck.printable("é ü 漢") == "é ü 漢")
    }

    /// A JWS that is not Apple's (here unsigned), is no text, or is of another kind is never taken as verified.
    @Test func onlyAVerifiedJWSOfTheRowsKindGivesAPayload() {
        let verifier = ReceiptVerifier()
        let transaction = token(#"{"transactionId":"2","originalTransactionId":"1","signedDate":5}"#)
        guard case .failure(.unverified(let step, let status, _)) = StoredRowCheck.verified(.text(transaction), as: .transaction,
                                                                                           by: verifier) else {
            Issue.record("an unsigned JWS was taken")
            return
        }
        #expect(!step.isEmpty && status.hasPrefix("RECEIPT_E_"))
        for notText in [StoredFact.null, .integer(1)] {
            guard case .failure(.unreadable("the jws column holds no text")) = StoredRowCheck.verified(notText, as: .transaction,
                                                                                                    by: verifier) else {
                Issue.record("\(notText) was taken as a JWS")
                return
            }
        }
        guard case .failure(.unreadable(let detail)) = StoredRowCheck.verified(.text("not.a.jws"), as: .transaction, by: verifier) else {
            Issue.record("an unreadable JWS was not called so")
            return
        }
        #expect(detail.hasPrefix("RECEIPT_E_"))
        guard case .failure = StoredRowCheck.verified(.text(transaction), as: .renewalInfo, by: verifier) else {
            Issue.record("a transaction was taken as a renewal info")
            return
        }
    }

    @Test func figureAnswersAreComparedAsMultisetsOfLines() {
        // CSV's lines end in CRLF (RFC 4180): the ends are no part of what is compared or named.
        let held = Array("day,count\r\n1,5\r\n2,3\r\n2,3\r\n3,1\r\n".utf8)
        let recomputed = Array("day,count\r\n3,1\r\n2,3\r\n1,4\r\n".utf8)
        let (onlyHeld, onlyRecomputed) = FigureComparison.differences(held: held, recomputed: recomputed)
        #expect(onlyHeld == ["1,5", "2,3"])  // one of the two "2,3" has its match
        #expect(onlyRecomputed == ["1,4"])
        let same = FigureComparison.differences(held: held, recomputed: Array("2,3\n3,1\nday,count\n2,3\n1,5".utf8))
        #expect(same.onlyHeld.isEmpty && same.onlyRecomputed.isEmpty)
    }
}
