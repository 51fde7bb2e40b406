import Foundation
@testable import ReceiptCore
import Testing

/// The App Store Server API's bearer token: made with keys minted here by the openssl
/// command, its signature checked by the openssl command too (an independent verifier).
struct ServerAPITokenTests {
    static let keyID = "2X9R4HXF34", issuerID = "57246542-96fe-1a63-e053-0824d011072a", bundleID = "com.example.app"

    /// Runs openssl with `arguments` in `directory`; its standard output.
    @discardableResult
    static func openssl(_ arguments: [String], in directory: URL) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " "))")
        return data
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func key(_ algorithm: [String], in directory: URL) throws -> [UInt8] {
        try openssl(["genpkey"] + algorithm + ["-out", "key.pem"], in: directory)
        return [UInt8](try Data(contentsOf: directory.appendingPathComponent("key.pem")))
    }

    static func credentials(in directory: URL) throws -> ServerAPICredentials {
        let pem = try key(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], in: directory)
        return try ServerAPICredentials(privateKeyPEM: pem, keyID: keyID, issuerID: issuerID, bundleID: bundleID)
    }

    static func decodedSegment(_ segment: Substring) throws -> [String: Any] {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theTokenIsAnES256JWTWithApplesHeaderAndClaims() throws {
        let directory = try Self.scratch()
        let credentials = try Self.credentials(in: directory)
        let token = try ServerAPIToken.make(credentials, issuedAt: 1_700_000_000, lifetime: 1200)
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(segments.count == 3)
        let header = try Self.decodedSegment(segments[0])
        #expect(header as NSDictionary == ["alg": "ES256", "kid": Self.keyID, "typ": "JWT"] as NSDictionary)
        let claims = try Self.decodedSegment(segments[1])
        #expect(claims as NSDictionary == ["iss": Self.issuerID, "iat": 1_700_000_000, "exp": 1_700_001_200,
                                           "aud": "appstoreconnect-v1", "bid": Self.bundleID] as NSDictionary)
        // The signature, checked by openssl with the key's public half.
        var signature = segments[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        signature += String(repeating: "=", count: (4 - signature.count % 4) % 4)
        let raw = [UInt8](try #require(Data(base64Encoded: signature)))
        #expect(raw.count == 64)
        try Data(ES256Signature.der(raw)).write(to: directory.appendingPathComponent("signature.der"))
        try Data("\(segments[0]).\(segments[1])".utf8).write(to: directory.appendingPathComponent("input"))
        try Self.openssl(["pkey", "-in", "key.pem", "-pubout", "-out", "public.pem"], in: directory)
        let verdict = try Self.openssl(["dgst", "-sha256", "-verify", "public.pem", "-signature", "signature.der", "input"],
                                       in: directory)
        #expect(String(decoding: verdict, as: UTF8.self).contains("Verified OK"))
        #expect(credentials.signingKey.verify(raw, over: Array("\(segments[0]).\(segments[1])".utf8)))
        #expect(!credentials.signingKey.verify(raw, over: Array("\(segments[0]).x".utf8)))
    }

    @Test func aTokenIsReusedUntilShortlyBeforeItExpires() throws {
        let source = try ServerAPITokenSource(try Self.credentials(in: try Self.scratch()), lifetimeSeconds: 600,
                                              renewalMarginSeconds: 60)
        let first = try source.token(now: 1_000)
        #expect(try source.token(now: 1_000) == first)
        #expect(try source.token(now: 1_539) == first)
        let renewed = try source.token(now: 1_540)  // 60 s before it would expire
        #expect(renewed != first)
        #expect(try source.token(now: 1_600) == renewed)
        #expect(try source.token(now: 900) != renewed, "a clock set back gets a token issued then")
        #expect(try Self.decodedSegment(renewed.split(separator: ".")[1])["exp"] as? Int == 2_140)
    }

    @Test func keysAndIDsAppleDoesNotIssueAreRefusedWhenTheClientIsMade() throws {
        let directory = try Self.scratch()
        let refusals: [(pem: [UInt8], what: String)] = [
            (try Self.key(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"], in: directory), "another curve"),
            (try Self.key(["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], in: directory), "not an EC key"),
            (Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8), "not a PEM private key"),
            (Array("hello".utf8), "not a PEM private key"),
            ([], "empty"),
        ]
        for (pem, what) in refusals {
            #expect(throws: ReceiptError.self, "\(what)") {
                try ServerAPICredentials(privateKeyPEM: pem, keyID: Self.keyID, issuerID: Self.issuerID, bundleID: Self.bundleID)
            }
            do {
                _ = try ServerAPICredentials(privateKeyPEM: pem, keyID: Self.keyID, issuerID: Self.issuerID, bundleID: Self.bundleID)
            } catch {
                #expect(error.status == .invalidArgument && error.detail.contains(what), "\(error)")
            }
        }
        let good = try Self.key(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], in: directory)
        // A key id is App Store Connect's 10 characters, an issuer id a UUID: the PEM passed as the
        // key id by a mix-up never reaches a token's header.
        for (keyID, issuerID, bundleID) in [("", Self.issuerID, Self.bundleID), (Self.keyID, " ", Self.bundleID),
                                            (Self.keyID, Self.issuerID, ""), ("KEY123", Self.issuerID, Self.bundleID),
                                            (String(decoding: good, as: UTF8.self), Self.issuerID, Self.bundleID),
                                            ("2x9r4hxf34", Self.issuerID, Self.bundleID),
                                            (Self.keyID, "not-a-uuid", Self.bundleID)] {
            #expect(throws: ReceiptError.self) {
                try ServerAPICredentials(privateKeyPEM: good, keyID: keyID, issuerID: issuerID, bundleID: bundleID)
            }
        }
        // The drop-ins' form takes what only Apple's server can judge (Apple's placeholders); either form
        // refuses what would leak a secret or break a header.
        let placeholders = try ServerAPICredentials(privateKeyPEM: good, keyID: "keyId", issuerID: "issuerId",
                                                    bundleID: "com.unknown", idForm: .headerSafe)
        let header = try Self.decodedSegment(try ServerAPIToken.make(placeholders, issuedAt: 1_700_000_000, lifetime: 600)
            .split(separator: ".")[0])
        #expect(header["kid"] as? String == "keyId")
        let longest = String(repeating: "K", count: ServerAPICredentials.IDForm.maxIDLength)
        #expect(throws: Never.self) {
            try ServerAPICredentials(privateKeyPEM: good, keyID: longest, issuerID: "i", bundleID: "b", idForm: .headerSafe)
        }
        for (keyID, issuerID, bundleID, says) in [("key Id", "issuerId", "b", "whitespace"), ("keyId\n", "issuerId", "b", "whitespace"),
                                                  ("key\u{7}Id", "issuerId", "b", "control"), ("keyId", "i\u{85}", "b", "issuer id"),
                                                  (String(decoding: good, as: UTF8.self), "issuerId", "b", "key id"),
                                                  ("keyId", "-----BEGIN", "b", "PEM armour"), (longest + "K", "issuerId", "b", "64"),
                                                  ("keyId", "issuerId", "com.example\u{2003}app", "bundle id"),
                                                  ("keyId", "\u{3000}", "b", "empty")] {
            for form in [ServerAPICredentials.IDForm.appStoreConnect, .headerSafe] {
                do {
                    _ = try ServerAPICredentials(privateKeyPEM: good, keyID: keyID, issuerID: issuerID, bundleID: bundleID,
                                                 idForm: form)
                    Issue.record("\(keyID.debugDescription), \(issuerID.debugDescription) were taken")
                } catch {
                    #expect(error.status == .invalidArgument && error.detail.contains(says), "\(error)")
                }
            }
        }
        let credentials = try ServerAPICredentials(privateKeyPEM: good, keyID: Self.keyID, issuerID: Self.issuerID,
                                                   bundleID: Self.bundleID)
        #expect(throws: ReceiptError.self) { try ServerAPIToken.make(credentials, issuedAt: 0, lifetime: 3601) }
        #expect(throws: ReceiptError.self) { try ServerAPITokenSource(credentials, lifetimeSeconds: 600, renewalMarginSeconds: 600) }
    }
}
