/// The rows a store's figure queries give (over StoredFacts' columns), and what the
/// figures make of them: totals per status, monthly recurring revenue, flows per
/// interval. The store runs the SQL; the sums, the rounding and the intervals are here,
/// once, for the JSON answers and the dashboard alike.

/// How many subscriptions of a product are in a status.
public struct SubscriptionCount: Sendable, Equatable {
    public let productID: String
    public let status: SubscriptionState.Status
    public let count: Int64

    public init(productID: String, status: SubscriptionState.Status, count: Int64) {
        (self.productID, self.status, self.count) = (productID, status, count)
    }

    /// The statuses figures list, in this order.
    public static let statuses: [SubscriptionState.Status] = [.active, .gracePeriod, .billingRetry, .expired, .revoked]

    /// The statuses `entitled` counts: active, or in a grace period.
    public static let entitledStatuses: [SubscriptionState.Status] = [.active, .gracePeriod]

    /// How many of `counts` are in `status` (nil: entitled, entitledStatuses).
    public static func total(_ counts: [SubscriptionCount], _ status: SubscriptionState.Status?) -> Int64 {
        total(counts, in: status.map { [$0] } ?? entitledStatuses)
    }

    /// How many of `counts` are in one of `statuses`.
    public static func total(_ counts: [SubscriptionCount], in statuses: [SubscriptionState.Status]) -> Int64 {
        counts.filter { statuses.contains($0.status) }.reduce(0) { $0.clampedAdding($1.count) }
    }

    /// The name of the entitled total among figureNames.
    public static let entitledName = "entitled"

    /// The names the answers give the totals of `counts`: every status, then `entitled`.
    public static let figureNames = statuses.map(\.name) + [entitledName]

    /// The totals of `counts` by figureNames' order.
    public static func figures(_ counts: [SubscriptionCount]) -> [Int64] {
        statuses.map { total(counts, $0) } + [total(counts, nil)]
    }
}

/// Active subscriptions of one currency whose standing periods last as long.
public struct PriceGroup: Sendable, Equatable {
    public let currency: String
    public let periodMilliseconds: Int64
    public let subscriptions: Int64
    /// Their prices added, in milliunits of the currency (a period without a price adds 0).
    public let priceSum: Int64

    public init(currency: String, periodMilliseconds: Int64, subscriptions: Int64, priceSum: Int64) {
        (self.currency, self.periodMilliseconds, self.subscriptions, self.priceSum) = (currency, periodMilliseconds, subscriptions, priceSum)
    }
}

/// One currency's monthly recurring revenue: for each billing period its prices added,
/// made monthly and rounded (BillingPeriod.monthly), then added up.
public struct MRRLine: Sendable, Equatable {
    public let currency: String
    public let milliunits: Int64
    public let subscriptions: Int64
    /// Subscriptions per billing period, in BillingPeriod's order.
    public let periods: [(period: BillingPeriod, subscriptions: Int64)]

    public static func == (a: MRRLine, b: MRRLine) -> Bool {
        a.currency == b.currency && a.milliunits == b.milliunits && a.subscriptions == b.subscriptions
            && a.periods.map(\.period) == b.periods.map(\.period) && a.periods.map(\.subscriptions) == b.periods.map(\.subscriptions)
    }

    /// The lines of `groups` by currency, and the subscriptions whose periods have no
    /// plan's length (with their currencies), which bring no revenue.
    public static func lines(_ groups: [PriceGroup]) -> (lines: [MRRLine], unclassified: Int64, unclassifiedCurrencies: [String]) {
        var sums: [String: [BillingPeriod: (subscriptions: Int64, prices: Int64)]] = [:]
        var unclassified: Int64 = 0
        var unclassifiedCurrencies: Set<String> = []
        for group in groups {
            guard let period = BillingPeriod.of(milliseconds: group.periodMilliseconds) else {
                unclassified = unclassified.clampedAdding(group.subscriptions)
                unclassifiedCurrencies.insert(group.currency)
                continue
            }
            let earlier = sums[group.currency, default: [:]][period] ?? (0, 0)
            sums[group.currency, default: [:]][period] = (earlier.subscriptions.clampedAdding(group.subscriptions),
                                                           earlier.prices.clampedAdding(group.priceSum))
        }
        let lines = sums.sorted { $0.key < $1.key }.map { currency, periods in
            MRRLine(currency: currency, milliunits: periods.reduce(0) { $0.clampedAdding($1.key.monthly($1.value.prices)) },
                    subscriptions: periods.values.reduce(0) { $0.clampedAdding($1.subscriptions) },
                    periods: BillingPeriod.allCases.compactMap { period in periods[period].map { (period, $0.subscriptions) } })
        }
        return (lines, unclassified, unclassifiedCurrencies.sorted())
    }
}

/// What happened on one day (since 1970-01-01 UTC), as a store's flows query gives it.
public struct DayFlows: Sendable {
    /// Periods that began, by how each follows the subscription's period before it.
    public struct Began: Sendable, Equatable {
        public var new: Int64 = 0, trialStarts: Int64 = 0, renewals: Int64 = 0, trialConversions: Int64 = 0
        public var recoveries: Int64 = 0, reactivations: Int64 = 0

