import HTTPTypes
import Hummingbird
import ReceiptCore

/// The subscriptions behind a count of `/v1/stats/subscriptions` (SubscriptionList), a page at a
/// time: `GET /v1/subscriptions?status=…[&product=…][&at=…][&limit=N][&cursor=C]` as JSON, and
/// `GET /dashboard/subscriptions?…` as a page of the dashboard, which each count of the
/// dashboard's table of statuses links, each subscription linking its customer page.
struct SubscriptionListController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    static let path = "/v1/subscriptions"
    static let pagePath = "/dashboard/subscriptions"
    /// The query parameters both take.
    static let parameters: Set<String> = ["status", "product", "at", "limit", "cursor"]

    /// What a request asks for: a count (its name, the statuses it stands for), at an instant
    /// and of a product (as the figure takes them), and which page.
    struct Asked {
        let statusName: String
        let statuses: [SubscriptionState.Status]
        let figure: FigureQuery
        let limit: Int
        let cursor: String?

        /// The route's entry refused unknown and repeated parameters already.
        init(_ parameters: some Sequence<(key: Substring, value: Substring)>, now: Int64) throws(FigureQuery.Refusal) {
            var values: [String: String] = [:]
            for (key, value) in parameters where !value.isEmpty { values[String(key)] = String(value) }
            guard let name = values["status"], let statuses = SubscriptionList.statuses(named: name) else {
                throw FigureQuery.Refusal(description: "status is one of " + SubscriptionCount.figureNames.joined(separator: ", "))
            }
            let limitText = values["limit"] ?? String(SubscriptionList.defaultLimit)
            guard limitText.utf8.count <= 4, let limit = Int(limitText), (1...SubscriptionList.maxLimit).contains(limit) else {
                throw FigureQuery.Refusal(description: "limit is a whole number from 1 to \(SubscriptionList.maxLimit)")
            }
            if let cursor = values["cursor"], !SubscriptionList.takes(cursor: cursor) {
                throw FigureQuery.Refusal(description: "cursor is the next_cursor of an earlier page")
            }
            figure = try FigureQuery(parameters, now: now, lookBackDays: 30, by: .day, ranged: false)
            (statusName, self.statuses, self.limit, cursor) = (name, statuses, limit, values["cursor"])
        }
    }

    /// `GET /v1/subscriptions`: a page of them as JSON.
    func list(_ request: Request, context: Context) async throws -> (Response, String) {
        try await answer(request, context: context) { asked, page in
            (ServerAnswer.json(.ok, SubscriptionList.json(page.members, status: asked.statusName, at: asked.figure.at,
                                                          product: asked.figure.product, nextCursor: page.nextCursor)), "200")
        }
    }

    /// `GET /dashboard/subscriptions`: a page of them, with the count they make (as the dashboard's table shows it).
    func page(_ request: Request, context: Context) async throws -> (Response, String) {
        try await answer(request, context: context) { asked, page in
            let counts = try await stored.store.activeSubscriptions(at: asked.figure.at, product: asked.figure.product)
            return ServerAnswer.page(.ok, SubscriptionListPage(asked: asked, count: SubscriptionCount.total(counts, in: asked.statuses),
                                                               members: page.members, nextCursor: page.nextCursor).html)
        }
    }

    /// The page asked for, read and given to `make`; 400 for what cannot be asked, 503 when the store cannot answer.
    private func answer(_ request: Request, context: Context,
                        _ make: (Asked, (members: [SubscriptionList.Member], nextCursor: String?)) async throws -> (Response, String))
        async throws -> (Response, String) {
        let asked: Asked
        do throws(FigureQuery.Refusal) {
            asked = try Asked(request.uri.queryParameters, now: ReceiptClock.systemNow())
        } catch {
            return ServerAnswer.badRequest(error.description)
        }
        do {
            let page = try await stored.store.subscriptionList(in: asked.statuses, at: asked.figure.at, product: asked.figure.product,
                                                               after: asked.cursor, limit: asked.limit)
            return try await make(asked, page)
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    /// The page of the subscriptions behind a count, as the dashboard links it.
    static func pageLink(status: String, at instant: Int64, product: String?) -> String {
        pagePath + "?" + (["status=" + status, "at=\(instant)"] + (product.map { ["product=" + PercentEncoding.encoded($0)] } ?? []))
            .joined(separator: "&")
    }
}
