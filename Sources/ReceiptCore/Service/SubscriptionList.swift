/// The subscriptions behind one count of the subscriptions figure (`/v1/stats/subscriptions`):
/// those of a product (or all) in a status (or `entitled`) at an instant, as the figure judges
/// them, a page at a time in the order of their original transaction ids; or behind a churned
/// count of the flows; or the periods behind a count of the flows' or the rates' periods that began (Began),
/// behind a revenue line's periods (Currencies), behind a count of refunds (Currencies) or behind a
/// cohort's counts (those that continued, `retained`; a currency's paying and what they paid), in the
/// order of their dates then transaction ids; or the MRR moves behind a count of the MRR movement,
/// in the order of their midnights then original transaction ids
/// (Counted names which). The store reads them; the names, the bounds and the answer are here,
/// for the API and the dashboard alike.
public enum SubscriptionList {
    public static let defaultLimit = 100
    public static let maxLimit = 1000

    /// A request that names no list, or one that cannot be: what it must name instead.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// One subscription: its original transaction id, and the product its status is read under
    /// (the standing period's, else the last purchased; as the figure counts it); in a list of
    /// periods (`Counted.listsPeriods`), one period: its own product, its transaction id and its position,
    /// and the money a figure adds up for it (its price; in a list of refunds, the amount refunded; in
    /// a list of what a cohort paid, its price less what was refunded of it); in a list of MRR moves
    /// (`Counted.moved`), one move: the midnight that first shows it (`movedAt`), the product of
    /// what it moved to (of what it moved from, for churned) and its amount a month.
    public struct Member: Sendable, Equatable {
        public let originalTransactionID: String
        public let productID: String
        public let period: PeriodPosition?
        public let amount: Amount?
        /// A move's midnight, in epoch milliseconds.
        public let movedAt: Int64?

        public init(originalTransactionID: String, productID: String, period: PeriodPosition? = nil, amount: Amount? = nil,
                    movedAt: Int64? = nil) {
            (self.originalTransactionID, self.productID, self.period, self.amount) = (originalTransactionID, productID, period, amount)
            self.movedAt = movedAt
        }

        /// The id it is listed by: the period's, else the subscription's.
        public var listedID: String { period?.transactionID ?? originalTransactionID }

        /// Where it stands in its list, as a cursor names it: the subscription's id, the period's
        /// position, or a move's (its midnight, then its subscription's id: `DATE-ID` too).
        public var position: String {
            period?.text ?? movedAt.map { PeriodPosition(date: $0, transactionID: originalTransactionID).text } ?? originalTransactionID
        }
    }

    /// An amount of money: milliunits of a currency ("" where the row names none, as the figures group it).
    public struct Amount: Sendable, Equatable {
        public let milliunits: Int64
        public let currency: String

        public init(milliunits: Int64, currency: String) { (self.milliunits, self.currency) = (milliunits, currency) }
    }

    /// Where a period stands in a list of periods (`DATE-ID`): ordered by the date the list is of
    /// (the purchase date of periods that began, the revocation date of refunds), then by
    /// transaction id.
    public struct PeriodPosition: Sendable, Equatable {
        public let date: Int64
        public let transactionID: String

        public init(date: Int64, transactionID: String) { (self.date, self.transactionID) = (date, transactionID) }

        /// As `text` writes it; nil for another text.
        public init?(_ text: String) {
            guard let (date, id) = SubscriptionList.numberAndRest(text) else { return nil }
            (self.date, transactionID) = (date, String(id))
        }

        public var text: String { "\(date)-\(transactionID)" }
    }

