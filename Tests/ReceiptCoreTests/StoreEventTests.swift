@testable import ReceiptCore
import Testing

/// The events `receipt serve` hands on: their stable names, and their Standard Webhooks signatures.
struct StoreEventTests {
    @Test func everyAppleNotificationTypeHasAStableName() {
        #expect(StoreEventType.of(notificationType: "SUBSCRIBED", subtype: "INITIAL_BUY") == "subscription.started")
        #expect(StoreEventType.of(notificationType: "SUBSCRIBED", subtype: "RESUBSCRIBE") == "subscription.resubscribed")
        #expect(StoreEventType.of(notificationType: "DID_RENEW", subtype: "BILLING_RECOVERY") == "subscription.billing_recovered")
        #expect(StoreEventType.of(notificationType: "DID_FAIL_TO_RENEW", subtype: nil) == "subscription.billing_retry_started")
        #expect(StoreEventType.of(notificationType: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE") == "subscription.downgrade_scheduled")
        #expect(StoreEventType.of(notificationType: "REFUND", subtype: nil) == "purchase.refunded")
        #expect(StoreEventType.of(notificationType: "RESCIND_CONSENT", subtype: nil) == "consent.rescinded")
        // A type Apple adds later is delivered under its own name, not lost or mislabelled.
        #expect(StoreEventType.of(notificationType: "SOMETHING_NEW", subtype: "X") == "notification.something_new")
    }

    @Test func theSignatureIsTheSpecificationsAndEveryAlterationIsRefused() throws {
        // The Standard Webhooks specification's example (its reference libraries' test vector).
        let secret = try StandardWebhook.Secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
        let signature = try StandardWebhook.signature(secret: secret, id: id, timestamp: 1614265330, body: body)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        try StandardWebhook.verify(secret: secret, id: id, timestamp: "1614265330", body: body, signatureHeader: signature,
                                   now: 1614265330)
        let refusals: [(String, String, [UInt8], String, Int64, ReceiptStatus)] = [
            (id, "1614265330", body + [0x20], signature, 1614265330, .signatureInvalid),
            (id, "1614265330", body, signature, 1614265330 + 301, .signatureInvalid),
            ("", "1614265330", body, signature, 1614265330, .badField),
            (id, "-1", body, signature, 1614265330, .badField),
            (id, "1614265330", body, "v0,abc", 1614265330, .badField),
        ]
        for (id, timestamp, body, header, now, status) in refusals {
            #expect { try StandardWebhook.verify(secret: secret, id: id, timestamp: timestamp, body: body, signatureHeader: header, now: now) }
                throws: { ($0 as? ReceiptError)?.status == status }
        }
        #expect { _ = try StandardWebhook.Secret("whsec_" + String(repeating: "A", count: 400)) }
            throws: { ($0 as? ReceiptError)?.status == .invalidArgument }
    }
}
