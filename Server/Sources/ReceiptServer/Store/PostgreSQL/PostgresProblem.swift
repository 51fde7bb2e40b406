#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// Why a PostgreSQL store cannot be used, in one line that says what to do, found by one
/// direct connection before the pool starts (whose retries would otherwise wait out the
/// start-up deadline and end in "no answer"): the role or its password refused, the
/// database absent, the host unknown, nothing listening, or no answer at all.
struct PostgresProblem: Error, CustomStringConvertible {
    let description: String

    /// Seconds the probe's one connection may take.
    static let probeSeconds = 5

    /// Connects once to `location` and closes; throws a PostgresProblem naming the cause.
    static func probe(_ location: PostgresLocation, logger: Logger) async throws {
        let configuration = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.user,
                                                             password: location.password, database: location.database,
                                                             tls: try location.connectionTLS())
        do {
            try await Deadline.within(seconds: probeSeconds) {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                try await connection.close()
            }
        } catch let deadline as Deadline.DeadlineExceeded {
            throw PostgresProblem(description: "no answer from \(location.host):\(location.port) within \(deadline.seconds) s: "
                                  + "is the host reachable, and is that PostgreSQL's port?")
        } catch {
            throw PostgresProblem(description: explanation(of: error, at: location))
        }
    }

    static func explanation(of error: any Error, at location: PostgresLocation) -> String {
        let place = "\(location.host):\(location.port)"
        if let problem = error as? PSQLError {
            if let state = problem.serverInfo?[.sqlState] {
                let message = problem.serverInfo?[.message] ?? "refused"
                switch state {
                case "28000" where message.contains("pg_hba.conf"):
                    // The server's access rules, not the password: say which way out there is.
                    return "PostgreSQL at \(place) refused the connection (\(message)): "
                        + (message.contains("no encryption") ? "it takes only TLS: add sslmode=require, verify-ca or "
                           + "verify-full to the --store URL" : "its pg_hba.conf needs a line for this host, user and database")
                case "28P01", "28000":
                    return "PostgreSQL at \(place) refused user \(location.user) (\(message)): check the role exists and its password "
                        + "(--store-password-file, $PGPASSWORD or ~/.pgpass)"
                case "3D000":
                    return "database \(location.database) does not exist at \(place): create it (createdb -O \(location.user) "
                        + "\(location.database))"
                default:
                    return "PostgreSQL at \(place) refused the connection: \(message) (SQLSTATE \(state))"
                }
            }
            if problem.code == .authMechanismRequiresPassword {
                return "PostgreSQL at \(place) asks user \(location.user) for a password and none was given: "
                    + "--store-password-file FILE, $PGPASSWORD or ~/.pgpass"
            }
            if problem.code == .sslUnsupported {
                return "PostgreSQL at \(place) does not offer TLS, which sslmode=\(location.sslMode.rawValue) requires: "
                    + "turn on ssl in the server, or use sslmode=prefer or disable on a private network"
            }
            if problem.code == .failedToAddSSLHandler {
                return "PostgreSQL at \(place): TLS could not be set up"
                    + (problem.underlying.map { " (\(explanation(of: $0, at: location)))" } ?? "")
            }
            if let underlying = problem.underlying { return explanation(of: underlying, at: location) }
            return "PostgreSQL at \(place): \(problem.code)"
        }
        if let connection = error as? NIOConnectionError {
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return "host \(location.host) not found (DNS): check the --store URL's host"
            }
            if let first = connection.connectionErrors.first { return explanation(of: first.error, at: location) }
        }
        if error is NIOSSLError || error is BoringSSLError {
            // BoringSSL's own text is a stack of internals; the one fact an operator needs is whether the certificate failed.
            let verification = "\(error)".contains("CERTIFICATE_VERIFY_FAILED")
            return "TLS with PostgreSQL at \(place) failed: " + (verification
                ? "the server's certificate does not verify against \(location.sslRootCertificate ?? "the system's roots")"
                  + (location.sslMode == .verifyFull ? " for host \(location.host)" : "")
                : "the handshake did not complete (sslmode=\(location.sslMode.rawValue))")
        }
        if let io = error as? IOError, io.errnoCode == ECONNREFUSED {
            return "nothing listens at \(place) (connection refused): is PostgreSQL running, and is that its port?"
        }
        if error is SocketAddressError {
            return "host \(location.host) not found: check the --store URL's host"
        }
        return "PostgreSQL at \(place): \(error)"
    }
}
