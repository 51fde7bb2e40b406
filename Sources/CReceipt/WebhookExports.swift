import ReceiptCore
import ReceiptHeader

// Standard Webhooks signatures (ReceiptCore's StandardWebhook): the check a receiver
// of `receipt serve`'s events makes.

@c @implementation
public func receipt_webhook_verify(_ secret: UnsafePointer<CChar>?, _ webhookID: UnsafePointer<CChar>?,
                                   _ webhookTimestamp: UnsafePointer<CChar>?, _ body: UnsafePointer<UInt8>?, _ bodyLength: Int,
                                   _ webhookSignature: UnsafePointer<CChar>?, _ nowSeconds: Int64, _ toleranceSeconds: Int64,
                                   _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        guard body != nil || bodyLength == 0 else { throw ReceiptError(.nullArgument, "body is NULL with a length") }
        let bytes = body.map { Array(UnsafeBufferPointer(start: $0, count: bodyLength)) } ?? []
        try StandardWebhook.verify(secret: try StandardWebhook.Secret(try required(string(secret))),
                                   id: try required(string(webhookID)), timestamp: try required(string(webhookTimestamp)),
                                   body: bytes, signatureHeader: try required(string(webhookSignature)),
                                   now: nowSeconds != 0 ? nowSeconds : ReceiptClock.systemNow() / 1000,
                                   toleranceSeconds: toleranceSeconds < 0 ? StandardWebhook.defaultToleranceSeconds : toleranceSeconds)
    }
}
