#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader
import Synchronization

/// A verification result with NUL-terminated copies of its step texts, which
/// C callers borrow for as long as the report lives. The copies are made on the
/// first receipt_verification_step_at: a caller that reads only the verdict pays
/// for none.
final class VerificationReport: @unchecked Sendable {  // immutable but for `texts`, which is locked
    let result: VerificationResult
    private let texts = Mutex<(names: [UnsafeMutablePointer<CChar>], details: [UnsafeMutablePointer<CChar>])?>(nil)

    init(_ result: VerificationResult) {
        self.result = result
    }

    deinit {
        texts.withLock { texts in texts.map { ($0.names + $0.details).forEach { free($0) } } }
    }

    /// The name and detail of step `index`, as C strings that live as long as the report.
    func cStrings(_ index: Int) throws(ReceiptError) -> (UnsafeMutablePointer<CChar>, UnsafeMutablePointer<CChar>) {
        try texts.withLock { (texts) throws(ReceiptError) in
            if texts == nil {
                var names: [UnsafeMutablePointer<CChar>] = [], details: [UnsafeMutablePointer<CChar>] = []
                do throws(ReceiptError) {
                    for entry in result.steps {
                        names.append(try ownedCString(entry.step.rawValue))
                        details.append(try ownedCString(entry.outcome.detail))
                    }
                } catch {
                    (names + details).forEach { free($0) }
                    throw error
                }
                texts = (names, details)
            }
            return (texts!.names[index], texts!.details[index])
        }
    }
}

@c @implementation
public func receipt_verify(_ verifier: OpaquePointer?, _ receipt: OpaquePointer?,
                           _ outResult: UnsafeMutablePointer<OpaquePointer?>?) -> receipt_status_t {
    outResult?.pointee = nil
    do throws(ReceiptError) {
        let checker = try required(object(verifier, as: ReceiptVerifier.self))
        let result = checker.verify(try required(parsedReceipt(receipt)), details: outResult != nil)
        if let outResult { outResult.pointee = handle(VerificationReport(result)) }
        return reportVerdict(result, nil)
    } catch {
        return reportFailure(error, nil)
    }
}

@c @implementation
public func receipt_verify_bytes(_ verifier: OpaquePointer?, _ data: UnsafeRawPointer?, _ length: Int,
                                 _ outResult: UnsafeMutablePointer<OpaquePointer?>?,
                                 _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outResult?.pointee = nil
    do throws(ReceiptError) {
        let checker = try required(object(verifier, as: ReceiptVerifier.self))
        guard data != nil || length == 0 else { throw nullArgument }
        let bytes = UnsafeBufferPointer(start: data?.assumingMemoryBound(to: UInt8.self), count: length)
        guard let outResult else { return reportVerdict(try checker.verdict(encoded: bytes), outError) }
        let result = try checker.verify(encoded: bytes)
        outResult.pointee = handle(VerificationReport(result))
        return reportVerdict(result, outError)
    } catch {
        return reportFailure(error, outError)
    }
}



func report(_ handle: OpaquePointer?) -> VerificationReport? { object(handle, as: VerificationReport.self) }

@c @implementation
public func receipt_verification_status(_ result: OpaquePointer?) -> receipt_status_t {
    receipt_status_t(report(result)?.result.status ?? .nullArgument)
}

@c @implementation
public func receipt_verification_step_count(_ result: OpaquePointer?) -> Int {
    report(result)?.result.steps.count ?? 0
}

@c @implementation
public func receipt_verification_step_at(_ result: OpaquePointer?, _ index: Int,
                                         _ outStep: UnsafeMutablePointer<receipt_step_t>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, steps) = (try required(outStep), try required(report(result)))
        guard index >= 0 && index < steps.result.steps.count else {
            throw ReceiptError(.indexOutOfRange, "step \(index) of \(steps.result.steps.count)")
        }
        let outcome = steps.result.steps[index].outcome
        let kind: receipt_step_outcome_t = switch outcome {
        case .passed: RECEIPT_STEP_PASSED
        case .skipped: RECEIPT_STEP_SKIPPED
        case .failed: RECEIPT_STEP_FAILED
        }
        let (name, detail) = try steps.cStrings(index)
        out.pointee = receipt_step_t(name: name, outcome: kind, status: receipt_status_t(outcome.status), detail: detail)
    }
}

@c @implementation
public func receipt_verification_to_json(_ result: OpaquePointer?, _ flags: UInt32,
                                         _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                         _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, steps) = (try required(outJSON), try required(report(result)))
        try writeJSON(steps.result.json(indent: try jsonIndent(flags)), out, outLength)
    }
}

@c @implementation
public func receipt_verification_free(_ result: OpaquePointer?) {
    release(result, as: VerificationReport.self)
}
