import Foundation
import ReceiptCore
import ReceiptServerAPIClient
import Testing

/// The Swift drop-in for Apple's SignedDataVerifier, on the resources of Apple's own tests
/// (../shared/fixtures/apple-library-tests: JWS signed by Apple's test CA), with the answers
/// Apple's verifier tests expect, where libreceipt answers alike.
enum AppleLibraryResources {
    static let url: URL? = {
        // This file, its folder, Tests/, Server/, the checkout: ../shared beside the checkout.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/fixtures/apple-library-tests")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()
}

@Suite(.enabled(if: AppleLibraryResources.url != nil, "../shared/fixtures/apple-library-tests is absent"))
struct SignedDataVerifierTests {
    private func text(_ path: String) throws -> String {
        try String(contentsOf: AppleLibraryResources.url!.appendingPathComponent(path), encoding: .utf8)
    }

    private func verifier(_ environment: ReceiptEnvironment, bundleId: String = "com.example",
                          appAppleId: Int64? = 1234) throws -> SignedDataVerifier {
        let root = try Data(contentsOf: AppleLibraryResources.url!.appendingPathComponent("certs/testCA.der"))
        return try SignedDataVerifier(rootCertificates: [Array(root)], bundleId: bundleId, appAppleId: appAppleId,
                                      environment: environment, enableOnlineChecks: false)
    }

    @Test func applesRenewalInfoCasesAnsweredAlike() async throws {
        let token = try text("mock_signed_data/renewalInfo")
        guard case .valid(let renewal) = await try verifier(.sandbox).verifyAndDecodeRenewalInfo(signedRenewalInfo: token) else {
            Issue.record("Apple's test_renewal_info_decoding: valid")
            return
        }
        #expect(renewal.string("environment") == "Sandbox")
        // test_renewal_info_invalid_environment
        guard case .invalid(let error) = await try verifier(.production).verifyAndDecodeRenewalInfo(signedRenewalInfo: token) else {
            Issue.record("Apple's test_renewal_info_invalid_environment: invalid")
            return
        }
        #expect(error == .INVALID_ENVIRONMENT)
    }

    /// Apple's real sandbox notification, to a production verifier of another app's Apple id: the
    /// environment fails before the app's Apple id, but Apple's verifier reaches the app's identifiers
    /// first in production (ReceiptCore's AppleVerificationStatus.refusal).
    @Test func aProductionVerifierOfAnotherAppAnswersInvalidAppIdentifier() async throws {
        let jws = AppleLibraryResources.url!.deletingLastPathComponent().appendingPathComponent("jws")
        let root = Array(try Data(contentsOf: jws.appendingPathComponent("certs/AppleRootCA-G3.pem")))  // PEM is taken
        let token = try String(contentsOf: jws.appendingPathComponent("apple/spb__01_notification_DID_RENEW.jws"),
                               encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        for (environment, expected) in [(ReceiptEnvironment.production, SignedDataVerifier.VerificationError.INVALID_APP_IDENTIFIER),
                                        (.sandbox, nil)] {
            let verifier = try SignedDataVerifier(rootCertificates: [root], bundleId: "com.loki-project.loki-messenger",
                                                  appAppleId: environment == .production ? 1 : 1470168868,
                                                  environment: environment, enableOnlineChecks: false)
            switch await verifier.verifyAndDecodeNotification(signedPayload: token) {
            case .valid: #expect(expected == nil)
            case .invalid(let error): #expect(error == expected)
            }
        }
    }

    @Test func theKindComesFromTheCallAndAMissingX5cIsAVerificationFailure() async throws {
        // Apple's renewal info names no kind: judged as the transaction the call asks for, it
        // names no bundle id, as Apple's verifier finds too.
        let renewal = try text("mock_signed_data/renewalInfo")
        guard case .invalid(let error) = await try verifier(.sandbox).verifyAndDecodeTransaction(signedTransaction: renewal) else {
            Issue.record("a renewal info verified as a transaction")
            return
        }
        #expect(error == .INVALID_APP_IDENTIFIER)
        let noX5c = try text("mock_signed_data/missingX5CHeaderClaim")
        guard case .invalid(let missing) = await try verifier(.sandbox).verifyAndDecodeNotification(signedPayload: noX5c) else {
            Issue.record("Apple's test_missing_x5c_header: invalid")
            return
        }
        #expect(missing == .VERIFICATION_FAILURE)
    }

    @Test func productionNeedsTheAppsAppleID() throws {
        #expect(throws: SignedDataVerifier.ConfigurationError.self) { try verifier(.production, appAppleId: nil) }
        #expect(AppleVerificationStatus(.bundleMismatch) == .INVALID_APP_IDENTIFIER)
        #expect(AppleVerificationStatus(.noCertificates) == .VERIFICATION_FAILURE)
    }
}
