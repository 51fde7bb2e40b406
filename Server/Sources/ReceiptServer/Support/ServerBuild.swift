import CBuildInfo
import ReceiptCore

/// What this program is: the library's version and the commit `make` built it from
/// (scripts/stamp-commit.sh), for `receipt --version` and /metrics' receipt_build_info.
public enum ServerBuild {
    public static let version = ReceiptVersion.string.description
    public static let commit = String(cString: receipt_build_commit())
    /// `receipt --version`: "0.1.0 (commit 0123…)".
    public static let description = "\(version) (commit \(commit))"
}
