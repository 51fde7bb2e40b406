import Foundation
import ReceiptCore
import ReceiptServerAPIClient
import Testing

/// The Swift product against tools/mock_appstore_api.py on loopback: the same mock the
/// Python, C and command-line tests use, so every token is checked and every signed
/// member is verified for real (with the mock's test CA as the only anchor).
@Suite(.serialized)
struct MockServerTests {
    static let keyID = "KEY123ABCD", issuerID = "57246542-96fe-1a63-e053-0824d011072a", bundleID = "com.example.app"
    /// The checkout (this package is its Server/), where build/venv and tools/ are.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The mock, started once for the suite: (base URL, key PEM, test root PEM).
    static let mock: (url: String, key: [UInt8], root: [UInt8])? = {
        let python = packageRoot.appendingPathComponent("build/venv/bin/python3")
        guard FileManager.default.isExecutableFile(atPath: python.path) else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mock-api-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func run(_ executable: String, _ arguments: [String]) -> String? {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.currentDirectoryURL = directory
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return nil }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
        }
        guard run("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                                    "-out", "key.p8"]) != nil,
              let url = run(python.path, [packageRoot.appendingPathComponent("tools/mock_appstore_api.py").path,
                                          "--ca", "ca", "--key", "key.p8", "--key-id", keyID, "--issuer-id", issuerID,
                                          "--bundle-id", bundleID, "--background", "--idle-exit", "60"]),
              let key = FileManager.default.contents(atPath: directory.appendingPathComponent("key.p8").path),
              let root = FileManager.default.contents(atPath: directory.appendingPathComponent("ca/root.pem").path)
        else { return nil }
        return (url.trimmingCharacters(in: .whitespacesAndNewlines), [UInt8](key), [UInt8](root))
    }()

    static func client() throws -> AppStoreServerAPIClient {
        let mock = try #require(Self.mock, "the mock needs build/venv (make venv)")
        let verifier = ReceiptVerifier(trust: [], anchors: [try TrustAnchor(mock.root)],
                                       policy: VerificationPolicy(bundleID: bundleID, environment: .sandbox))
        return try AppStoreServerAPIClient(signingKey: mock.key, keyID: keyID, issuerID: issuerID, bundleID: bundleID,
                                           environment: .sandbox, baseURL: mock.url, verifier: verifier)
    }

    @Test func aWholeHistoryOverThreePagesEveryTransactionVerified() async throws {
        let client = try Self.client()
        var ids: [String] = []
        var pages = 0
        for try await page in client.pages("get_transaction_history", ["transactionId": .string("2000000000000001")]) {
            pages += 1
            let transactions = try #require(page.document["transactions"]?.arrayValue)
            #expect(transactions.count == page.document["signedTransactions"]?.arrayValue?.count)
            ids += transactions.compactMap { $0["transactionId"]?.stringValue }
        }
        #expect(pages == 3)
        #expect(ids == (0..<45).map { String(2000000000000100 + $0) })
    }

    @Test func applesMethodNamesAnswerWithVerifiedPayloads() async throws {
        let client = try Self.client()
        let info = try await client.getTransactionInfo(transactionId: "2000000000000100")
        #expect(info["transaction_info"]?["bundleId"]?.stringValue == Self.bundleID)
        let statuses = try await client.getAllSubscriptionStatuses(transactionId: "2000000000000001", status: [1])
        let last = try #require(statuses["data"]?.arrayValue?.first?["lastTransactions"]?.arrayValue?.first)
        #expect(last["renewal_info"]?["autoRenewProductId"]?.stringValue == "com.example.monthly")
        let page = try await client.getTransactionHistory(transactionId: "2000000000000001", revision: "rev-40")
        #expect(page["transactions"]?.arrayValue?.count == 5)
        #expect(page["hasMore"]?.boolValue == false)
    }

    @Test func applesRefusalsAndTamperingAreErrors() async throws {
        let client = try Self.client()
        do {
            _ = try await client.getTransactionInfo(transactionId: "2000000000099999")
            Issue.record("a missing transaction answered")
        } catch let refused as ServerAPIError {
            #expect(refused.failure.httpStatus == 404)
            #expect(refused.failure.errorName == "TRANSACTION_ID_NOT_FOUND")
        }
        var verified = 0
        do {
            for try await page in client.pages("get_transaction_history", ["transactionId": .string("9000000000000666")]) {
                verified += page.document["transactions"]?.arrayValue?.count ?? 0
            }
            Issue.record("a tampered page answered")
        } catch let error as ReceiptError {
            #expect(error.status == .signatureInvalid)
            #expect(error.detail.contains("signedTransactions[3]"))
        }
        #expect(verified == 20)
        await #expect(throws: ReceiptError.self) {
            _ = try await client.getTransactionHistory(transactionId: "1", revision: nil,
                                                       transactionHistoryRequest: ["sort": .string("UP")])
        }
    }
}
