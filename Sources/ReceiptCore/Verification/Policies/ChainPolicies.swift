extension VerificationStep {
    public static let chain = VerificationStep(rawValue: "chain")
    public static let intermediateMarker = VerificationStep(rawValue: "intermediate_marker")
    public static let leafMarker = VerificationStep(rawValue: "leaf_marker")
}

/// The signer's chain to a trusted anchor at the receipt creation date
/// (ChainEstablishment), or at a JWS's signing date (JWSChainEstablishment).
struct ChainPolicy: CommonPolicy {
    var step: VerificationStep { .chain }

    func judge(_ context: some PolicyContext) -> StepOutcome {
        switch context.chain {
        case .success(let chain):
            .passed(context.detail("to the \(chain.anchorName) at \(context.chainInstant)"))
        case .failure(let error):
            .failed(error)
        }
    }
}

/// Apple's WWDR marker on the intermediate, decided when the chain was validated.
struct IntermediateMarkerPolicy: CommonPolicy {
    var step: VerificationStep { .intermediateMarker }

    func judge(_ context: some PolicyContext) -> StepOutcome {
        (try? context.chain.get())?.intermediateMarker ?? .skipped("no chain was established")
    }
}

/// Apple's receipt-signing marker on the leaf, decided when the chain was validated.
struct LeafMarkerPolicy: CommonPolicy {
    var step: VerificationStep { .leafMarker }

    func judge(_ context: some PolicyContext) -> StepOutcome {
        (try? context.chain.get())?.leafMarker ?? .skipped("no chain was established")
    }
}
