import Testing
@testable import ReceiptCore

/// StoredFacts: the columns a store keeps beside each JWS, derived from the payload alone.
struct StoredFactsTests {
    private func payload(_ json: String) throws -> SignedPayload {
        let token = Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(json.utf8)) + "."
        return try SignedPayload.decode(token)
    }

    private func fact(_ name: String, of row: StoredTransaction) -> StoredFact? {
        StoredFacts.transactionColumns.firstIndex { $0.name == name }.map { row.facts[$0] }
    }

    @Test func eachColumnHoldsItsMemberAndNullWhereAbsent() throws {
        let row = try #require(StoredTransaction(verified: payload(
            #"{"transactionId":"2","originalTransactionId":"1","signedDate":5,"purchaseDate":1000.9,"#
            + #""price":4990,"currency":"EUR","isUpgraded":true,"offerType":1,"type":"Auto-Renewable Subscription"}"#)))
        #expect(row.facts.count == StoredFacts.transactionColumns.count)
        #expect(fact("purchase_date", of: row) == .integer(1000))  // fractions of a millisecond cut, as every date
        #expect(fact("price", of: row) == .integer(4990))
        #expect(fact("currency", of: row) == .text("EUR"))
        #expect(fact("is_upgraded", of: row) == .integer(1))
        #expect(fact("offer_type", of: row) == .integer(1))
        #expect(fact("product_type", of: row) == .text("Auto-Renewable Subscription"))
        #expect(fact("expires_date", of: row) == .null)
        #expect(fact("revocation_date", of: row) == .null)
        // A member of another type than Apple's model never becomes a row: the payload is refused.
        #expect(throws: ReceiptError.self) {
            try payload(#"{"transactionId":"2","originalTransactionId":"1","signedDate":5,"expiresDate":"soon"}"#)
        }
    }

    @Test func renewalInfosHaveTheirOwnColumnsAndOtherKindsNone() throws {
        let renewal = try #require(StoredRenewalInfo(verified: payload(
            #"{"originalTransactionId":"1","signedDate":5,"autoRenewStatus":0,"isInBillingRetryPeriod":false,"#
            + #""gracePeriodExpiresDate":77,"autoRenewProductId":"m"}"#)))
        let names = StoredFacts.renewalInfoColumns.map(\.name)
        #expect(renewal.facts[names.firstIndex(of: "auto_renew_status")!] == .integer(0))
        #expect(renewal.facts[names.firstIndex(of: "is_in_billing_retry_period")!] == .integer(0))
        #expect(renewal.facts[names.firstIndex(of: "grace_period_expires_date")!] == .integer(77))
        #expect(StoredFacts.columns(of: .notification) == nil)
        // Read back from a store: the same facts; a JWS that no longer decodes gives no row.
        #expect(StoredRenewalInfo(storedJWS: renewal.jws) == renewal)
        #expect(StoredTransaction(storedJWS: "not.a.jws") == nil)
        #expect(StoredTransaction(storedJWS: renewal.jws) == nil)  // another kind
    }

    /// A date the figures could not take apart without overflow is named; other kinds and NULLs never are.
    @Test func datesPastWhatAStoreTakesAreNamed() {
        let columns = StoredFacts.transactionColumns
        var facts = [StoredFact](repeating: .null, count: columns.count)
        let expires = columns.firstIndex { $0.name == "expires_date" }!
        let price = columns.firstIndex { $0.name == "price" }!
        facts[price] = .integer(.max)  // not a date: any 64-bit number
        #expect(StoredFacts.unstorableDate(in: facts, of: columns) == nil)
        for (date, named) in [(Int64(1) << 53, false), (-(Int64(1) << 53), false), ((1 << 53) + 1, true), (.min, true)] {
            facts[expires] = .integer(date)
            #expect((StoredFacts.unstorableDate(in: facts, of: columns) == "expires_date") == named, "\(date)")
        }
    }

    @Test func columnNamesAreUniquePerTableAndSQLWords() {
        for columns in [StoredFacts.transactionColumns, StoredFacts.renewalInfoColumns] {
            let names = columns.map(\.name)
            #expect(Set(names).count == names.count)
            #expect(names.allSatisfy { $0.utf8.allSatisfy { (97...122).contains($0) || $0 == 95 } })
        }
    }
}

/// BillingPeriod: a period's length told from its dates, and its price per month.
struct BillingPeriodTests {
    static let day: Int64 = 86_400_000

