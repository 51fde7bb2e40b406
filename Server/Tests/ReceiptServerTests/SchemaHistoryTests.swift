import ReceiptCore
import Testing
@testable import ReceiptServer

/// The schema's versions are history: a store at version N runs versions N+1… as they were
/// written, and a store made by an earlier release and one made afresh must end alike. Each
/// version's statements, in both dialects, are pinned here; versions 6, 7, 8, 11, 12 and 13, which the
/// figures' generators once wrote, are kept as written in StoreSchemaHistory.
@Suite struct SchemaHistoryTests {
    /// The first 8 bytes of the SHA-256 of each version's statements in SQLite's words, then
    /// PostgreSQL's (all joined by a NUL). A change here is a change to a released schema: add a
    /// version instead.
    static let pinned = [
        "f04d63e89e1dfb6c",  // 1
        "c89e79c1aa5f81d9",  // 2
        "5a4a33b462603e32",  // 3
        "b8f310f89aa5bc3f",  // 4
        "e3b0c44298fc1c14",  // 5
        "7824380681bf9f95",  // 6
        "cebec97c66e39bdb",  // 7
        "b1a63fcc878a6432",  // 8
        "dadf61977c60dd57",  // 9
        "e3b0c44298fc1c14",  // 10
        "a378169145e0e9dc",  // 11
        "f0334a9297da61b1",  // 12
        "75416d3b2bd322c7",  // 13
        "00798fdb3965a459",  // 14
        "b7a5f4bd761f7f44",  // 15
        "dc8364bdff60c68a",  // 16
    ]

    static func fingerprint(of version: Int) -> String {
        let statements = StoreSchema.statements(of: version, .sqlite) + StoreSchema.statements(of: version, .postgres)
        return SharedSecret.fingerprint(statements.joined(separator: "\0"))
    }

    @Test func everyReleasedVersionIsAsItWasReleased() {
        #expect(StoreSchema.version >= Self.pinned.count, "a released version was removed")
        for (index, expected) in Self.pinned.enumerated() {
            #expect(Self.fingerprint(of: index + 1) == expected, "version \(index + 1)")
        }
    }

    /// The latest version's counts of the periods begun are counted as every write counts them
    /// (FlowDays): a store migrated to it and one kept by writes hold the same.
    @Test func theLatestFlowDaysFillIsTheWritesCounting() {
        #expect(StoreSchemaHistory.flowDaysWithRates.last == FlowDays.fill)
    }

    /// The pin tells versions apart: were it blind (the same for any statements), it would
    /// hold whatever changed.
    @Test func theFingerprintTellsVersionsApart() {
        let all = (1...Self.pinned.count).map(Self.fingerprint(of:))
        // Versions 5 and 10 hold no statements (StoreMigration derives their facts): one print.
        #expect(Set(all).count == all.count - 1)
        #expect(Self.fingerprint(of: 5) == Self.fingerprint(of: 10))
    }
}
