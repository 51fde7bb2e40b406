import ReceiptCore

/// The page's cards (RangeCard): the active subscriptions at the page's instant beside those at
/// the range's first midnight; the active trials and MRR per currency at the range's last midnight
/// (not after its end) beside those at its first; the range's new and paying subscriptions, its conversion, trial
/// conversion, churn and refund rates and its net revenue per currency, each beside the previous
/// range's (as long, ending where the range begins); and the change. `data-value` holds the API's
/// number (empty where there is none), the text shows it as the tables do. A count of subscriptions
/// or periods, and MRR, link what they count, now and before (`links`); a rate of the rates, the periods
/// its numerator counts (as its cell in the rates table does); the churn rate and the net revenue link
/// nothing (their counts are in the tables, each linked there).
extension DashboardPage {
    var cardsSection: String {
        let titles = ["active_subscriptions": "Active subscriptions", "active_trials": "Active trials", "mrr_milliunits": "MRR",
                      "new": "New subscriptions", "new_paying": "New paying", "conversion_to_paying": "Conversion to paying",
                      "trial_conversion_rate": "Trial conversion", "churn_rate": "Churn rate", "refund_rate": "Refund rate", "net_milliunits": "Net revenue"]
        var section = "<h2>The range against the one before</h2>\n<p>From \(Self.date(figure.from)) to \(Self.date(figure.to)) "
            + "against \(Self.date(previousFrom)) to \(Self.date(figure.from)) (UTC). Active subscriptions: at the page's instant "
            + "against the range's first midnight; active trials and MRR: at the range's last midnight against its first.</p>\n"
            + "<div class=\"cards\">\n"
        for card in cards {
            let key = card.currency.map { card.name + "/" + $0 } ?? card.name
            // A value of none (a dash) links nothing.
            let (link, previousLink) = links(card)
            let shown = link.flatMap { card.value == nil ? nil : Self.link($0, text(card.value, card)) } ?? text(card.value, card)
            let previous = previousLink.flatMap { card.previous == nil ? nil : Self.link($0, text(card.previous, card)) }
                ?? text(card.previous, card)
            section += "<div class=\"card\" data-card=\"\(Self.escape(key))\"><h3>\(titles[card.name] ?? card.name)"
                + (card.currency.map { " (\(Self.escape($0)))" } ?? "") + "</h3>"
                + "<p class=\"value\" data-figure=\"value\" data-value=\"\(card.value ?? "")\">\(shown)</p>"
                + "<p class=\"previous\" data-figure=\"previous\" data-value=\"\(card.previous ?? "")\">before: "
                + "\(previous)</p>"
                + "<p class=\"change\" data-figure=\"change\" data-value=\"\(card.change ?? "")\">\(changeText(card))</p></div>\n"
        }
        return section + "</div>\n"
    }

    /// The pages of what a card's value and its previous value count (SubscriptionListController), nil
    /// where it links nothing: the active subscriptions at the page's instant (as the table of statuses
    /// links them) and at the range's first midnight; the new and new paying periods of the range and
    /// of the one before; the active trials and an MRR line's subscriptions at the range's last
    /// midnight and at its first (as the cards read them); a rate of the rates (IntervalRates.rates), the periods
    /// its numerator counts over the range and over the one before. An instant or range no list takes links nothing.
    private func links(_ card: RangeCard) -> (value: String?, previous: String?) {
        let (first, last) = cardMidnights
        func at(_ counted: SubscriptionList.Counted?, _ instant: Int64?) -> String? {
            guard let counted, let instant else { return nil }
            return midnightLink(counted, at: instant)
        }
        switch card.name {
        case "active_subscriptions":
            let active = IntervalActive.countNames[0]
            return (subscriptionsLink(SubscriptionState.Status.active.name, product: figure.product),
                    at(SubscriptionList.Counted.active(countNamed: active), first))
        case "new", "new_paying":
            return beganLinks(card.name)
        case "active_trials":
            return (at(.standing(trials: true), last), at(.standing(trials: true), first))
        case "mrr_milliunits":
            let mrr = card.currency.flatMap(SubscriptionList.Currencies.init(currency:)).map { SubscriptionList.Counted.mrr($0) }
            return (at(mrr, last), at(mrr, first))
        default:
            guard let rate = IntervalRates.rates.first(where: { $0.name == card.name }) else { return (nil, nil) }
            return beganLinks(IntervalRates.countNames[rate.numerator])
        }
        /// The periods that began as `name` says over the range, and over the one before.
        func beganLinks(_ name: String) -> (value: String?, previous: String?) {
            guard let began = SubscriptionList.Began(name: name) else { return (nil, nil) }
            return (periodsLink(.began(began), range: (figure.from, figure.to)), periodsLink(.began(began), range: (previousFrom, figure.from)))
        }
    }

    /// A card's value as the tables show it: a count, a percentage, money in its currency; a dash for none.
    private func text(_ value: String?, _ card: RangeCard) -> String {
        guard let value else { return "–" }
        if card.kind == .ratio { return IntervalRates.percent(value) }
        if let currency = card.currency, let milliunits = Int64(value) { return Self.money(milliunits, currency) }
        return value
    }

    /// The change: `+3`, `+1.25 points` for a rate, `+$1.00` for money; a dash for none.
    private func changeText(_ card: RangeCard) -> String {
        guard let change = card.change, let sign = change.first else { return "–" }
        let magnitude = String(change.dropFirst())
        if card.kind == .ratio { return String(sign) + IntervalRates.percent(magnitude).dropLast() + " points" }
        if let currency = card.currency, let milliunits = Int64(magnitude) { return String(sign) + Self.money(milliunits, currency) }
        return change
    }
}