    /// What a list counts: which count of which figure its members make. A count over a range (of the
    /// flows, the rates, the revenue or the cohorts: `isRanged`) is asked for with its range beside it.
    public enum Counted: Sendable, Equatable {
        /// A count of the subscriptions figure: its name (SubscriptionCount.figureNames, or
        /// `entitled`) and the statuses it stands for (`statuses(named:)`).
        case status(name: String, statuses: [SubscriptionState.Status])
        /// A churned count of the flows and the churn: subscriptions expired at the instant whose
        /// standing period ended in the range, for the reason.
        case churned(ChurnReason)
        /// A count of the flows' (or the rates') periods that began.
        case began(Began)
        /// The periods a line of the revenue counts and adds the prices of (its `periods` and
        /// `gross`): every auto-renewable period that began, whatever its kind or price, in its
        /// currency (or in any).
        case bought(Currencies)
        /// A refunds count of the flows, or of one currency's revenue.
        case refunds(Currencies)
        /// A count of what stood at a midnight (`/v1/stats/active`): the active subscriptions whose
        /// standing period is a free trial (`active_trials`), or is not (`active_paid`).
        case standing(trials: Bool)
        /// The active subscriptions a line of `/v1/stats/mrr` counts (its `subscriptions`) and makes
        /// its MRR of: those whose standing period is in its currency (or in any) and of a plan's
        /// length (BillingPeriod).
        case mrr(Currencies)
        /// A count of `/v1/stats/cohorts`' `retained` (its n-th, `periods`): the first paid periods
        /// bought in the range whose subscription continued for at least `periods` periods after it
        /// (IntervalCohort; 1 ... IntervalCohort.maxPeriods).
        case retained(periods: Int)
        /// A line of the cohorts' `paying`: the first paid periods bought in the range in its
        /// currency (or in any).
        case paying(Currencies)
        /// The periods a line of the cohorts' `net_milliunits` adds up: those in its currency (or in
        /// any) of the subscriptions whose first paid period was bought in the range, whenever
        /// bought, each with its price less what was refunded of it.
        case paid(Currencies)
        /// A count of `/v1/stats/mrr_movement`'s line in a currency (or all lines): the moves of its
        /// kind that the midnights after the range's first and up to its last show (`moveDays`), over
        /// all products, each with its amount a month (twelfths of a milliunit rounded, as
        /// IntervalMRRMovement rounds a sum of them).
        case moved(MRRMove, Currencies)

        /// What `active=` names: the trials, or the paid.
        public static let standingNames = ["trials", "paid"]

        /// The count of the subscriptions figure `name` names; nil for another name.
        public static func status(named name: String) -> Counted? {
            SubscriptionList.statuses(named: name).map { Counted.status(name: name, statuses: $0) }
        }

        /// The count of `/v1/stats/active` named `name` (IntervalActive.countNames): the active (a
        /// status's count, which the subscriptions figure gives at the midnight too), the trials or the paid.
        public static func active(countNamed name: String) -> Counted? {
            switch name {
            case IntervalActive.countNames[0]: return status(named: SubscriptionState.Status.active.name)
            case IntervalActive.countNames[1]: return .standing(trials: true)
            case IntervalActive.countNames[2]: return .standing(trials: false)
            default: return nil
            }
        }

        /// The list behind a figure of a revenue line in `currency` ("" for the line without one;
        /// IntervalRevenue.Line.figureNames): its `periods` and `gross_milliunits`, the periods that
        /// began; its `refunds` and `refunded_milliunits`, those refunded or revoked. Nil for its net
        /// (a difference of two lists), another name, and a currency the API cannot name.
        public static func revenue(figureNamed name: String, currency: String) -> Counted? {
            guard let currencies = Currencies(currency: currency) else { return nil }
            switch name {
            case "periods", "gross_milliunits": return .bought(currencies)
            case "refunds", "refunded_milliunits": return .refunds(currencies)
            default: return nil
            }
        }

        /// The parameters that each name a list of their own: those judged at an instant (of active
        /// subscriptions), then those of periods and of MRR moves, in the order `init` reads them.
        public static let instantListKeys = ["active", "mrr"]
        public static let periodListKeys = ["began", "bought", "refunds", "retained", "paying", "paid"] + moveListKeys
        public static var listKeys: [String] { instantListKeys + periodListKeys }
        /// The parameter that names a list of moves of each kind (`mrr_new`, …), by MRRMove.allCases.
        public static let moveListKeys = MRRMove.allCases.map(moveListKey(of:))
        public static func moveListKey(of move: MRRMove) -> String { "mrr_" + move.rawValue }

