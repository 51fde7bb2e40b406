import Testing
@testable import ReceiptCore

/// SubscriptionList: which statuses a count's name stands for, the pages and the answer of
/// `GET /v1/subscriptions`.
struct SubscriptionListTests {
    @Test func eachCountsNameStandsForItsStatusesAndEntitledForActiveAndGrace() {
        for status in SubscriptionCount.statuses {
            #expect(SubscriptionList.statuses(named: status.name) == [status])
        }
        #expect(SubscriptionList.statuses(named: "entitled") == [.active, .gracePeriod])
        #expect(SubscriptionList.statuses(named: "paying") == nil && SubscriptionList.statuses(named: "") == nil)
        #expect(SubscriptionCount.figureNames.allSatisfy { SubscriptionList.statuses(named: $0) != nil })
        // The entitled list is the count's: a list of it holds as many as the total says.
        let counts = [SubscriptionCount(productID: "p", status: .active, count: 2),
                      SubscriptionCount(productID: "p", status: .gracePeriod, count: 3),
                      SubscriptionCount(productID: "p", status: .billingRetry, count: 7)]
        #expect(SubscriptionCount.total(counts, nil) == 5
                && SubscriptionCount.total(counts, in: SubscriptionList.statuses(named: "entitled")!) == 5)
    }

    @Test func aPageKeepsTheLimitAndNamesTheNextOnlyWhenMoreFollowAtItsInstant() {
        let rows = (1...4).map { SubscriptionList.Member(originalTransactionID: "\($0)", productID: "p") }
        let at: Int64 = 1_796_636_986_000
        let full = SubscriptionList.page(rows, limit: 3, now: at)
        #expect(full.members.map(\.originalTransactionID) == ["1", "2", "3"] && full.nextCursor == .init(now: at, after: "3"))
        #expect(full.nextCursor?.text == "1796636986000-3")
        let last = SubscriptionList.page(Array(rows.prefix(3)), limit: 3, now: at)
        #expect(last.members.count == 3 && last.nextCursor == nil)
        #expect(SubscriptionList.page([], limit: 3, now: at).nextCursor == nil)
        // A cursor reads back as written; its instant within the figures' instants, its id visible ASCII.
        #expect(SubscriptionList.Cursor("1796636986000-2000000000000003") == .init(now: at, after: "2000000000000003"))
        #expect(SubscriptionList.Cursor("1796636986000-a-b") == .init(now: at, after: "a-b"))
        for refused in ["", "2000000000000003", "-1", "1796636986000-", "1796636986000-a b", "+1796636986000-1", "5-1",
                        "1796636986000-" + String(repeating: "1", count: 65), "99999999999999999999-1"] {
            #expect(SubscriptionList.Cursor(refused) == nil, "\(refused)")
        }
    }

    @Test func theAnswerNamesWhatWasAskedAndEachSubscription() {
        let members = [SubscriptionList.Member(originalTransactionID: "7", productID: "com.example.\"q\"")]
        let json = String(decoding: SubscriptionList.json(members, counted: .status(name: "grace_period", statuses: [.gracePeriod]),
                                                          at: 5, from: 1, to: 2, product: "p", nextCursor: .init(now: 5, after: "7")),
                          as: UTF8.self)
        #expect(json == #"{"at_ms":5,"status":"grace_period","product_id":"p","subscriptions":[{"original_transaction_id":"7","product_id":"com.example.\"q\""}],"next_cursor":"5-7"}"#)
        let churned = String(decoding: SubscriptionList.json([], counted: .churned(.billing), at: 9, from: 1, to: 2,
                                                             product: nil, nextCursor: nil), as: UTF8.self)
        #expect(churned == #"{"at_ms":9,"status":"expired","churned":"billing","from_ms":1,"to_ms":2,"subscriptions":[]}"#)
        let bare = String(decoding: SubscriptionList.json([], counted: .status(name: "active", statuses: [.active]), at: 0, from: 1,
                                                          to: 2, product: nil, nextCursor: nil), as: UTF8.self)
        #expect(bare == #"{"at_ms":0,"status":"active","subscriptions":[]}"#)
    }
}

/// ChurnReason: the one rule that sorts an expirationIntent into the churned counts.
struct ChurnReasonTests {
    @Test func intentsOneAndTwoAreVoluntaryAndBillingAndAnyOtherIsOther() {
        #expect(ChurnReason(intent: 1) == .voluntary && ChurnReason(intent: 2) == .billing)
        #expect([0, 3, 4, 5, -1].allSatisfy { ChurnReason(intent: $0) == .other })
        #expect(ChurnReason.voluntary.intent == 1 && ChurnReason.billing.intent == 2 && ChurnReason.other.intent == nil)
        #expect(IntervalFlows.churnedNames == ["voluntary", "billing", "other"])
        var day = DayFlows(day: 3)
        day.churned = [(1, 2), (2, 5), (0, 7), (4, 1)]
        #expect(IntervalFlows.churned(on: [day]) == [2, 5, 8])
    }
}

