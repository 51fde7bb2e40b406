#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ReceiptCore

/// Reading a whole file or standard input, without Foundation.
enum InputFile {
    /// The whole file; past `maxBytes`, refused without reading on.
    static func read(_ path: String, maxBytes: Int = .max) throws(ReceiptError) -> [UInt8] {
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw ReceiptError(.invalidArgument, "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var bytes = [UInt8]()
        // A regular file's size is known: reserving it spares the doubling copies
        // that would otherwise make a large input cost three times its size here.
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_size > 0 {
            guard status.st_size <= maxBytes else { throw ReceiptError(.invalidArgument, "larger than \(maxBytes) bytes") }
            bytes.reserveCapacity(Int(status.st_size))
        }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReceiptError(.invalidArgument, "cannot read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            guard count <= maxBytes - bytes.count else { throw ReceiptError(.invalidArgument, "larger than \(maxBytes) bytes") }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

func printToStandardError(_ message: String) {
    var line = Array((message + "\n").utf8)
    line.withUnsafeMutableBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// For a line a script waits on (`serve`'s port): stdout is block-buffered in a pipe.
func flushStandardOutput() {
    fflush(nil)  // every stream; naming `stdout` is not concurrency-safe in Swift 6
}
