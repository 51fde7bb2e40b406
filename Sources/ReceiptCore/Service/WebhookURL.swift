/// The URL a webhook is delivered to: https, or http only to a loopback host (a
/// receiver on this machine), since events carry customers' purchases; no user name or
/// password in it, no query (a receiver's token there shows in `ps`: the webhook secret
/// authenticates the sender), a port, when given, of 1 to 65535; printable ASCII, at most
/// 2,048 bytes.
public enum WebhookURL {
    public static func checked(_ text: String) throws(ReceiptError) -> String {
        let schemeEnd = text.hasPrefix("https://") ? 8 : text.hasPrefix("http://") ? 7 : 0
        guard schemeEnd > 0, text.utf8.count > schemeEnd, text.utf8.count <= 2048,
              text.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "#") }) else {
            throw ReceiptError(.invalidArgument, "a webhook URL is https://host[:port][/path], printable, "
                               + "at most 2,048 bytes; got \(quoted(String(text.prefix(80))))")
        }
        let authority = String(decoding: text.utf8.dropFirst(schemeEnd).prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") },
                               as: UTF8.self)
        guard !authority.isEmpty, !authority.utf8.contains(UInt8(ascii: "@")) else {
            throw ReceiptError(.invalidArgument, "a webhook URL names a host and carries no user name or password")
        }
        guard !text.utf8.contains(UInt8(ascii: "?")) else {
            throw ReceiptError(.invalidArgument, "a webhook URL carries no query: a token in it would show in the process list "
                               + "and in every listing; the receiver authenticates the events by their webhook-signature, "
                               + "made with --webhook-secret-file")
        }
        // The port: what follows the last ':' after the host (after ']' for an IPv6 address).
        let hostEnd = authority.lastIndex(of: "]") ?? authority.startIndex
        if let colon = authority[hostEnd...].lastIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            guard (1...5).contains(port.utf8.count), port.utf8.allSatisfy({ (48...57).contains($0) }),
                  let number = Int(port), (1...65535).contains(number) else {
                throw ReceiptError(.invalidArgument, "a webhook URL's port is 1 to 65535; got \(quoted(String(port.prefix(16))))")
            }
        }
        guard schemeEnd == 8 || ServerAPIClient.isLoopback(authority: authority) else {
            throw ReceiptError(.invalidArgument, "a webhook URL must be https (http only to a loopback host: "
                               + "127.0.0.0/8, localhost, [::1]); got \(quoted(String(text.prefix(80))))")
        }
        return text
    }

    /// The URL without its query, for logs and listings (a query may hold a receiver's token).
    public static func shown(_ url: String) -> String {
        url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
    }
}