/// SubscriptionList.Began: a list of the periods behind a count of the flows' (or the rates') periods that began.
struct BeganListTests {
    @Test func aListOfPeriodsIsKeyedByEachPeriodsIdAndCountedAsTheFlowsCountIt() {
        #expect(SubscriptionList.Began(name: "renewals")?.isFlowsCount == true && SubscriptionList.Began(name: "expired") == nil)
        // The rates' counts the flows lack are periods that began too, counted by the rates alone.
        #expect(SubscriptionList.Began.names == IntervalFlows.beganNames
                + ["paid_periods", "refunded_paid_periods", "new_paying", "converted_trials"])
        let converted = SubscriptionList.Counted.began(SubscriptionList.Began(name: "converted_trials")!)
        #expect(SubscriptionList.Began(name: "converted_trials")?.isFlowsCount == false && converted.count(on: []) == nil)
        let days: [(day: Int64, counts: [Int64])] = [(1, [9, 1, 4, 3, 2, 1]), (2, [5, 0, 2, 2, 1, 1]), (3, [1])]
        #expect(converted.count(onRates: days) == 2)
        #expect(SubscriptionList.Counted.began(SubscriptionList.Began(name: "new")!).count(onRates: days) == 6)
        #expect(SubscriptionList.Counted.began(SubscriptionList.Began(name: "renewals")!).count(onRates: days) == nil)
        let period = SubscriptionList.Member(originalTransactionID: "10", productID: "p",
                                             period: .init(date: 1_700_000_000_000, transactionID: "12"))
        #expect(period.listedID == "12" && period.position == "1700000000000-12")
        let subscription = SubscriptionList.Member(originalTransactionID: "10", productID: "p")
        #expect(subscription.listedID == "10" && subscription.position == "10")
        let page = SubscriptionList.page([period, subscription], limit: 1, now: 7)
        #expect(page.nextCursor == .init(now: 7, after: "1700000000000-12"))
        #expect(SubscriptionList.PeriodPosition("1700000000000-12-3") == .init(date: 1_700_000_000_000, transactionID: "12-3"))
        #expect(["12", "-12", "x-12", "1700000000000-", "99999999999999999999-1"].allSatisfy { SubscriptionList.PeriodPosition($0) == nil })
        // No instant judges periods: the answer names none.
        let json = String(decoding: SubscriptionList.json([period], counted: .began(SubscriptionList.Began(name: "renewals")!),
                                                          at: 9, from: 1, to: 2, product: nil, nextCursor: nil), as: UTF8.self)
        #expect(json == #"{"began":"renewals","from_ms":1,"to_ms":2,"subscriptions":[{"original_transaction_id":"10","transaction_id":"12","product_id":"p"}]}"#)
        var first = DayFlows(day: 1), second = DayFlows(day: 2)
        (first.began.new, first.began.renewals, second.began.renewals) = (1, 2, 3)
        #expect(IntervalFlows.began("renewals", on: [first, second]) == 5 && IntervalFlows.began("new", on: [first, second]) == 1)
        #expect(IntervalFlows.began("churned", on: [first]) == nil)
    }
}

/// SubscriptionList.Currencies and Counted: the periods behind a count of refunds or a revenue line's periods, and what each kind of list names.
struct RefundsListTests {
    typealias Currencies = SubscriptionList.Currencies
    typealias Counted = SubscriptionList.Counted

    @Test func refundsAreOfEveryCurrencyOfNoneOrOfOneNamedByItsCode() {
        #expect(Currencies(name: "all")?.currency == nil && Currencies(name: "all") == Currencies.all)
        #expect(Currencies(name: "none")?.currency == "" && Currencies(name: "EUR")?.currency == "EUR")
        #expect(["all", "none", "EUR"].allSatisfy { Currencies(name: $0)?.name == $0 })
        // ALL is a currency (the Albanian lek); all, every currency.
        #expect(Currencies(name: "ALL")?.currency == "ALL")
        for refused in ["", "eur", "EURO", "EU", "E1R", "All", "NONE ", "É€R", "US D"] {
            #expect(Currencies(name: refused) == nil, "\(refused)")
        }
        // A line of the figures links by its currency as grouped ("" for none); one the API cannot name, nothing.
        #expect(Currencies(currency: "")?.name == "none" && Currencies(currency: "USD")?.name == "USD")
        #expect(Currencies(currency: "all") == nil && Currencies(currency: "none") == nil && Currencies(currency: "usd") == nil)
    }

