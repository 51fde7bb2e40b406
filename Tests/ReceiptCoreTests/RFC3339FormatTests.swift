@_spi(ReceiptInternal) @testable import ReceiptCore
import Testing

/// Step details write every instant one way, for receipts and JWS alike (RFC3339Format).
struct RFC3339FormatTests {
    @Test func stepDetailsWriteInstantsInOneRFC3339Form() {
        #expect(RFC3339Format.utc(0) == "1970-01-01T00:00:00Z")
        #expect(RFC3339Format.utc(1_709_287_200_250) == "2024-03-01T10:00:00.250Z")
        #expect(RFC3339Format.utc(1_709_287_200_005) == "2024-03-01T10:00:00.005Z")
        #expect(RFC3339Format.utc(-1) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339Format.utc(253_402_300_800_000) == "10000-01-01T00:00:00Z")  // past four digits: the wide form
        // Read back by the CLI's own parser of --now: the same instant.
        for instant: Int64 in [0, 1_709_287_200_250, -1, 253_402_300_799_000] {
            #expect(ReceiptDateText.epochMilliseconds(RFC3339Format.utc(instant)) == instant)
        }
    }
}
