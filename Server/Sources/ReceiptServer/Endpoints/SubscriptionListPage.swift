import ReceiptCore

/// A page of the subscriptions behind a count (SubscriptionListController.page): the count, then
/// each subscription linking its customer page (where its signed JWS are), then the next page.
struct SubscriptionListPage {
    let asked: SubscriptionListController.Asked
    let count: Int64
    let members: [SubscriptionList.Member]
    let nextCursor: SubscriptionList.Cursor?

    var html: String {
        let escape = DashboardPage.escape
        // A churned count names its reason and its range (the subscriptions are expired at the instant).
        let status = asked.churn.map { "churned, \($0.reason.rawValue)" } ?? asked.statusName.replacingOccurrences(of: "_", with: " ")
        let range = asked.churn.map { " whose period ended from \(DashboardPage.date($0.from)) to \(DashboardPage.date($0.to))" } ?? ""
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>receipt serve: subscriptions</title>
            <style>
            \(DashboardPage.style)
            </style></head><body>
            <h1>Subscriptions: \(escape(status))</h1>
            <p><span data-figure="count" data-value="\(count)">\(count)</span> subscriptions \(escape(status))\(range)\(asked.figure.product.map { " of <span id=\"product\">\(escape($0))</span>" } ?? "")
            at <time data-figure="at_ms" data-value="\(asked.figure.at)">\(DashboardPage.date(asked.figure.at))</time> (UTC), as the
            <a href="\(DashboardController.path)">dashboard</a> counts them; each links what the store holds of it, with the JWS Apple signed.</p>
            <table id="subscription-list"><tr><th>Original transaction id</th><th>Product</th></tr>

            """
        for member in members {
            let customer = CustomerPageController.path + "?id=" + PercentEncoding.encoded(member.originalTransactionID)
            page += "<tr data-original=\"\(escape(member.originalTransactionID))\"><td><a href=\"\(escape(customer))\">"
                + "\(escape(member.originalTransactionID))</a></td><td>\(escape(member.productID))</td></tr>\n"
        }
        page += "</table>\n"
        if let nextCursor {
            let next = SubscriptionListController.pageLink(status: asked.statusName, at: asked.figure.at, product: asked.figure.product,
                                                           churn: asked.churn)
                + "&limit=\(asked.limit)&cursor=" + PercentEncoding.encoded(nextCursor.text)
            page += "<p><a id=\"next-page\" href=\"\(escape(next))\">next \(asked.limit)</a></p>\n"
        }
        return page + "</body></html>\n"
    }
}
