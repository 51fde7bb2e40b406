/// Money as a person reads it: Apple's milliunits (a `price` of 4990 in USD is $4.99) in the
/// currency's minor units (ISO 4217: two digits for most, none for JPY or KRW, three for BHD or
/// KWD), rounded half away from zero, thousands grouped by commas, after the currency's symbol
/// where English writes one that names no other currency (`$94.93`, `¥1,200`, `€39.99`,
/// `CA$5.00`) and after its code otherwise (`CHF 12.50`). The figures' JSON and CSV keep the
/// exact milliunits; this is for pages only.
public enum MoneyText {
    public static func text(milliunits: Int64, currency: String) -> String {
        let digits = minorDigits(of: currency)
        let scale: UInt64 = [1, 10, 100, 1000][digits]  // minor units in a unit
        let step = 1000 / scale  // milliunits in a minor unit
        let magnitude = milliunits.magnitude
        // Half away from zero (a step of 1 leaves no remainder); Int64.min's magnitude leaves room for it in a UInt64.
        let minor = magnitude / step + (magnitude % step >= (step + 1) / 2 ? 1 : 0)
        var amount = grouped(minor / scale)
        if digits > 0 {
            let fraction = String(minor % scale)
            amount += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        let sign = milliunits < 0 && minor > 0 ? "-" : ""
        if let symbol = symbols[currency] { return sign + symbol + amount }
        return currency.isEmpty ? sign + amount : sign + currency + " " + amount
    }

    /// The digits after the point ISO 4217 gives `currency` (its minor unit); two for a code it
    /// does not list here. Never more than three: milliunits hold no more.
    static func minorDigits(of currency: String) -> Int {
        if noMinorUnit.contains(currency) { return 0 }
        if thousandths.contains(currency) { return 3 }
        return currency.isEmpty ? 3 : 2
    }

    /// ISO 4217's currencies with no minor unit.
    static let noMinorUnit: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF",
        "XPF",
    ]

    /// ISO 4217's currencies with thousandths (and those with more, which milliunits cannot show).
    static let thousandths: Set<String> = ["BHD", "CLF", "IQD", "JOD", "KWD", "LYD", "OMR", "TND", "UYW"]

    /// The symbols English writes before an amount, each naming one currency only.
    static let symbols: [String: String] = [
        "USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹", "KRW": "₩", "ILS": "₪", "VND": "₫",
        "NGN": "₦", "PHP": "₱", "CNY": "CN¥", "CAD": "CA$", "AUD": "A$", "NZD": "NZ$", "HKD": "HK$",
        "MXN": "MX$", "BRL": "R$", "TWD": "NT$",
    ]

    /// `value` with a comma between each three digits from the right.
    private static func grouped(_ value: UInt64) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return text
    }
}
