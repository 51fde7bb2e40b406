import HTTPTypes
import Hummingbird
import NIOCore
import ReceiptCore
import ReceiptServerAPIClient

/// Routes a request to the core's endpoints and turns their answers into HTTP.
/// Every decision about a receipt or a JWS is the core's (VerifyReceiptEndpoint,
/// VerdictEndpoint); this only reads the body within its limit, picks the
/// endpoint, and records metrics.
struct ReceiptResponder: HTTPResponder {
    typealias Context = ServerRequestContext

    let production: VerifyReceiptEndpoint
    let sandbox: VerifyReceiptEndpoint
    let verdict: VerdictEndpoint
    let maxBodyBytes: Int
    let metrics: ServerMetrics
    let revocation: RevocationTransport
    /// Nil when the server runs without a store (no --store).
    let stored: StoreResponder?
    /// Whether the store is migrated yet: until it is, nothing reads or writes it.
    let readiness: ServerReadiness
    let routes: ServerRoutes
    /// The tokens each kind of request takes.
    let credentials: ServerCredentials
    /// Failed credentials counted per client address.
    let throttle = ClientThrottle()
    /// Whether each request is logged (--access-log).
    let accessLog: Bool
    /// Retention Messaging's realtime endpoint, when the server has rules.
    let retention: RetentionEndpoint?
    /// The OCSP ask made after a realtime answer given without fresh answers (revocation soft).
    let realtimeRevocationAsk = OneAtATime()

