import ReceiptCore
import ReceiptHeader

/// The settings a C caller accumulates before building a ReceiptVerifier.
final class VerifierBuilder {
    var trust: TrustOptions = .appleRoot
    var anchors: [TrustAnchor] = []
    var policy = VerificationPolicy()
}

/// Runs `body` on the builder a handle stands for, reporting a NULL handle.
func withBuilder(_ handle: OpaquePointer?, _ body: (VerifierBuilder) throws(ReceiptError) -> Void) -> receipt_status_t {
    status { () throws(ReceiptError) in try body(try required(object(handle, as: VerifierBuilder.self))) }
}

@c @implementation
public func receipt_verifier_builder_new(_ outBuilder: UnsafeMutablePointer<OpaquePointer?>?) -> receipt_status_t {
    status { () throws(ReceiptError) in try required(outBuilder).pointee = handle(VerifierBuilder()) }
}

@c @implementation
public func receipt_verifier_builder_free(_ builder: OpaquePointer?) {
    release(builder, as: VerifierBuilder.self)
}

@c @implementation
public func receipt_verifier_builder_set_trust(_ builder: OpaquePointer?, _ trustFlags: UInt32) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.trust = try TrustOptions(checkedRawValue: trustFlags) }
}

@c @implementation
public func receipt_verifier_builder_add_anchor(_ builder: OpaquePointer?, _ certificate: UnsafeRawPointer?, _ length: Int,
                                                _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let settings = try required(object(builder, as: VerifierBuilder.self))
        let bytes = UnsafeRawBufferPointer(start: try required(certificate), count: length)
        settings.anchors.append(try TrustAnchor(Array(bytes)))
    }
}

@c @implementation
public func receipt_verifier_builder_set_bundle_id(_ builder: OpaquePointer?,
                                                   _ bundleID: UnsafePointer<CChar>?) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.bundleID = try string(bundleID) }
}

@c @implementation
public func receipt_verifier_builder_set_application_version(_ builder: OpaquePointer?,
                                                             _ version: UnsafePointer<CChar>?) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.applicationVersion = try string(version) }
}

@c @implementation
public func receipt_verifier_builder_set_device_id(_ builder: OpaquePointer?, _ deviceID: UnsafePointer<UInt8>?,
                                                   _ length: Int) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in
        guard let deviceID else {
            settings.policy.deviceIdentifier = nil
            return
        }
        settings.policy.deviceIdentifier = try VerificationPolicy.checkedDeviceIdentifier(
            Array(UnsafeBufferPointer(start: deviceID, count: length)))
    }
}

@c @implementation
public func receipt_verifier_builder_set_now(_ builder: OpaquePointer?, _ nowMilliseconds: Int64) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.nowMilliseconds = nowMilliseconds }
}

@c @implementation
public func receipt_verifier_builder_clear_now(_ builder: OpaquePointer?) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.nowMilliseconds = nil }
}

@c @implementation
public func receipt_verifier_builder_set_environment(_ builder: OpaquePointer?,
                                                     _ value: receipt_environment_t) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.environment = try policyEnvironment(value) }
}

@c @implementation
public func receipt_verifier_builder_clear_environment(_ builder: OpaquePointer?) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.environment = nil }
}

/// Every receipt_environment_t a policy can require (the endpoints take two of them).
func policyEnvironment(_ value: receipt_environment_t) throws(ReceiptError) -> ReceiptEnvironment {
    switch value {
    case RECEIPT_ENVIRONMENT_XCODE: .xcode
    case RECEIPT_ENVIRONMENT_LOCAL_TESTING: .localTesting
    default: try environment(value).receiptEnvironment
    }
}

@c @implementation
public func receipt_verifier_builder_set_app_apple_id(_ builder: OpaquePointer?, _ appAppleID: Int64) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.appAppleID = appAppleID }
}

@c @implementation
public func receipt_verifier_builder_clear_app_apple_id(_ builder: OpaquePointer?) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in settings.policy.appAppleID = nil }
}

@c @implementation
public func receipt_verifier_build(_ builder: OpaquePointer?,
                                   _ outVerifier: UnsafeMutablePointer<OpaquePointer?>?) -> receipt_status_t {
    outVerifier?.pointee = nil
    return withBuilder(builder) { (settings) throws(ReceiptError) in
        let out = try required(outVerifier)
        out.pointee = handle(ReceiptVerifier(trust: settings.trust, anchors: settings.anchors, policy: settings.policy))
    }
}

@c @implementation
public func receipt_verifier_free(_ verifier: OpaquePointer?) {
    release(verifier, as: ReceiptVerifier.self)
}
