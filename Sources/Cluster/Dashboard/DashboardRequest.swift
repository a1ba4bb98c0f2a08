import Foundation

/// What the dashboard's router reads of an HTTP request: a plain value, so that routing and access are
/// decided (and tested) without a socket.
public struct DashboardRequest: Sendable, Equatable {
    /// `GET`, `HEAD`, …
    public var method: String
    /// The path, percent-decoded segment by segment (`/batches/b-1`).
    public var pathSegments: [String]
    /// The query's parameters, percent-decoded (the last of a repeated name wins).
    public var query: [String: String]
    /// The `Host` header.
    public var host: String?
    /// The `Authorization` header.
    public var authorization: String?
    /// The cookies of the `Cookie` header(s).
    public var cookies: [String: String]

    /// A request for `uri` (path and query, as on the request line).
    public init(
        method: String, uri: String, host: String? = nil, authorization: String? = nil, cookieHeaders: [String] = []
    ) {
        self.method = method
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts.first.map(String.init) ?? ""
        pathSegments = path.split(separator: "/").map { Self.percentDecoded(String($0)) }
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.percentDecoded(String(nameAndValue[0]), plusIsSpace: true)
                query[name] =
                    nameAndValue.count > 1 ? Self.percentDecoded(String(nameAndValue[1]), plusIsSpace: true) : ""
            }
        }
        self.query = query
        self.host = host
        self.authorization = authorization
        var cookies: [String: String] = [:]
        for header in cookieHeaders {
            for pair in header.split(separator: ";") {
                let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard nameAndValue.count == 2 else { continue }
                cookies[nameAndValue[0].trimmingCharacters(in: .whitespaces)] = nameAndValue[1].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        self.cookies = cookies
    }

    /// `text` with `%XX` escapes decoded (and `+` as a space in a query); malformed escapes are kept as
    /// they are, and bytes that are not UTF-8 become U+FFFD.
    static func percentDecoded(_ text: String, plusIsSpace: Bool = false) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
