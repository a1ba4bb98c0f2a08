import Foundation

/// Who may read the dashboard, decided once from where the HTTP server is bound and whether a token
/// file was given (`--dashboard-token-file`).
///
/// `/metrics` is not subject to it: it is served as before, to whoever reaches the port.
public enum DashboardAccess: Sendable, Equatable {
    /// Bound to loopback without a token: local clients that ask for a loopback host name
    /// (`Host: 127.0.0.1:PORT`, `localhost`, `[::1]`). Other host names are refused, so that a web page
    /// elsewhere cannot read the dashboard through a name it points at 127.0.0.1 (DNS rebinding).
    case loopback
    /// Whoever presents the token (wherever the server is bound): as `Authorization: Bearer TOKEN`,
    /// `?token=TOKEN` (which sets a cookie) or that cookie. The token itself is read at each request
    /// from its file (`DashboardTokenFile`), so that replacing it takes effect at once.
    case token
    /// Bound beyond loopback without a token: the dashboard is not served (only `/metrics` is).
    case off

    /// The access for a server bound to `host`, with or without a token file.
    public init(boundHost host: String, hasToken: Bool) {
        if hasToken {
            self = .token
        } else {
            self = Self.isLoopback(host: host) ? .loopback : .off
        }
    }

    /// Whether `host` (an address or name, without port or brackets) is this machine's loopback:
    /// `localhost`, `127.0.0.0/8` or `::1`.
    public static func isLoopback(host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in UInt8(part).map { _ in !part.isEmpty } ?? false }
    }

    /// The host of a `Host` header value: `name:port`, `[v6]:port`, or a bare name.
    static func hostName(ofHostHeader value: String) -> String {
        let text = value.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return text }
            return String(text[text.index(after: text.startIndex)..<close])
        }
        if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            return String(text[..<colon])
        }
        return text
    }
}
