import Foundation
import ReceiptCore
import Testing

/// The real receipts in ../shared/fixtures/apple, which are never committed. Where
/// they are absent (a user's fresh clone), the tests that need them are skipped by name.
enum Fixtures {
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["RECEIPT_FIXTURES"] {
            return URL(fileURLWithPath: override)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("../shared/fixtures/apple").standardizedFileURL
    }()

    static var available: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("expected.jsonl").path)
    }

    static let skipReason: Comment = "../shared/fixtures/apple is absent: real-receipt tests skipped"

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }

    /// One object per line of a JSON Lines file: per receipt, from an independent decoder, by default.
    static func expectations(_ relativePath: String = "expected.jsonl") throws -> [[String: Any]] {
        let text = try String(contentsOf: directory.appendingPathComponent(relativePath), encoding: .utf8)
        return try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    static let receiptFiles = ["arv__hannes_mac_mindnode_receipt.der", "arv__mindnode_mac_sha256_receipt.der",
                               "asl__xcode-app-receipt-empty.der", "cbrv__sandboxReceipt.der", "kvitto__receipt.der",
                               "kvitto__storeKitTestReceipt.der", "rc__receiptsample1.der", "tp__freshReceipt.der",
                               "tp__receipt-production.der", "tp__receipt-sandbox-legacy.der",
                               "tp__receipt-xcode-with-purchases.der", "tp__receipt-xcode.der"]
}

func hex(_ bytes: [UInt8]?) -> String? {
    bytes.map { $0.map { String(format: "%02x", $0) }.joined() }
}

/// The real JWS in ../shared/fixtures/jws (Apple- and Xcode-signed), never committed,
/// read through Fixtures' helpers.
enum JWSFixtures {
    static var available: Bool {
        FileManager.default.fileExists(atPath: Fixtures.directory.appendingPathComponent("../jws/expected.jsonl").path)
    }

    static let skipReason: Comment = "../shared/fixtures/jws is absent: real-JWS tests skipped"

    static func bytes(_ relativePath: String) throws -> [UInt8] { try Fixtures.bytes("../jws/" + relativePath) }

    /// One object per JWS, from an independent check (openssl and Python `cryptography`).
    static func expectations() throws -> [[String: Any]] { try Fixtures.expectations("../jws/expected.jsonl") }

    static func path(of row: [String: Any]) -> String {
        ((row["x5c"] as? Int) == 1 ? "xcode/" : "apple/") + (row["file"] as! String)
    }
}