        /// What a request's query names (`status`, `churned`, and the `listKeys`; nil where absent): a
        /// status, with `churned` for a churn; or, alone, a list of periods (that began, bought, refunded,
        /// or a cohort's) or of MRR moves (`mrr_new`, …); or the active trials or paid (`active`), or an MRR line's subscriptions (`mrr`),
        /// each alone or with `status=active` (the status its answer names: `statusName`).
        public init(status: String?, churned: String?, began: String?, refunds: String?, active: String? = nil,
                    bought: String? = nil, mrr: String? = nil, retained: String? = nil, paying: String? = nil,
                    paid: String? = nil) throws(Refusal) {
            let query = ["status": status, "churned": churned, "began": began, "refunds": refunds, "active": active, "bought": bought,
                         "mrr": mrr, "retained": retained, "paying": paying, "paid": paid].compactMapValues { $0 }
            try self.init(query: query)
        }

        /// What a request's query names, read by name (`status`, `churned`, and the `listKeys`), as `init` above.
        public init(query: [String: String]) throws(Refusal) {
            let (status, churned) = (query["status"], query["churned"])
            let named = Self.listKeys.compactMap { key in query[key].map { (key, $0) } }
            // Every value is named before the parameters beside it: a wrong one is said first.
            let lists = try named.map { (key, value) throws(Refusal) in try Self.list(key, named: value) }
            if let counted = lists.first {
                // The lists at an instant are of active subscriptions, and may say so; the lists of periods name no status.
                guard lists.count == 1, churned == nil, status == nil || status == counted.statusName else {
                    throw Refusal(description: Self.listKeys.dropLast().joined(separator: ", ") + " and \(Self.listKeys.last!) "
                                               + "each come alone, without churned and without status (active and mrr: no status but active)")
                }
                self = counted
                return
            }
            guard let status, let counted = Self.status(named: status) else {
                throw Refusal(description: "status is one of " + SubscriptionCount.figureNames.joined(separator: ", ")
                                           + " (or " + Self.listKeys.joined(separator: ", ") + " is given)")
            }
            guard let churned else { self = counted; return }
            guard let reason = ChurnReason(rawValue: churned), counted.statuses == [.expired] else {
                throw Refusal(description: "churned is one of " + IntervalFlows.churnedNames.joined(separator: ", ")
                                           + ", with status=expired")
            }
            self = .churned(reason)
        }

        /// The list a parameter other than `status` and `churned` names by `value` (`parameter`'s inverse).
        private static func list(_ key: String, named value: String) throws(Refusal) -> Counted {
            func currencies() throws(Refusal) -> Currencies {
                guard let currencies = Currencies(name: value) else { throw Currencies.refusal(of: key) }
                return currencies
            }
            switch key {
            case "active":
                guard let place = standingNames.firstIndex(of: value) else {
                    throw Refusal(description: "active is one of " + standingNames.joined(separator: ", "))
                }
                return .standing(trials: place == 0)
            case "began":
                guard let kind = Began(name: value) else { throw Refusal(description: "began is one of " + Began.names.joined(separator: ", ")) }
                return .began(kind)
            case "retained":
                guard let periods = IntervalCohort.periods(named: value) else {
                    throw Refusal(description: "retained is a whole number of periods from 1 to \(IntervalCohort.maxPeriods)")
                }
                return .retained(periods: periods)
            // Each parameter's name, as `parameter` writes it.
            case "mrr": return .mrr(try currencies())
            case "bought": return .bought(try currencies())
            case "refunds": return .refunds(try currencies())
            case "paying": return .paying(try currencies())
            case "paid": return .paid(try currencies())
            default:
                guard let place = moveListKeys.firstIndex(of: key) else { throw Refusal(description: "\(key) names no list") }
                return .moved(MRRMove.allCases[place], try currencies())
            }
        }

