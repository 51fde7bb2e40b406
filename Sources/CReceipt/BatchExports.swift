import ReceiptCore
import ReceiptHeader

/// A batch as C holds it: the core's batch, whose receipts own every borrowed string.
final class BatchHandle {
    let batch: BatchVerification
    init(_ batch: BatchVerification) { self.batch = batch }
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
        let batch = BatchVerification(buffers, verifier: checker)
        for (index, row) in batch.rows.enumerated() {
            let receipt = row.receipt
            rowsOut[index] = receipt_batch_row_t(
                status: receipt_status_t(row.status), valid: row.isValid ? 1 : 0,
                bundle_id: text(receipt, .bundleID), application_version: text(receipt, .applicationVersion),
                original_application_version: text(receipt, .originalApplicationVersion),
                receipt_type: text(receipt, .receiptType),
                receipt_creation_date_ms: number(receipt, .receiptCreationDate, as: .date),
                in_app_count: receipt?.purchaseCount ?? 0)
        }
        out.pointee = handle(BatchHandle(batch))
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