    @Test func aRefundsCountIsTheFlowsRefundsOfItsCurrencyOrOfAll() {
        var first = DayFlows(day: 1), second = DayFlows(day: 2)
        first.refunds = [("EUR", 2, 9_990), ("USD", 1, 4_990)]
        second.refunds = [("USD", 4, 1_000), ("", 8, 0)]
        let counted = { (name: String) in Counted.refunds(Currencies(name: name)!) }
        #expect(counted("all").count(on: [first, second]) == 15 && counted("none").count(on: [first, second]) == 8)
        #expect(counted("USD").count(on: [first, second]) == 5 && counted("EUR").count(on: [first, second]) == 2)
        #expect(counted("JPY").count(on: [first, second]) == 0)
        #expect(IntervalFlows.make([first, second], intervals: [0], by: .month).first?.refundCount == 15)
        // The other counts of the flows are the flows' own; a status's is the subscriptions figure's.
        (first.began.renewals, second.began.renewals) = (3, 4)
        first.churned = [(1, 2), (2, 5)]
        #expect(Counted.began(SubscriptionList.Began(name: "renewals")!).count(on: [first, second]) == 7)
        #expect(Counted.churned(.billing).count(on: [first, second]) == 5)
        #expect(Counted.status(name: "active", statuses: [.active]).count(on: [first, second]) == nil)
    }

