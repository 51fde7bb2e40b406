import ReceiptCore
import ReceiptHeader

/// Writes a fingerprint (ContentFingerprint) into the caller's 32 bytes.
private func write(_ fingerprint: [UInt8], _ out: UnsafeMutablePointer<UInt8>?) throws(ReceiptError) {
    try required(out).update(from: fingerprint, count: fingerprint.count)
}

@c @implementation
public func receipt_fingerprint(_ receipt: OpaquePointer?, _ outFingerprint: UnsafeMutablePointer<UInt8>?) -> receipt_status_t {
    status { () throws(ReceiptError) in try write(try required(parsedReceipt(receipt)).fingerprint, outFingerprint) }
}

@c @implementation
public func receipt_jws_fingerprint(_ jws: OpaquePointer?, _ outFingerprint: UnsafeMutablePointer<UInt8>?) -> receipt_status_t {
    status { () throws(ReceiptError) in try write(try required(jwsHandle(jws)).payload.fingerprint, outFingerprint) }
}

@c @implementation
public func receipt_verification_fingerprint(_ result: OpaquePointer?,
                                             _ outFingerprint: UnsafeMutablePointer<UInt8>?) -> receipt_status_t {
    status { () throws(ReceiptError) in try write(try required(report(result)).result.fingerprint, outFingerprint) }
}

@c @implementation
public func receipt_batch_fingerprint(_ batch: OpaquePointer?, _ row: Int,
                                      _ outFingerprint: UnsafeMutablePointer<UInt8>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let rows = try required(object(batch, as: BatchHandle.self)).batch.rows
        guard row >= 0 && row < rows.count else { throw ReceiptError(.indexOutOfRange, "row \(row) of \(rows.count)") }
        guard let fingerprint = rows[row].fingerprint else {
            throw ReceiptError(.absent, "row \(row) was not readable (\(rows[row].status.name)): it has no fingerprint")
        }
        try write(fingerprint, outFingerprint)
    }
}

@c @implementation
public func receipt_batch_fingerprints(_ batch: OpaquePointer?, _ outFingerprints: UnsafeMutablePointer<UInt8>?,
                                       _ capacity: Int) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (rows, out) = (try required(object(batch, as: BatchHandle.self)).batch.rows, try required(outFingerprints))
        guard capacity >= rows.count else {
            throw ReceiptError(.invalidArgument, "room for \(capacity) fingerprints; the batch has \(rows.count) rows")
        }
        for (index, row) in rows.enumerated() {
            let unreadable = [UInt8](repeating: 0, count: Int(RECEIPT_FINGERPRINT_SIZE))
            try write(row.fingerprint ?? unreadable, out + index * Int(RECEIPT_FINGERPRINT_SIZE))
        }
    }
}
