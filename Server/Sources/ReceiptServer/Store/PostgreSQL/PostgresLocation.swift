import ReceiptCore

/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]` (or
/// `postgresql://`), as libpq writes it; user, password, database and options percent-decoded.
/// TLS as libpq's `sslmode` says (PostgresTLS.swift).
struct PostgresLocation: Sendable, Equatable {
    let user: String
    var password: String?
    let host: String
    let port: Int
    let database: String
    /// libpq's `sslmode` (default `prefer`) and `sslrootcert`, from the URL's query.
    var sslMode = SSLMode.prefer
    var sslRootCertificate: String?

    /// libpq's modes: `disable` plain; `prefer` TLS when the server offers it, unverified;
    /// `require` TLS, unverified (verified as verify-ca when an sslrootcert is given, as libpq
    /// does); `verify-ca` TLS with a certificate that chains to sslrootcert; `verify-full` that,
    /// and for the host named (sslrootcert, else the system's roots).
    enum SSLMode: String, Sendable, CaseIterable {
        case disable, prefer, require, verifyCA = "verify-ca", verifyFull = "verify-full"
    }

    static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    init(_ url: String) throws(ReceiptError) {
        guard let scheme = url.range(of: "://"), Self.isPostgres(url) else {
            throw ReceiptError(.invalidArgument, "not a postgres:// URL")
        }
        let rest = url[scheme.upperBound...]
        guard let at = rest.lastIndex(of: "@"), let slash = rest[at...].firstIndex(of: "/") else {
            throw ReceiptError(.invalidArgument, "a PostgreSQL URL is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        let credentials = rest[..<at].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let address = rest[rest.index(after: at)..<slash]
        let path = rest[rest.index(after: slash)...]
        let database = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let userText = credentials.first, !userText.isEmpty, !address.isEmpty, !database.isEmpty else {
            throw ReceiptError(.invalidArgument, "a PostgreSQL URL is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
                               + "[?sslmode=MODE[&sslrootcert=FILE]]")
        }

        user = try Self.percentDecoded(userText)
        password = try credentials.count > 1 ? Self.percentDecoded(credentials[1]) : nil
        self.database = try Self.percentDecoded(database)
        if let colon = address.lastIndex(of: ":"), !address.hasSuffix("]") {
            guard let number = Int(address[address.index(after: colon)...]), (1...65535).contains(number) else {
                throw ReceiptError(.invalidArgument, "the PostgreSQL URL's port is not 1...65535")
            }
            host = String(address[..<colon])
            port = number
        } else {
            host = String(address)
            port = 5432
        }
        if let question = path.firstIndex(of: "?") {
            try readOptions(path[path.index(after: question)...])
        }
    }

    /// The URL's query: `sslmode` and `sslrootcert`, nothing else (a misspelt option is refused, not ignored).
    private mutating func readOptions(_ query: Substring) throws(ReceiptError) {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = try parts.count == 2 ? Self.percentDecoded(parts[1]) : ""
            switch parts[0] {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw ReceiptError(.invalidArgument, "the PostgreSQL URL's sslmode is one of "
                                       + SSLMode.allCases.map(\.rawValue).joined(separator: ", ") + "; got \"\(value)\"")
                }
                sslMode = mode
            case "sslrootcert":
                guard !value.isEmpty else { throw ReceiptError(.invalidArgument, "the PostgreSQL URL's sslrootcert is empty") }
                sslRootCertificate = value
            default:
                throw ReceiptError(.invalidArgument, "the PostgreSQL URL's option \"\(parts[0])\" is not one this "
                                   + "server reads (sslmode, sslrootcert)")
            }
        }
    }

    private static func percentDecoded(_ text: Substring) throws(ReceiptError) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        while index < text.utf8.endIndex {
            let byte = text.utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = text.utf8.index(after: index)
                guard high < text.utf8.endIndex, text.utf8.index(after: high) < text.utf8.endIndex,
                      let value = UInt8(String(text[high...text.utf8.index(after: high)]), radix: 16) else {
                    throw ReceiptError(.invalidArgument, "a '%' in the PostgreSQL URL is not followed by two hex digits")
                }
                bytes.append(value)
                index = text.utf8.index(high, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = text.utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
