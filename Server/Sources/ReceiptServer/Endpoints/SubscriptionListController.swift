import HTTPTypes
import Hummingbird
import ReceiptCore

/// The subscriptions behind a count of `/v1/stats/subscriptions`, or behind a churned count of
/// the flows (`status=expired&churned=REASON&from=…&to=…`), or the periods behind a count of the
/// flows' periods that began (`began=KIND&from=…&to=…`), of a revenue line's periods (`bought=all|none|CURRENCY&from=…&to=…`)
/// or of refunds (`refunds=all|none|CURRENCY&from=…&to=…`),
/// or the active trials or paid at a midnight of `/v1/stats/active` (`active=trials|paid&at=MIDNIGHT`), or the
/// subscriptions of a line of `/v1/stats/mrr` (`mrr=all|none|CURRENCY`), or the first paid periods of a
/// cohort's range that continued for at least N periods (`retained=N&from=…&to=…`), or of a currency
/// (`paying=all|none|CURRENCY&from=…&to=…`), or every period in a currency its subscriptions paid for
/// (`paid=all|none|CURRENCY&from=…&to=…`), or the MRR moves of a kind behind a count of the MRR movement
/// (`mrr_new=all|none|CURRENCY&from=…&to=…`, and `mrr_expansion`, `mrr_contraction`, `mrr_churned`, `mrr_reactivation`)
/// (SubscriptionList), a page at a time: `GET /v1/subscriptions?…[&product=…][&at=…][&limit=N][&cursor=C]`
/// as JSON, and `GET /dashboard/subscriptions?…` as a page of the dashboard, which each such count of
/// the dashboard links, each subscription linking its customer page.
struct SubscriptionListController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    static let path = "/v1/subscriptions"
    static let pagePath = "/dashboard/subscriptions"
    /// The query parameters both take.
    static let parameters = Set(["status", "product", "at", "limit", "cursor", "churned", "from", "to"]
                                + SubscriptionList.Counted.listKeys)

    /// The lists of periods, as a refusal names them.
    static let periodListNames = SubscriptionList.Counted.periodListKeys.joined(separator: ", ")

    /// What a request asks for: a count (SubscriptionList.Counted), at an instant and of a product
    /// (as the figure takes them), and which page.
    struct Asked {
        let counted: SubscriptionList.Counted
        let figure: FigureQuery
        /// The instant the list is judged at: the figure's, or for a count read at midnights, the
        /// last midnight at or before it when none was asked for.
        let at: Int64
        let limit: Int
        let cursor: SubscriptionList.Cursor?
        /// The instant the list was first asked at (the cursor's), which its defaults are taken from.
        let now: Int64

        /// The route's entry refused unknown and repeated parameters already. What the list counts is
        /// checked first (its names), then its page, then its instant and range as a figure takes them.
        /// A cursor's instant stands for now, so that a list's defaults (`at`, `to`) are its first page's.
        init(_ parameters: some Sequence<(key: Substring, value: Substring)>, now: Int64) throws(FigureQuery.Refusal) {
            var values: [String: String] = [:]
            for (key, value) in parameters where !value.isEmpty { values[String(key)] = String(value) }
            let counted: SubscriptionList.Counted
            do throws(SubscriptionList.Refusal) {
                counted = try SubscriptionList.Counted(query: values)
            } catch {
                throw FigureQuery.Refusal(description: error.description)
            }
            guard let limit = SubscriptionList.limit(named: values["limit"] ?? String(SubscriptionList.defaultLimit)) else {
                throw FigureQuery.Refusal(description: "limit is a whole number from 1 to \(SubscriptionList.maxLimit)")
            }
            let cursor = values["cursor"].flatMap(SubscriptionList.Cursor.init)
            // A list of periods goes on from a period's position (SubscriptionList.PeriodPosition).
            let periods = counted.listsPeriods
            guard values["cursor"] == nil || cursor.map({ !periods || SubscriptionList.PeriodPosition($0.after) != nil }) == true else {
                throw FigureQuery.Refusal(description: "cursor is the next_cursor of an earlier page")
            }
            let listNow = cursor?.now ?? now
            // What a list does not take, in a list's words (FigureQuery would speak of figures; its refusal of
            // `product` for the moves, over all products as their figure, is the figure's).
            if periods, values["at"] != nil {
                throw FigureQuery.Refusal(description: "at is for a list judged at an instant; no instant judges periods or MRR moves "
                                                       + "(\(SubscriptionListController.periodListNames)): such a list takes from, to, "
                                                       + (counted.takesProduct ? "product, " : "") + "limit and cursor")
            }
            if !counted.isRanged, let given = FigureQuery.rangeParameters.first(where: { values[$0] != nil }) {
                throw FigureQuery.Refusal(description: "\(given) is for a list over a range (churned, \(SubscriptionListController.periodListNames)); "
                                                       + "this one is judged at one instant: it takes at, product, limit and cursor")
            }
            // A count of the flows, rates, revenue or cohorts is over a range; a status's at one instant. No instant judges periods.
            // A list of MRR moves refuses `product` as its figure does.
            let figure = try FigureQuery(parameters, now: listNow, lookBackDays: 30, by: .month, ranged: counted.isRanged,
                                         judged: !periods, perProduct: counted.takesProduct)
            do throws(SubscriptionList.Refusal) {
                at = try counted.judgedInstant(figure.at, given: figure.atGiven)
            } catch {
                throw FigureQuery.Refusal(description: error.description)
            }
            (self.counted, self.figure, self.limit, self.cursor, self.now) = (counted, figure, limit, cursor, listNow)
        }
    }

    /// `GET /v1/subscriptions`: a page of them as JSON.
    func list(_ request: Request, context: Context) async throws -> (Response, String) {
        try await answer(request, context: context) { asked, page in
            (ServerAnswer.json(.ok, SubscriptionList.json(page.members, counted: asked.counted, at: asked.at,
                                                          from: asked.figure.from, to: asked.figure.to,
                                                          product: asked.figure.product, nextCursor: page.nextCursor)), "200")
        }
    }

    /// `GET /dashboard/subscriptions`: a page of them, with the count they make (as the dashboard's table shows it).
    func page(_ request: Request, context: Context) async throws -> (Response, String) {
        try await answer(request, context: context) { asked, page in
            ServerAnswer.page(.ok, SubscriptionListPage(asked: asked, count: try await count(asked), members: page.members,
                                                        nextCursor: page.nextCursor).html)
        }
    }

    /// The count the subscriptions (or periods) asked for make, as the figure that counts them gives
    /// it (SubscriptionList.Counted.countingFigure): at the list's instant, at its midnight, or over its range.
    private func count(_ asked: Asked) async throws -> Int64 {
        let (counted, at, product) = (asked.counted, asked.at, asked.figure.product)
        let (from, to) = (asked.figure.from, asked.figure.to)
        switch counted.countingFigure {
        case .subscriptions:
            return SubscriptionCount.total(try await stored.store.activeSubscriptions(at: at, product: product), in: counted.statuses)
        case .mrr:
            return counted.count(onMRR: MRRLine.lines(try await stored.store.activePrices(at: at, product: product)).lines) ?? 0
        case .active:
            let stood = try await stored.store.standing(atMidnightsOf: [at / FigureInterval.dayMilliseconds], product: product)
            return stood.first.flatMap(counted.count(in:)) ?? 0
        case .rates:
            return counted.count(onRates: try await stored.store.rates(from: from, to: to, product: product)) ?? 0
        case .revenue:
            return counted.count(onRevenue: try await stored.store.revenue(from: from, to: to, product: product)) ?? 0
        case .flows:
            return counted.count(on: try await stored.store.flows(from: from, to: to, at: at, product: product)) ?? 0
        case .cohorts:
            let cohorts = try await stored.store.cohorts(from: from, to: to, product: product)
            return counted.count(onCohorts: cohorts.firstPaid, revenue: cohorts.revenue) ?? 0
        case .mrrMovement:
            let days = SubscriptionList.Counted.moveDays(from: from, to: to)
            return counted.count(onMovement: try await stored.store.mrrMovement(intervals: [days.after], readDays: [days.through])) ?? 0
        }
    }

    /// The page asked for, read and given to `make`; 400 for what cannot be asked, 503 when the store cannot answer.
    private func answer(_ request: Request, context: Context,
                        _ make: (Asked, (members: [SubscriptionList.Member], nextCursor: SubscriptionList.Cursor?)) async throws
                            -> (Response, String))
        async throws -> (Response, String) {
        let asked: Asked
        do throws(FigureQuery.Refusal) {
            asked = try Asked(request.uri.queryParameters, now: ReceiptClock.systemNow())
        } catch {
            return ServerAnswer.badRequest(error.description)
        }
        do {
            let page = try await stored.store.subscriptionList(asked.counted, at: asked.at, from: asked.figure.from,
                                                               to: asked.figure.to, product: asked.figure.product,
                                                               after: asked.cursor?.after, limit: asked.limit, now: asked.now)
            return try await make(asked, page)
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    /// The page of the subscriptions behind the count `counted`, as the dashboard links it: over
    /// `range` when it is a count over a range (nil: the default range), of `product` (nil: all; a list
    /// of moves takes none);
    /// at `instant` (nil: now), which a list of periods never names.
    static func pageLink(_ counted: SubscriptionList.Counted, range: (from: Int64, to: Int64)?, at instant: Int64?,
                         product: String?) -> String {
        var parameters = counted.queryParameters.map { $0.key + "=" + $0.value }
        if counted.isRanged, let range { parameters += ["from=\(range.from)", "to=\(range.to)"] }
        if let instant, !counted.listsPeriods { parameters.append("at=\(instant)") }
        if counted.takesProduct, let product { parameters.append("product=" + PercentEncoding.encoded(product)) }
        return pagePath + "?" + parameters.joined(separator: "&")
    }
}
