// Parses a receipt file and prints its bundle id and purchases.
// Run: swift run print-receipt-example receipt.der
import Foundation
import ReceiptCore

guard CommandLine.arguments.count == 2,
      let data = FileManager.default.contents(atPath: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: PrintReceipt RECEIPT_FILE\n".utf8))
    exit(2)
}
do {
    let receipt = try Receipt.parse([UInt8](data))
    print("bundle id:", receipt.bundleID ?? "(none)")
    for purchase in receipt.purchases {
        print("  \(purchase.productID ?? "?")  transaction \(purchase.transactionID ?? "?")"
              + "  purchased \(purchase.purchaseDate?.text ?? "?")")
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
