/// One known attribute as parsed: where its value bytes are in the payload, where
/// its text is in the text arena (strings and dates), and its number (integers,
/// booleans, or a date's epoch milliseconds). 24 bytes, no references, so that a
/// receipt with thousands of purchases stays a few flat arrays.
struct StoredValue {
    static let none = UInt32.max
    static let absent = StoredValue(valueOffset: none, valueLength: 0, textOffset: none, textLength: 0, number: 0)

    var valueOffset: UInt32
    var valueLength: UInt32
    var textOffset: UInt32
    var textLength: UInt32
    var number: Int64

    var isPresent: Bool { valueOffset != StoredValue.none }
}
