#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_to_json(_ receipt: OpaquePointer?, _ flags: UInt32,
                            _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                            _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, parsed) = (try required(outJSON), try required(parsedReceipt(receipt)))
        try writeJSON(AppStoreReceiptJSON.render(parsed, indent: try jsonIndent(flags)), out, outLength)
    }
}

func jsonIndent(_ flags: UInt32) throws(ReceiptError) -> Int? {
    guard flags & ~RECEIPT_JSON_PRETTY == 0 else {
        throw ReceiptError(.invalidArgument, "unknown JSON flags 0x\(String(flags, radix: 16))")
    }
    return flags & RECEIPT_JSON_PRETTY != 0 ? 2 : nil
}

func writeJSON(_ json: String, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
               _ outLength: UnsafeMutablePointer<Int>?) throws(ReceiptError) {
    out.pointee = try ownedCString(json)
    outLength?.pointee = json.utf8.count
}

@c @implementation
public func receipt_string_free(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

/// A malloc'd NUL-terminated copy, so that receipt_string_free is plain free().
func ownedCString(_ text: String) throws(ReceiptError) -> UnsafeMutablePointer<CChar> {
    let bytes = Array(text.utf8)
    guard let memory = malloc(bytes.count + 1)?.assumingMemoryBound(to: CChar.self) else {
        throw ReceiptError(.noMemory, "out of memory for \(bytes.count + 1) bytes")
    }
    bytes.withUnsafeBufferPointer { source in
        UnsafeMutableRawPointer(memory).copyMemory(from: source.baseAddress!, byteCount: bytes.count)
    }
    memory[bytes.count] = 0
    return memory
}
