extension VerificationStep {
    public static let chain = VerificationStep(rawValue: "chain")
    public static let intermediateMarker = VerificationStep(rawValue: "intermediate_marker")
    public static let leafMarker = VerificationStep(rawValue: "leaf_marker")
}

/// The signer's chain to a trusted anchor at the receipt creation date
/// (ChainEstablishment).
struct ChainPolicy: ReceiptPolicy {
    var step: VerificationStep { .chain }

    func outcome(in context: VerificationContext) -> StepOutcome {
        switch context.chain {
        case .success(let chain):
            .passed("to the \(chain.anchorName) at \(context.receipt.receiptCreationDate?.text ?? "?")")
        case .failure(let error):
            .failed(error)
        }
    }
}

/// Apple's WWDR marker on the intermediate, decided when the chain was validated.
struct IntermediateMarkerPolicy: ReceiptPolicy {
    var step: VerificationStep { .intermediateMarker }

    func outcome(in context: VerificationContext) -> StepOutcome {
        (try? context.chain.get())?.intermediateMarker ?? .skipped("no chain was established")
    }
}

/// Apple's receipt-signing marker on the leaf, decided when the chain was validated.
struct LeafMarkerPolicy: ReceiptPolicy {
    var step: VerificationStep { .leafMarker }

    func outcome(in context: VerificationContext) -> StepOutcome {
        (try? context.chain.get())?.leafMarker ?? .skipped("no chain was established")
    }
}
