import Testing
@testable import ReceiptCore

/// MoneyText: Apple's milliunits as a page shows them, in the currency's minor units.
struct MoneyTextTests {
    private func text(_ milliunits: Int64, _ currency: String) -> String {
        MoneyText.text(milliunits: milliunits, currency: currency)
    }

    @Test func eachCurrencyHasItsMinorUnitsAndSymbol() {
        #expect(text(94_930, "USD") == "$94.93")
        #expect(text(1_200_000, "JPY") == "¥1,200")
        #expect(text(39_990, "EUR") == "€39.99")
        #expect(text(12_500, "CHF") == "CHF 12.50")
        #expect(text(1_234, "BHD") == "BHD 1.234")
        #expect(text(5_000, "CAD") == "CA$5.00")
        #expect(text(0, "GBP") == "£0.00")
    }

    @Test func thousandsAreGroupedAndNegativesSigned() {
        #expect(text(1_234_567_890, "USD") == "$1,234,567.89")
        #expect(text(-4_490, "EUR") == "-€4.49")
        #expect(text(-1_000_000_000, "KRW") == "-₩1,000,000")
        #expect(text(100_000, "USD") == "$100.00")
    }

    /// Half away from zero, to the currency's minor unit; what rounds to zero has no sign.
    @Test func fractionsOfTheMinorUnitRoundHalfAwayFromZero() {
        #expect(text(4_995, "USD") == "$5.00")
        #expect(text(4_994, "USD") == "$4.99")
        #expect(text(-4_995, "USD") == "-$5.00")
        #expect(text(1_499, "JPY") == "¥1")
        #expect(text(1_500, "JPY") == "¥2")
        #expect(text(-4, "USD") == "$0.00")
    }

    /// No currency (a row without one) keeps the milliunits' three digits; the extremes never trap.
    @Test func noCurrencyAndTheExtremes() {
        #expect(text(4_990, "") == "4.990")
        #expect(text(.max, "USD") == "$9,223,372,036,854,775.81")
        #expect(text(.min, "USD") == "-$9,223,372,036,854,775.81")
        #expect(text(.min, "") == "-9,223,372,036,854,775.808")
    }
}
