import NIOCore
@_spi(ReceiptInternal) import ReceiptCore

/// Refuses a chunked request body the moment one chunk declares more bytes than the
/// body limit, instead of reading on until the request deadline.
///
/// HTTP's decoder hands on a chunk's bytes as they come and never its declared size,
/// so a request announcing a chunk of `FFFFFFFFFFFFFFFF` bytes and sending three would
/// hold its connection until the deadline, and get no answer. This handler sits before
/// the decoder (`install(on:)`), passes every byte on untouched, and follows just
/// enough of HTTP/1.1's framing to read chunk sizes: the head up to its blank line
/// (Transfer-Encoding, Content-Length and the path), Content-Length bodies skipped,
/// chunk-size lines read, chunk data and trailers skipped, pipelined requests in turn.
/// Anything it does not follow (a head or a line past its bounds, which the decoder
/// refuses itself) ends its watch on that connection; it never refuses what the
/// decoder would accept within the limit. The refusal is written at once and the
/// connection closed; requests pipelined in the same read before the refused one are
/// not passed on (answering them first would need the responses' order), so they go
/// unanswered with the connection, as HTTP allows.
final class ChunkedBodyLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The raw HTTP/1.1 answer for a refused body of a request to `path`.
    typealias Refusal = @Sendable (_ path: String) -> [UInt8]

    /// Longest head and chunk-size line followed; past them the decoder's own limits apply.
    static let maxHeadBytes = 80 * 1024
    static let maxLineBytes = 1024

    private enum State {
        case head
        case fixedBody(remaining: UInt64)
        case chunkSize
        case chunkData(remaining: UInt64)
        case trailers
        case refused
        case unwatched
    }

    private let maxBodyBytes: UInt64
    private let refusal: Refusal
    private var state = State.head
    /// The head, chunk-size line or trailer line read so far.
    private var pending: [UInt8] = []
    /// The request target of the head read last, up to any query: named in a refusal.
    private var path: [UInt8] = []

    init(maxBodyBytes: Int, refusal: @escaping Refusal) {
        self.maxBodyBytes = UInt64(max(0, maxBodyBytes))
        self.refusal = refusal
    }

    /// Puts a new handler first in `pipeline`, before HTTP's decoder.
    static func install(on pipeline: ChannelPipeline.SynchronousOperations, maxBodyBytes: Int,
                        refusal: @escaping Refusal) throws {
        try pipeline.addHandler(ChunkedBodyLimitHandler(maxBodyBytes: maxBodyBytes, refusal: refusal), position: .first)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .refused = state { return }  // the answer is sent; the rest is dropped
        let buffer = unwrapInboundIn(data)
        if case .unwatched = state { return context.fireChannelRead(data) }
        let refused = buffer.withUnsafeReadableBytes { follow(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[...])) }
        if refused {
            state = .refused
            let answer = context.channel.allocator.buffer(bytes: refusal(String(decoding: path, as: UTF8.self)))
            // Closing once the answer is written, on the channel's own loop (the context is not Sendable).
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(NIOAny(answer)).whenComplete { _ in bound.value.close(promise: nil) }
            return
        }
        context.fireChannelRead(data)
    }

    /// Follows the framing through `bytes`; true when a chunk declares more than the limit.
    private func follow(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            switch state {
            case .refused, .unwatched:
                return false
            case .fixedBody(let remaining), .chunkData(let remaining):
                let step = Int(min(remaining, UInt64(bytes.count - index)))
                index += step
                let left = remaining - UInt64(step)
                if case .fixedBody = state {
                    state = left == 0 ? .head : .fixedBody(remaining: left)
                } else {
                    state = left == 0 ? .chunkSize : .chunkData(remaining: left)
                }
            case .head:
                guard let end = take(bytes, &index, until: [13, 10, 13, 10], bound: Self.maxHeadBytes) else { continue }
                state = readHead(pending[..<end])
                pending.removeAll(keepingCapacity: true)
            case .chunkSize:
                guard let end = take(bytes, &index, until: [13, 10], bound: Self.maxLineBytes) else { continue }
                let size = chunkSize(pending[..<end])
                pending.removeAll(keepingCapacity: true)
                guard let size else { state = .unwatched; continue }  // malformed: the decoder answers 400
                if size > maxBodyBytes { return true }
                state = size == 0 ? .trailers : .chunkData(remaining: size + 2)  // and its CRLF
            case .trailers:
                guard let end = take(bytes, &index, until: [13, 10], bound: Self.maxHeadBytes) else { continue }
                state = end == 0 ? .head : .trailers  // a blank line ends the trailers
                pending.removeAll(keepingCapacity: true)
            }
        }
        return false
    }

    /// Appends bytes to `pending` until `terminator` ends it: the length before the
    /// terminator, or nil when more bytes are needed (past `bound` the watch ends).
    /// Both terminators end in LF, so bytes are copied a line at a time and only a
    /// line's end is compared: a head costs a few copies, not a step per byte.
    private func take(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, until terminator: [UInt8],
                      bound: Int) -> Int? {
        while index < bytes.count {
            let lineFeed = bytes[index...].firstIndex(of: 10)
            let end = lineFeed.map { $0 + 1 } ?? bytes.count
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
            index = end
            if lineFeed != nil, pending.count >= terminator.count,
               pending[(pending.count - terminator.count)...].elementsEqual(terminator) {
                return pending.count - terminator.count
            }
            if pending.count > bound {
                state = .unwatched  // the decoder's own limits apply from here
                return nil
            }
        }
        return nil
    }

    /// What follows the head: a chunked body, a Content-Length body, or the next request.
    /// Read in place, making no String: this runs on every request.
    private func readHead(_ head: ArraySlice<UInt8>) -> State {
        var chunked = false
        var length: UInt64?
        var isRequestLine = true
        var lineStart = head.startIndex
        while lineStart < head.endIndex {
            let lineFeed = head[lineStart...].firstIndex(of: 10) ?? head.endIndex
            var line = head[lineStart..<lineFeed]
            lineStart = lineFeed == head.endIndex ? lineFeed : lineFeed + 1
            if line.last == 13 { line = line.dropLast() }
            if isRequestLine {
                isRequestLine = false
                let target = line.drop { $0 != 32 }.drop { $0 == 32 }.prefix { $0 != 32 && $0 != UInt8(ascii: "?") }
                path.removeAll(keepingCapacity: true)
                path.append(contentsOf: target)
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = line[..<colon]
            let value = Self.trimmed(line[(colon + 1)...])
            if Self.equalsIgnoringCase(name, "transfer-encoding") {
                chunked = chunked || Self.endsIgnoringCase(value, "chunked")
            } else if Self.equalsIgnoringCase(name, "content-length") {
                length = Self.decimal(value)
            }
        }
        if chunked { return .chunkSize }
        if let length, length > 0 { return .fixedBody(remaining: length) }
        return .head
    }

    private static func trimmed(_ value: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        var value = value.drop(while: isSpace)
        while let last = value.last, isSpace(last) { value = value.dropLast() }
        return value
    }

    /// ASCII compared without case; `lowercase` is given in lower case.
    private static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard bytes.count == expected.count else { return false }
        return zip(bytes, expected).allSatisfy { byte, lower in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == lower
        }
    }

    private static func endsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        bytes.count >= lowercase.utf8CodeUnitCount
            && equalsIgnoringCase(bytes.suffix(lowercase.utf8CodeUnitCount), lowercase)
    }

    /// A Content-Length's value: decimal digits only, as the decoder takes them; nil past UInt64.
    private static func decimal(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            value = sum
        }
        return value
    }

    /// The chunk size a line declares (hex digits before any extension), or nil when
    /// malformed; more than 16 digits count as past any limit.
    private func chunkSize(_ line: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        for byte in line {
            guard let digit = hexDigitValue(byte) else { return digits == 0 ? nil : value }
            digits += 1
            if digits > 16 { return UInt64.max }
            value = value << 4 | UInt64(digit)
        }
        return digits == 0 ? nil : value
    }
}

