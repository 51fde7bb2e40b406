import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP POST, waited for: the transport of `appstore-verify` and of the
/// revocation loop. What to send and what an answer means are ReceiptCore's.
enum HTTPPost {
    enum Failure: Error, CustomStringConvertible {
        case notAURL(String)
        case noAnswer(String, seconds: Double)
        case transport(String, String)

        var description: String {
            switch self {
            case .notAURL(let address): "not a URL: \(address)"
            case .noAnswer(let address, let seconds): "\(address): no answer within \(seconds) seconds"
            case .transport(let address, let reason): "\(address): \(reason)"
            }
        }
    }

    /// (HTTP status, body). The whole exchange gets `timeout` seconds: URLRequest's own
    /// timeout is an idle timeout, and FoundationNetworking rounds it to whole seconds.
    static func send(_ body: [UInt8], to address: String, contentType: String,
                     timeout: Double) -> Result<(Int, [UInt8]), Failure> {
        guard let url = URL(string: address) else { return .failure(.notAURL(address)) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<(Int, [UInt8]), Failure> = .failure(.noAnswer(address, seconds: timeout))
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                outcome = .failure(.transport(address, error.localizedDescription))
            } else {
                outcome = .success(((response as? HTTPURLResponse)?.statusCode ?? 0, [UInt8](data ?? Data())))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            task.cancel()
            return .failure(.noAnswer(address, seconds: timeout))
        }
        return outcome
    }
}
