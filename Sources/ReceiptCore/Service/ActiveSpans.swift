/// When a subscription was active, by the rule a past instant is judged by (its periods bought
/// by then, refunds known now): at an instant it is active when its standing period (the
/// latest-ending of its periods bought by then and not revoked, the earliest bought among
/// equals, then the lowest transaction id, as SubscriptionState keeps it) has begun and has not
/// ended; it counts under that period's product (and, for the figures, its currency, price, length
/// and whether it is a free trial: Standing). A revoked period never stands, so it never
/// makes a subscription active; a period without a purchase date counts as bought from the
/// start, one without an expiry never covers an instant.
///
/// The store keeps these spans as counts per day (a subscription's span adds one on the first
/// midnight it covers and takes it back on the first midnight after it), so that the number of
/// subscriptions active at any midnight is a sum over days, not a reading of every subscription.
public enum ActiveSpans {
    /// One auto-renewable period as the rule reads it, with what the figures read of it while it
    /// stands (its currency, price and whether it is a free trial).
    public struct Period: Sendable, Equatable {
        public let transactionID: String
        public let product: String
        /// nil: bought from the start.
        public let purchase: Int64?
        public let expires: Int64?
        public let revoked: Bool
        /// '' where the payload names none.
        public let currency: String
        /// In milliunits of `currency`; nil where the payload states none (MRR adds 0).
        public let price: Int64?
        /// Its offer is a free trial (offerDiscountType FREE_TRIAL), whatever its place in the subscription.
        public let freeTrial: Bool

        public init(transactionID: String, product: String, purchase: Int64?, expires: Int64?, revoked: Bool,
                    currency: String = "", price: Int64? = nil, freeTrial: Bool = false) {
            (self.transactionID, self.product, self.purchase) = (transactionID, product, purchase)
            (self.expires, self.revoked) = (expires, revoked)
            (self.currency, self.price, self.freeTrial) = (currency, price, freeTrial)
        }

        /// What the subscription counts under while this period stands.
        var standing: Standing {
            Standing(product: product, currency: currency, plan: Standing.plan(from: purchase, to: expires ?? 0),
                     price: price ?? 0, freeTrial: freeTrial)
        }
    }

    /// What a subscription counts under while a period stands: its product, and what the figures
    /// read of that period (MRR: its currency, price and plan; the active trials: whether it is a
    /// free trial). Renewals of one plan at one price stand alike, so their spans join.
    public struct Standing: Sendable, Hashable {
        public let product: String
        public let currency: String
        /// The plan BillingPeriod.of tells from the period's length (from its purchase, or from the
        /// start when undated, as MRR reads it, to its expiry); nil for a length no plan has.
        public let plan: BillingPeriod?
        public let price: Int64
        public let freeTrial: Bool

        public init(product: String, currency: String = "", plan: BillingPeriod? = nil, price: Int64 = 0, freeTrial: Bool = false) {
            (self.product, self.currency, self.plan, self.price, self.freeTrial) = (product, currency, plan, price, freeTrial)
        }

        /// The plan of a period from `purchase` (nil: the start) to `expires`; nil where the length
        /// is none's or passes 64 bits.
        static func plan(from purchase: Int64?, to expires: Int64) -> BillingPeriod? {
            let (length, overflow) = expires.subtractingReportingOverflow(purchase ?? 0)
            return overflow ? nil : BillingPeriod.of(milliseconds: length)
        }

        /// A length of the plan as MRRLine takes it (BillingPeriod.milliseconds).
        public var periodMilliseconds: Int64 { BillingPeriod.milliseconds(of: plan) }
    }

    /// [start, end) in epoch milliseconds (start nil: from the start), active under `standing`.
    public struct Span: Sendable, Equatable {
        public let start: Int64?
        public let end: Int64
        public let standing: Standing
        public var product: String { standing.product }

        /// The midnights it covers, as days [first, end) since 1970-01-01 UTC: from its first midnight
        /// (`earliestDay` at the earliest: no figure asks of one before 1970) to the first after it.
        public var days: Range<Int64> {
            let first = max(start.map(ActiveSpans.firstMidnight(atOrAfter:)) ?? ActiveSpans.earliestDay, ActiveSpans.earliestDay)
            return first..<max(first, ActiveSpans.firstMidnight(atOrAfter: end))
        }
    }

