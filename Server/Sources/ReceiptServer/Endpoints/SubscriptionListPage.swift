import ReceiptCore

/// A page of the subscriptions behind a count (SubscriptionListController.page): the count, then
/// each subscription (or period) linking its customer page (where its signed JWS are), then the next page.
struct SubscriptionListPage {
    let asked: SubscriptionListController.Asked
    let count: Int64
    let members: [SubscriptionList.Member]
    let nextCursor: SubscriptionList.Cursor?

    /// What the count counts, and over which range: a status; a churned count (subscriptions expired at
    /// the instant whose period ended in the range); periods that began in the range (of a kind, or
    /// in a currency), or refunded in it; first paid periods bought in it whose subscription continued,
    /// or in a currency, and what their subscriptions paid for in one; MRR moves of a kind (over all products).
    private var counted: (what: String, range: String) {
        let range = "from \(DashboardPage.date(asked.figure.from)) to \(DashboardPage.date(asked.figure.to))"
        switch asked.counted {
        case .status(let name, _): return ("subscriptions " + name.replacingOccurrences(of: "_", with: " "), "")
        case .standing(let trials): return ("subscriptions active" + (trials ? ", in a free trial" : ", paid"), "")
        case .mrr(let currencies): return ("subscriptions active on a plan" + Self.inCurrency(currencies) + ", which the MRR is made of", "")
        case .churned(let reason): return ("subscriptions that churned, \(reason.rawValue)", " whose period ended " + range)
        case .began(let began):
            let kind = began.name.replacingOccurrences(of: "_", with: " ")
            return ("periods that began" + (began.isFlowsCount ? " as " + kind : ", counted by the rates as " + kind), " " + range)
        case .bought(let currencies): return ("periods that began" + Self.inCurrency(currencies), " " + range)
        case .refunds(let refunds): return ("periods refunded or revoked" + Self.inCurrency(refunds), " " + range)
        case .retained(let periods):
            return ("first paid periods whose subscription continued for at least \(periods) period\(periods == 1 ? "" : "s") after it",
                    ", bought " + range)
        case .paying(let currencies): return ("first paid periods" + Self.inCurrency(currencies), ", bought " + range)
        case .paid(let currencies):
            return ("periods paid for" + Self.inCurrency(currencies),
                    " by the subscriptions whose first paid period was bought " + range + ", whenever bought")
        case .moved(let move, let currencies):
            let days = SubscriptionList.Counted.moveDays(from: asked.figure.from, to: asked.figure.to)
            return ("MRR moves, " + move.rawValue + Self.inCurrency(currencies),
                    " shown by the midnights after " + FigureInterval.date(ofDay: days.after) + " and up to "
                        + FigureInterval.date(ofDay: days.through) + ", all products")
        }
    }

    /// How the product asked for is said: what the list holds is of it, but a cohort's periods paid
    /// for are of any product, their subscription's first paid period of it (as the cohorts take a product).
    private func productClause(_ product: String) -> String {
        let named = "<span id=\"product\">\(DashboardPage.escape(product))</span>"
        if case .paid = asked.counted { return " (their first paid period of \(named))" }
        return " of " + named
    }

    /// What a period's amount is: what the figure behind the list adds up for it.
    private var amountHeading: String {
        switch asked.counted {
        case .refunds: return "Refunded"
        case .paid: return "Paid, less refunds"
        case .moved: return "Moved, a month"
        default: return "Price"
        }
    }

    /// Which currency's periods a list holds, as its heading says it (nothing for every currency).
    private static func inCurrency(_ currencies: SubscriptionList.Currencies) -> String {
        currencies.currency.map { $0.isEmpty ? ", in no currency" : ", in " + $0 } ?? ""
    }

    var html: String {
        let escape = DashboardPage.escape
        let (periods, moves) = (asked.counted.listsPeriods, asked.counted.listsMoves)
        // Periods (that began, were bought or refunded, or a cohort's) and moves are judged at no instant.
        let instant = periods ? "" : " at <time data-figure=\"at_ms\" data-value=\"\(asked.at)\">\(DashboardPage.date(asked.at))</time>"
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>receipt serve: subscriptions</title>
            <style>
            \(DashboardPage.style)
            </style></head><body>
            <h1>\(escape(counted.what.prefix(1).uppercased() + counted.what.dropFirst()))</h1>
            <p><span data-figure="count" data-value="\(count)">\(count)</span> \(escape(counted.what))\(escape(counted.range))\(asked.figure.product.map(productClause) ?? "")
            \(instant) (UTC), as the
            <a href="\(DashboardController.path)">dashboard</a> counts them; each links what the store holds of its subscription, with the JWS Apple signed.</p>
            <table id="subscription-list"><tr><th>Original transaction id</th>\(moves ? "<th>Midnight (UTC)</th>" : periods ? "<th>Transaction id</th>" : "")<th>Product</th>\(periods ? "<th>\(amountHeading)</th>" : "")</tr>

            """
        for member in members {
            let customer = CustomerPageController.path + "?id=" + PercentEncoding.encoded(member.originalTransactionID)
            page += "<tr data-original=\"\(escape(member.originalTransactionID))\" data-key=\"\(escape(member.listedID))\">"
                + "<td><a href=\"\(escape(customer))\">\(escape(member.originalTransactionID))</a></td>"
                + (member.period.map { "<td>\(escape($0.transactionID))</td>" } ?? "")
                + (member.movedAt.map { "<td data-figure=\"moved_at_ms\" data-value=\"\($0)\">\(DashboardPage.date($0))</td>" } ?? "")
                + "<td>\(escape(member.productID))</td>"
                + (member.amount.map { DashboardPage.cell("amount_milliunits", $0.milliunits, shown: DashboardPage.money($0.milliunits, $0.currency)) } ?? "")
                + "</tr>\n"
        }
        page += "</table>\n"
        if let nextCursor {
            let next = SubscriptionListController.pageLink(asked.counted, range: (asked.figure.from, asked.figure.to),
                                                           at: asked.at, product: asked.figure.product)
                + "&limit=\(asked.limit)&cursor=" + PercentEncoding.encoded(nextCursor.text)
            page += "<p><a id=\"next-page\" href=\"\(escape(next))\">next \(asked.limit)</a></p>\n"
        }
        return page + "</body></html>\n"
    }
}
