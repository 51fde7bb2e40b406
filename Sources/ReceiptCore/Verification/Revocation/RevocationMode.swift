/// What the `revocation` step of JWS verification asks of OCSP.
public enum RevocationMode: String, Sendable, CaseIterable {
    /// Not checked; the step is skipped. The default: a verdict then depends on
    /// nothing but the bytes and the time of signing, never on the network.
    case off
    /// A revoked certificate fails; a certificate without a fresh answer passes,
    /// with a warning in the step's detail (Apple's responder down or slow).
    case soft
    /// Only a fresh `good` answer for leaf and intermediate passes.
    case hard
}