    @Test func anMRRLinesSubscriptionsAreTheActiveOfItsCurrencyOrOfAny() throws {
        let lines = MRRLine.lines([PriceGroup(currency: "EUR", periodMilliseconds: 30 * 86_400_000, subscriptions: 3, priceSum: 2_970),
                                   PriceGroup(currency: "USD", periodMilliseconds: 365 * 86_400_000, subscriptions: 2, priceSum: 99_980),
                                   PriceGroup(currency: "", periodMilliseconds: 7 * 86_400_000, subscriptions: 4, priceSum: 0),
                                   PriceGroup(currency: "EUR", periodMilliseconds: 3 * 60_000, subscriptions: 6, priceSum: 990)]).lines
        let counted = { (name: String) in Counted.mrr(Currencies(name: name)!) }
        // A period of no plan's length (the 6 of 3 minutes) counts in no line.
        #expect(counted("EUR").count(onMRR: lines) == 3 && counted("none").count(onMRR: lines) == 4)
        #expect(counted("all").count(onMRR: lines) == 9 && counted("JPY").count(onMRR: lines) == 0)
        let mrr = counted("USD")
        #expect(!mrr.listsPeriods && !mrr.isRanged && !mrr.isAtMidnight && mrr.statusName == "active" && mrr.statuses == [.active])
        #expect(mrr.parameter.map { [$0.key, $0.value] } == ["mrr", "USD"] && mrr.count(on: []) == nil && mrr.count(onRevenue: []) == nil)
        #expect(Counted.bought(.all).count(onMRR: lines) == nil)
        #expect(try Counted(status: nil, churned: nil, began: nil, refunds: nil, mrr: "EUR") == counted("EUR"))
        #expect(try Counted(status: "active", churned: nil, began: nil, refunds: nil, mrr: "none") == counted("none"))
        for (status, active, bought, mrr, said) in [("expired", nil, nil, "EUR", "no status but active"),
                                                    (nil, "paid", nil, "EUR", "each come alone"), (nil, nil, "EUR", "EUR", "each come alone"),
                                                    (nil, nil, nil, "Eur", "mrr is all")] {
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(status: status, churned: nil, began: nil, refunds: nil, active: active, bought: bought, mrr: mrr)
                Issue.record("\(mrr) was taken")
            } catch {
                #expect(error.description.contains(said), "\(error.description)")
            }
        }
        // The condition of a plan's length in SQL holds the same lengths as BillingPeriod.of: here, at each bound.
        let condition = BillingPeriod.sqlCondition(length: "L")
        let bounds = condition.split(separator: " ").compactMap { Int64($0.trimmingCharacters(in: ["(", ")"])) }
        #expect(bounds.count == 2 * BillingPeriod.allCases.count)
        let pairs = stride(from: 0, to: bounds.count, by: 2).map { (bounds[$0], bounds[$0 + 1]) }
        #expect(Set(pairs.compactMap { BillingPeriod.of(milliseconds: $0.0) }) == Set(BillingPeriod.allCases))
        for (low, high) in pairs {
            #expect(BillingPeriod.of(milliseconds: low) != nil && BillingPeriod.of(milliseconds: high) != nil)
            #expect(BillingPeriod.of(milliseconds: low - 1) == nil && BillingPeriod.of(milliseconds: high + 1) == nil)
            #expect(BillingPeriod.of(milliseconds: low) == BillingPeriod.of(milliseconds: high))
        }
    }

    @Test func aRevenueLinesPeriodsAreThoseThatBeganInItsCurrencyOrInAny() throws {
        var days = [DayRevenue(day: 1, currency: "EUR"), DayRevenue(day: 1, currency: ""), DayRevenue(day: 2, currency: "EUR"),
                    DayRevenue(day: 2, currency: "USD")]
        (days[0].began, days[1].began, days[2].began, days[3].began) = ((2, 9_980), (1, 0), (5, 24_950), (7, 6_930))
        days[3].refunded = (40, 1_000)
        let counted = { (name: String) in Counted.bought(Currencies(name: name)!) }
        #expect(counted("EUR").count(onRevenue: days) == 7 && counted("none").count(onRevenue: days) == 1)
        #expect(counted("all").count(onRevenue: days) == 15 && counted("JPY").count(onRevenue: days) == 0)
        // As the revenue's lines count them.
        #expect(IntervalRevenue.Line.sums(days).map(\.periods) == [1, 7, 7])
        // Periods are listed over a range, judged at no instant, and their count is the revenue's alone.
        let periods = counted("USD")
        #expect(periods.listsPeriods && periods.isRanged && periods.statusName == nil && periods.count(on: []) == nil)
        #expect(periods.parameter.map { [$0.key, $0.value] } == ["bought", "USD"])
        #expect(Counted.refunds(.all).count(onRevenue: days) == nil)
        // Each figure of a line links the list it counts or adds up; the net, a difference, none.
        let linked = IntervalRevenue.Line.figureNames.map { Counted.revenue(figureNamed: $0, currency: "EUR") }
        let eur = Currencies(name: "EUR")!
        #expect(linked == [.bought(eur), .refunds(eur), nil, .bought(eur), .refunds(eur)])
        #expect(Counted.revenue(figureNamed: "periods", currency: "") == .bought(Currencies(name: "none")!))
        #expect(Counted.revenue(figureNamed: "periods", currency: "eur") == nil && Counted.revenue(figureNamed: "new", currency: "EUR") == nil)
        #expect(try Counted(status: nil, churned: nil, began: nil, refunds: nil, bought: "none") == .bought(Currencies(name: "none")!))
        for (asked, said) in [((nil as String?, "new" as String?, "EUR" as String?), "each come alone"),
                              (("active", nil, "EUR"), "each come alone"), ((nil, nil, "eur"), "bought is all")] {
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(status: asked.0, churned: nil, began: asked.1, refunds: nil, bought: asked.2)
                Issue.record("\(asked) was taken")
            } catch {
                #expect(error.description.contains(said), "\(error.description)")
            }
        }
    }

    @Test func aRequestNamesOneCountAndAWrongNameIsRefusedByWhatItMustBe() throws {
        #expect(try Counted(status: "entitled", churned: nil, began: nil, refunds: nil)
                == .status(name: "entitled", statuses: [.active, .gracePeriod]))
        #expect(try Counted(status: "expired", churned: "billing", began: nil, refunds: nil) == .churned(.billing))
        #expect(try Counted(status: nil, churned: nil, began: "renewals", refunds: nil) == .began(SubscriptionList.Began(name: "renewals")!))
        #expect(try Counted(status: nil, churned: nil, began: nil, refunds: "none") == .refunds(Currencies(name: "none")!))
        let refusals: [((String?, String?, String?, String?), String)] = [
            ((nil, nil, nil, nil), "status is one of"), (("paying", nil, nil, nil), "status is one of"),
            (("active", "billing", nil, nil), "with status=expired"), (("expired", "bored", nil, nil), "churned is one of"),
            (("active", nil, "new", nil), "without status"), ((nil, "other", "new", nil), "without status"),
            ((nil, nil, "new", "all"), "each come alone"), ((nil, nil, "nothing", nil), "began is one of"),
            ((nil, nil, nil, "All"), "ALL is the Albanian lek"),
        ]
        #expect(try Counted(status: nil, churned: nil, began: nil, refunds: nil, active: "paid") == .standing(trials: false))
        // Each list's query parameters name it again, as a link writes them.
        for counted in [Counted.status(named: "entitled")!, .churned(.other), .began(SubscriptionList.Began(name: "new")!),
                        .refunds(Currencies(name: "none")!), .standing(trials: true), .bought(Currencies(name: "all")!),
                        .mrr(Currencies(name: "EUR")!), .retained(periods: 12), .paying(Currencies(name: "USD")!),
                        .paid(Currencies(name: "all")!)] {
            let query = Dictionary(uniqueKeysWithValues: counted.queryParameters.map { ($0.key, $0.value) })
            #expect(try Counted(status: query["status"], churned: query["churned"], began: query["began"], refunds: query["refunds"],
                                active: query["active"], bought: query["bought"], mrr: query["mrr"], retained: query["retained"],
                                paying: query["paying"], paid: query["paid"]) == counted)
        }
        #expect(try Counted(status: "active", churned: nil, began: nil, refunds: nil, active: "trials") == .standing(trials: true))
        for (status, active, said) in [("expired", "trials", "each come alone, without churned"), (nil, "free", "active is one of trials, paid")] {
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(status: status, churned: nil, began: nil, refunds: nil, active: active)
                Issue.record("\(active) was taken")
            } catch {
                #expect(error.description.contains(said), "\(error.description)")
            }
        }
        for ((status, churned, began, refunds), said) in refusals {
            #expect(throws: SubscriptionList.Refusal.self) { try Counted(status: status, churned: churned, began: began, refunds: refunds) }
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(status: status, churned: churned, began: began, refunds: refunds)
            } catch {
                #expect(error.description.contains(said), "\(error.description)")
            }
        }
    }

    @Test func eachListNamesItsStatusItsFlowsCountAndWhetherItListsPeriods() throws {
        let refunds = Counted.refunds(Currencies(name: "USD")!)
        #expect(refunds.listsPeriods && refunds.isRanged && refunds.statusName == nil && refunds.statuses.isEmpty)
        #expect(refunds.parameter.map { [$0.key, $0.value] } == ["refunds", "USD"])
        let churned = Counted.churned(.voluntary)
        #expect(!churned.listsPeriods && churned.isRanged && churned.statusName == "expired" && churned.statuses == [.expired])
        #expect(churned.parameter.map { [$0.key, $0.value] } == ["churned", "voluntary"])
        let entitled = Counted.status(named: "entitled")
        #expect(entitled == .status(name: "entitled", statuses: [.active, .gracePeriod]) && Counted.status(named: "paying") == nil)
        #expect(entitled?.listsPeriods == false && entitled?.isRanged == false && entitled?.statusName == "entitled")
        #expect(entitled?.parameter == nil)
        // The active's trials and paid at a midnight: active subscriptions, named beside the status.
        let trials = Counted.standing(trials: true)
        #expect(!trials.listsPeriods && !trials.isRanged && trials.isAtMidnight && trials.statusName == "active")
        #expect(trials.statuses == [.active] && trials.parameter.map { [$0.key, $0.value] } == ["active", "trials"])
        #expect(Counted.standing(trials: false).parameter?.value == "paid" && !Counted.churned(.billing).isAtMidnight)
        #expect(Counted.active(countNamed: "active") == Counted.status(named: "active")
                && Counted.active(countNamed: "active_trials") == trials
                && Counted.active(countNamed: "active_paid") == .standing(trials: false) && Counted.active(countNamed: "paid") == nil)
        // At a midnight: one asked must be one, and by default the last one is.
        let day = FigureInterval.dayMilliseconds
        #expect(try trials.judgedInstant(3 * day + 5, given: false) == 3 * day && (try trials.judgedInstant(3 * day, given: true)) == 3 * day)
        #expect(throws: SubscriptionList.Refusal.self) { try trials.judgedInstant(3 * day + 5, given: true) }
        #expect(try Counted.churned(.other).judgedInstant(3 * day + 5, given: true) == 3 * day + 5)
        let stood = ActiveStanding(active: 7, trials: 2)
        #expect(trials.count(in: stood) == 2 && Counted.standing(trials: false).count(in: stood) == 5)
        #expect(Counted.status(named: "active")?.count(in: stood) == nil && trials.count(on: []) == nil)
        let trialsJSON = String(decoding: SubscriptionList.json([], counted: trials, at: 86_400_000, from: 1, to: 2, product: nil,
                                                                nextCursor: nil), as: UTF8.self)
        #expect(trialsJSON == #"{"at_ms":86400000,"status":"active","active":"trials","subscriptions":[]}"#)
        let period = SubscriptionList.Member(originalTransactionID: "10", productID: "p", period: .init(date: 5, transactionID: "12"),
                                             amount: .init(milliunits: 4_990, currency: "USD"))
        // A period without a currency names none beside its amount.
        let bare = SubscriptionList.Member(originalTransactionID: "11", productID: "p", period: .init(date: 6, transactionID: "13"),
                                           amount: .init(milliunits: 0, currency: ""))
        let json = String(decoding: SubscriptionList.json([period, bare], counted: refunds, at: 9, from: 3, to: 4, product: "p",
                                                          nextCursor: .init(now: 9, after: bare.position)), as: UTF8.self)
        #expect(json == #"{"refunds":"USD","from_ms":3,"to_ms":4,"product_id":"p","subscriptions":[{"original_transaction_id":"10","transaction_id":"12","product_id":"p","amount_milliunits":4990,"currency":"USD"},{"original_transaction_id":"11","transaction_id":"13","product_id":"p","amount_milliunits":0}],"next_cursor":"9-6-13"}"#)
    }

    /// The figure a list names as its count's is the one whose count function answers for it: the
    /// page's count comes from that figure alone (SubscriptionListController.count).
    @Test func eachListIsCountedByTheFigureItNames() {
        let all = Currencies.all
        let lists: [Counted] = [Counted.status(named: "entitled")!, .churned(.voluntary), .refunds(all), .bought(all), .mrr(all),
                                .standing(trials: true), .standing(trials: false), .retained(periods: 1), .retained(periods: 120),
                                .paying(all), .paying(Currencies(name: "EUR")!), .paid(all), .paid(Currencies(name: "none")!)]
            + SubscriptionList.Began.names.map { .began(SubscriptionList.Began(name: $0)!) } + MRRMove.allCases.map { .moved($0, all) }
        for counted in lists {
            let answers: [Counted.CountingFigure: Bool] = [
                .flows: counted.count(on: []) != nil, .rates: counted.count(onRates: []) != nil,
                .revenue: counted.count(onRevenue: []) != nil, .mrr: counted.count(onMRR: []) != nil,
                .active: counted.count(in: ActiveStanding()) != nil, .cohorts: counted.count(onCohorts: [], revenue: []) != nil,
                .mrrMovement: counted.count(onMovement: []) != nil,
                // The subscriptions figure counts statuses, which a status's list alone names without a parameter.
                .subscriptions: counted.parameter == nil,
            ]
            let figure = counted.countingFigure
            #expect(answers[figure] == true, "\(counted) is counted by \(figure), which does not answer for it")
            // Only a count of periods that began may be given by both the flows and the rates (a name both count).
            let others = answers.filter { $0.value && $0.key != figure && !([.flows, .rates] as Set).isSuperset(of: [$0.key, figure]) }
            #expect(others.isEmpty, "\(counted) is counted by \(figure), and \(others.keys) answer for it too")
        }
        #expect(Counted.began(SubscriptionList.Began(name: "new")!).countingFigure == .flows)
        #expect(Counted.began(SubscriptionList.Began(name: "paid_periods")!).countingFigure == .rates)
        #expect(Counted.churned(.billing).countingFigure == .flows && Counted.status(named: "active")?.countingFigure == .subscriptions)
    }

    /// A count of the MRR movement (`mrr_new=CURRENCY`, …) lists the moves of its kind that the midnights
    /// after its range's first day and up to its last show, over all products, as IntervalMRRMovement counts them.
    @Test func aCountOfTheMRRMovementListsTheMovesOfItsKind() throws {
        #expect(Counted.moveListKeys == ["mrr_new", "mrr_expansion", "mrr_contraction", "mrr_churned", "mrr_reactivation"])
        for (place, key) in Counted.moveListKeys.enumerated() {
            let counted = try Counted(query: [key: "EUR"])
            #expect(counted == .moved(MRRMove.allCases[place], Currencies(name: "EUR")!))
            #expect(counted.queryParameters.map { [$0.key, $0.value] } == [[key, "EUR"]])
            #expect(counted.listsPeriods && counted.listsMoves && counted.isRanged && !counted.takesProduct && counted.statusName == nil)
            #expect(counted.countingFigure == .mrrMovement)
        }
        #expect(Counted.paid(.all).takesProduct && !Counted.paid(.all).listsMoves && Counted.status(named: "active")!.takesProduct)
        for (query, said) in [(["mrr_new": "usd"], "mrr_new is all"), (["mrr_churned": "all", "paid": "all"], "each come alone"),
                              (["mrr_expansion": "all", "status": "active"], "each come alone"), (["mrr_gained": "all"], "status is one of")] {
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(query: query)
                Issue.record("\(query) was taken")
            } catch {
                #expect(error.description.contains(said), "\(error.description)")
            }
        }
        // Days 10 to 12: a range from day 10's noon to day 12's noon shows the moves of the midnights of days 11 and 12.
        let day = FigureInterval.dayMilliseconds
        let days = Counted.moveDays(from: 10 * day + day / 2, to: 12 * day + day / 2)
        #expect(days.after == 10 && days.through == 12)
        let totals = [MRRDayTotal(day: 10, currency: "EUR", move: .new, subscriptions: 5, twelfths: 60),
                      MRRDayTotal(day: 11, currency: "EUR", move: .new, subscriptions: 2, twelfths: 24),
                      MRRDayTotal(day: 12, currency: "USD", move: .new, subscriptions: 3, twelfths: 36),
                      MRRDayTotal(day: 12, currency: "EUR", move: .churned, subscriptions: 4, twelfths: -48),
                      MRRDayTotal(day: 13, currency: "EUR", move: .new, subscriptions: 7, twelfths: 84)]
        let movement = IntervalMRRMovement.make(totals, intervals: [days.after], readDays: [days.through])
        #expect(Counted.moved(.new, Currencies(name: "EUR")!).count(onMovement: movement) == 2)
        #expect(Counted.moved(.new, .all).count(onMovement: movement) == 5)
        #expect(Counted.moved(.churned, .all).count(onMovement: movement) == 4)
        #expect(Counted.moved(.reactivation, .all).count(onMovement: movement) == 0 && Counted.paid(.all).count(onMovement: movement) == nil)
        // A move is listed at its midnight, its position that midnight then its subscription's id.
        let move = SubscriptionList.Member(originalTransactionID: "10", productID: "p", amount: .init(milliunits: -4_990, currency: "EUR"),
                                           movedAt: 12 * day)
        #expect(move.position == "\(12 * day)-10" && move.listedID == "10")
        let json = String(decoding: SubscriptionList.json([move], counted: .moved(.churned, Currencies(name: "EUR")!), at: 9, from: 3,
                                                          to: 4, product: nil, nextCursor: nil), as: UTF8.self)
        #expect(json == #"{"mrr_churned":"EUR","from_ms":3,"to_ms":4,"subscriptions":[{"original_transaction_id":"10","moved_at_ms":1036800000,"product_id":"p","amount_milliunits":-4990,"currency":"EUR"}]}"#)
    }

    /// A cohort's `retained` (its n-th count) lists the first paid periods of the range whose subscription
    /// continued for at least n periods after it, as IntervalCohort counts them; n is 1 ... maxPeriods.
    @Test func aCohortsRetainedAreTheFirstPaidPeriodsThatContinuedForSoManyPeriods() throws {
        let days = [IntervalCohort.FirstPaidDay(day: 10, currency: "EUR", continued: 0, subscriptions: 4),
                    IntervalCohort.FirstPaidDay(day: 10, currency: "USD", continued: 2, subscriptions: 3),
                    IntervalCohort.FirstPaidDay(day: 20, currency: "EUR", continued: 5, subscriptions: 2)]
        let made = IntervalCohort.make(days, revenue: [], intervals: [0], by: .month, periods: 6)
        for periods in 1...6 {
            let counted = try Counted(status: nil, churned: nil, began: nil, refunds: nil, retained: String(periods))
            #expect(counted == .retained(periods: periods) && counted.count(onCohorts: days, revenue: []) == made[0].retained[periods - 1])
        }
        #expect(Counted.retained(periods: 3).count(onCohorts: days, revenue: []) == 2 && Counted.retained(periods: 1).count(on: []) == nil)
        let retained = Counted.retained(periods: 2)
        #expect(retained.listsPeriods && retained.isRanged && retained.statusName == nil && retained.countingFigure == .cohorts)
        #expect(retained.queryParameters.map { [$0.key, $0.value] } == [["retained", "2"]])
        for (value, status, said) in [("0", nil as String?, "retained is a whole number of periods from 1 to 120"),
                                      ("121", nil, "from 1 to 120"), ("+1", nil, "from 1 to 120"), ("0012", nil, "from 1 to 120"),
                                      ("1", "active", "each come alone")] {
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(status: status, churned: nil, began: nil, refunds: nil, retained: value)
                Issue.record("retained=\(value) was taken")
            } catch {
                #expect(error.description.contains(said), "\(value): \(error.description)")
            }
        }
    }

    /// A cohort's line of a currency: its `paying` lists the first paid periods in that currency, its
    /// `net_milliunits` the periods in that currency its subscriptions paid for, as many as the rows counted.
    @Test func aCohortsCurrencyLineListsItsPayingAndThePeriodsItPaidFor() throws {
        let firstPaid = [IntervalCohort.FirstPaidDay(day: 10, currency: "EUR", continued: 0, subscriptions: 4),
                         IntervalCohort.FirstPaidDay(day: 11, currency: "USD", continued: 2, subscriptions: 3),
                         IntervalCohort.FirstPaidDay(day: 12, currency: "", continued: 1, subscriptions: 1)]
        let revenue = [IntervalCohort.RevenueDay(day: 10, currency: "EUR", net: 9_000, periods: 5),
                       IntervalCohort.RevenueDay(day: 11, currency: "EUR", net: 1_000, periods: 1),
                       IntervalCohort.RevenueDay(day: 11, currency: "USD", net: 7_000, periods: 9)]
        let made = IntervalCohort.make(firstPaid, revenue: revenue, intervals: [0], by: .month, periods: 3)[0]
        for line in made.currencies where !line.currency.isEmpty {
            let currencies = Currencies(name: line.currency)!
            #expect(Counted.paying(currencies).count(onCohorts: firstPaid, revenue: revenue) == line.paying)
        }
        #expect(Counted.paying(Currencies(name: "none")!).count(onCohorts: firstPaid, revenue: revenue) == 1)
        #expect(Counted.paying(.all).count(onCohorts: firstPaid, revenue: revenue) == made.subscriptions)
        #expect(Counted.paid(Currencies(name: "EUR")!).count(onCohorts: firstPaid, revenue: revenue) == 6)
        #expect(Counted.paid(.all).count(onCohorts: firstPaid, revenue: revenue) == 15)
        #expect(Counted.paid(.all).count(onCohorts: [], revenue: []) == 0 && Counted.paid(.all).count(onRevenue: []) == nil)
        let paid = try Counted(status: nil, churned: nil, began: nil, refunds: nil, paid: "USD")
        #expect(paid == .paid(Currencies(name: "USD")!) && paid.listsPeriods && paid.isRanged && paid.countingFigure == .cohorts)
        #expect(try Counted(status: nil, churned: nil, began: nil, refunds: nil, paying: "none") == .paying(Currencies(name: "none")!))
        // A wrong value is said before the parameter beside it.
        for (paying, paid, said) in [("eur", nil as String?, "paying is all"), (nil, "EURO", "paid is all"),
                                     ("EUR", "EUR", "each come alone"), ("eur", "EUR", "paying is all")] {
            do throws(SubscriptionList.Refusal) {
                _ = try Counted(status: nil, churned: nil, began: nil, refunds: nil, paying: paying, paid: paid)
                Issue.record("\(String(describing: paying)) \(String(describing: paid)) was taken")
            } catch {
                #expect(error.description.contains(said), "\(error.description)")
            }
        }
        do throws(SubscriptionList.Refusal) {
            _ = try Counted(status: "expired", churned: nil, began: nil, refunds: nil, active: "free")
            Issue.record("active=free was taken")
        } catch {
            #expect(error.description.contains("active is one of"), "\(error.description)")
        }
        #expect(Counted.listKeys == ["active", "mrr", "began", "bought", "refunds", "retained", "paying", "paid", "mrr_new",
                                     "mrr_expansion", "mrr_contraction", "mrr_churned", "mrr_reactivation"])
    }

    /// A query's values are read by name: the same lists as the labelled init, whatever else the query holds.
    @Test func aQueryIsReadByNameAndALimitIsDigitsAlone() throws {
        #expect(try Counted(query: ["paid": "EUR", "limit": "5"]) == .paid(Currencies(name: "EUR")!))
        #expect(try Counted(query: ["status": "active", "mrr": "all"]) == .mrr(.all))
        #expect(try Counted(query: ["status": "expired", "churned": "billing"]) == .churned(.billing))
        #expect(throws: SubscriptionList.Refusal.self) { try Counted(query: ["retained": "2", "paying": "EUR"]) }
        #expect(throws: SubscriptionList.Refusal.self) { try Counted(query: ["limit": "5"]) }
        #expect(["1", "100", "1000", "0100"].map(SubscriptionList.limit(named:)) == [1, 100, 1000, 100])
        #expect(["", "0", "1001", "+5", "-1", "5.0", "10000"].allSatisfy { SubscriptionList.limit(named: $0) == nil })
        let day = IntervalCohort.FirstPaidDay(day: 0, currency: "EUR", continued: 2, subscriptions: 1)
        #expect(day.continued(atLeast: 1) && day.continued(atLeast: 2) && !day.continued(atLeast: 3))
    }
}