        public init() {}

        /// From counts in the order of IntervalFlows.beganNames (a missing one is 0).
        public init(counts: [Int64]) {
            let count = { (place: Int) in place < counts.count ? counts[place] : 0 }
            (new, trialStarts, renewals) = (count(0), count(1), count(2))
            (trialConversions, recoveries, reactivations) = (count(3), count(4), count(5))
        }

        /// The counts in the order of IntervalFlows.beganNames.
        public var counts: [Int64] { [new, trialStarts, renewals, trialConversions, recoveries, reactivations] }

        static func + (a: Began, b: Began) -> Began {
            var sum = a
            sum.new = sum.new.clampedAdding(b.new)
            sum.trialStarts = sum.trialStarts.clampedAdding(b.trialStarts)
            sum.renewals = sum.renewals.clampedAdding(b.renewals)
            sum.trialConversions = sum.trialConversions.clampedAdding(b.trialConversions)
            sum.recoveries = sum.recoveries.clampedAdding(b.recoveries)
            sum.reactivations = sum.reactivations.clampedAdding(b.reactivations)
            return sum
        }
    }

    public let day: Int64
    public var began = Began()
    /// Periods refunded or revoked: currency, how many, the amount refunded in milliunits.
    public var refunds: [(currency: String, count: Int64, amount: Int64)] = []
    /// Subscriptions expired whose standing period ended that day: expiration intent (0: none), how many.
    public var churned: [(intent: Int64, count: Int64)] = []

    public init(day: Int64) { self.day = day }
}

/// The flows of one interval: its days added up.
public struct IntervalFlows: Sendable {
    public let startMilliseconds: Int64
    public let began: DayFlows.Began
    public let refundCount: Int64
    /// Refunded milliunits per currency, by currency.
    public let refundAmounts: [(currency: String, milliunits: Int64)]
    /// Apple's expirationIntent: 1 the customer cancelled, 2 a billing error; the rest other.
    public let churnedVoluntary, churnedBilling, churnedOther: Int64

    /// Every interval of `firstDays` (FigureInterval.intervals), with the days of `days` it holds.
    public static func make(_ days: [DayFlows], intervals firstDays: [Int64], by interval: FigureInterval) -> [IntervalFlows] {
        var byInterval: [Int64: [DayFlows]] = [:]
        for day in days { byInterval[interval.firstDay(holding: day.day), default: []].append(day) }
        return firstDays.map { first in
            let days = byInterval[first] ?? []
            let refunds = days.flatMap(\.refunds)
            let churned = churned(on: days)
            return IntervalFlows(
                startMilliseconds: first * FigureInterval.dayMilliseconds,
                began: days.reduce(DayFlows.Began()) { $0 + $1.began },
                refundCount: Self.refunds(in: .all, on: days),
                refundAmounts: Set(refunds.map(\.currency)).sorted().map { currency in
                    (currency, refunds.filter { $0.currency == currency }.reduce(0) { $0.clampedAdding($1.amount) })
                },
                churnedVoluntary: churned[0], churnedBilling: churned[1], churnedOther: churned[2])
        }
    }

    /// The periods of `days` refunded or revoked in `currencies` (the days group those without a
    /// currency under "").
    public static func refunds(in currencies: SubscriptionList.Currencies, on days: [DayFlows]) -> Int64 {
        days.flatMap(\.refunds).filter { currencies.holds($0.currency) }.reduce(0) { $0.clampedAdding($1.count) }
    }

    /// The periods of `days` that began as `name` says (one of beganNames); nil for another name.
    public static func began(_ name: String, on days: [DayFlows]) -> Int64? {
        guard let place = beganNames.firstIndex(of: name) else { return nil }
        return days.reduce(DayFlows.Began()) { $0 + $1.began }.counts[place]
    }

    /// The subscriptions churned on `days`, by reason (`churnedNames`' order, ChurnReason's).
    public static func churned(on days: [DayFlows]) -> [Int64] {
        let churned = days.flatMap(\.churned)
        return ChurnReason.allCases.map { reason in
            churned.filter { ChurnReason(intent: $0.intent) == reason }.reduce(0) { $0.clampedAdding($1.count) }
        }
    }
}

/// Why a subscription churned, as the figures tell it apart: Apple's expirationIntent 1 (the
/// customer cancelled), 2 (a billing error), and any other or none.
public enum ChurnReason: String, CaseIterable, Sendable {
    case voluntary, billing, other

    /// The expirationIntent each reason but `other` stands for.
    public static let intents: [(reason: ChurnReason, intent: Int64)] = [(.voluntary, 1), (.billing, 2)]

    public init(intent: Int64) {
        self = Self.intents.first { $0.intent == intent }?.reason ?? .other
    }

    /// The expirationIntent it stands for; nil for `other` (any but those of `intents`).
    public var intent: Int64? { Self.intents.first { $0.reason == self }?.intent }
}