        /// The figure that gives the count its members make, which a page shows beside them.
        public enum CountingFigure: Sendable, Hashable {
            /// `/v1/stats/subscriptions` at the list's instant.
            case subscriptions
            /// `/v1/stats/mrr` at the list's instant (`count(onMRR:)`).
            case mrr
            /// `/v1/stats/active` at the list's midnight (`count(in:)`).
            case active
            /// `/v1/stats/flows` over the list's range (`count(on:)`).
            case flows
            /// `/v1/stats/rates` over the list's range (`count(onRates:)`), for the counts the flows lack.
            case rates
            /// `/v1/stats/revenue` over the list's range (`count(onRevenue:)`).
            case revenue
            /// `/v1/stats/cohorts` over the list's range (`count(onCohorts:revenue:)`).
            case cohorts
            /// `/v1/stats/mrr_movement` over the list's days (`moveDays`, `count(onMovement:)`).
            case mrrMovement
        }

        public var countingFigure: CountingFigure {
            switch self {
            case .status: return .subscriptions
            case .mrr: return .mrr
            case .standing: return .active
            case .began(let began): return began.isFlowsCount ? .flows : .rates
            case .bought: return .revenue
            case .churned, .refunds: return .flows
            case .retained, .paying, .paid: return .cohorts
            case .moved: return .mrrMovement
            }
        }

        /// The status its members are counted in, as the answers name it; none for periods.
        public var statusName: String? {
            switch self {
            case .status(let name, _): return name
            case .churned: return SubscriptionState.Status.expired.name
            case .standing, .mrr: return SubscriptionState.Status.active.name
            case .began, .bought, .refunds, .retained, .paying, .paid, .moved: return nil
            }
        }

        /// The statuses its members are counted in at the instant (none for periods).
        public var statuses: [SubscriptionState.Status] {
            switch self {
            case .status(_, let statuses): return statuses
            case .churned: return [.expired]
            case .standing, .mrr: return [.active]
            case .began, .bought, .refunds, .retained, .paying, .paid, .moved: return []
            }
        }

        /// Periods, each with its transaction id, or MRR moves, which no instant judges; else subscriptions.
        public var listsPeriods: Bool { statusName == nil }

        /// MRR moves, each at its midnight (`Member.movedAt`).
        public var listsMoves: Bool { if case .moved = self { return true } else { return false } }

        /// Whether a product may be asked for: not for the moves, which the MRR movement counts over all products.
        public var takesProduct: Bool { !listsMoves }

        /// The days whose midnights show the moves a list of them holds over [from, to) (epoch
        /// milliseconds): those after from's day and up to to's, as `/v1/stats/mrr_movement` reads
        /// an interval from its first midnight to the one it is read at (IntervalActive.readDays), so
        /// that an interval's start and `at_ms` as a range list its moves.
        public static func moveDays(from: Int64, to: Int64) -> (after: Int64, through: Int64) {
            (FigureInterval.day(of: from), FigureInterval.day(of: to))
        }

        /// Over a range (a count of the flows, the rates, the revenue or the cohorts); else at an instant alone.
        public var isRanged: Bool {
            switch self {
            case .status, .standing, .mrr: return false
            case .churned, .began, .bought, .refunds, .retained, .paying, .paid, .moved: return true
            }
        }

        /// The query parameters that name it (as `init` reads them), without its range or instant.
        public var queryParameters: [(key: String, value: String)] {
            switch self {
            case .status(let name, _): return [("status", name)]
            case .churned(let reason): return [("status", SubscriptionState.Status.expired.name), ("churned", reason.rawValue)]
            case .began, .bought, .refunds, .standing, .mrr, .retained, .paying, .paid, .moved: return parameter.map { [$0] } ?? []
            }
        }

        /// Judged at a midnight (UTC) only, as `/v1/stats/active` reads what stood.
        public var isAtMidnight: Bool { if case .standing = self { return true } else { return false } }

        /// The instant its members are judged at, asked as `instant` (`given` false: a default, now):
        /// that instant; for a count read at midnights, the midnight it is (refused when it is none),
        /// or by default the last midnight at or before it.
        public func judgedInstant(_ instant: Int64, given: Bool) throws(Refusal) -> Int64 {
            guard isAtMidnight else { return instant }
            let midnight = instant - instant % FigureInterval.dayMilliseconds
            guard !given || midnight == instant else {
                throw Refusal(description: "at is a midnight (UTC) with active, as /v1/stats/active reads what stood")
            }
            return midnight
        }