    /// A count a subscription adds to one day under what it stands as (+1 where a span begins, -1 after it ends).
    public struct DayChange: Sendable, Equatable, Hashable {
        public let day: Int64
        public let standing: Standing
        public let change: Int64
        public var product: String { standing.product }
    }

    /// The standing order: a later end first (none last), then no purchase date, the earlier
    /// purchase, the lower transaction id.
    private static func standsBefore(_ a: Period, _ b: Period) -> Bool {
        if a.expires != b.expires {
            guard let x = a.expires else { return false }
            guard let y = b.expires else { return true }
            return x > y
        }
        if a.purchase != b.purchase {
            guard let x = a.purchase else { return true }
            guard let y = b.purchase else { return false }
            return x < y
        }
        return a.transactionID < b.transactionID
    }

    /// The spans in which the subscription is active, in order; adjacent spans that stand as the same joined.
    /// The standing period changes only where a period is bought, so between two purchases the
    /// subscription is active from the first until its standing period ends or the next purchase.
    /// One pass over the periods in order of purchase (those bought only add to the candidates), so
    /// a long history costs its sort.
    public static func spans(of periods: [Period]) -> [Span] {
        // Undated first (bought from the start), then by purchase; the revoked never stand.
        let bought = periods.filter { !$0.revoked }.sorted {
            ($0.purchase == nil ? 0 : 1, $0.purchase ?? 0, $0.transactionID) < ($1.purchase == nil ? 0 : 1, $1.purchase ?? 0, $1.transactionID)
        }
        var spans: [Span] = []
        var standing: Period?
        var index = 0
        while index < bought.count {
            let start = bought[index].purchase
            // Every period bought at this instant joins the candidates at once.
            while index < bought.count, bought[index].purchase == start {
                if standing.map({ standsBefore(bought[index], $0) }) ?? true { standing = bought[index] }
                index += 1
            }
            let next = index < bought.count ? bought[index].purchase : nil
            guard let standing, let expires = standing.expires else { continue }
            let end = next.map { min($0, expires) } ?? expires
            guard start.map({ $0 < end }) ?? (end > .min) else { continue }  // empty: it covers no instant
            if let last = spans.last, last.standing == standing.standing, last.end == start {
                spans[spans.count - 1] = Span(start: last.start, end: end, standing: last.standing)
            } else {
                spans.append(Span(start: start, end: end, standing: standing.standing))
            }
        }
        return spans
    }

    /// The first day (since 1970-01-01 UTC) whose midnight is at or after `instant`. A figure asks
    /// of midnights from 1970 to 9999 only, so an instant outside `countedInstants` (a signed date
    /// may be any 64-bit number) is taken as its nearer end first, and no day arithmetic overflows.
    public static func firstMidnight(atOrAfter instant: Int64) -> Int64 {
        let instant = min(max(instant, countedInstants.lowerBound), countedInstants.upperBound)
        let day = FigureInterval.day(of: instant)
        return day * FigureInterval.dayMilliseconds == instant ? day : day + 1
    }

    /// From the day before 1970-01-01 to the day after the last instant a figure takes.
    static let countedInstants = (-FigureInterval.dayMilliseconds)...(FigureInterval.instants.upperBound + FigureInterval.dayMilliseconds)

    /// What the subscription adds to each day's count from `fromDay` on (nil: every day), so that
    /// the sum of the changes of the days up to D is 1 under a standing (a product, and what the
    /// figures read of the period) exactly when the subscription is active under it at D's midnight. A write that can change only the midnights
    /// from `fromDay` on changes the table by the difference of this before and after it.
    public static func dayChanges(of periods: [Period], fromDay: Int64?) -> [DayChange] {
        spans(of: periods).flatMap { span -> [DayChange] in
            let (start, end) = (max(span.days.lowerBound, fromDay ?? earliestDay), span.days.upperBound)
            guard start < end else { return [] }
            return [DayChange(day: start, standing: span.standing, change: 1), DayChange(day: end, standing: span.standing, change: -1)]
        }
    }

    /// The day a span from the start is counted from: 1969-12-31, before any day a figure asks of
    /// (from 1970 on: a range's default start and the page's earlier range can reach before 2008).
    public static let earliestDay: Int64 = -1
}
