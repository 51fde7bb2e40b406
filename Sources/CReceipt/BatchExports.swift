import ReceiptCore
import ReceiptHeader

/// A batch as C holds it: the core's batch, whose receipts own their borrowed
/// strings, and a JWSHandle per JWS row, which owns the C copies of that row's.
final class BatchHandle {
    let batch: BatchVerification
    let signed: [JWSHandle?]
    init(_ batch: BatchVerification) {
        self.batch = batch
        signed = batch.rows.map { $0.signedPayload.map(JWSHandle.init) }
    }
}

/// Most inputs one batch call takes (receipt.h).
private let maxBatchInputs = 1 << 20

private func text(_ receipt: Receipt?, _ field: ReceiptField, purchase: Int? = nil) -> UnsafePointer<CChar>? {
    try? receipt?.borrowedText(field.rawValue, purchase: purchase).0
}

private func number(_ receipt: Receipt?, _ field: ReceiptField, purchase: Int? = nil,
                    as request: Receipt.NumberRequest = .integer) -> Int64 {
    (try? receipt?.number(field.rawValue, purchase: purchase, as: request)) ?? Int64.min  // RECEIPT_BATCH_ABSENT
}

private func flag(_ receipt: Receipt, _ field: ReceiptField, purchase: Int) -> Int32 {
    (try? receipt.number(field.rawValue, purchase: purchase, as: .integer)).map { $0 != 0 ? 1 : 0 } ?? -1
}

/// A JWS row's column as a C string kept by its handle (keyed by the column's name).
private func text(_ jws: JWSHandle, _ column: String, _ value: String?) -> UnsafePointer<CChar>? {
    value.flatMap { try? jws.cString(atPath: "\u{0}" + column, $0) }
}

private func number(_ value: Int64?) -> Int64 { value ?? Int64.min }  // RECEIPT_BATCH_ABSENT

@c @implementation
public func receipt_batch_verify(_ verifier: OpaquePointer?, _ inputs: UnsafePointer<UnsafeRawPointer?>?,
                                 _ lengths: UnsafePointer<Int>?, _ count: Int,
                                 _ outBatch: UnsafeMutablePointer<OpaquePointer?>?,
                                 _ outRows: UnsafeMutablePointer<receipt_batch_row_t>?) -> receipt_status_t {
    outBatch?.pointee = nil
    return status { () throws(ReceiptError) in
        let (checker, out, rowsOut) = (try required(object(verifier, as: ReceiptVerifier.self)), try required(outBatch),
                                       try required(outRows))
        guard count >= 0 && count <= maxBatchInputs else {
            throw ReceiptError(.invalidArgument, "\(count) inputs; a batch takes at most \(maxBatchInputs)")
        }
        guard count == 0 || (inputs != nil && lengths != nil) else { throw nullArgument }
        let buffers = (0..<count).map { index -> UnsafeBufferPointer<UInt8>? in
            inputs![index].map { UnsafeBufferPointer(start: $0.assumingMemoryBound(to: UInt8.self), count: lengths![index]) }
        }
        let held = BatchHandle(BatchVerification(buffers, verifier: checker))
        for (index, row) in held.batch.rows.enumerated() {
            let (status, valid) = (receipt_status_t(row.status), Int32(row.isValid ? 1 : 0))
            if let jws = held.signed[index] {
                let columns = jws.payload.batchRow
                rowsOut[index] = receipt_batch_row_t(
                    status: status, valid: valid, bundle_id: text(jws, "bundle_id", columns.bundleID),
                    application_version: text(jws, "application_version", columns.applicationVersion),
                    original_application_version: text(jws, "original_application_version",
                                                       columns.originalApplicationVersion),
                    receipt_type: text(jws, "receipt_type", columns.receiptType),
                    receipt_creation_date_ms: number(columns.creationDate), in_app_count: row.purchaseCount)
                continue
            }
            let receipt = row.receipt
            rowsOut[index] = receipt_batch_row_t(
                status: status, valid: valid,
                bundle_id: text(receipt, .bundleID), application_version: text(receipt, .applicationVersion),
                original_application_version: text(receipt, .originalApplicationVersion),
                receipt_type: text(receipt, .receiptType),
                receipt_creation_date_ms: number(receipt, .receiptCreationDate, as: .date),
                in_app_count: row.purchaseCount)
        }
        out.pointee = handle(held)
    }
}

@c @implementation
public func receipt_batch_purchase_count(_ batch: OpaquePointer?) -> Int {
    object(batch, as: BatchHandle.self)?.batch.purchaseCount ?? 0
}

@c @implementation
public func receipt_batch_purchases(_ batch: OpaquePointer?, _ outPurchases: UnsafeMutablePointer<receipt_batch_purchase_t>?,
                                    _ capacity: Int) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (held, out) = (try required(object(batch, as: BatchHandle.self)), try required(outPurchases))
        guard capacity >= held.batch.purchaseCount else {
            throw ReceiptError(.invalidArgument, "room for \(capacity) purchases; the batch has \(held.batch.purchaseCount)")
        }
        var next = 0
        for (rowIndex, row) in held.batch.rows.enumerated() {
            if let jws = held.signed[rowIndex], let purchase = row.signedTransaction?.batchPurchase {
                out[next] = receipt_batch_purchase_t(
                    row: rowIndex, product_id: text(jws, "product_id", purchase.productID),
                    transaction_id: text(jws, "transaction_id", purchase.transactionID),
                    original_transaction_id: text(jws, "original_transaction_id", purchase.originalTransactionID),
                    purchase_date_ms: number(purchase.purchaseDate),
                    original_purchase_date_ms: number(purchase.originalPurchaseDate),
                    expires_date_ms: number(purchase.expiresDate), cancellation_date_ms: number(purchase.cancellationDate),
                    quantity: number(purchase.quantity), web_order_line_item_id: number(purchase.webOrderLineItemID),
                    is_trial_period: purchase.isTrialPeriod ? 1 : 0,
                    is_in_intro_offer_period: purchase.isInIntroOfferPeriod ? 1 : 0)
                next += 1
            }
            guard let receipt = row.receipt else { continue }
            for purchase in 0..<receipt.purchaseCount {
                out[next] = receipt_batch_purchase_t(
                    row: rowIndex,
                    product_id: text(receipt, .productID, purchase: purchase),
                    transaction_id: text(receipt, .transactionID, purchase: purchase),
                    original_transaction_id: text(receipt, .originalTransactionID, purchase: purchase),
                    purchase_date_ms: number(receipt, .purchaseDate, purchase: purchase, as: .date),
                    original_purchase_date_ms: number(receipt, .inAppOriginalPurchaseDate, purchase: purchase, as: .date),
                    expires_date_ms: number(receipt, .expiresDate, purchase: purchase, as: .date),
                    cancellation_date_ms: number(receipt, .cancellationDate, purchase: purchase, as: .date),
                    quantity: number(receipt, .quantity, purchase: purchase),
                    web_order_line_item_id: number(receipt, .webOrderLineItemID, purchase: purchase),
                    is_trial_period: flag(receipt, .isTrialPeriod, purchase: purchase),
                    is_in_intro_offer_period: flag(receipt, .isInIntroOfferPeriod, purchase: purchase))
                next += 1
            }
        }
    }
}

@c @implementation
public func receipt_batch_free(_ batch: OpaquePointer?) {
    release(batch, as: BatchHandle.self)
}
