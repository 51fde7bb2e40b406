/// Sums and products over values a signature vouches for but no range bounds (prices, counts,
/// dates in signed JSON): held at the nearest bound where they would overflow, instead of
/// trapping, so that no figure asked of a server can end its process.
extension Int64 {
    @inlinable public func clampedAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    @inlinable public func clampedMultiplied(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : product
    }
}
