import HTTPTypes
import Hummingbird
@_spi(ReceiptInternal) import ReceiptCore

/// `GET /dashboard/customer?id=…`: what support needs of one customer, as a page of the
/// dashboard (same token, no script): by an original transaction id or an app account
/// token, each subscription's state now, what the customer is entitled to, and the
/// timeline of what the store holds, each entry with the JWS Apple signed (the stored
/// transactions and renewal info, and the signed notification or answer of each event),
/// so that anyone can verify what the page says.
struct CustomerPageController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    static let path = "/dashboard/customer"

    func customerPage(_ request: Request, context: Context) async throws -> (Response, String) {
        let id = request.uri.queryParameters.get("id") ?? ""
        guard !id.isEmpty else { return ServerAnswer.page(.ok, CustomerPage.form(id: "", message: nil)) }
        guard CustomerView.isCustomerID(id) else {
            return ServerAnswer.page(.badRequest, CustomerPage.form(id: "", message: "An original transaction id is decimal digits (at most 32); "
                                                            + "an app account token is a UUID."))
        }
        do {
            guard let view = try await stored.customer(id) else {
                return ServerAnswer.page(.notFound, CustomerPage.form(id: id, message: "The store holds no transaction of \(id)."))
            }
            return ServerAnswer.page(.ok, CustomerPage(view: view).html)
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }
}

/// What the store holds of one customer, judged now (StoreResponder.customer).
struct CustomerView {
    /// The most recent events a page lists.
    static let maxEvents = 100

    let id: String
    let isAccount: Bool
    let at: Int64
    let states: [SubscriptionState]
    let entitlements: Entitlements
    let transactions: [SignedPayload]
    let renewalInfos: [SignedPayload]
    let events: [EventDetail]

    /// An original transaction id (decimal digits, at most 32) or an app account token (a UUID).
    static func isCustomerID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        let isDigit = { (byte: UInt8) in (48...57).contains(byte) }
        if !bytes.isEmpty, bytes.count <= 32, bytes.allSatisfy(isDigit) { return true }
        let isHex = { (byte: UInt8) in isDigit(byte) || (65...70).contains(byte) || (97...102).contains(byte) }
        return bytes.count == 36 && bytes.enumerated().allSatisfy { index, byte in
            [8, 13, 18, 23].contains(index) ? byte == UInt8(ascii: "-") : isHex(byte)
        }
    }
}

/// The customer page's HTML.
struct CustomerPage {
    let view: CustomerView

    /// One line of the timeline: when, what, and the JWS it rests on.
    private struct Entry {
        let kind: String
        let key: String
        let at: Int64
        let what: String
        let product: String
        let jws: String?
    }

    static func form(id: String, message: String?) -> String {
        head + formHTML(id) + (message.map { "<p id=\"message\">\(DashboardPage.escape($0))</p>\n" } ?? "") + "</body></html>\n"
    }

    var html: String {
        let which = view.isAccount ? "App account token" : "Original transaction id"
        return Self.head + Self.formHTML(view.id)
            + "<p>\(which) <code id=\"customer\">\(DashboardPage.escape(view.id))</code>, judged at "
            + "<time data-figure=\"at_ms\" data-value=\"\(view.at)\">\(RFC3339Format.utc(view.at))</time>.</p>\n"
            + entitlementsList + subscriptionsTable + timelineTable
            + "<p>Each JWS above is kept as Apple signed it: save one to a file and check it with <code>receipt verify FILE</code> "
            + "(or libreceipt from C, Python or Swift).</p>\n</body></html>\n"
    }

    private static let head = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>receipt serve: customer</title>
        <style>
        \(DashboardPage.style)
        td:first-child { white-space: nowrap; }
        pre.jws { max-width: 900px; white-space: pre-wrap; word-break: break-all; font-size: 11px; text-align: left; }
        </style></head><body>
        <h1>Customer</h1>

