#if canImport(Glibc)
import Glibc
#endif
import Logging
@_spi(ReceiptInternal) import ReceiptCore

/// `receipt serve --log-format json`: one JSON object per line on standard error, for log
/// collectors: `time` (RFC 3339, UTC, milliseconds), `level`, `label`, `message`, and each
/// metadata value under its own key: an integer or a truth value given as one (`.stringConvertible`)
/// as a JSON number or boolean, anything else as text. Lines are written whole, one `write` each,
/// so that threads never interleave within a line.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
                    file: String, function: String, line: UInt) {
        var writer = JSONWriter()
        writer.beginObject()
        writer.string("time", RFC3339Format.utc(ReceiptClock.systemNow()))
        writer.string("level", level.rawValue)
        writer.string("label", label)
        writer.string("message", message.description)
        for (key, value) in metadata.merging(explicit ?? [:], uniquingKeysWith: { $1 }).sorted(by: { $0.key < $1.key })
        where !["time", "level", "label", "message"].contains(key) {
            switch value {
            case .stringConvertible(let integer as any BinaryInteger) where Int64(exactly: integer) != nil:
                writer.number(key, Int64(integer))
            case .stringConvertible(let truth as Bool): writer.bool(key, truth)
            default: writer.string(key, value.description)
            }
        }
        writer.endObject()
        var bytes = writer.bytes
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
