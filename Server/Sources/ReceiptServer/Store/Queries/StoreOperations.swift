import ReceiptCore

/// The outbox's operations (EventOutbox), the same on every store.
extension SubscriptionStore {
    func registerWebhooks(_ urls: [String]) async throws {
        try await withStatements(transaction: true) {
            try await EventOutbox.register(urls, on: $0, at: ReceiptClock.systemNow())
        }
    }

    func claimDeliveries(endpoints: [String], limit: Int, leaseMilliseconds: Int64, firstAttemptsOnly: Bool = false,
                         at now: Int64) async throws -> [ClaimedDelivery] {
        try await withStatements(transaction: true) {
            try await EventOutbox.claim(endpoints: endpoints, limit: limit, leaseMilliseconds: leaseMilliseconds,
                                        firstAttemptsOnly: firstAttemptsOnly, on: $0, at: now)
        }
    }

    /// Records how a batch of attempts went, in one transaction.
    func finish(_ outcomes: [(ClaimedDelivery, DeliveryOutcome)]) async throws {
        try await withStatements(transaction: true) { statements in
            for (delivery, outcome) in outcomes { try await EventOutbox.finish(delivery, outcome, on: statements) }
        }
    }

    func activeSubscriptions(at instant: Int64, product: String?) async throws -> [SubscriptionCount] {
        try await withStatements(transaction: false) { try await StoreFigures.activeSubscriptions(at: instant, product: product, on: $0) }
    }

    /// A page of the subscriptions behind `counted`: a count of the subscriptions figure, a churned
    /// count, the active trials or paid at a midnight, or an MRR line's subscriptions (StoreFigures.members), or of
    /// the periods behind a count of periods that began
    /// (FlowDays.periods), of a revenue line's periods (FlowDays.periods(in:)) or of refunds
    /// (StoreFigures.refundedPeriods), or behind a count of the cohorts (CohortRows.members), or the
    /// MRR moves behind a count of the MRR movement (SubscriptionMoves.members);
    /// a count of the flows, the revenue, the cohorts or the MRR movement over
    /// [from, to). `now`: the instant the list was first asked at, which its cursors keep.
    func subscriptionList(_ counted: SubscriptionList.Counted, at instant: Int64, from: Int64, to: Int64, product: String?,
                          after cursor: String?, limit: Int, now: Int64) async throws
        -> (members: [SubscriptionList.Member], nextCursor: SubscriptionList.Cursor?) {
        let rows = try await withStatements(transaction: false) { statements in
            let position = cursor.flatMap(SubscriptionList.PeriodPosition.init)
            switch counted {
            case .status(_, let statuses):
                return try await StoreFigures.members(in: statuses, at: instant, product: product, after: cursor, limit: limit,
                                                      on: statements)
            case .churned(let reason):
                return try await StoreFigures.members(in: counted.statuses, at: instant, product: product,
                                                      churn: (reason, from, to), after: cursor, limit: limit, on: statements)
            case .began(let began):
                return try await FlowDays.periods(began, from: from, to: to, product: product, after: position, limit: limit,
                                                  on: statements)
            case .standing(let trials):
                return try await StoreFigures.members(in: counted.statuses, at: instant, product: product, standingTrial: trials,
                                                      after: cursor, limit: limit, on: statements)
            case .mrr(let currencies):
                return try await StoreFigures.members(in: counted.statuses, at: instant, product: product, mrr: currencies,
                                                      after: cursor, limit: limit, on: statements)
            case .bought(let currencies):
                return try await FlowDays.periods(in: currencies, from: from, to: to, product: product, after: position,
                                                  limit: limit, on: statements)
            case .refunds(let refunds):
                return try await StoreFigures.refundedPeriods(refunds, from: from, to: to, product: product, after: position,
                                                              limit: limit, on: statements)
            case .retained, .paying, .paid:
                return try await CohortRows.members(counted, from: from, to: to, product: product, after: position, limit: limit,
                                                    on: statements)
            case .moved(let move, let currencies):
                let days = SubscriptionList.Counted.moveDays(from: from, to: to)
                return try await SubscriptionMoves.members(move, in: currencies, afterDay: days.after, throughDay: days.through,
                                                           after: position, limit: limit, on: statements)
            }
        }
        return SubscriptionList.page(rows, limit: limit, now: now)
    }

    func activePrices(at instant: Int64, product: String?) async throws -> [PriceGroup] {
        try await withStatements(transaction: false) { try await StoreFigures.activePrices(at: instant, product: product, on: $0) }
    }