        """

    private static func formHTML(_ id: String) -> String {
        "<form method=\"get\" action=\"\(CustomerPageController.path)\">Original transaction id or app account token "
            + "<input name=\"id\" size=\"40\" value=\"\(DashboardPage.escape(id))\"> <button>Show</button> "
            + "<a href=\"\(DashboardController.path)\">figures</a></form>\n"
    }

    private var entitlementsList: String {
        let products = view.entitlements.activeProductIDs.sorted()
        return "<h2>Entitled to</h2>\n<ul id=\"entitlements\">"
            + (products.isEmpty ? "<li>nothing now</li>"
                                : products.map { "<li data-product=\"\(DashboardPage.escape($0))\">\(DashboardPage.escape($0))</li>" }.joined())
            + "</ul>\n"
    }

    private var subscriptionsTable: String {
        var table = "<h2>Subscriptions</h2>\n<table id=\"subscriptions\"><tr><th>Original transaction id</th><th>Product</th>"
            + "<th>Status</th><th>Period ends</th><th>Auto-renew</th></tr>\n"
        for state in view.states {
            let original = DashboardPage.escape(state.originalTransactionID)
            let autoRenew = state.renewalInfo?.integer("autoRenewStatus").map { $0 == 1 ? "on" : "off" } ?? "unknown"
            table += "<tr data-original=\"\(original)\">"
                + "<td><a href=\"\(CustomerPageController.path)?id=\(original)\">\(original)</a></td>"
                + Self.field("product", state.latestTransaction.productID ?? "") + Self.field("status", state.status.name)
                + Self.field("expires", state.latestTransaction.date("expiresDate").map(RFC3339Format.utc) ?? "")
                + Self.field("auto_renew", autoRenew) + "</tr>\n"
        }
        return table + "</table>\n"
    }

    /// The stored transactions and renewal infos, and the events, most recent first.
    private var timeline: [Entry] {
        var entries: [Entry] = view.transactions.map { transaction in
            var what = (transaction.string("transactionReason") ?? "purchase").lowercased()
            if let price = transaction.integer("price"), let currency = transaction.string("currency") {
                what += ", " + MoneyText.text(milliunits: price, currency: currency)
            }
            if let revoked = transaction.date("revocationDate") { what += ", revoked \(RFC3339Format.utc(revoked))" }
            return Entry(kind: "transaction", key: transaction.transactionID ?? "",
                         at: transaction.date("purchaseDate") ?? transaction.signingDate ?? 0, what: what,
                         product: transaction.productID ?? "", jws: transaction.compactSerialization)
        }
        entries += view.renewalInfos.map { renewal in
            let autoRenew = renewal.integer("autoRenewStatus") == 1 ? "auto-renew on" : "auto-renew off"
            return Entry(kind: "renewal_info", key: renewal.originalTransactionID ?? "", at: renewal.signingDate ?? 0,
                         what: "renewal info, \(autoRenew)", product: renewal.string("autoRenewProductId") ?? "",
                         jws: renewal.compactSerialization)
        }
        entries += view.events.map { event in
            let data = (try? JSONValue.parse(event.body))?["data"]
            let jws = data?["signed_payload"]?.stringValue ?? data?["signed_transaction_info"]?.stringValue
            return Entry(kind: "event", key: event.summary.id, at: event.summary.createdAt, what: event.summary.type,
                         product: data?["product_id"]?.stringValue ?? "", jws: jws)
        }
        return entries.sorted { ($0.at, $0.kind) > ($1.at, $1.kind) }
    }

    private var timelineTable: String {
        var table = "<h2>Timeline</h2>\n<table id=\"timeline\"><tr><th>When (UTC)</th><th>What</th><th>Product</th>"
            + "<th>Id</th><th>Signed by Apple</th></tr>\n"
        for entry in timeline {
            table += "<tr data-kind=\"\(entry.kind)\" data-key=\"\(DashboardPage.escape(entry.key))\">"
                + "<td>\(RFC3339Format.utc(entry.at))</td><td>\(DashboardPage.escape(entry.what))</td>"
                + "<td>\(DashboardPage.escape(entry.product))</td><td>\(DashboardPage.escape(entry.key))</td><td>"
                + (entry.jws.map { "<details><summary>JWS</summary><pre class=\"jws\">\(DashboardPage.escape($0))</pre></details>" } ?? "")
                + "</td></tr>\n"
        }
        return table + "</table>\n"
    }

    private static func field(_ name: String, _ value: String) -> String {
        "<td data-field=\"\(name)\">\(DashboardPage.escape(value))</td>"
    }
}
