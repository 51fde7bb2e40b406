import ReceiptCore

/// The page's cohorts (`GET /v1/stats/cohorts`): each interval's paying subscriptions with the
/// share that continued for 1 … N periods after the first paid one (percentages, each cell's
/// counts in its title, `data-value` the JSON's decimal, empty and a dash where it is null), each
/// cohort's size linking its first paid periods (the rates' `new_paying` of the same days) and each
/// share those of them that continued for so many periods (`retained=N` over the same days); then
/// per interval and currency the cohort's paying subscriptions (linking their first paid periods in
/// it, `paying=CURRENCY`), what the cohort paid, less refunds (linking the periods it paid for in it,
/// `paid=CURRENCY`), and per paying subscription (a quotient, which links nothing).
extension DashboardPage {
    /// The list of a cohort's members: its subscriptions' first paid periods (CohortRows counts them as the rates do).
    private static let firstPaidPeriods = SubscriptionList.Began(name: "new_paying").map { SubscriptionList.Counted.began($0) }

    var cohortTables: String {
        let title = "<h2>Cohorts by first paid \(figure.interval.rawValue)</h2>\n"
        guard let cohorts else {
            let query = pageQuery + ["\(DashboardController.cohortsParameter)=1"]
            let href = DashboardController.path + "?" + query.joined(separator: "&")
            return title + "<p><a id=\"show-cohorts\" href=\"\(Self.escape(href))\">Show the cohorts</a> "
                + "(read from the rows, not from counts kept per day: slower on a large store).</p>\n"
        }
        let periods = cohorts.first?.retained.count ?? 0
        var table = title
            + "<p>The share of the paying subscriptions that continued for at least so many periods after the first paid one.</p>\n"
            + "<table id=\"cohorts\"><tr><th>From</th><th>paying</th>"
            + (0..<periods).map { "<th>after \($0 + 1)</th>" }.joined() + "</tr>\n"
        for cohort in cohorts {
            table += "<tr data-start=\"\(cohort.startMilliseconds)\"><td>\(Self.date(cohort.startMilliseconds))</td>"
                + periodsCell("subscriptions", cohort.subscriptions, listing: Self.firstPaidPeriods,
                              intervalStart: cohort.startMilliseconds)
            for (index, (count, share)) in zip(cohort.retained, cohort.retention).enumerated() {
                table += Self.rateCell("retention_\(index + 1)", share, count, of: cohort.subscriptions,
                                       linking: periodsLink(.retained(periods: index + 1), intervalStart: cohort.startMilliseconds))
            }
            table += "</tr>\n"
        }
        table += "</table>\n<table id=\"cohort-revenue\"><tr><th>From</th><th>Currency</th><th>paying</th>"
            + "<th>paid, less refunds</th><th>per paying</th></tr>\n"
        for cohort in cohorts {
            for line in cohort.currencies {
                table += "<tr data-line=\"\(cohort.startMilliseconds)/\(Self.escape(line.currency))\">"
                    + "<td>\(Self.date(cohort.startMilliseconds))</td><td>\(Self.escape(line.currency))</td>"
                    + periodsCell("paying", line.paying, listing: SubscriptionList.Currencies(currency: line.currency).map { .paying($0) },
                                  intervalStart: cohort.startMilliseconds)
                    + periodsCell("net_milliunits", line.net, shown: Self.money(line.net, line.currency),
                                  listing: SubscriptionList.Currencies(currency: line.currency).map { .paid($0) },
                                  intervalStart: cohort.startMilliseconds)
                    + (line.perPaying.map {
                        "<td data-figure=\"per_paying_milliunits\" data-value=\"\($0)\">\(Self.money($0, line.currency))</td>"
                    } ?? "<td data-figure=\"per_paying_milliunits\" data-value=\"\">–</td>") + "</tr>\n"
            }
        }
        return table + "</table>\n"
    }
}