    @Test func lengthsOfApplesPlansAreToldApartAndOthersAreNot() {
        #expect(BillingPeriod.of(milliseconds: 7 * Self.day) == .week)
        #expect(BillingPeriod.of(milliseconds: 28 * Self.day) == .month)  // February
        #expect(BillingPeriod.of(milliseconds: 31 * Self.day - 3_600_000) == .month)  // a daylight-saving hour short
        #expect(BillingPeriod.of(milliseconds: 92 * Self.day) == .threeMonths)
        #expect(BillingPeriod.of(milliseconds: 366 * Self.day) == .year)
        #expect(BillingPeriod.of(milliseconds: 5 * 60_000) == nil)  // Sandbox's accelerated month
        #expect(BillingPeriod.of(milliseconds: 45 * Self.day) == nil)
        #expect(BillingPeriod.of(milliseconds: 0) == nil)
        #expect(BillingPeriod.of(milliseconds: -Self.day) == nil)
    }

    @Test func pricesAreMadeMonthlyAndRoundedToTheNearestUnit() {
        #expect(BillingPeriod.year.monthly(39_990) == 3_333)  // 3,332.5 rounds up
        #expect(BillingPeriod.week.monthly(990) == 4_290)  // 990 x 52 / 12
        #expect(BillingPeriod.month.monthly(4_990) == 4_990)
        #expect(BillingPeriod.sixMonths.monthly(0) == 0)
    }
}

/// FigureInterval: days, ISO weeks and calendar months in UTC, and a bounded list of them.
struct FigureIntervalTests {
    static let day: Int64 = 86_400_000

    @Test func intervalsStartOnMidnightMondaysAndFirstsOfMonths() {
        let leapDay = Int64(19_782)  // 2024-02-29, a Thursday
        #expect(FigureInterval.day(of: leapDay * Self.day + 1) == leapDay)
        #expect(FigureInterval.day(of: -1) == -1)  // the last millisecond of 1969
        #expect(FigureInterval.week.firstDay(holding: leapDay) == leapDay - 3)  // Monday 2024-02-26
        #expect(FigureInterval.month.firstDay(holding: leapDay) == leapDay - 28)  // 2024-02-01
        #expect(FigureInterval.month.nextFirstDay(after: leapDay - 28) == leapDay + 1)  // 2024-03-01
        #expect(FigureInterval.day.firstDay(holding: leapDay) == leapDay)
        #expect(FigureInterval.date(ofDay: leapDay) == "2024-02-29")
        #expect(FigureInterval.day(ofDate: "2024-02-29") == leapDay)
        #expect(FigureInterval.day(ofDate: "2023-02-29") == nil)
        #expect(FigureInterval.day(ofDate: "2024-2-29") == nil)
        #expect(FigureInterval.instant("2024-02-29") == leapDay * Self.day)
        #expect(FigureInterval.instant("1709164800001") == 1_709_164_800_001)
        #expect(FigureInterval.instant("-1") == nil && FigureInterval.instant("soon") == nil)
    }

    @Test func theIntervalsOfARangeAreListedUpToALimit() {
        let from = 19_782 * Self.day + 12 * 3_600_000
        #expect(FigureInterval.day.intervals(from: from, to: from + 2 * Self.day, limit: 10) == [19_782, 19_783, 19_784])
        #expect(FigureInterval.month.intervals(from: from, to: from + 40 * Self.day, limit: 10) == [19_754, 19_783, 19_814])
        #expect(FigureInterval.day.intervals(from: from, to: from + 20 * Self.day, limit: 10) == nil)
        #expect(FigureInterval.week.intervals(from: from, to: from, limit: 10) == [])
    }
}

/// HTTPBasicCredentials: the password a browser sends for a page that asked for one.
struct HTTPBasicCredentialsTests {
    @Test func thePasswordIsWhatFollowsTheFirstColon() {
        #expect(HTTPBasicCredentials.password(inAuthorization: "Basic b3BlcmF0b3I6czNjcjN0OnRvbw==") == "s3cr3t:too")
        #expect(HTTPBasicCredentials.password(inAuthorization: "basic OnRva2Vu") == "token")  // no user name
        #expect(HTTPBasicCredentials.password(inAuthorization: "Bearer b3BlcmF0b3I6czNjcjN0") == nil)
        #expect(HTTPBasicCredentials.password(inAuthorization: "Basic bm8gY29sb24=") == nil)  // "no colon"
        #expect(HTTPBasicCredentials.password(inAuthorization: "Basic !!!") == nil)
        #expect(HTTPBasicCredentials.password(inAuthorization: "Basic ") == nil)
    }
}