        /// The parameter that names it besides a status (`churned`, `began`, `bought`, `refunds`, `active`, `mrr`,
        /// `retained`, `paying`, `paid` or a move's, `mrr_new` …) and
        /// its value, as the list's query and its answer name them; nil for a status's count.
        public var parameter: (key: String, value: String)? {
            switch self {
            case .status: return nil
            case .churned(let reason): return ("churned", reason.rawValue)
            case .began(let began): return ("began", began.name)
            case .bought(let currencies): return ("bought", currencies.name)
            case .refunds(let refunds): return ("refunds", refunds.name)
            case .standing(let trials): return ("active", Self.standingNames[trials ? 0 : 1])
            case .mrr(let currencies): return ("mrr", currencies.name)
            case .retained(let periods): return ("retained", String(periods))
            case .paying(let currencies): return ("paying", currencies.name)
            case .paid(let currencies): return ("paid", currencies.name)
            case .moved(let move, let currencies): return (Self.moveListKey(of: move), currencies.name)
            }
        }

        /// The count its members make as the flows of its range give it (`days`, read at the list's
        /// instant); nil for a count another figure gives (`countingFigure`).
        public func count(on days: [DayFlows]) -> Int64? {
            switch self {
            case .status, .standing, .bought, .mrr, .retained, .paying, .paid, .moved: return nil
            case .churned(let reason): return IntervalFlows.churned(on: days)[ChurnReason.allCases.firstIndex(of: reason)!]
            case .began(let began): return IntervalFlows.began(began.name, on: days)
            case .refunds(let refunds): return IntervalFlows.refunds(in: refunds, on: days)
            }
        }

        /// The count its members make as the rates of its range give it (`days`: each day's counts by
        /// IntervalRates.countNames): a count of periods that began the rates count; nil for every other.
        public func count(onRates days: [(day: Int64, counts: [Int64])]) -> Int64? {
            guard case .began(let began) = self, let place = IntervalRates.countNames.firstIndex(of: began.name) else { return nil }
            return days.reduce(0) { $0.clampedAdding(place < $1.counts.count ? $1.counts[place] : 0) }
        }

        /// The count its members make as the revenue of its range gives it (`days`): a line's
        /// periods, or all lines' added up; nil for every other count.
        public func count(onRevenue days: [DayRevenue]) -> Int64? {
            guard case .bought(let currencies) = self else { return nil }
            return days.filter { currencies.holds($0.currency) }.reduce(0) { $0.clampedAdding($1.began.periods) }
        }

        /// The count its members make as the MRR figure at its instant gives it (`lines`, MRRLine.lines):
        /// a line's subscriptions, or all lines' added up; nil for every other count.
        public func count(onMRR lines: [MRRLine]) -> Int64? {
            guard case .mrr(let currencies) = self else { return nil }
            return lines.filter { currencies.holds($0.currency) }.reduce(0) { $0.clampedAdding($1.subscriptions) }
        }

        /// The count its members make as the cohorts of its range give it (`firstPaid`, their first
        /// paid periods by currency and how many periods they continued; `revenue`, what they paid
        /// by currency): those that continued for at least its number, as a cohort's `retained`
        /// counts them; a currency line's `paying`; the periods its `net_milliunits` adds up. Nil for every other count.
        public func count(onCohorts firstPaid: [IntervalCohort.FirstPaidDay], revenue: [IntervalCohort.RevenueDay]) -> Int64? {
            switch self {
            case .retained(let periods):
                return firstPaid.filter { $0.continued(atLeast: periods) }.reduce(0) { $0.clampedAdding($1.subscriptions) }
            case .paying(let currencies):
                return firstPaid.filter { currencies.holds($0.currency) }.reduce(0) { $0.clampedAdding($1.subscriptions) }
            case .paid(let currencies):
                return revenue.filter { currencies.holds($0.currency) }.reduce(0) { $0.clampedAdding($1.periods) }
            case .status, .churned, .began, .bought, .refunds, .standing, .mrr, .moved:
                return nil
            }
        }

