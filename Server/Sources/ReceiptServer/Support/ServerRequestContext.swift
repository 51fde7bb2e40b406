import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, and the connection it came on, whose peer address
/// ClientThrottle counts failed credentials by (read only when a credential is checked).
struct ServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// The fingerprint of the token the request was admitted with (SharedSecret.fingerprint);
    /// nil for a route open to all, or a read where reads are open and no token was given.
    var credential: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The peer's IP address; "unknown" for a connection without one (a test's embedded channel).
    var clientAddress: String { channel.remoteAddress?.ipAddress ?? "unknown" }
}
