#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
@_spi(ReceiptInternal) import ReceiptCore

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Time parsing and verification of receipts and JWS (medians, in nanoseconds).",
        discussion: """
            Verification uses the default anchors plus Xcode's and any --anchor, at the creation \
            date. A cold verifier is new for each receipt; a warm one has already verified a \
            receipt with the same chain. verify_* is the verdict from the bytes alone, as \
            receipt_verify_bytes gives it; parse_verify_* parses every field first, then verifies; \
            appstore_answer_warm is one verifyReceipt request body answered as `receipt serve` does, without HTTP. \
            A JWS gets decode (no verification), verify_cold and verify_warm (receipt_verify_jws).
            """)

    @Argument(help: "Receipt files (raw DER/BER or base64) or JWS files (compact).")
    var files: [String]

    @Option(help: "Trust this certificate (DER or PEM) as well; repeatable.")
    var anchor: [String] = []

    @Option(help: "Samples per figure; each sample times a batch of about 20 ms.")
    var samples = 7

    @Flag(help: "Print one JSON object per line per receipt.")
    var json = false

    func run() throws {
        let anchors: [TrustAnchor]
        do throws(ReceiptError) {
            anchors = try anchor.map { (path) throws(ReceiptError) in try optionFile("--anchor", path, TrustAnchor.init) }
        } catch {
            throw failOption(error)
        }
        let trust: TrustOptions = [.appleRoot, .xcodeStoreKit]
        for file in files {
            let bytes: [UInt8]
            do throws(ReceiptError) {
                bytes = try InputFile.read(file)
            } catch {
                throw fail(error, file: file)
            }
            if SignedFormat(of: bytes) == .jws {
                try benchJWS(file, bytes, trust: trust, anchors: anchors)
            } else {
                try benchReceipt(file, bytes, trust: trust, anchors: anchors)
            }
        }
    }

    private func benchReceipt(_ file: String, _ bytes: [UInt8], trust: TrustOptions, anchors: [TrustAnchor]) throws {
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(bytes)
        } catch {
            throw fail(error, file: file)
        }
        let warm = ReceiptVerifier(trust: trust, anchors: anchors)
        try requireValid(warm.verify(receipt), file)
        let parse = Timer.median(samples) { _ = try? Receipt.parse(bytes) }
        // The verdict alone, from bytes (no purchase typed), as receipt_verify_bytes gives it...
        let cold = Timer.median(samples) { verifyBytes(ReceiptVerifier(trust: trust, anchors: anchors), bytes) }
        let warmTime = Timer.median(samples) { verifyBytes(warm, bytes) }
        // ...and for a caller who reads every field as well: parse, then verify.
        let parseCold = Timer.median(samples) {
            if let parsed = try? Receipt.parse(bytes) { _ = ReceiptVerifier(trust: trust, anchors: anchors).verify(parsed) }
        }
        let parseWarm = Timer.median(samples) {
            if let parsed = try? Receipt.parse(bytes) { _ = warm.verify(parsed) }
        }
        // What `receipt serve` does for one POST /verifyReceipt, minus HTTP: Apple's
        // request body in, the whole answer out (at the receipt's own endpoint).
        let endpoint = VerifyReceiptEndpoint(environment: AppStoreEnvironment(receiptType: receipt.receiptType) ?? .production,
                                             verifier: warm)
        let body = Array(((try? VerifyReceiptRequest(receipt: bytes))?.jsonBody ?? "").utf8)
        let appStoreAnswer = Timer.median(samples) { _ = endpoint.answer(toBody: body, requestDateMilliseconds: 0) }
        report(file, [("bytes", Int64(bytes.count)), ("purchases", Int64(receipt.purchaseCount)), ("parse", parse),
                      ("verify_cold", cold), ("verify_warm", warmTime), ("parse_verify_cold", parseCold),
                      ("parse_verify_warm", parseWarm), ("appstore_answer_warm", appStoreAnswer)])
    }

    private func benchJWS(_ file: String, _ bytes: [UInt8], trust: TrustOptions, anchors: [TrustAnchor]) throws {
        let warm = ReceiptVerifier(trust: trust, anchors: anchors)
        let payload: SignedPayload, result: VerificationResult
        do throws(ReceiptError) {
            (payload, result) = try warm.verify(jws: bytes)
        } catch {
            throw fail(error, file: file)
        }
        try requireValid(result, file)
        let kind = payload.kind
        let decode = Timer.median(samples) { _ = try? SignedPayload.decode(bytes) }
        let cold = Timer.median(samples) { _ = try? ReceiptVerifier(trust: trust, anchors: anchors).verify(jws: bytes) }
        let warmTime = Timer.median(samples) { _ = try? warm.verify(jws: bytes) }
        report(file, [("bytes", Int64(bytes.count)), ("decode", decode), ("verify_cold", cold), ("verify_warm", warmTime)],
               format: "jws", type: kind.rawValue)
    }

    /// Timing a verification that fails would mislead.
    private func requireValid(_ verdict: VerificationResult, _ file: String) throws {
        guard verdict.isValid else {
            printToStandardError("receipt: \(file): does not verify (\(verdict.status.name)); timing it would mislead")
            throw ExitCode(1)
        }
    }

    private func report(_ file: String, _ figures: [(String, Int64)], format: String = "receipt", type: String? = nil) {
        if json {
            var writer = JSONWriter()
            writer.beginObject()
            writer.string("file", file)
            writer.string("format", format)
            if let type { writer.string("type", type) }
            for (name, value) in figures { writer.number(name, value) }
            writer.endObject()
            print(writer.string)
        } else {
            print("\(file): " + figures.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + " (ns; bytes as counted)")
        }
    }
}

private func verifyBytes(_ verifier: ReceiptVerifier, _ bytes: [UInt8]) {
    _ = bytes.withUnsafeBufferPointer { buffer in try? verifier.verify(encoded: buffer) }
}

/// Medians of batches sized to about 20 ms each, in nanoseconds per call.
enum Timer {
    static func median(_ samples: Int, _ body: () -> Void) -> Int64 {
        var batch = 1
        while true {
            let elapsed = time(batch, body)
            if elapsed > 5_000_000 || batch > 1 << 24 {
                batch = max(1, Int(Double(batch) * 20_000_000 / Double(max(elapsed, 1))))
                break
            }
            batch *= 4
        }
        let results = (0..<max(samples, 1)).map { _ in time(batch, body) / Int64(batch) }.sorted()
        return results[results.count / 2]
    }

    private static func time(_ count: Int, _ body: () -> Void) -> Int64 {
        let start = now()
        for _ in 0..<count { body() }
        return now() - start
    }

    private static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
