import ReceiptCore

/// Where a store is, checked before anything opens it: an SQLite file path, or a
/// postgres:// URL without a password. A password in the URL would show in the
/// process list and in every log that quotes the URL, so it comes from elsewhere:
/// a password file option, `PGPASSWORD`, or a `PGPASSFILE` (libpq's conventions).
public struct StoreLocation: Sendable, CustomStringConvertible {
    /// As given; holds no secret, so it may be shown.
    public let text: String
    /// The PostgreSQL password, from a file or the environment; nil for SQLite or none.
    let password: String?

    /// `password`: from a password file option or `PGPASSWORD`; `passFile`: the
    /// text of a PGPASSFILE (looked up when no password is given).
    public init(_ text: String, password: String?, passFile: String?) throws(ReceiptError) {
        guard !text.isEmpty else { throw ReceiptError(.invalidArgument, "--store is empty: give an SQLite file path or a postgres:// URL") }
        guard Self.isPostgres(text) else {
            guard text != ":memory:", !text.hasPrefix("file:") else {
                throw ReceiptError(.invalidArgument, "--store \(text): a store must outlive the process; give an SQLite file path")
            }
            // A mistyped URL (postgress://, mysql://, postgres:/db) is no file path, and may hold a password: never shown.
            guard !text.contains("://"), !Self.looksLikeURL(text) else {
                throw ReceiptError(.invalidArgument, "--store \(Self.masked(text)): neither an SQLite file path nor a "
                                   + "postgres:// URL")
            }
            self.text = text
            self.password = nil
            return
        }
        let url = try PostgresLocation(text)
        guard url.password == nil else {
            throw ReceiptError(.invalidArgument, "--store: the postgres:// URL holds a password, which would show in the process "
                               + "list; leave it out and give it with --store-password-file FILE, $PGPASSWORD or $PGPASSFILE")
        }
        self.text = text
        self.password = password ?? passFile.flatMap {
            PGPassFile.password(in: $0, host: url.host, port: url.port, database: url.database, user: url.user)
        }
    }

    /// The PostgreSQL database it names, with its password; nil for an SQLite file.
    func postgres() throws -> PostgresLocation? {
        guard isPostgres else { return nil }
        var url = try PostgresLocation(text)
        url.password = password
        return url
    }

    public var description: String { text }

    /// `scheme:/…` (`postgres:/db`, `sqlite:/x`) or `postgres…:` anything: a URL mistyped, not a file path.
    static func looksLikeURL(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        guard scheme.first?.isLetter == true,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "." || $0 == "-") }) else {
            return false
        }
        return text[text.index(after: colon)...].hasPrefix("/") || scheme.lowercased().hasPrefix("postgres")
    }

    /// Whether `text` names a PostgreSQL database (else an SQLite file).
    public static func isPostgres(_ text: String) -> Bool { PostgresLocation.isPostgres(text) }

    /// A URL not taken, shown by its scheme alone: however it is mistyped (`postgres:/u:pw@h/db`,
    /// no `@`, `Postgres://`), what follows the scheme may hold a password.
    static func masked(_ text: String) -> String {
        guard let colon = text.firstIndex(of: ":") else { return text }
        return String(text[...colon]) + "… (the rest not shown: it may hold a password)"
    }
    var isPostgres: Bool { PostgresLocation.isPostgres(text) }
}

/// libpq's password file: lines `host:port:database:username:password`, `*`
/// matching anything, `\:` and `\\` escaped, `#` starting a comment; the first
/// line that matches gives the password.
enum PGPassFile {
    static func password(in text: String, host: String, port: Int, database: String, user: String) -> String? {
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) where !line.hasPrefix("#") {
            let fields = Self.fields(of: line)
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The colon-separated fields of one line, escapes undone.
    private static func fields(of line: Substring) -> [String] {
        var fields: [String] = [], current = "", escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