    init(settings: ServerSettings, metrics: ServerMetrics, store: DeadlineStore?, readiness: ServerReadiness,
         catchUp: StoreCatchUp?, wake: WakeSignal?, consumptionWake: WakeSignal?) {
        // The App Store endpoints judge the environment themselves (21007, 21008):
        // a required environment would turn those answers into 21003.
        var policy = settings.verifier.policy
        policy.environment = nil
        let anyEnvironment = settings.verifier.with(policy: policy)
        production = VerifyReceiptEndpoint(environment: .production, verifier: anyEnvironment,
                                           sharedSecrets: settings.sharedSecrets)
        sandbox = VerifyReceiptEndpoint(environment: .sandbox, verifier: anyEnvironment,
                                        sharedSecrets: settings.sharedSecrets)
        verdict = VerdictEndpoint(verifier: settings.verifier)
        maxBodyBytes = settings.maxBodyBytes
        self.metrics = metrics
        let revocation = RevocationTransport(timeout: .seconds(Int64(max(1, settings.ocspTimeoutSeconds))))
        self.revocation = revocation
        stored = store.map { StoreResponder(store: $0, reads: StorePointReads(store: $0), notifications: NotificationEndpoint(verifier: settings.verifier),
                                            metrics: metrics, catchUp: catchUp, revocation: revocation, wake: wake,
                                            consumptionWake: consumptionWake) }
        self.readiness = readiness
        routes = ServerRoutes(settings: settings)
        credentials = settings.credentials
        accessLog = settings.accessLog
        retention = settings.retention
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let path = request.uri.path
        var (response, status): (Response, String)
        let found = routes.route(for: path)
        if let (route, rest) = found {
            var context = context
            if let refusal = admission(route, rest, request, &context) {
                (response, status) = refusal
            } else {
                (response, status) = try await dispatch(route.name, rest, request, context: context)
            }
            if route.holdsCustomerData { response.headers[.cacheControl] = "no-store" }
        } else {
            (response, status) = ServerAnswer.noRoute()
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        metrics.record(endpoint: found?.route.label ?? "other", status: status, since: start)
        if accessLog {
            // The path only: a query may carry an app account token.
            let elapsed = (ContinuousClock.now - start).components
            let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
            context.logger.info("\(request.method) \(path) \(response.status.code) \(milliseconds) ms", metadata: [
                "method": "\(request.method)", "path": "\(path)", "status": .stringConvertible(response.status.code),
                "milliseconds": .stringConvertible(milliseconds),
            ])
        }
        return response
    }

    /// The route's handler. Inlined, as `verifyReceipt`.
    @inline(__always) private func dispatch(_ name: ServerRoute.Name, _ rest: Substring, _ request: Request,
                                            context: Context) async throws -> (Response, String) {
        switch name {
        case .verifyReceipt: try await verifyReceipt(request, context: context, on: production)
        case .sandboxVerifyReceipt: try await verifyReceipt(request, context: context, on: sandbox)
        case .verify: try await verify(request)
        case .notifications: try await notification(request, context: context)
        case .retention: try await realtime(request, context: context)
        case .subscriptions: try await subscription(String(rest), request, context: context)
        case .entitlements: try await entitlements(request, context: context)
        case .consent: try await consent(String(rest), request, context: context)
        case .consumption, .events, .event, .stats, .subscriptionList, .dashboard, .dashboardCSV, .subscriptionListPage,
             .customerPage:
            try await storeArea(name, rest, request, context: context)
        case .healthz: (ServerAnswer.text(.ok, "ok\n"), "200")
        case .readyz: await readiness(context: context)
        case .metrics: (ServerAnswer.response(.ok, contentType: "text/plain; version=0.0.4; charset=utf-8",
                                      metrics.exposition(cache: verdict.verifier.cacheStatistics,
                                                         revocation: verdict.verifier.revocationCacheStatistics)), "200")
        case .openAPI: (ServerAnswer.json(.ok, OpenAPIDocument.bytes), "200")
        }
    }

    /// The routes answered by an area of the store's (a controller each, holding only the store).
    private func storeArea(_ name: ServerRoute.Name, _ rest: Substring, _ request: Request,
                           context: Context) async throws -> (Response, String) {
        guard let stored else { return ServerAnswer.noStore() }
        switch name {
        case .consumption: return try await ConsumptionController(stored: stored, maxBodyBytes: maxBodyBytes).consumption(String(rest), request, context: context)
        case .events: return try await EventsController(stored: stored).events(request, context: context)
        case .event: return try await EventsController(stored: stored).event(rest, request, context: context)
        case .stats: return try await StatsController(stored: stored).stats(String(rest), request, context: context)
        case .subscriptionList: return try await SubscriptionListController(stored: stored).list(request, context: context)
        case .dashboard: return try await DashboardController(stored: stored).dashboard(request, context: context)
        case .subscriptionListPage: return try await SubscriptionListController(stored: stored).page(request, context: context)
        case .dashboardCSV: return try await StatsController(stored: stored).stats(String(rest), request, context: context, as: .csv)
        case .customerPage: return try await CustomerPageController(stored: stored).customerPage(request, context: context)
        default: return ServerAnswer.failure(.notFound, "NOT_FOUND", "no such path")
        }
    }

    /// What the route's entry asks of every request before its handler runs, in order: the
    /// method, the store, the credential (with the caller's client address not refused), the
    /// query parameters; nil when the request may go on, with the credential's fingerprint
    /// in `context`.
    @inline(__always) private func admission(_ route: ServerRoute, _ rest: Substring, _ request: Request,
                                             _ context: inout Context) -> (Response, String)? {
        if let methods = route.methods(under: rest), !methods.contains(request.method) {
            return (ServerAnswer.methodNotAllowed(allow: methods.map(\.rawValue).joined(separator: ", ")), "405")
        }
        if route.needsStore {
            if stored == nil { return ServerAnswer.noStore() }
            if !readiness.isReady { return ServerAnswer.storeMigrating() }
        }
        if route.access != .open {
            let need: ServerCredentials.Need = switch route.access {
            case .metrics: .metrics
            case _ where request.method == .post: .write
            default: .read
            }
            if let refusal = authorization(need, basic: route.access == .page, request, &context) { return refusal }
        }
        if let taken = route.query, request.uri.query != nil, let refusal = Self.queryRefusal(request, taking: taken) {
            return refusal
        }
        return nil
    }

    /// 401 (with the challenge a browser answers on pages), 403 for another kind's token, 429
    /// for an address that failed too often (ClientThrottle); nil when the request may go on.
    private func authorization(_ need: ServerCredentials.Need, basic: Bool, _ request: Request,
                               _ context: inout Context) -> (Response, String)? {
        let address = context.clientAddress
        let now = ReceiptClock.systemNow()
        if let wait = throttle.refusal(of: address, now: now) {
            metrics.recordCredentialFailure(outcome: "throttled")
            return Self.tooManyFailures(retryAfterMilliseconds: wait)
        }
        switch credentials.standing(of: request.headers, need: need, basic: basic) {
        case .granted(let fingerprint):
            context.credential = fingerprint
            return nil
        case .otherKind:
            return ServerAnswer.failure(.forbidden, "FORBIDDEN", need == .write
                ? "this sends or changes what will be sent: it takes the write token (--write-token-file), never a read token"
                : "this token is not one this endpoint takes")
        case .wrong:
            metrics.recordCredentialFailure(outcome: "refused")
            if throttle.recordFailure(of: address, now: now) {
                context.logger.warning("\(address): more than \(ClientThrottle.burst) wrong tokens in a second; refused for a while")
            }
            return basic ? Self.pageUnauthorized() : Self.unauthorized(need)
        case .missing:
            return basic ? Self.pageUnauthorized() : Self.unauthorized(need)
        }
    }

    /// 400 for a query parameter the route does not take, or one given twice; nil when all are taken.
    static func queryRefusal(_ request: Request, taking taken: Set<String>) -> (Response, String)? {
        var seen: Set<Substring> = []
        for (name, _) in request.uri.queryParameters {
            guard taken.contains(String(name)) else {
                let list = taken.isEmpty ? "this endpoint takes no query parameter" : "this endpoint takes "
                    + taken.sorted().joined(separator: ", ")
                return ServerAnswer.badRequest("unknown query parameter \(String(name).prefix(64)): \(list)")
            }
            guard seen.insert(name).inserted else { return ServerAnswer.badRequest("the query parameter \(name) is given twice") }
        }
        return nil
    }

    /// Apple's protocol: HTTP 200 whatever the outcome, the status in the JSON. Inlined, as
    /// `readBody`: each async call of its own is one more job on the event loop's queue
    /// (StoreResponder.Reply says why); inlined, the merged answer makes two fewer.
    @inline(__always) private func verifyReceipt(_ request: Request, context: Context, on endpoint: VerifyReceiptEndpoint) async throws -> (Response, String) {
        guard request.method == .post else {
            return (ServerAnswer.json(.ok, VerifyReceiptEndpoint.notPostAnswer.bytes), String(LocalVerifyReceipt.notPost))
        }
        guard let body = try await readBody(request) else {
            let answer = VerifyReceiptEndpoint.tooLargeAnswer(limit: maxBodyBytes)
            return (ServerAnswer.json(.ok, answer.bytes), String(answer.status))
        }
        let prepared = endpoint.prepare(body: body)
        // Before the store is ready, a receipt whose subscriptions it would merge is asked again later.
        guard stored == nil || readiness.isReady || prepared.subscriptionIDs.isEmpty else { return Self.retryLater() }
        let known: KnownSubscriptions?
        do {
            known = switch try stored?.known(prepared.subscriptionIDs) {
            case .now(let answer): answer
            case .later(let rest): try await rest()
            case nil: nil
            }
        } catch {
            context.logger.error("store read failed: \(error)")
            return Self.retryLater()
        }
        let answer = endpoint.answer(prepared, known: known)
        // Apple's answer says only 21002; the log (--verbose) says why.
        if let unreadable = answer.unreadable { context.logger.debug("21002: \(unreadable)") }
        var response = ServerAnswer.json(.ok, answer.bytes)
        // Apple's JSON has no place for it: the key to de-duplicate on goes beside it.
        if let fingerprint = answer.fingerprint { response.headers[Self.fingerprintHeader] = ContentFingerprint.hex(fingerprint) }
        return (response, String(answer.status))
    }

    /// 200 with a verdict (valid or not), 400 when there is none (unreadable body,
    /// bad query parameter), 413 past the size limit.
    private func verify(_ request: Request) async throws -> (Response, String) {
        guard let body = try await readBody(request) else {
            let answer = VerdictEndpoint.refusal(
                ReceiptError(.inputTooLarge, "the request body is over \(maxBodyBytes) bytes"))
            return (ServerAnswer.json(.contentTooLarge, answer.bytes), answer.status.name)
        }
        let query = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        var answer = verdict.answer(toBody: body, query: query)
        // Revocation on and no fresh OCSP answer cached (a first sight, or the refresher
        // behind): ask now, then judge again. In steady state the refresher has asked.
        if let payload = answer.revocationPending,
           await revocation.askedAnew(about: payload, for: verdict.verifier, metrics: metrics, reason: "request") {
            answer = verdict.answer(toBody: body, query: query)
        }
        return (ServerAnswer.json(answer.refusal == nil ? .ok : .badRequest, answer.bytes), answer.status.name)
    }

    /// App Store Server Notifications V2 (StoreResponder.receive).
    private func notification(_ request: Request, context: Context) async throws -> (Response, String) {
        guard let stored else { return ServerAnswer.noStore() }
        guard let body = try await readBody(request) else {
            let refusal = ReceiptError(.inputTooLarge, "the request body is over \(maxBodyBytes) bytes")
            return (ServerAnswer.json(.contentTooLarge, ServerAnswer.refusal(refusal)), "413")
        }
        let (status, bytes) = await stored.receive(body: body, logger: context.logger)
        return (ServerAnswer.json(status, bytes), String(status.code))
    }

    /// Retention Messaging: Apple's realtime request in, the rules' answer out (RetentionEndpoint);
    /// 400 with the reason for a request that does not verify (Apple then shows its default), 503
    /// for one that may verify later (no OCSP answer yet with revocation hard).
    private func realtime(_ request: Request, context: Context) async throws -> (Response, String) {
        guard let retention else { return (ServerAnswer.text(.notFound, "not found\n"), "404") }
        guard let body = try await readBody(request) else {
            let refusal = ReceiptError(.inputTooLarge, "the request body is over \(maxBodyBytes) bytes")
            return (ServerAnswer.json(.contentTooLarge, ServerAnswer.refusal(refusal)), "413")
        }
        var reply = retention.answer(body: body)
        // As /v1/verify: revocation on and no fresh OCSP answer for a chain that verified. Refused for it (hard):
        // ask now, then answer again. Answered anyway (soft): answer now, and ask for the next request, one
        // ask at a time, so that Apple's 700 ms are never spent waiting on a responder.
        if let payload = reply.revocationPending {
            if reply.refusal != nil {
                if await revocation.askedAnew(about: payload, for: retention.verifier, metrics: metrics, reason: "realtime") {
                    reply = retention.answer(body: body)
                }
            } else {
                let (revocation, verifier, metrics) = (revocation, retention.verifier, metrics)
                realtimeRevocationAsk.start {
                    _ = await revocation.askedAnew(about: payload, for: verifier, metrics: metrics, reason: "realtime")
                }
            }
        }
        if let refusal = reply.refusal {
            context.logger.debug("realtime request refused: \(refusal.status.name): \(refusal.detail)")
            let status: HTTPResponse.Status = refusal.canSucceedLater ? .serviceUnavailable : .badRequest
            return (ServerAnswer.json(status, reply.body), String(status.code))
        }
        return (ServerAnswer.json(.ok, reply.body), "200")
    }

    private func subscription(_ id: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard let stored else { return ServerAnswer.noStore() }
        // Apple's ids are decimal digits; anything else cannot be known.
        guard !id.isEmpty, id.utf8.count <= 32, id.utf8.allSatisfy({ (48...57).contains($0) }) else {
            let refusal = ReceiptError(.invalidArgument, "an original transaction id is decimal digits (at most 32)")
            return (ServerAnswer.json(.badRequest, ServerAnswer.refusal(refusal)), "400")
        }
        do {
            let (status, bytes) = switch try stored.subscription(id, mayLookUp: context.credential != nil, logger: context.logger) {
            case .now(let answer): answer
            case .later(let rest): try await rest()
            }
            return (ServerAnswer.json(status, bytes), String(status.code))
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    /// `GET /v1/consent/{appTransactionId}`: whether a RESCIND_CONSENT notification for the app transaction is stored.
    private func consent(_ id: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard let stored else { return ServerAnswer.noStore() }
        // Apple's app transaction ids are digits; letters, '-', '_' and '.' are let through, other bytes cannot be one.
        let allowed: (UInt8) -> Bool = { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95 || byte == 46
        }
        guard !id.isEmpty, id.utf8.count <= 64, id.utf8.allSatisfy(allowed) else {
            let refusal = ReceiptError(.invalidArgument, "an app transaction id is at most 64 letters, digits, '-', '_' or '.'")
            return (ServerAnswer.json(.badRequest, ServerAnswer.refusal(refusal)), "400")
        }
        do {
            let (status, bytes) = try await stored.consent(appTransactionID: id)
            return (ServerAnswer.json(status, bytes), String(status.code))
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    private func entitlements(_ request: Request, context: Context) async throws -> (Response, String) {
        guard let stored else { return ServerAnswer.noStore() }
        let query = request.uri.queryParameters
        // A UUID is what Apple's tokens are and what the store keeps; at most 64 visible ASCII
        // characters are read (and match nothing unless a UUID), as the OpenAPI document says.
        guard let token = query.get("appAccountToken"), (1...64).contains(token.utf8.count),
              token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            let refusal = ReceiptError(.invalidArgument, "appAccountToken (a UUID) is required: 1 to 64 visible ASCII characters")
            return (ServerAnswer.json(.badRequest, ServerAnswer.refusal(refusal)), "400")
        }
        let limit = query.get("limit").map { Int($0) ?? 0 } ?? StoreSchema.maxPageTransactions
        let cursorText = query.get("cursor")
        let cursor = cursorText.flatMap(StoreCursor.init)
        guard (1...StoreSchema.maxPageTransactions).contains(limit), cursorText == nil || cursor != nil else {
            let refusal = ReceiptError(.invalidArgument, "limit is 1 to \(StoreSchema.maxPageTransactions), and cursor "
                                       + "the next_cursor of an earlier page")
            return (ServerAnswer.json(.badRequest, ServerAnswer.refusal(refusal)), "400")
        }
        do {
            let (status, bytes) = try await stored.entitlements(appAccountToken: token, cursor: cursor, limit: limit)
            return (ServerAnswer.json(status, bytes), String(status.code))
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    /// verifyReceipt's answer when the store, which it merges, cannot be read now: not an answer
    /// from the receipt alone, which could be out of date, but Apple's retry status.
    private static func retryLater() -> (Response, String) {
        let answer = VerifyReceiptEndpoint.storeUnavailableAnswer
        return (ServerAnswer.json(.ok, answer.bytes), String(answer.status))
    }

    /// `/readyz`: 200 when the server can do its work now (the store, when it has one, is migrated
    /// and answers within `readinessSeconds`), else 503 saying what is missing; `/healthz` only says it is alive.
    private func readiness(context: Context) async -> (Response, String) {
        guard let stored else { return (ServerAnswer.text(.ok, "ready\n"), "200") }
        guard readiness.isReady else { return ServerAnswer.storeMigrating() }
        do {
            try await Deadline.within(seconds: Self.readinessSeconds) { try await stored.store.ping() }
            return (ServerAnswer.text(.ok, "ready\n"), "200")
        } catch {
            context.logger.warning("not ready: the store does not answer: \(error)")
            return ServerAnswer.failure(.serviceUnavailable, "STORE_UNAVAILABLE", "the store does not answer; the log says why")
        }
    }

    static let readinessSeconds = 2

    /// A read without a token the server accepts: 401, the same for a missing and a wrong one.
    static func unauthorized(_ need: ServerCredentials.Need) -> (Response, String) {
        let detail = switch need {
        case .read: "reads need the header Authorization: Bearer TOKEN (the server's --read-token-file)"
        case .write: "this sends or changes what will be sent: it needs Authorization: Bearer TOKEN with the server's "
            + "write token (--write-token-file)"
        case .metrics: "/metrics needs Authorization: Bearer TOKEN (the server's --metrics-token-file or --read-token-file)"
        }
        var response = ServerAnswer.json(.unauthorized, ServerAnswer.failure("UNAUTHORIZED", detail))
        response.headers[.wwwAuthenticate] = "Bearer"
        return (response, "401")
    }

    /// A page's 401, with the challenge that makes a browser ask for the read token (as the password).
    static func pageUnauthorized() -> (Response, String) {
        var (response, status) = unauthorized(.read)
        response.headers[.wwwAuthenticate] = #"Basic realm="receipt serve", charset="UTF-8""#
        return (response, status)
    }

    /// 429 for a client address that sent too many wrong tokens (ClientThrottle), with when to try again.
    static func tooManyFailures(retryAfterMilliseconds wait: Int64) -> (Response, String) {
        var response = ServerAnswer.json(.tooManyRequests, ServerAnswer.failure(
            "TOO_MANY_FAILURES", "too many wrong tokens from this address; try again later"))
        response.headers[.retryAfter] = String(max(1, (wait + 999) / 1000))
        return (response, "429")
    }

    /// The body, or nil past maxBodyBytes: refused from Content-Length before any of
    /// it is read, or once that many bytes have arrived. Inlined, as `verifyReceipt`.
    @inline(__always) func readBody(_ request: Request) async throws -> [UInt8]? {
        try await ServerAnswer.body(of: request, upTo: maxBodyBytes)
    }

    /// The receipt's fingerprint (ContentFingerprint) on /verifyReceipt answers.
    static let fingerprintHeader = HTTPField.Name("X-Receipt-Fingerprint")!
}