extension ChunkedBodyLimitHandler {
    /// Listed among Hummingbird's handlers (which come after HTTP's decoder), it puts a
    /// ChunkedBodyLimitHandler before the decoder when its connection is set up, and goes.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        private let maxBodyBytes: Int
        private let refusal: Refusal

        init(maxBodyBytes: Int, refusal: @escaping Refusal) {
            self.maxBodyBytes = maxBodyBytes
            self.refusal = refusal
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            do {
                try ChunkedBodyLimitHandler.install(on: pipeline, maxBodyBytes: maxBodyBytes, refusal: refusal)
            } catch {
                context.close(promise: nil)  // a connection we cannot guard is not served
            }
            pipeline.removeHandler(context: context, promise: nil)
        }
    }

    /// The answers `receipt serve` gives a body refused this way, by the route the path names
    /// (the method is not looked at: the refusal comes before the decoder has read it): Apple's
    /// 21002 on the verifyReceipt routes, 413 with the verdict's refusal on /v1/verify, 413 with
    /// the server's error body on any other route, the responder's 404 on a path that is none;
    /// each with the headers every answer carries, the connection closed after it.
    static func serverRefusal(maxBodyBytes: Int, routes: ServerRoutes) -> Refusal {
        let detail = "a chunk of the request body declares more than the \(maxBodyBytes) bytes allowed"
        let apple = VerifyReceiptEndpoint.tooLargeAnswer(limit: maxBodyBytes).bytes
        let verdict = VerdictEndpoint.refusal(ReceiptError(.inputTooLarge, detail)).bytes
        let tooLarge = ServerAnswer.refusal(ReceiptError(.inputTooLarge, detail))
        let json = ServerAnswer.jsonType
        return { path in
            let (status, type, body) = switch routes.route(for: path)?.route.name {
            case .verifyReceipt?, .sandboxVerifyReceipt?: ("200 OK", json, apple)
            case .verify?: ("413 Content Too Large", json, verdict)
            case nil: ("404 Not Found", ServerAnswer.textType, Array(ServerAnswer.noRouteText.utf8))
            default: ("413 Content Too Large", json, tooLarge)
            }
            return Array(("HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
                          + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n").utf8) + body
        }
    }
}
