import ReceiptCore

/// The app and environment a store holds rows of, so that rows of one never answer for
/// another (a production server on a store a sandbox server writes would entitle
/// production accounts with sandbox purchases). The first server to start on a store
/// claims it for its environment and bundle ids, once the rows held show none of another
/// (every transaction and renewal info records the environment it was signed for, and a
/// transaction its bundle id: StoredFacts); a server started later for another
/// environment, or without one of the bundle ids the store was claimed for, is refused at
/// start, naming both. A server for more bundle ids than the claim widens it.
enum StoreIdentity {
    static let settingKey = "store_identity"

    struct Claim: Equatable, CustomStringConvertible {
        /// Apple's name (Production, Sandbox, Xcode, LocalTesting).
        let environment: String
        let bundleIDs: Set<String>

        /// `environment` then the bundle ids, sorted, one a line.
        var text: String { ([environment] + bundleIDs.sorted()).joined(separator: "\n") }

        init(environment: String, bundleIDs: Set<String>) {
            (self.environment, self.bundleIDs) = (environment, bundleIDs)
        }

        init?(text: String) {
            let lines = text.split(separator: "\n").map(String.init)
            guard let first = lines.first else { return nil }
            (environment, bundleIDs) = (first, Set(lines.dropFirst()))
        }

        var description: String { "\(environment) for \(bundleIDs.sorted().joined(separator: ", "))" }
    }

    /// The store's refusal of `claim`, naming both; nil when it is this server's (claimed now if it was no one's).
    static func claim(_ claim: Claim, on statements: some StoreStatements) async throws -> String? {
        let p = statements.dialect.placeholders(1...2)
        let held = try await statements.run("SELECT value FROM settings WHERE key = \(p[0])", [.text(settingKey)])
            .first?.first?.text.flatMap(Claim.init(text:))
        if let held {
            guard held.environment == claim.environment, held.bundleIDs.isSubset(of: claim.bundleIDs) else {
                return refusal(holding: "the rows of \(held)", claim)
            }
            guard held != claim else { return nil }
        } else if let others = try await rowsOutside(claim, on: statements) {
            return refusal(holding: "rows of \(others)", claim)
        }
        _ = try await statements.run("""
            INSERT INTO settings (key, value) VALUES (\(p[0]), \(p[1])) ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, [.text(settingKey), .text(claim.text)])
        return nil
    }

    /// The environments and apps of the rows held that `claim` does not cover, in words; nil when none.
    private static func rowsOutside(_ claim: Claim, on statements: some StoreStatements) async throws -> String? {
        let environments = try await statements.run("""
            SELECT DISTINCT environment FROM transactions WHERE environment IS NOT NULL
            UNION SELECT DISTINCT environment FROM renewal_infos WHERE environment IS NOT NULL
            """, []).compactMap { $0.first?.text }.filter { $0 != claim.environment }.sorted()
        let apps = try await statements.run("SELECT DISTINCT bundle_id FROM transactions WHERE bundle_id IS NOT NULL", [])
            .compactMap { $0.first?.text }.filter { !claim.bundleIDs.contains($0) }.sorted()
        let named = (environments.isEmpty ? [] : ["the environment " + environments.joined(separator: ", ")])
            + (apps.isEmpty ? [] : ["the app " + apps.joined(separator: ", ")])
        return named.isEmpty ? nil : named.joined(separator: " and ")
    }

    private static func refusal(holding held: String, _ claim: Claim) -> String {
        "the store holds \(held), and this server was started for \(claim): give each app and environment a store of its own"
    }
}