        /// The count its members make as the MRR movement of its days gives it (`intervals`,
        /// IntervalMRRMovement.make over `moveDays`): the moves of its kind in its currency's line, or in
        /// all lines added up; nil for every other count.
        public func count(onMovement intervals: [IntervalMRRMovement]) -> Int64? {
            guard case .moved(let move, let currencies) = self else { return nil }
            let place = MRRMove.allCases.firstIndex(of: move)!
            return intervals.flatMap(\.currencies).filter { currencies.holds($0.currency) }.reduce(0) { $0.clampedAdding($1.counts[place]) }
        }

        /// The count its members make as what stood at its midnight gives it (`/v1/stats/active`'s
        /// trials or paid); nil for every other count.
        public func count(in stood: ActiveStanding) -> Int64? {
            guard case .standing(let trials) = self else { return nil }
            return trials ? stood.trials : IntervalActive.paid(stood)
        }
    }

    /// The periods behind a count of the flows' periods that began (`/v1/stats/flows`' `new`,
    /// `renewals`, …: IntervalFlows.beganNames) or of the rates' (`/v1/stats/rates`' `paid_periods`,
    /// `converted_trials`, …: IntervalRates.countNames, which are counted by the date their period
    /// was bought too): those of its kind bought in the range. A list of periods, not of
    /// subscriptions: a subscription can renew twice in a range.
    public struct Began: Sendable, Equatable {
        public let name: String

        /// The names it takes: the flows', then those of the rates' the flows lack.
        public static let names = IntervalFlows.beganNames + IntervalRates.countNames.filter { !IntervalFlows.beganNames.contains($0) }

        /// Nil for a name that is none of `names`.
        public init?(name: String) {
            guard Self.names.contains(name) else { return nil }
            self.name = name
        }

        /// Counted by the flows (else by the rates alone).
        public var isFlowsCount: Bool { IntervalFlows.beganNames.contains(name) }
    }

    /// Which currencies a list is of: every currency (the flows' refunds, all the revenue's or the
    /// MRR's lines), or one line of a figure by currency (of its currency, or of none): the periods
    /// behind a line of `/v1/stats/revenue`'s `periods` (those that began, by their purchase date)
    /// or its `refunds` (those refunded or revoked, by their revocation date), the subscriptions
    /// behind a line of `/v1/stats/mrr` (by their standing period's currency), or the periods behind a
    /// line of `/v1/stats/cohorts`' `paying` (first paid periods) or `net_milliunits` (the periods paid for).
    public struct Currencies: Sendable, Equatable {
        /// Nil: every currency; "": periods whose row names none (the figures' line without a code).
        public let currency: String?

        /// What stands for every currency, and for none.
        public static let allName = "all", noneName = "none"

        /// `all`, `none`, or a currency code of three capital letters (ISO 4217); nil for another name.
        public init?(name: String) {
            switch name {
            case Self.allName: currency = nil
            case Self.noneName: currency = ""
            default:
                guard Self.isCode(name) else { return nil }
                currency = name
            }
        }

        /// A line of the figures in `currency` (as they group it: "" for none); nil
        /// for a currency the API cannot name (not three capital letters).
        public init?(currency: String) {
            guard currency.isEmpty || Self.isCode(currency) else { return nil }
            self.currency = currency
        }

        /// Every currency.
        public static let all = Currencies(name: allName)!

        /// What a request is told when `key` names no currencies.
        static func refusal(of key: String) -> Refusal {
            Refusal(description: "\(key) is all (every currency), none (without one) or a "
                                 + "currency code of three capital letters (ALL is the Albanian lek)")
        }

        /// Whether a line of the figures in `currency` ("" for none) is among them.
        public func holds(_ currency: String) -> Bool { self.currency == nil || self.currency == currency }

