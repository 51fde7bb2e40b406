import HTTPTypes
import Hummingbird
import NIOCore
import ReceiptCore

/// `GET /dashboard`: the figures of /v1/stats as one HTML page a browser shows, with no
/// script: subscriptions by product and status, MRR per currency, the flows per
/// interval as an SVG chart and a table, the revenue per interval and currency, the rates per
/// interval, the churn per interval and the cohorts of each interval, with cards that set the range against the one before it, over a date range and for a product chosen in a form. Behind the
/// read token: a browser asks for it (HTTP Basic, the token as the password; any user
/// name), or a client sends it as a bearer token. Every number carries `data-figure` (and
/// the figure's JSON name), so that what the page shows can be checked against the API.
struct DashboardController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    static let path = "/dashboard"
    /// Under it, `FIGURE?…`: a figure's CSV (StatsController), which the page links for each of its figures.
    static let csvPath = "/dashboard/csv/"
    /// `cohorts=1`: the page shows the cohorts too.
    static let cohortsParameter = "cohorts"

    func dashboard(_ request: Request, context: Context) async throws -> (Response, String) {
        let figure: FigureQuery
        do throws(FigureQuery.Refusal) {
            figure = try FigureQuery(request.uri.queryParameters, now: ReceiptClock.systemNow(), lookBackDays: 365, by: .month)
        } catch {
            return ServerAnswer.badRequest(error.description)
        }
        // The cohorts are read from the rows (not from counts kept per day), so their time grows
        // with the store: the page shows them when asked (`cohorts=1`) and links them otherwise.
        let cohortsValue = request.uri.queryParameters.get(Self.cohortsParameter).flatMap { $0.isEmpty ? nil : $0 }
        guard cohortsValue == nil || cohortsValue == "1" else {
            return ServerAnswer.badRequest("\(Self.cohortsParameter) is 1 (show the cohorts) or absent")
        }
        do {
            // Every product's counts: the form offers each; the table shows the one asked. The
            // subscriptions and MRR come from one reading of every product's standing (the MRR
            // then keeps the product asked); it, the flows, the revenue, the rates, the churn (and the cohorts, asked) are read at once, each
            // on a connection of its own where one is free (SQLite's readers, PostgreSQL's pool):
            // the page takes about the longest of them, not their sum.
            let store = stored.store
            async let standing = store.standing(at: figure.at)
            async let days = store.flows(from: figure.from, to: figure.to, at: figure.at, product: figure.product)
            async let money = store.revenue(from: figure.from, to: figure.to, product: figure.product)
            async let rates = store.rates(from: figure.from, to: figure.to, product: figure.product)
            // The cards set the range against the one before it, as long (from ≥ 0 as the reads want it).
            let previousFrom = max(0, figure.from - (figure.to - figure.from))
            async let previousRates = store.rates(from: previousFrom, to: figure.from, product: figure.product)
            async let previousMoney = store.revenue(from: previousFrom, to: figure.from, product: figure.product)
            // The churn: the flows' churned (the range's are read above) over the subscriptions active
            // at each interval's start; for the cards, at each range's first midnight.
            let starts = [figure.from, previousFrom].map(ActiveSpans.firstMidnight(atOrAfter:))
            // What stood at each interval's end (the last also the cards' end of the range).
            let readDays = figure.readDays
            async let active = store.standing(atMidnightsOf: figure.firstDays + starts + readDays, product: figure.product)
            async let movement = StatsController.movement(figure, on: store)
            async let previousDays = store.flows(from: previousFrom, to: figure.from, at: figure.at, product: figure.product)
            let cohorts = cohortsValue == nil ? nil
                : try await store.cohorts(from: figure.from, to: figure.to, product: figure.product)
            let held = try await standing
            let flowDays = try await days
            // The one reading, in the order asked: each interval's start, the two ranges' starts, each interval's end.
            let standingAt = try await active
            let atIntervalStarts = Array(standingAt.prefix(figure.firstDays.count))
            let (atRangeStart, atPreviousStart) = (standingAt[figure.firstDays.count], standingAt[figure.firstDays.count + 1])
            let atIntervalEnds = Array(standingAt.suffix(readDays.count))
            let churn = IntervalChurn.make(flowDays, activeAtStart: atIntervalStarts.map(\.active),
                                           intervals: figure.firstDays, by: figure.interval)
            let (rangeChurn, previousChurn) = (
                IntervalChurn.over(flowDays, startMilliseconds: starts[0] * FigureInterval.dayMilliseconds,
                                   activeAtStart: atRangeStart.active),
                IntervalChurn.over(try await previousDays, startMilliseconds: starts[1] * FigureInterval.dayMilliseconds,
                                   activeAtStart: atPreviousStart.active))
            let counts = StoreFigures.counts(in: held)
            let page = DashboardPage(figure: figure, counts: counts,
                                     mrr: MRRLine.lines(StoreFigures.priceGroups(in: held, product: figure.product)),
                                     flows: IntervalFlows.make(flowDays, intervals: figure.firstDays, by: figure.interval),
                                     revenue: IntervalRevenue.make(try await money, intervals: figure.firstDays, by: figure.interval),
                                     rates: IntervalRates.make(try await rates, intervals: figure.firstDays, by: figure.interval),
                                     churn: churn,
                                     active: IntervalActive.make(atIntervalEnds, intervals: figure.firstDays, readDays: readDays),
                                     movement: try await movement,
                                     cohorts: cohorts.map {
                                         IntervalCohort.make($0.firstPaid, revenue: $0.revenue, intervals: figure.firstDays,
                                                             by: figure.interval, periods: figure.periods)
                                     },
                                     cards: RangeCard.cards(rates: try await rates, previousRates: try await previousRates,
                                                            revenue: try await money, previousRevenue: try await previousMoney,
                                                            churn: rangeChurn, previousChurn: previousChurn,
                                                            activeNow: SubscriptionCount.total(counts.filter {
                                                                figure.product == nil || $0.productID == figure.product
                                                            }, .active),
                                                            atEnd: atIntervalEnds.last ?? ActiveStanding(), atStart: atRangeStart),
                                     previousFrom: previousFrom,
                                     cardMidnights: (starts[0] * FigureInterval.dayMilliseconds,
                                                     readDays.last.map { $0 * FigureInterval.dayMilliseconds }))
            return ServerAnswer.page(.ok, page.html)
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }
}
