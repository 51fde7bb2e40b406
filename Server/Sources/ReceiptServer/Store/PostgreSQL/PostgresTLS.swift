import NIOSSL
import PostgresNIO
import ReceiptCore

/// libpq's `sslmode` as postgres-nio's TLS settings (see PostgresLocation.SSLMode): the same
/// TLS configuration for the pool and for the probe's one connection.
extension PostgresLocation {
    /// The TLS configuration for `sslMode`, or nil for `disable`; whether the server must
    /// speak TLS (`require` and the `verify-*` modes) or may answer in plain text (`prefer`).
    func tlsConfiguration() -> (configuration: TLSConfiguration, enforced: Bool)? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let sslRootCertificate { configuration.trustRoots = .file(sslRootCertificate) }
        switch sslMode {
        case .disable:
            return nil
        case .prefer:
            configuration.certificateVerification = .none
            return (configuration, false)
        case .require:
            // libpq: with a root certificate, require verifies the chain as verify-ca does.
            configuration.certificateVerification = sslRootCertificate == nil ? .none : .noHostnameVerification
            return (configuration, true)
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
            return (configuration, true)
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
            return (configuration, true)
        }
    }

    var clientTLS: PostgresClient.Configuration.TLS {
        guard let (configuration, enforced) = tlsConfiguration() else { return .disable }
        return enforced ? .require(configuration) : .prefer(configuration)
    }

    /// For one connection: the TLS context is made here, so that an unreadable sslrootcert is named.
    func connectionTLS() throws(ReceiptError) -> PostgresConnection.Configuration.TLS {
        guard let (configuration, enforced) = tlsConfiguration() else { return .disable }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ReceiptError(.invalidArgument, "the PostgreSQL URL's sslrootcert \(sslRootCertificate ?? "") cannot be "
                               + "read as PEM certificates: \(error)")
        }
        return enforced ? .require(context) : .prefer(context)
    }
}
