/// HTTP Basic authentication (RFC 7617), as a browser sends it when a page asks for a
/// user name and password: `Authorization: Basic base64(user ":" password)`.
public enum HTTPBasicCredentials {
    /// The password of an `Authorization` header value of the Basic scheme; nil for another
    /// scheme, base64 that does not decode, or text without the colon.
    public static func password(inAuthorization value: String) -> String? {
        let scheme = "basic "
        guard value.utf8.count > scheme.utf8.count, value.prefix(scheme.count).lowercased() == scheme,
              let decoded = try? Base64.decode(Array(value.utf8.dropFirst(scheme.utf8.count))),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(validating: decoded[(colon + 1)...], as: UTF8.self)
    }
}
