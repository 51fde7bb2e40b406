import ReceiptCore
import Testing
@testable import ReceiptServer

/// ServerSettings validates itself (ServerSettings.validate), with the messages `receipt serve`
/// prints: each rule refuses what it should, naming the flag, and a usable configuration passes.
@Suite struct SettingsValidationTests {
    static let readToken = String(repeating: "r", count: ServerCredentials.minimumTokenCharacters)

    /// A production store of one app, with a read token: usable.
    static func storeSettings() throws -> ServerSettings {
        var settings = ServerSettings(verifier: ReceiptVerifier(policy: VerificationPolicy(
            bundleID: "com.example.app", environment: .production, appAppleID: 1_234_567_890)))
        settings.store = try StoreLocation("/tmp/receipt-settings-test.db", password: nil, passFile: nil)
        settings.credentials = try ServerCredentials(read: [readToken])
        return settings
    }

    /// The message `validate` refuses `settings` with, or nil when it takes them.
    static func refusal(_ settings: ServerSettings) -> String? {
        do throws(ReceiptError) {
            try settings.validate()
            return nil
        } catch {
            #expect(error.status == .invalidArgument)
            return error.detail
        }
    }

    @Test func theDefaultsAndAUsableStorePass() throws {
        #expect(Self.refusal(ServerSettings(verifier: ReceiptVerifier())) == nil)
        #expect(Self.refusal(try Self.storeSettings()) == nil)
        // The defaults are the one place the settings start from.
        let settings = ServerSettings(verifier: ReceiptVerifier())
        #expect(settings.port == ServerSettings.Defaults.port && settings.maxBodyBytes == ServerSettings.Defaults.maxBodyBytes)
        #expect(settings.notificationsPath == ServerSettings.Defaults.notificationsPath)
        #expect(settings.webhookPolicy.retry.initialBackoffMilliseconds == RetryPolicy().initialBackoffMilliseconds)
    }

    @Test func numbersOutOfRangeAreRefused() {
        let changes: [(inout ServerSettings) -> Void] = [
            { $0.port = 65_536 }, { $0.port = -1 }, { $0.maxBodyBytes = 0 }, { $0.workers = 0 }, { $0.maxConnections = 0 },
            { $0.requestTimeoutSeconds = 0 }, { $0.ocspTimeoutSeconds = -5 }, { $0.ocspRefreshBeforeSeconds = 0 },
        ]
        for change in changes {
            var settings = ServerSettings(verifier: ReceiptVerifier())
            change(&settings)
            #expect(Self.refusal(settings)?.hasPrefix("--port must be 0...65535") == true)
        }
        var settings = ServerSettings(verifier: ReceiptVerifier())
        settings.eventRetentionDays = ServerSettings.maxEventRetentionDays + 1
        #expect(Self.refusal(settings)?.contains("--event-retention-days") == true)
    }

    @Test func aStoreTakesOneAppInOneEnvironmentAndReadTokens() throws {
        var noBundle = try Self.storeSettings()
        noBundle.verifier = ReceiptVerifier(policy: VerificationPolicy(environment: .production, appAppleID: 1))
        #expect(Self.refusal(noBundle)?.contains("give --bundle-id") == true)
        var noEnvironment = try Self.storeSettings()
        noEnvironment.verifier = ReceiptVerifier(policy: VerificationPolicy(bundleID: "com.example.app"))
        #expect(Self.refusal(noEnvironment)?.contains("give --environment") == true)
        var noAppleID = try Self.storeSettings()
        noAppleID.verifier = ReceiptVerifier(policy: VerificationPolicy(bundleID: "com.example.app", environment: .production))
        #expect(Self.refusal(noAppleID)?.contains("--app-apple-id") == true)
        var sandbox = noAppleID
        sandbox.verifier = ReceiptVerifier(policy: VerificationPolicy(bundleID: "com.example.app", environment: .sandbox))
        #expect(Self.refusal(sandbox) == nil)  // only production notifications name the app's Apple id
        var noToken = try Self.storeSettings()
        noToken.credentials = .none
        #expect(Self.refusal(noToken)?.contains("--read-token-file") == true)
        noToken.credentials = try ServerCredentials(openReads: true)
        #expect(Self.refusal(noToken) == nil)
    }

    @Test func pathsOfOtherRoutesAreRefused() {
        // A %-escape too: requests are routed with theirs decoded, so "/v1/%73ubscriptions/x" would be a prefix route.
        for path in ["notifications", "/v1/verify", "/healthz", "/v1/subscriptions/anything", "/v1/%73ubscriptions/x", "/hooks/%7Eapple"] {
            var settings = ServerSettings(verifier: ReceiptVerifier())
            settings.notificationsPath = path
            #expect(Self.refusal(settings)?.hasPrefix("--notifications-path must start with /") == true, "\(path)")
        }
    }

    @Test func whatNeedsAStoreOrTheServerAPIIsRefusedWithout() throws {
        var settings = ServerSettings(verifier: ReceiptVerifier())
        settings.consumptionPolicy = try ConsumptionPolicy(json: Array(#"{"consentCollected": "terms", "products": {}}"#.utf8))
        #expect(Self.refusal(settings)?.hasPrefix("--consumption-policy answers through the App Store Server API") == true)
        var tooFewCalls = ServerSettings(verifier: ReceiptVerifier())
        tooFewCalls.lookupCallsPerMinute = 1
        #expect(Self.refusal(tooFewCalls) == "--api-calls-per-minute must be at least 2 (one look-up)")
    }
}
