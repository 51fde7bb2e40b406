/// What a chain validation established, and the window of creation dates over
/// which it holds: path validation depends on time only through the validity of
/// the certificates on the path, so inside the intersection of their windows the
/// answer cannot change. The window excludes its end points, leaving the boundary
/// seconds to a full validation.
struct ValidatedChain: Sendable {
    let anchorName: String
    let notBefore: Int64
    let notAfter: Int64
    let intermediateMarker: StepOutcome
    let leafMarker: StepOutcome

    func holds(atEpochSeconds seconds: Int64) -> Bool { notBefore < seconds && seconds < notAfter }
}
