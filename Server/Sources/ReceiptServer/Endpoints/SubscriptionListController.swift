import HTTPTypes
import Hummingbird
import ReceiptCore

/// The subscriptions behind a count of `/v1/stats/subscriptions`, or behind a churned count of
/// the flows (`status=expired&churned=REASON&from=…&to=…`) (SubscriptionList), a page at a time:
/// `GET /v1/subscriptions?status=…[&product=…][&at=…][&limit=N][&cursor=C]` as JSON, and
/// `GET /dashboard/subscriptions?…` as a page of the dashboard, which each count of the
/// dashboard's table of statuses and each churned count of its flows and churn tables link, each
/// subscription linking its customer page.
struct SubscriptionListController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    static let path = "/v1/subscriptions"
    static let pagePath = "/dashboard/subscriptions"
    /// The query parameters both take.
    static let parameters: Set<String> = ["status", "product", "at", "limit", "cursor", "churned", "began", "from", "to"]

    /// What a request asks for: a count (its name, the statuses it stands for), at an instant
    /// and of a product (as the figure takes them), and which page.
    struct Asked {
        /// The count of the subscriptions figure asked for (nil: the periods that began, `began`).
        let statusName: String?
        let statuses: [SubscriptionState.Status]
        let figure: FigureQuery
        let limit: Int
        let cursor: SubscriptionList.Cursor?
        /// The instant the list was first asked at (the cursor's), which its defaults are taken from.
        let now: Int64
        /// The churned count asked for (`churned`, `from`, `to`), when one is.
        let churn: SubscriptionList.Churn?
        /// The count of periods that began asked for (`began`, `from`, `to`), when one is.
        let began: SubscriptionList.Began?

        /// The route's entry refused unknown and repeated parameters already. A cursor's instant
        /// stands for now, so that a list's defaults (`at`, `to`) are its first page's.
        init(_ parameters: some Sequence<(key: Substring, value: Substring)>, now: Int64) throws(FigureQuery.Refusal) {
            var values: [String: String] = [:]
            for (key, value) in parameters where !value.isEmpty { values[String(key)] = String(value) }
            // A count of periods that began names no status and no instant; every other count names a status.
            let beganName = values["began"]
            if let beganName {
                guard IntervalFlows.beganNames.contains(beganName), values["status"] == nil, values["churned"] == nil else {
                    throw FigureQuery.Refusal(description: "began is one of " + IntervalFlows.beganNames.joined(separator: ", ")
                                                           + ", without status or churned")
                }
            }
            let name = values["status"]
            guard beganName != nil || name != nil else {
                throw FigureQuery.Refusal(description: "status is one of " + SubscriptionCount.figureNames.joined(separator: ", ")
                                                       + " (or began is given)")
            }
            let statuses: [SubscriptionState.Status] = try name.map { (text) throws(FigureQuery.Refusal) in
                guard let statuses = SubscriptionList.statuses(named: text) else {
                    throw FigureQuery.Refusal(description: "status is one of " + SubscriptionCount.figureNames.joined(separator: ", "))
                }
                return statuses
            } ?? []
            let limitText = values["limit"] ?? String(SubscriptionList.defaultLimit)
            guard limitText.utf8.count <= 4, let limit = Int(limitText), (1...SubscriptionList.maxLimit).contains(limit) else {
                throw FigureQuery.Refusal(description: "limit is a whole number from 1 to \(SubscriptionList.maxLimit)")
            }
            let cursor = values["cursor"].flatMap(SubscriptionList.Cursor.init)
            // A list of periods goes on from a period's position (SubscriptionList.PeriodPosition).
            guard values["cursor"] == nil || cursor.map({ beganName == nil || SubscriptionList.PeriodPosition($0.after) != nil }) == true else {
                throw FigureQuery.Refusal(description: "cursor is the next_cursor of an earlier page")
            }
            // A churned count is over a range (the flows'), and of expired subscriptions; the rest at one instant.
            let reason = try values["churned"].map { (text) throws(FigureQuery.Refusal) in
                guard let reason = ChurnReason(rawValue: text), name == SubscriptionState.Status.expired.name else {
                    throw FigureQuery.Refusal(description: "churned is one of " + IntervalFlows.churnedNames.joined(separator: ", ")
                                                           + ", with status=expired")
                }
                return reason
            }
            let listNow = cursor?.now ?? now
            let figure = try FigureQuery(parameters, now: listNow, lookBackDays: 30, by: .month,
                                         ranged: reason != nil || beganName != nil, judged: beganName == nil)
            churn = reason.map { SubscriptionList.Churn(reason: $0, from: figure.from, to: figure.to) }
            // The name was checked above.
            began = beganName.flatMap { SubscriptionList.Began(name: $0, from: figure.from, to: figure.to) }
            (statusName, self.statuses, self.figure, self.limit, self.cursor, self.now) = (name, statuses, figure, limit, cursor, listNow)
        }
    }

    /// `GET /v1/subscriptions`: a page of them as JSON.
    func list(_ request: Request, context: Context) async throws -> (Response, String) {
        try await answer(request, context: context) { asked, page in
            (ServerAnswer.json(.ok, SubscriptionList.json(page.members, status: asked.statusName,
                                                          at: asked.began == nil ? asked.figure.at : nil,
                                                          product: asked.figure.product, churn: asked.churn, began: asked.began,
                                                          nextCursor: page.nextCursor)), "200")
        }
    }

    /// `GET /dashboard/subscriptions`: a page of them, with the count they make (as the dashboard's table shows it).
    func page(_ request: Request, context: Context) async throws -> (Response, String) {
        try await answer(request, context: context) { asked, page in
            ServerAnswer.page(.ok, SubscriptionListPage(asked: asked, count: try await count(asked), members: page.members,
                                                        nextCursor: page.nextCursor).html)
        }
    }

    /// The count the subscriptions asked for make, as its figure gives it: the subscriptions figure's,
    /// or the flows' churned for the reason over the range, or the flows' periods that began.
    private func count(_ asked: Asked) async throws -> Int64 {
        let (at, product) = (asked.figure.at, asked.figure.product)
        guard asked.began != nil || asked.churn != nil else {
            return SubscriptionCount.total(try await stored.store.activeSubscriptions(at: at, product: product), in: asked.statuses)
        }
        // Both are counts of the flows over the list's range.
        let days = try await stored.store.flows(from: asked.figure.from, to: asked.figure.to, at: at, product: product)
        if let began = asked.began { return IntervalFlows.began(began.name, on: days) ?? 0 }
        return asked.churn.map { IntervalFlows.churned(on: days)[ChurnReason.allCases.firstIndex(of: $0.reason)!] } ?? 0
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
            let page = try await stored.store.subscriptionList(in: asked.statuses, at: asked.figure.at, product: asked.figure.product,
                                                               churn: asked.churn, began: asked.began, after: asked.cursor?.after,
                                                               limit: asked.limit, now: asked.now)
            return try await make(asked, page)
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    /// The page of the subscriptions behind a count, as the dashboard links it; judged now without `instant`.
    static func pageLink(status: String?, at instant: Int64?, product: String?, churn: SubscriptionList.Churn? = nil,
                         began: SubscriptionList.Began? = nil) -> String {
        let counted = (status.map { ["status=" + $0] } ?? [])
            + (churn.map { ["churned=" + $0.reason.rawValue, "from=\($0.from)", "to=\($0.to)"] } ?? [])
            + (began.map { ["began=" + $0.name, "from=\($0.from)", "to=\($0.to)"] } ?? [])
        return pagePath + "?" + (counted + (instant.map { ["at=\($0)"] } ?? [])
                                 + (product.map { ["product=" + PercentEncoding.encoded($0)] } ?? [])).joined(separator: "&")
    }
}
