#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix

/// The one way this package's transports (the App Store Server API, OCSP)
/// carry a request: to the origin the core named and nowhere else, within one
/// deadline for the whole exchange, reading at most a given number of bytes.
///
/// AsyncHTTPClient's own `timeout` ends when the head arrives, so a responder
/// that sends its head and then one byte every few seconds would hold a caller
/// for as long as it likes; here the head and the body share one deadline.
/// And its shared client follows redirects, which would carry a bearer token to
/// whatever host a `Location` names; `noRedirects` follows none (the App Store
/// Server API and OCSP need none), so a 3xx comes back as the answer it is.
public enum BoundedExchange {
    /// A client that never follows a redirect, for every transport of this package.
    public static let noRedirects = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    public struct Answer: Sendable {
        public let status: Int
        public let headers: HTTPHeaders
        public let body: [UInt8]
    }

    public enum Failure: Error, CustomStringConvertible {
        case deadline(seconds: Double)
        case tooLarge(maxBytes: Int)

        public var description: String {
            switch self {
            case .deadline(let seconds): "no whole answer within \(seconds) s"
            case .tooLarge(let maxBytes): "the answer is larger than \(maxBytes) bytes"
            }
        }
    }

    /// Why an exchange got no answer, in words (NIO's own descriptions nest and leave
    /// parentheses open): refused, host not found, reset, a deadline, a TLS failure.
    public static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as Failure:
            return failure.description
        case let io as IOError:
            return String(cString: strerror(io.errnoCode)).lowercased()
        case let connection as NIOConnectionError:
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return "host \(connection.host) not found"
            }
            return connection.connectionErrors.first.map { reason($0.error) } ?? "cannot connect to \(connection.host)"
        case is SocketAddressError, is SocketAddressError.UnknownHost:
            return "host not found"
        case let client as HTTPClientError where client == .remoteConnectionClosed:
            return "the server closed the connection"
        case let client as HTTPClientError where client == .connectTimeout:
            return "no connection within the timeout"
        default:
            return "\(error)"
        }
    }

    /// What to do with a body longer than the bytes a caller reads.
    public enum BeyondMaxBytes: Sendable {
        /// Throw `Failure.tooLarge`: the answer is needed whole (an API's JSON, an OCSP answer).
        case refuse
        /// Keep the first bytes and close the connection: only the status matters (a webhook's 2xx).
        case cut
    }

    /// Sends `request` and reads its answer, head and body, within `timeout`
    /// from now and at most `maxBytes` of body; throws `Failure` past either (or,
    /// with `.cut`, keeps what fits), or what the client threw.
    public static func send(_ request: HTTPClientRequest, with client: HTTPClient, timeout: TimeAmount,
                            maxBytes: Int, beyondMaxBytes: BeyondMaxBytes = .refuse) async throws -> Answer {
        try await withThrowingTaskGroup(of: Answer?.self) { group in
            group.addTask {
                let response: HTTPClientResponse
                do {
                    response = try await client.execute(request, timeout: timeout)
                } catch let client as HTTPClientError where client == .deadlineExceeded || client == .readTimeout {
                    // The client's own deadline (the same instant as ours) ran out first: the same failure.
                    throw Failure.deadline(seconds: Double(timeout.nanoseconds) / 1e9)
                }
                var body = ByteBuffer()
                if beyondMaxBytes == .cut {
                    for try await var chunk in response.body {
                        let room = maxBytes - body.readableBytes
                        if chunk.readableBytes > room, let fits = chunk.readSlice(length: room) {
                            body.writeImmutableBuffer(fits)
                            break  // the rest is not read: the connection is closed, not reused
                        }
                        body.writeBuffer(&chunk)
                    }
                } else {
                    do {
                        body = try await response.body.collect(upTo: maxBytes)
                    } catch is NIOTooManyBytesError {
                        throw Failure.tooLarge(maxBytes: maxBytes)
                    }
                }
                return Answer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: body))
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(max(0, timeout.nanoseconds)))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let answer = first else {
                throw Failure.deadline(seconds: Double(timeout.nanoseconds) / 1e9)
            }
            return answer
        }
    }
}
