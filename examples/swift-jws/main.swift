// Verifies a StoreKit 2 JWS and prints its steps and a few payload members.
// Run: swift run verify-jws-example FILE.jws [BUNDLE_ID [ANCHOR.pem]]
// With ANCHOR, that certificate is trusted instead of Apple Root CA - G3.
import Foundation
import ReceiptCore

let arguments = CommandLine.arguments
guard (2...4).contains(arguments.count), let token = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: verify-jws-example FILE.jws [BUNDLE_ID [ANCHOR.pem]]\n".utf8))
    exit(2)
}
do {
    var trust: TrustOptions = .appleRoot
    var anchors: [TrustAnchor] = []
    if arguments.count > 3, let pem = FileManager.default.contents(atPath: arguments[3]) {
        trust = []
        anchors = [try TrustAnchor([UInt8](pem))]
    }
    let verifier = ReceiptVerifier(trust: trust, anchors: anchors,
                                   policy: VerificationPolicy(bundleID: arguments.count > 2 ? arguments[2] : nil))
    let (payload, result) = try verifier.verify(jws: [UInt8](token))
    for entry in result.steps {
        print(entry.outcome.name.padding(toLength: 8, withPad: " ", startingAt: 0),
              entry.step.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0), entry.outcome.detail)
    }
    print("a \(payload.kind.rawValue): transaction \(payload.transactionID ?? "(none)") of \(payload.productID ?? "(none)")")
    print(result.isValid ? "VALID" : result.status.name)
    exit(result.isValid ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
