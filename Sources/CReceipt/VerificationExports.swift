#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader

/// A verification result with NUL-terminated copies of its step texts, which
/// C callers borrow for as long as the report lives.
final class VerificationReport {
    let result: VerificationResult
    let names: [UnsafeMutablePointer<CChar>]
    let details: [UnsafeMutablePointer<CChar>]

    init(_ result: VerificationResult) throws(ReceiptError) {
        self.result = result
        names = try result.steps.map { (entry) throws(ReceiptError) in try ownedCString(entry.step.rawValue) }
        details = try result.steps.map { (entry) throws(ReceiptError) in try ownedCString(entry.outcome.detail) }
    }

    deinit {
        (names + details).forEach { free($0) }
    }
}

@c @implementation
public func receipt_verify(_ verifier: OpaquePointer?, _ receipt: OpaquePointer?,
                           _ outResult: UnsafeMutablePointer<OpaquePointer?>?) -> receipt_status_t {
    outResult?.pointee = nil
    do throws(ReceiptError) {
        let checker = try required(object(verifier, as: ReceiptVerifier.self))
        let result = checker.verify(try required(parsedReceipt(receipt)))
        if let outResult { outResult.pointee = handle(try VerificationReport(result)) }
        result.firstFailure.map(LastError.record)
        return receipt_status_t(result.status)
    } catch {
        LastError.record(error)
        return receipt_status_t(error.status)
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
        let result = try checker.verify(encoded: UnsafeBufferPointer(start: data?.assumingMemoryBound(to: UInt8.self),
                                                                    count: length))
        if let outResult { outResult.pointee = handle(try VerificationReport(result)) }
        fill(outError, with: result.firstFailure)
        result.firstFailure.map(LastError.record)
        return receipt_status_t(result.status)
    } catch {
        fill(outError, with: error)
        LastError.record(error)
        return receipt_status_t(error.status)
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
        out.pointee = receipt_step_t(name: steps.names[index], outcome: kind, status: receipt_status_t(outcome.status),
                                     detail: steps.details[index])
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
