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

    /// The most of an answer read: verifyReceipt's answers and OCSP's are some KB.
    static let maxAnswerBytes = 16 << 20

    /// (HTTP status, body). The whole exchange gets `timeout` seconds: URLRequest's own
    /// timeout is an idle timeout, and FoundationNetworking rounds it to whole seconds.
    /// No redirect is followed (a 3xx is the answer; the body may carry a shared
    /// secret), and reading stops past `maxAnswerBytes`.
    static func send(_ body: [UInt8], to address: String, contentType: String,
                     timeout: Double) -> Result<(Int, [UInt8]), Failure> {
        guard let url = URL(string: address) else { return .failure(.notAURL(address)) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body)
        let reader = BoundedReader(address: address, maxBytes: maxAnswerBytes)
        let session = URLSession(configuration: .ephemeral, delegate: reader, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: request)
        task.resume()
        if reader.done.wait(timeout: .now() + timeout) == .timedOut {
            task.cancel()
            return .failure(.noAnswer(address, seconds: timeout))
        }
        return reader.outcome
    }
}

/// Collects one answer: refuses every redirect, stops past `maxBytes`.
private final class BoundedReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    private let address: String
    private let maxBytes: Int
    private let lock = NSLock()
    private var data = Data()
    private var failure: HTTPPost.Failure?
    private var finished: Result<(Int, [UInt8]), HTTPPost.Failure>?

    init(address: String, maxBytes: Int) {
        self.address = address
        self.maxBytes = maxBytes
    }

    var outcome: Result<(Int, [UInt8]), HTTPPost.Failure> {
        lock.withLock { finished ?? .failure(.transport(address, "no answer")) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over = lock.withLock { () -> Bool in
            self.data.append(data)
            guard self.data.count > maxBytes else { return false }
            failure = .transport(address, "the answer is larger than \(maxBytes) bytes; reading stopped there")
            return true
        }
        if over { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.withLock {
            if let failure {
                finished = .failure(failure)
            } else if let error {
                finished = .failure(.transport(address, error.localizedDescription))
            } else {
                finished = .success(((task.response as? HTTPURLResponse)?.statusCode ?? 0, [UInt8](data)))
            }
        }
        done.signal()
    }
}
