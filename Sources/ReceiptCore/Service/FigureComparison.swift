/// Two answers of one figure compared line by line (`receipt audit`: the figure from a store's
/// columns and the same figure recomputed from its JWS alone). Lines are compared as a multiset,
/// so that what one answer holds and the other does not is named, whatever the order.
public enum FigureComparison {
    /// The lines only `held` has, then the lines only `recomputed` has, each in its answer's order.
    public static func differences(held: [UInt8], recomputed: [UInt8]) -> (onlyHeld: [String], onlyRecomputed: [String]) {
        let heldLines = lines(held), recomputedLines = lines(recomputed)
        return (unmatched(heldLines, in: recomputedLines), unmatched(recomputedLines, in: heldLines))
    }

    /// The answer's lines, without their ends (CSV's are CRLF, RFC 4180).
    private static func lines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
    }

    /// The lines of `lines` left once each line of `other` has matched one equal line.
    private static func unmatched(_ lines: [String], in other: [String]) -> [String] {
        var available: [String: Int] = [:]
        for line in other { available[line, default: 0] += 1 }
        return lines.filter { line in
            guard let count = available[line], count > 0 else { return true }
            available[line] = count - 1
            return false
        }
    }
}