        private static func isCode(_ text: String) -> Bool {
            text.utf8.count == 3 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) }
        }

        public var name: String {
            guard let currency else { return Self.allName }
            return currency.isEmpty ? Self.noneName : currency
        }
    }

    /// The statuses a count's name (SubscriptionCount.figureNames) stands for; nil for another name.
    public static func statuses(named name: String) -> [SubscriptionState.Status]? {
        if name == SubscriptionCount.entitledName { return SubscriptionCount.entitledStatuses }
        return SubscriptionCount.statuses.first { $0.name == name }.map { [$0] }
    }

    /// A page's `limit` as a query names it: 1 to 4 digits within 1 ... maxLimit; nil for anything
    /// else (a sign, a fraction, a larger number).
    public static func limit(named text: String) -> Int? {
        guard (1...4).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let limit = Int(text),
              (1...maxLimit).contains(limit) else { return nil }
        return limit
    }

    /// Where a page starts (`NOW-POSITION`): the instant the first page was asked at, which every
    /// later page takes its defaults from (`at`, and a ranged list's `to`), so that the pages of a
    /// list are of one list even though now moves between them; and the position of the last
    /// member of the page before (Member.position: an original transaction id, or a period's position).
    public struct Cursor: Sendable, Equatable {
        public let now: Int64
        public let after: String

        public init(now: Int64, after: String) { (self.now, self.after) = (now, after) }

        /// As `text` writes it: an instant within FigureInterval.instants, then 1 to 64 visible ASCII characters.
        public init?(_ text: String) {
            guard let (now, id) = SubscriptionList.numberAndRest(text), FigureInterval.instants.contains(now), id.utf8.count <= 64,
                  id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
            (self.now, after) = (now, String(id))
        }

        public var text: String { "\(now)-\(after)" }
    }

    /// `DIGITS-REST`'s number (at most 19 digits, within 64 bits) and its rest (not empty); nil for another text.
    static func numberAndRest(_ text: String) -> (Int64, Substring)? {
        guard let dash = text.utf8.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let (digits, rest) = (text[..<dash], text[text.utf8.index(after: dash)...])
        guard digits.utf8.count <= 19, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits),
              !rest.isEmpty else { return nil }
        return (number, rest)
    }

    /// The page of `rows` of a list first asked at `now` (read with one more than `limit`, so that
    /// the one more says whether another page follows) and the cursor of the next page, when one follows.
    public static func page(_ rows: [Member], limit: Int, now: Int64) -> (members: [Member], nextCursor: Cursor?) {
        let kept = Array(rows.prefix(max(1, limit)))
        return (kept, rows.count > kept.count ? kept.last.map { Cursor(now: now, after: $0.position) } : nil)
    }

    /// The answer of `GET /v1/subscriptions`: what was asked (`counted`, over [from, to) when it is
    /// a count over a range), the page's subscriptions (or periods), and `next_cursor` when another
    /// page follows. A list of periods is judged at no instant, so it names none.
    public static func json(_ members: [Member], counted: Counted, at instant: Int64, from: Int64, to: Int64, product: String?,
                            nextCursor: Cursor?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        if !counted.listsPeriods { writer.number("at_ms", instant) }
        if let status = counted.statusName { writer.string("status", status) }
        // A number of periods is a number, as the cohorts' `periods` is; every other name is text.
        if case .retained(let periods) = counted {
            writer.number("retained", Int64(periods))
        } else if let parameter = counted.parameter {
            writer.string(parameter.key, parameter.value)
        }
        if counted.isRanged {
            writer.number("from_ms", from)
            writer.number("to_ms", to)
        }
        if let product { writer.string("product_id", product) }
        writer.beginArray("subscriptions")
        for member in members {
            writer.beginObject()
            writer.string("original_transaction_id", member.originalTransactionID)
            if let period = member.period { writer.string("transaction_id", period.transactionID) }
            if let movedAt = member.movedAt { writer.number("moved_at_ms", movedAt) }
            writer.string("product_id", member.productID)
            if let amount = member.amount {
                writer.number("amount_milliunits", amount.milliunits)
                if !amount.currency.isEmpty { writer.string("currency", amount.currency) }
            }
            writer.endObject()
        }
        writer.endArray()
        if let nextCursor { writer.string("next_cursor", nextCursor.text) }
        writer.endObject()
        return writer.bytes
    }
}
