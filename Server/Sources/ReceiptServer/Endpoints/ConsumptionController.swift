import HTTPTypes
import Hummingbird
import ReceiptCore

/// The answers to Apple's `CONSUMPTION_REQUEST`: `POST /v1/consumption/{transactionId}` with
/// Apple's V2 members (`customerConsented` true, `sampleContentProvided`, `deliveryStatus`,
/// `consumptionPercentage`, `refundPreference`) gives the app's answer to a request Apple made
/// (stored from its notification, awaiting an answer, within its 12 hours), which the server
/// sends (the write token); `GET` shows where it stands (a read token).
struct ConsumptionController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder
    /// The server's --max-body-bytes.
    let maxBodyBytes: Int

    func consumption(_ id: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard !id.isEmpty, id.utf8.count <= 20, id.utf8.allSatisfy({ (48...57).contains($0) }) else {
            return (ServerAnswer.json(.badRequest, ServerAnswer.refusal(ReceiptError(.invalidArgument,
                                                                                     "a transaction id is 1 to 20 digits"))), "400")
        }
        do {
            switch request.method {
            case .get:
                guard let row = try await stored.store.consumption({ statements, _ in
                    try await ConsumptionOutbox.row(transactionID: id, on: statements)
                }) else {
                    return ServerAnswer.failure(.notFound, "NOT_FOUND", "no consumption request or answer is stored for transaction \(id)")
                }
                return (ServerAnswer.json(.ok, row.json), "200")
            case .post:
                guard let body = try await ServerAnswer.body(of: request, upTo: maxBodyBytes) else {
                    return ServerAnswer.failure(.contentTooLarge, "TOO_LARGE", "the body is too large")
                }
                let arguments: [String: JSONValue]
                do throws(ReceiptError) {
                    arguments = try ConsumptionAnswer.arguments(transactionID: id, body: body)
                } catch {
                    return (ServerAnswer.json(.badRequest, ServerAnswer.refusal(error)), "400")
                }
                let text = ConsumptionAnswer.bodyText(arguments)
                let taken = try await stored.store.consumption { statements, now in
                    try await ConsumptionOutbox.answer(transactionID: id, body: text, source: "app", on: statements, at: now)
                }
                switch taken {
                case .success(let row):
                    stored.consumptionWake?.signal()
                    return (ServerAnswer.json(.accepted, row.json), "202")
                case .failure(let refusal):
                    let (status, code, detail): (HTTPResponse.Status, String, String) = switch refusal {
                    case .notAsked: (.notFound, "NOT_ASKED", "the App Store sent no CONSUMPTION_REQUEST for transaction \(id) "
                                     + "(none is stored): an answer is sent only when Apple asks")
                    case .answered: (.conflict, "ALREADY_ANSWERED", "Apple's request for transaction \(id) was already answered")
                    case .expired: (.gone, "EXPIRED", "Apple's 12 hours to answer its request for transaction \(id) are over")
                    }
                    return ServerAnswer.failure(status, code, detail)
                }
            default:
                return (ServerAnswer.methodNotAllowed(allow: "GET, POST"), "405")
            }
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }
}
