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
    typealias Context = BasicRequestContext

    let production: VerifyReceiptEndpoint
    let sandbox: VerifyReceiptEndpoint
    let verdict: VerdictEndpoint
    let maxBodyBytes: Int
    let metrics: ServerMetrics
    let revocation: RevocationTransport
    /// Nil when the server runs without a store (no --store).
    let stored: StoreResponder?
    let notificationsPath: String
    /// Who may read the store.
    let reads: ReadAuthorization
    /// Whether each request is logged (--access-log).
    let accessLog: Bool
    /// Retention Messaging's realtime endpoint, when the server has rules.
    let retention: RetentionEndpoint?
    let retentionPath: String

    init(settings: ServerSettings, metrics: ServerMetrics, store: DeadlineStore?, catchUp: StoreCatchUp?,
         wake: WakeSignal?, consumptionWake: WakeSignal?) {
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
        stored = store.map { StoreResponder(store: $0, notifications: NotificationEndpoint(verifier: settings.verifier),
                                            metrics: metrics, catchUp: catchUp, revocation: revocation, wake: wake,
                                            consumptionWake: consumptionWake) }
        notificationsPath = settings.notificationsPath
        reads = settings.reads
        accessLog = settings.accessLog
        retention = settings.retention
        retentionPath = settings.retentionPath
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        let path = request.uri.path
        let (response, status): (Response, String)
        switch path {
        case "/verifyReceipt":
            (response, status) = try await verifyReceipt(request, context: context, on: production)
        case "/sandbox/verifyReceipt":
            (response, status) = try await verifyReceipt(request, context: context, on: sandbox)
        case "/v1/verify":
            (response, status) = try await verify(request)
        case notificationsPath:
            (response, status) = try await notification(request, context: context)
        case retentionPath where retention != nil:
            (response, status) = try await realtime(request, context: context)
        case _ where path.hasPrefix(Self.subscriptionsPrefix):
            (response, status) = try await subscription(String(path.dropFirst(Self.subscriptionsPrefix.count)), request,
                                                        context: context)
        case "/v1/entitlements":
            (response, status) = try await entitlements(request, context: context)
        case _ where path.hasPrefix(Self.consumptionPrefix):
            (response, status) = try await consumption(String(path.dropFirst(Self.consumptionPrefix.count)), request,
                                                       context: context)
        case _ where Self.isEventsPath(path):
            (response, status) = try await events(path, request, context: context)
        case _ where path.hasPrefix(Self.statsPrefix):
            (response, status) = try await stats(String(path.dropFirst(Self.statsPrefix.count)), request, context: context)
        case Self.dashboardPath:
            (response, status) = try await dashboard(request, context: context)
        case Self.customerPagePath:
            (response, status) = try await customerPage(request, context: context)
        case _ where path.hasPrefix(Self.consentPrefix):
            (response, status) = try await consent(String(path.dropFirst(Self.consentPrefix.count)), request, context: context)
        case "/healthz" where request.method == .get || request.method == .head:
            (response, status) = (Self.text(.ok, "ok\n"), "200")
        case "/readyz" where request.method == .get || request.method == .head:
            (response, status) = await readiness(context: context)
        case "/metrics" where request.method == .get:
            let exposition = metrics.exposition(cache: verdict.verifier.cacheStatistics,
                                                revocation: verdict.verifier.revocationCacheStatistics)
            (response, status) = (Self.response(.ok, contentType: "text/plain; version=0.0.4; charset=utf-8", exposition), "200")
        case "/healthz", "/readyz", "/metrics":
            (response, status) = (Self.methodNotAllowed(allow: "GET"), "405")
        default:
            (response, status) = (Self.text(.notFound, "not found\n"), "404")
        }
        metrics.record(endpoint: endpointLabel(path), status: status, since: start)
        if accessLog {
            // The path only: a query may carry an app account token.
            let elapsed = (ContinuousClock.now - start).components
            let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
            context.logger.info("\(request.method) \(path) \(response.status.code) \(milliseconds) ms", metadata: [
                "method": "\(request.method)", "path": "\(path)", "status": "\(response.status.code)",
                "milliseconds": "\(milliseconds)",
            ])
        }
        return response
    }

    /// Apple's protocol: HTTP 200 whatever the outcome, the status in the JSON. Inlined, as
    /// `readBody`: each async call of its own is one more job on the event loop's queue
    /// (StoreResponder.Reply says why); inlined, the merged answer makes two fewer.
    @inline(__always) private func verifyReceipt(_ request: Request, context: Context, on endpoint: VerifyReceiptEndpoint) async throws -> (Response, String) {
        guard request.method == .post else {
            return (Self.json(.ok, VerifyReceiptEndpoint.notPostAnswer.bytes), String(LocalVerifyReceipt.notPost))
        }
        guard let body = try await readBody(request) else {
            let answer = VerifyReceiptEndpoint.tooLargeAnswer(limit: maxBodyBytes)
            return (Self.json(.ok, answer.bytes), String(answer.status))
        }
        let prepared = endpoint.prepare(body: body)
        let known: KnownSubscriptions?
        do {
            known = switch try stored?.known(prepared.subscriptionIDs) {
            case .now(let answer): answer
            case .later(let rest): try await rest()
            case nil: nil
            }
        } catch {
            // Not an answer from the receipt alone, which could be out of date: Apple's retry status.
            context.logger.error("store read failed: \(error)")
            let answer = VerifyReceiptEndpoint.storeUnavailableAnswer
            return (Self.json(.ok, answer.bytes), String(answer.status))
        }
        let answer = endpoint.answer(prepared, known: known)
        // Apple's answer says only 21002; the log (--verbose) says why.
        if let unreadable = answer.unreadable { context.logger.debug("21002: \(unreadable)") }
        var response = Self.json(.ok, answer.bytes)
        // Apple's JSON has no place for it: the key to de-duplicate on goes beside it.
        if let fingerprint = answer.fingerprint { response.headers[Self.fingerprintHeader] = ContentFingerprint.hex(fingerprint) }
        return (response, String(answer.status))
    }

    /// 200 with a verdict (valid or not), 400 when there is none (unreadable body,
    /// bad query parameter), 413 past the size limit.
    private func verify(_ request: Request) async throws -> (Response, String) {
        guard request.method == .post else { return (Self.methodNotAllowed(allow: "POST"), "405") }
        guard let body = try await readBody(request) else {
            let answer = VerdictEndpoint.refusal(
                ReceiptError(.inputTooLarge, "the request body is over \(maxBodyBytes) bytes"))
            return (Self.json(.contentTooLarge, answer.bytes), answer.status.name)
        }
        let query = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        var answer = verdict.answer(toBody: body, query: query)
        // Revocation on and no fresh OCSP answer cached (a first sight, or the refresher
        // behind): ask now, then judge again. In steady state the refresher has asked.
        if let payload = answer.revocationPending {
            let outcomes = await revocation.ask(about: payload, for: verdict.verifier)
            for outcome in outcomes { metrics.recordRevocation(outcome: outcome.label, reason: "request") }
            if outcomes.contains(where: { if case .accepted = $0 { true } else { false } }) {
                answer = verdict.answer(toBody: body, query: query)
            }
        }
        return (Self.json(answer.refusal == nil ? .ok : .badRequest, answer.bytes), answer.status.name)
    }

    /// App Store Server Notifications V2 (StoreResponder.receive).
    private func notification(_ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .post else { return (Self.methodNotAllowed(allow: "POST"), "405") }
        guard let stored else { return Self.noStore() }
        guard let body = try await readBody(request) else {
            let refusal = ReceiptError(.inputTooLarge, "the request body is over \(maxBodyBytes) bytes")
            return (Self.json(.contentTooLarge, NotificationEndpoint.refusal(refusal)), "413")
        }
        let (status, bytes) = await stored.receive(body: body, logger: context.logger)
        return (Self.json(status, bytes), String(status.code))
    }

    /// Retention Messaging: Apple's realtime request in, the rules' answer out (RetentionEndpoint);
    /// 400 with the reason for a request that does not verify (Apple then shows its default).
    private func realtime(_ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .post else { return (Self.methodNotAllowed(allow: "POST"), "405") }
        guard let retention else { return (Self.text(.notFound, "not found\n"), "404") }
        guard let body = try await readBody(request) else {
            let refusal = ReceiptError(.inputTooLarge, "the request body is over \(maxBodyBytes) bytes")
            return (Self.json(.contentTooLarge, NotificationEndpoint.refusal(refusal)), "413")
        }
        let reply = retention.answer(body: body)
        if let refusal = reply.refusal {
            context.logger.debug("realtime request refused: \(refusal.status.name): \(refusal.detail)")
            return (Self.json(.badRequest, reply.body), "400")
        }
        return (Self.json(.ok, reply.body), "200")
    }

    static let subscriptionsPrefix = "/v1/subscriptions/"

    private func subscription(_ id: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .get else { return (Self.methodNotAllowed(allow: "GET"), "405") }
        guard let stored else { return Self.noStore() }
        let caller = reads.caller(of: request.headers)
        guard caller != .refused else { return Self.unauthorized() }
        // Apple's ids are decimal digits; anything else cannot be known.
        guard !id.isEmpty, id.utf8.count <= 32, id.utf8.allSatisfy({ (48...57).contains($0) }) else {
            let refusal = ReceiptError(.invalidArgument, "an original transaction id is decimal digits (at most 32)")
            return (Self.json(.badRequest, NotificationEndpoint.refusal(refusal)), "400")
        }
        do {
            let (status, bytes) = switch try stored.subscription(id, mayLookUp: caller == .authenticated, logger: context.logger) {
            case .now(let answer): answer
            case .later(let rest): try await rest()
            }
            return (Self.json(status, bytes), String(status.code))
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }

    static let consentPrefix = "/v1/consent/"

    /// `GET /v1/consent/{appTransactionId}`: whether a RESCIND_CONSENT notification for the app transaction is stored.
    private func consent(_ id: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .get else { return (Self.methodNotAllowed(allow: "GET"), "405") }
        guard let stored else { return Self.noStore() }
        guard reads.caller(of: request.headers) != .refused else { return Self.unauthorized() }
        // Apple's app transaction ids are digits; letters, '-', '_' and '.' are let through, other bytes cannot be one.
        let allowed: (UInt8) -> Bool = { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95 || byte == 46
        }
        guard !id.isEmpty, id.utf8.count <= 64, id.utf8.allSatisfy(allowed) else {
            let refusal = ReceiptError(.invalidArgument, "an app transaction id is at most 64 letters, digits, '-', '_' or '.'")
            return (Self.json(.badRequest, NotificationEndpoint.refusal(refusal)), "400")
        }
        do {
            let (status, bytes) = try await stored.consent(appTransactionID: id)
            return (Self.json(status, bytes), String(status.code))
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }

    private func entitlements(_ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .get else { return (Self.methodNotAllowed(allow: "GET"), "405") }
        guard let stored else { return Self.noStore() }
        guard reads.caller(of: request.headers) != .refused else { return Self.unauthorized() }
        let query = request.uri.queryParameters
        guard let token = query.get("appAccountToken"), !token.isEmpty, token.utf8.count <= 64 else {
            let refusal = ReceiptError(.invalidArgument, "appAccountToken (a UUID) is required")
            return (Self.json(.badRequest, NotificationEndpoint.refusal(refusal)), "400")
        }
        let limit = query.get("limit").map { Int($0) ?? 0 } ?? StoreSchema.maxPageTransactions
        let cursorText = query.get("cursor")
        let cursor = cursorText.flatMap(StoreCursor.init)
        guard (1...StoreSchema.maxPageTransactions).contains(limit), cursorText == nil || cursor != nil else {
            let refusal = ReceiptError(.invalidArgument, "limit is 1 to \(StoreSchema.maxPageTransactions), and cursor "
                                       + "the next_cursor of an earlier page")
            return (Self.json(.badRequest, NotificationEndpoint.refusal(refusal)), "400")
        }
        do {
            let (status, bytes) = try await stored.entitlements(appAccountToken: token, cursor: cursor, limit: limit)
            return (Self.json(status, bytes), String(status.code))
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }

    /// `/readyz`: 200 when the server can do its work now (the store, when it has one, answers
    /// within `readinessSeconds`), else 503 saying what is missing; `/healthz` only says it is alive.
    private func readiness(context: Context) async -> (Response, String) {
        guard let stored else { return (Self.text(.ok, "ready\n"), "200") }
        do {
            try await ReceiptServer.withDeadline(seconds: Self.readinessSeconds) { try await stored.store.ping() }
            return (Self.text(.ok, "ready\n"), "200")
        } catch {
            context.logger.warning("not ready: the store does not answer: \(error)")
            return (Self.json(.serviceUnavailable, NotificationEndpoint.failure("STORE_UNAVAILABLE",
                                                                                "the store does not answer; the log says why")), "503")
        }
    }

    static let readinessSeconds = 2

    /// A read the store could not serve (gone away, past its deadline): 503, for the caller to ask again.
    static func storeUnavailable(_ error: any Error, _ context: Context) -> (Response, String) {
        context.logger.error("store read failed: \(error)")
        return (json(.serviceUnavailable, NotificationEndpoint.failure("STORE_UNAVAILABLE", "the store could not be read; ask again")),
                "503")
    }

    /// A read without a token the server accepts: 401, the same for a missing and a wrong one.
    /// 400 for a request whose arguments can never be taken, saying what they must be.
    static func badRequest(_ detail: String) -> (Response, String) {
        (json(.badRequest, NotificationEndpoint.refusal(ReceiptError(.invalidArgument, detail))), "400")
    }

    static func unauthorized() -> (Response, String) {
        var response = json(.unauthorized, NotificationEndpoint.failure(
            "UNAUTHORIZED", "reads need the header Authorization: Bearer TOKEN (the server's --read-token-file)"))
        response.headers[.wwwAuthenticate] = "Bearer"
        return (response, "401")
    }

    static func noStore() -> (Response, String) {
        return (json(.serviceUnavailable, NotificationEndpoint.failure("NO_STORE", "this server keeps no store: start it with --store FILE")), "503")
    }

    /// The body, or nil past maxBodyBytes: refused from Content-Length before any of
    /// it is read, or once that many bytes have arrived. Inlined, as `verifyReceipt`.
    @inline(__always) func readBody(_ request: Request) async throws -> [UInt8]? {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > maxBodyBytes { return nil }
        do {
            let buffer = try await request.body.collect(upTo: maxBodyBytes)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            return nil
        }
    }

    /// The receipt's fingerprint (ContentFingerprint) on /verifyReceipt answers.
    static let fingerprintHeader = HTTPField.Name("X-Receipt-Fingerprint")!

    static func json(_ status: HTTPResponse.Status, _ bytes: [UInt8]) -> Response {
        response(status, contentType: "application/json", bytes)
    }

    private static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        response(status, contentType: "text/plain; charset=utf-8", Array(text.utf8))
    }

    private static func response(_ status: HTTPResponse.Status, contentType: String, _ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func methodNotAllowed(allow: String) -> Response {
        var response = text(.methodNotAllowed, "method not allowed; use \(allow)\n")
        response.headers[.allow] = allow
        return response
    }

    /// Known paths by name; anything else as one label, so that scanners cannot
    /// grow the metrics without bound.
    func endpointLabel(_ path: String) -> String {
        switch path {
        case "/verifyReceipt", "/sandbox/verifyReceipt", "/v1/verify", "/healthz", "/readyz", "/metrics", "/v1/entitlements": path
        case notificationsPath: "notifications"
        case retentionPath where retention != nil: "retention"
        case _ where path.hasPrefix(Self.subscriptionsPrefix): "/v1/subscriptions"
        case _ where path.hasPrefix(Self.consentPrefix): "/v1/consent"
        case _ where Self.isEventsPath(path): "/v1/events"
        case _ where path.hasPrefix(Self.consumptionPrefix): "/v1/consumption"
        case _ where path.hasPrefix(Self.statsPrefix): "/v1/stats"
        case Self.dashboardPath, Self.customerPagePath: path
        default: "other"
        }
    }
}
