import HTTPTypes
import Hummingbird
import ReceiptCore

/// Figures from the store's rows, for a caller with a read token (or where reads are
/// open), at an instant and over a range (FigureQuery): `GET /v1/stats/subscriptions`, the
/// auto-renewable subscriptions by product and by Apple's status, as SubscriptionState
/// judges one subscription; `GET /v1/stats/mrr`, the monthly recurring revenue of the
/// active ones per currency; `GET /v1/stats/flows`, what happened per interval;
/// `GET /v1/stats/revenue`, the money that came in and went out per interval and currency;
/// `GET /v1/stats/rates`, refund, conversion-to-paying and trial conversion rates per interval;
/// `GET /v1/stats/cohorts`, retention and realized revenue by the interval of the first paid period;
/// `GET /v1/stats/churn`, the subscriptions active at each interval's start and those that churned in it;
/// `GET /v1/stats/active`, the active subscriptions, trials and MRR at each interval's end;
/// `GET /v1/stats/mrr_movement`, how MRR moved in each interval per currency (over all products); each
/// limited to one product with `?product=`, and each as CSV with `?format=csv`
/// (StoreFigures runs the SQL; ReceiptCore's StatsJSON and StatsCSV write the answers).
struct StatsController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    static let figures = ["subscriptions", "mrr", "flows", "revenue", "rates", "cohorts", "churn", "active", "mrr_movement"]
    /// The figures over a range (`from`, `to`, `by`); the others are judged at one instant.
    static let rangedFigures: Set<String> = ["flows", "revenue", "rates", "cohorts", "churn", "active", "mrr_movement"]
    /// The figures no instant judges (they count what happened when it happened, or what stood at
    /// each interval's end): they refuse `at`.
    static let instantlessFigures: Set<String> = ["revenue", "rates", "cohorts", "active", "mrr_movement"]
    /// The figures followed over periods (`periods`); the others refuse it.
    static let followedFigures: Set<String> = ["cohorts"]
    /// The figures over all products (an upgrade moves MRR between them): they refuse `product`.
    static let allProductFigures: Set<String> = ["mrr_movement"]

    /// `format`, when given, answers in it whatever the query says (the dashboard's CSV links).
    func stats(_ name: String, _ request: Request, context: Context, as format: FigureQuery.Format? = nil) async throws
        -> (Response, String) {
        guard Self.figures.contains(name) else {
            return ServerAnswer.failure(.notFound, "NOT_FOUND",
                                        "no figure \(name); there are " + Self.figures.joined(separator: " and "))
        }
        let figure: FigureQuery
        do throws(FigureQuery.Refusal) {
            figure = try Self.query(name, request.uri.queryParameters, now: ReceiptClock.systemNow())
        } catch {
            return ServerAnswer.badRequest(error.description)
        }
        let csv = (format ?? figure.format) == .csv
        let bytes: [UInt8]
        do {
            bytes = try await Self.answer(name, figure, csv: csv, on: stored.store)
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
        return (csv ? ServerAnswer.response(.ok, contentType: Self.csvType, bytes) : ServerAnswer.json(.ok, bytes), "200")
    }

    /// The arguments of figure `name` (one of `figures`) in `parameters`, with its defaults.
    static func query(_ name: String, _ parameters: some Sequence<(key: Substring, value: Substring)>, now: Int64)
        throws(FigureQuery.Refusal) -> FigureQuery {
        try FigureQuery(parameters, now: now, lookBackDays: 30, by: .day, ranged: rangedFigures.contains(name),
                        judged: !instantlessFigures.contains(name), followed: followedFigures.contains(name),
                        perProduct: !allProductFigures.contains(name))
    }

    /// Figure `name` (one of `figures`) as `figure` asks for it, from `store`'s rows: JSON, or CSV.
    /// `receipt audit` computes every figure with it on two stores.
    static func answer(_ name: String, _ figure: FigureQuery, csv: Bool, on store: some SubscriptionStore) async throws -> [UInt8] {
        let (instant, product) = (figure.at, figure.product)
        switch name {
        case "flows":
            let days = try await store.flows(from: figure.from, to: figure.to, at: instant, product: product)
            let intervals = IntervalFlows.make(days, intervals: figure.firstDays, by: figure.interval)
            return csv ? StatsCSV.flows(intervals)
                : StatsJSON.flows(intervals, by: figure.interval, from: figure.from, to: figure.to, at: instant, product: product)
        case "revenue":
            let days = try await store.revenue(from: figure.from, to: figure.to, product: product)
            let intervals = IntervalRevenue.make(days, intervals: figure.firstDays, by: figure.interval)
            return csv ? StatsCSV.revenue(intervals)
                : StatsJSON.revenue(intervals, by: figure.interval, from: figure.from, to: figure.to, product: product)
        case "rates":
            let days = try await store.rates(from: figure.from, to: figure.to, product: product)
            let intervals = IntervalRates.make(days, intervals: figure.firstDays, by: figure.interval)
            return csv ? StatsCSV.rates(intervals)
                : StatsJSON.rates(intervals, by: figure.interval, from: figure.from, to: figure.to, product: product)
        case "cohorts":
            let rows = try await store.cohorts(from: figure.from, to: figure.to, product: product)
            let cohorts = IntervalCohort.make(rows.firstPaid, revenue: rows.revenue, intervals: figure.firstDays,
                                              by: figure.interval, periods: figure.periods)
            return csv ? StatsCSV.cohorts(cohorts, periods: figure.periods)
                : StatsJSON.cohorts(cohorts, by: figure.interval, from: figure.from, to: figure.to, periods: figure.periods,
                                    product: product)
        case "churn":
            async let days = store.flows(from: figure.from, to: figure.to, at: instant, product: product)
            async let active = store.standing(atMidnightsOf: figure.firstDays, product: product)
            let intervals = IntervalChurn.make(try await days, activeAtStart: try await active.map(\.active),
                                               intervals: figure.firstDays, by: figure.interval)
            return csv ? StatsCSV.churn(intervals)
                : StatsJSON.churn(intervals, by: figure.interval, from: figure.from, to: figure.to, at: instant, product: product)
        case "active":
            let standing = try await store.standing(atMidnightsOf: figure.readDays, product: product)
            let intervals = IntervalActive.make(standing, intervals: figure.firstDays, readDays: figure.readDays)
            return csv ? StatsCSV.active(intervals)
                : StatsJSON.active(intervals, by: figure.interval, from: figure.from, to: figure.to, product: product)
        case "mrr_movement":
            let intervals = try await movement(figure, on: store)
            return csv ? StatsCSV.mrrMovement(intervals)
                : StatsJSON.mrrMovement(intervals, by: figure.interval, from: figure.from, to: figure.to)
        case "mrr":
            let prices = try await store.activePrices(at: instant, product: product)
            return csv ? StatsCSV.mrr(prices) : StatsJSON.mrr(prices, at: instant, product: product)
        default:  // subscriptions
            let counts = try await store.activeSubscriptions(at: instant, product: product)
            return csv ? StatsCSV.subscriptions(counts) : StatsJSON.subscriptions(counts, at: instant, product: product)
        }
    }

    /// The MRR movement of each interval of `figure` (the page shows it too).
    static func movement(_ figure: FigureQuery, on store: some SubscriptionStore) async throws -> [IntervalMRRMovement] {
        try await store.mrrMovement(intervals: figure.firstDays, readDays: figure.readDays)
    }

    /// CSV with its header row (RFC 4180, RFC 7111's media type).
    static let csvType = "text/csv; charset=utf-8; header=present"
}