    /// Every product's subscriptions by status and active prices at `instant`, in one reading
    /// (the dashboard's subscriptions and MRR; StoreFigures.counts and .priceGroups).
    func standing(at instant: Int64) async throws -> ExpiryDays.Standing {
        try await withStatements(transaction: false) { try await StoreFigures.standing(at: instant, on: $0) }
    }

    func flows(from: Int64, to: Int64, at instant: Int64, product: String?) async throws -> [DayFlows] {
        try await withStatements(transaction: false) {
            try await StoreFigures.flows(from: from, to: to, at: instant, product: product, on: $0)
        }
    }

    func revenue(from: Int64, to: Int64, product: String?) async throws -> [DayRevenue] {
        try await withStatements(transaction: false) {
            try await StoreFigures.revenue(from: from, to: to, product: product, on: $0)
        }
    }

    /// What the rates count of the periods bought each day of [from, to) (IntervalRates.countNames).
    func rates(from: Int64, to: Int64, product: String?) async throws -> [(day: Int64, counts: [Int64])] {
        try await withStatements(transaction: false) { try await FlowDays.rates(from: from, to: to, product: product, on: $0) }
    }

    /// The MRR movement of each interval of `firstDays`, read at `readDays` (one per interval): the
    /// moves of the midnights after the first interval's first day up to the last read day, kept per
    /// day (MRRMoveDays; `source`: or each subscription's, added up), added up per interval (IntervalMRRMovement.make).
    func mrrMovement(intervals firstDays: [Int64], readDays: [Int64], from source: MRRMoveDays.Source = .days) async throws
        -> [IntervalMRRMovement] {
        let totals = try await withStatements(transaction: false) {
            try await MRRMoveDays.totals(afterDay: firstDays.first ?? 0, throughDay: readDays.max() ?? 0, from: source, on: $0)
        }
        return IntervalMRRMovement.make(totals, intervals: firstDays, readDays: readDays)
    }

    /// What stood at the midnight of each of `days` (ActiveDays), in the order given.
    func standing(atMidnightsOf days: [Int64], product: String?) async throws -> [ActiveStanding] {
        try await withStatements(transaction: false) { try await ActiveDays.standing(atMidnightsOf: days, product: product, on: $0) }
    }

    /// The cohorts of the first paid periods bought in [from, to) (CohortRows): their runs, and what they paid.
    func cohorts(from: Int64, to: Int64, product: String?) async throws
        -> (firstPaid: [IntervalCohort.FirstPaidDay], revenue: [IntervalCohort.RevenueDay]) {
        try await withStatements(transaction: false) { try await CohortRows.read(from: from, to: to, product: product, on: $0) }
    }

    func deliveryBacklog() async throws -> (count: Int64, oldest: Int64?) {
        try await withStatements(transaction: false) { try await EventOutbox.backlog(on: $0) }
    }

    func events(state: DeliveryState?, before: Int64?, limit: Int) async throws -> [EventSummary] {
        try await withStatements(transaction: false) { try await EventOutbox.list(state: state, before: before, limit: limit, on: $0) }
    }

    func event(id: String) async throws -> EventDetail? {
        try await withStatements(transaction: false) { try await EventOutbox.show(eventID: id, on: $0) }
    }

    func latestEvents(orderingKeys: [String], limit: Int) async throws -> [EventDetail] {
        try await withStatements(transaction: false) { try await EventOutbox.latest(orderingKeys: orderingKeys, limit: limit, on: $0) }
    }

    func consumption<T: Sendable>(_ operation: @escaping @Sendable (any StoreStatements, Int64) async throws -> T) async throws -> T {
        try await withStatements(transaction: true) { try await operation($0, ReceiptClock.systemNow()) }
    }

    /// Deletes the events made before `createdBefore` that no delivery waits on, a batch per
    /// transaction (EventOutbox.prune); the number deleted.
    func pruneEvents(createdBefore: Int64) async throws -> Int {
        var pruned = 0
        while true {
            let batch = try await withStatements(transaction: true) {
                try await EventOutbox.prune(createdBefore: createdBefore, limit: EventOutbox.prunedPerTransaction, on: $0)
            }
            pruned += batch
            if batch < EventOutbox.prunedPerTransaction { return pruned }
        }
    }

    func replay(eventID: String?, force: Bool) async throws -> EventOutbox.ReplayOutcome {
        try await withStatements(transaction: true) {
            try await EventOutbox.replay(eventID: eventID, force: force, on: $0, at: ReceiptClock.systemNow())
        }
    }
}
