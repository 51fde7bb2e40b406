import HTTPTypes
import Hummingbird
import ReceiptCore

/// The answers to Apple's `CONSUMPTION_REQUEST`: `POST /v1/consumption/{transactionId}` with
/// Apple's V2 members (`customerConsented`, `sampleContentProvided`, `deliveryStatus`,
/// `consumptionPercentage`, `refundPreference`) gives the app's answer, which the server sends
/// (a token is required, even where reads are open); `GET` shows where it stands.
extension ReceiptResponder {
    static let consumptionPrefix = "/v1/consumption/"

    func consumption(_ id: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard let stored else { return Self.noStore() }
        let caller = reads.caller(of: request.headers)
        guard caller != .refused else { return Self.unauthorized() }
        guard !id.isEmpty, id.utf8.count <= 20, id.utf8.allSatisfy({ (48...57).contains($0) }) else {
            return (Self.json(.badRequest, NotificationEndpoint.refusal(ReceiptError(.invalidArgument,
                                                                                     "a transaction id is 1 to 20 digits"))), "400")
        }
        do {
            switch request.method {
            case .get:
                guard let row = try await stored.store.consumption({ statements, _ in
                    try await ConsumptionOutbox.row(transactionID: id, on: statements)
                }) else {
                    return (Self.json(.notFound, NotificationEndpoint.failure("NOT_FOUND", "no consumption request or answer "
                                                                              + "is stored for transaction \(id)")), "404")
                }
                return (Self.json(.ok, row.json), "200")
            case .post:
                guard caller == .authenticated else { return Self.unauthorized() }
                guard let body = try await readBody(request) else {
                    return (Self.json(.contentTooLarge, NotificationEndpoint.failure("TOO_LARGE", "the body is too large")), "413")
                }
                let arguments: [String: JSONValue]
                do throws(ReceiptError) {
                    arguments = try ConsumptionAnswer.arguments(transactionID: id, body: body)
                } catch {
                    return (Self.json(.badRequest, NotificationEndpoint.refusal(error)), "400")
                }
                let text = ConsumptionAnswer.bodyText(arguments)
                guard let row = try await stored.store.consumption({ statements, now in
                    try await ConsumptionOutbox.answer(transactionID: id, body: text, source: "app", on: statements, at: now)
                }) else {
                    return (Self.json(.conflict, NotificationEndpoint.failure("ALREADY_SENT", "an answer to this request was "
                                                                              + "already sent to the App Store")), "409")
                }
                stored.consumptionWake?.signal()
                return (Self.json(.accepted, row.json), "202")
            default:
                return (Self.methodNotAllowed(allow: "GET, POST"), "405")
            }
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }
}
